//! Redundant text over the budget (issue 17, "fold what is redundant, keep what is
//! distinct"): runs of one shape fold to their ends and a count, repeated blocks fold
//! like repeated lines, a distinct line in a run stays, and distinct error lines that
//! differ only in digits are each shown or counted. Inputs are built here, one class
//! each; every output is checked with the accounting checker (kept bytes and marker
//! ranges tile the original, every restore call returns its range).

use snip_core::Config;
use snip_testkit::{accounted_and_idempotent, compress_and_check, TempStore};

fn check(input: &str, cfg: &Config) -> String {
    let store = TempStore::new();
    let (out, _) = compress_and_check(input.as_bytes(), cfg, &store.handle)
        .unwrap_or_else(|e| panic!("accounting: {e}"));
    String::from_utf8(out).expect("utf-8")
}

fn fold_markers(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("[snip: ") && l.contains(" · shape-fold · "))
        .collect()
}

/// A test runner's 2,000 numbered `ok` lines with one failure among them: the run
/// folds to its ends around the failure, the output ends far below the budget, and
/// the failure and the summary show.
#[test]
fn numbered_ok_lines_fold_around_the_one_that_differs() {
    let mut s = String::from("running 2000 tests\n");
    for i in 0..2000 {
        let verdict = if i == 1234 { "FAILED" } else { "ok" };
        s.push_str(&format!(
            "test store::gc::sweep_keeps_entry_{i:05} ... {verdict}\n"
        ));
    }
    s.push_str("\ntest result: FAILED. 1999 passed; 1 failed; finished in 3.07s\n");
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    assert!(out.contains("sweep_keeps_entry_01234 ... FAILED"), "{out}");
    assert!(out.contains("sweep_keeps_entry_00000 ... ok"), "{out}");
    assert!(out.contains("sweep_keeps_entry_01999 ... ok"), "{out}");
    assert!(out.contains("test result: FAILED"), "{out}");
    let folds = fold_markers(&out);
    assert_eq!(folds.len(), 2, "{out}");
    assert!(folds[0].contains("lines 3-1234"), "{}", folds[0]);
    assert!(out.len() < cfg.max_bytes / 4, "{} bytes", out.len());
}

/// A copy tool's file-name line and stats line, repeated per file: the two-line blocks
/// fold like a repeated line, naming the block count.
#[test]
fn a_repeated_two_line_block_folds_like_a_line() {
    let mut s = String::from("building file list ... done\n");
    let dirs = ["cache", "assets", "lib", "docs", "vendor"];
    for i in 0..900 {
        s.push_str(&format!(
            "{}/part-{i}/chunk_{:x}.bin\n",
            dirs[i % dirs.len()],
            i * 7919
        ));
        s.push_str(&format!(
            "{:>12} 100% {:>7.2}MB/s 0:00:{:02} (xfer#{}, to-check={}/900)\n",
            (i * 3331) % 999_999,
            (i % 53) as f64 * 1.7,
            i % 60,
            i + 1,
            899 - i
        ));
    }
    s.push_str("total size is 1234567  speedup is 1.00\n");
    let cfg = Config::default();
    let out = check(&s, &cfg);
    let folds = fold_markers(&out);
    assert_eq!(folds.len(), 1, "{out}");
    assert!(
        folds[0].contains("898 similar blocks of 2 lines"),
        "{}",
        folds[0]
    );
    assert!(out.contains("total size is 1234567"), "{out}");
    assert!(out.len() < 2048, "{out}");
}

/// A two-line warning repeated with different numbers, and a few errors among the
/// warnings that differ from each other only in digits: the warnings fold, every
/// error line is shown (none folds into another).
#[test]
fn errors_differing_in_digits_each_show_among_folded_warnings() {
    let mut s = String::new();
    let errors = [911usize, 2480, 3307, 4999];
    for i in 0..5000 {
        if errors.contains(&i) {
            s.push_str(&format!(
                "ERROR acct-{:05}: ledger balance mismatch\n",
                i * 3
            ));
            continue;
        }
        s.push_str(&format!(
            "WARN [worker {}] slow query took {}ms\n  hint: add an index on ledger.posted_at\n",
            i % 16,
            100 + i % 900
        ));
    }
    let cfg = Config::default();
    let out = check(&s, &cfg);
    for &i in &errors {
        let line = format!("ERROR acct-{:05}: ledger balance mismatch", i * 3);
        assert!(out.contains(&line), "{line} missing:\n{out}");
    }
    assert!(!fold_markers(&out).is_empty(), "{out}");
    assert!(out.len() <= cfg.max_bytes);
}

/// Every line an error of one shape: the output stays within the budget and every
/// error line is shown or named with its line number in a marker.
#[test]
fn every_line_an_error_stays_within_budget_and_each_is_placed_or_counted() {
    let mut s = String::new();
    let n = 3000;
    for i in 0..n {
        s.push_str(&format!(
            "error: job {} failed: exit status {}\n",
            1000 + i,
            1 + i % 7
        ));
    }
    let cfg = Config::default();
    let out = check(&s, &cfg);
    assert!(out.len() <= cfg.max_bytes, "{}", out.len());
    // Each line is shown, or inside a marker that counts the salient lines it holds.
    let mut counted = 0usize;
    for l in out.lines().filter(|l| l.starts_with("[snip: ")) {
        if let Some(k) = l.find(" salient line") {
            let n = l[..k].rsplit(", ").next().unwrap_or("");
            counted += n.parse::<usize>().unwrap_or_else(|_| panic!("{l}"));
        }
    }
    let shown = out.lines().filter(|l| l.starts_with("error: job ")).count();
    assert_eq!(
        shown + counted,
        n,
        "shown {shown}, counted {counted}:\n{out}"
    );
}

/// Distinct lines are not folded: under the same budget, a log of distinct sentences
/// has no fold marker.
#[test]
fn distinct_lines_do_not_fold() {
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    let mut s = String::new();
    for i in 0..3000usize {
        s.push_str(&format!(
            "{} {} {} and {}\n",
            words[i % 8],
            words[(i / 8) % 8],
            words[(i / 64) % 8],
            words[(i / 512) % 8]
        ));
    }
    let out = check(&s, &Config::default());
    assert!(fold_markers(&out).is_empty(), "{out}");
}

/// Compressing a folded output again changes nothing, and the same input gives the
/// same output twice.
#[test]
fn folded_outputs_are_idempotent_and_deterministic() {
    let mut s = String::new();
    for i in 0..4000 {
        s.push_str(&format!(
            "[{i:06}] tick id=deadbeef{i:04x} ok in {}us\n",
            i % 500
        ));
        if i % 777 == 0 {
            s.push_str("something else entirely happened here\n");
        }
    }
    let budgets = [1024usize, 4096, 24_576];
    let outputs = accounted_and_idempotent(s.as_bytes(), budgets).unwrap_or_else(|e| panic!("{e}"));
    for (out, budget) in outputs.iter().zip(budgets) {
        assert!(out.len() <= budget, "{budget}: {}", out.len());
    }
}

/// At tiny budgets (down to 640 bytes, below the settable minimum) compressing an
/// output again changes nothing: on logs with a traceback, with `\r` frames left
/// between lines, with colour, CRLF endings, and runs that fold.
#[test]
fn tiny_budgets_are_idempotent() {
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    // A traceback's end among numbered lines, CRLF.
    let mut s = String::new();
    for i in 0..300 {
        s.push_str(&format!(
            "\u{1b}[32m✓\u{1b}[0m case {i} passed in {}ms\r\n",
            i % 40
        ));
    }
    s.push_str("Traceback (most recent call last):\r\n  File \"t.py\", line 3, in <module>\r\n    run()\r\n");
    s.push_str("AssertionError: expected { lines: [ [ 1, 2 ] ] } to deeply equal { lines: [ [ 2, 1 ] ] }\r\n");
    for i in 0..40 {
        s.push_str(&format!("cleanup step {i}\r\n"));
    }
    inputs.push(s.into_bytes());
    // Progress frames (`\r` without `\n`) between log lines, an error in the middle.
    let mut s = String::new();
    for i in 0..200 {
        for p in (0..100).step_by(25) {
            s.push_str(&format!("\rdownloading part {i}: {p}%"));
        }
        s.push_str(&format!("\rdownloading part {i}: done\n"));
        if i == 120 {
            s.push_str("error: checksum mismatch for part 120\n");
        }
    }
    inputs.push(s.into_bytes());
    // Every line an error.
    let mut s = String::new();
    for i in 0..500 {
        s.push_str(&format!("ERROR job-{i:05}: exit status {}\n", i % 3));
    }
    inputs.push(s.into_bytes());
    let budgets = [640usize, 704, 832, 1024, 2048, 4096];
    for input in &inputs {
        let outputs = accounted_and_idempotent(input, budgets).unwrap_or_else(|e| panic!("{e}"));
        for (out, budget) in outputs.iter().zip(budgets) {
            // Frames are rendered once: no `\r` glued into a line of the output.
            let glued = out
                .split(|&b| b == b'\n')
                .any(|l| l.strip_suffix(b"\r").unwrap_or(l).contains(&b'\r'));
            assert!(!glued || out == input, "{budget}: raw frames left");
        }
    }
}

/// A compiler's diagnostic (a header, a location, a gutter, the source line, a caret
/// line, a note) for call site `n`: 8 lines of 6 shapes; `message` is the error line.
/// The gutter is as wide as the line number (one column wider from line 100 on).
fn diagnostic(n: usize, message: &str) -> String {
    let line = 40 + 3 * n;
    let pad = " ".repeat(line.to_string().len());
    format!(
        "error[E0425]: {message}\n{pad}--> src/loader.c:{line}:{col}\n{pad} |\n{line} |     total += read_chunk(buf_{n}, {n});\n{pad} |              ^^^^^^^^^^ not found in this scope\n{pad} |\nnote: declared in a header that is not included\n{pad} = help: add `#include \"chunk.h\"` near line {n}\n",
        col = 5 + n % 7,
    )
}

/// A compiler's flood: one multi-line diagnostic (more shapes than a run may hold)
/// repeated for 300 call sites, only numbers changed. Its copies fold as whole blocks
/// behind one marker that counts the copied error lines; the output ends far below
/// the budget and the summary shows.
#[test]
fn a_repeated_multi_line_diagnostic_folds_to_one_copy() {
    let mut s = String::from("   Compiling loader v0.3.1\n");
    for n in 0..300 {
        s.push_str(&diagnostic(
            n,
            "cannot find function `read_chunk` in this scope",
        ));
    }
    s.push_str("error: could not compile `loader` due to 300 previous errors\n");
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    let folds = fold_markers(&out);
    assert_eq!(folds.len(), 1, "{out}");
    assert!(
        folds[0].contains("299 similar blocks of 8 lines (2392 lines,"),
        "{}",
        folds[0]
    );
    assert!(
        folds[0].contains("598 salient lines among them at 10, 14, 18, 22, …"),
        "{}",
        folds[0]
    );
    assert!(out.contains("read_chunk(buf_0, 0)"), "{out}");
    assert!(out.contains("due to 300 previous errors"), "{out}");
    assert!(out.len() < 2048, "{} bytes\n{out}", out.len());
}

/// The same flood with a different error message at one call site: that copy's error
/// line is distinct, so the fold stops short of its block and the line is shown.
#[test]
fn a_distinct_error_line_in_a_repeated_block_stays() {
    let mut s = String::new();
    for n in 0..300 {
        let message = if n == 170 {
            "mismatched types: expected `usize`, found `i64`"
        } else {
            "cannot find function `read_chunk` in this scope"
        };
        s.push_str(&diagnostic(n, message));
    }
    let out = accounted_and_idempotent(s.as_bytes(), [Config::default().max_bytes])
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let out = String::from_utf8(out).expect("utf-8");
    assert!(
        out.contains("mismatched types: expected `usize`, found `i64`"),
        "{out}"
    );
    assert!(out.contains("read_chunk(buf_170, 170)"), "{out}");
    let folds = fold_markers(&out);
    assert_eq!(folds.len(), 2, "{out}");
    assert!(
        folds[0].contains("169 similar blocks of 8 lines"),
        "{}",
        folds[0]
    );
    assert!(out.len() < 4096, "{} bytes\n{out}", out.len());
}

/// Line templates for built repeated blocks: `{}` takes a number, some lines are
/// salient (`error`, `failed`), some indented by a width that varies.
const BLOCK_LINES: [&str; 10] = [
    "error[E0{}]: mismatched types",
    "  --> src/part_{}.rs:{}:{}",
    "   |",
    "{} |     let slot = shelf.slots[{}];",
    "   |         ^^^^ expected `u32`, found `u64`",
    "note: the call at line {} failed to type-check",
    "help: convert with `try_into()` near column {}",
    "warning: unused variable `tmp_{}`",
    "    = note: `#[warn(unused)]` on by default ({} times)",
    "",
];

/// A line from template `t` with numbers from `nums`, indented by `pad` spaces.
fn fill(t: &str, nums: &[u32], pad: usize) -> String {
    let mut out = " ".repeat(pad);
    let mut k = 0;
    for (i, part) in t.split("{}").enumerate() {
        if i > 0 {
            out.push_str(&nums[k % nums.len()].to_string());
            k += 1;
        }
        out.push_str(part);
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(48))]

    /// Built repeated blocks (5 to 16 lines, 2 to 40 copies, numbers and spacing
    /// widths varying, a few lines altered in words or salient lines in digits),
    /// after a header line, at budgets that force folding: the accounting checker
    /// holds (kept bytes and markers tile the original, every restore call returns its
    /// range) and a second pass changes nothing.
    #[test]
    fn built_repeated_blocks_keep_accounting_and_idempotence(
        block in proptest::collection::vec(0usize..BLOCK_LINES.len(), 5..16),
        copies in 2usize..40,
        seed in proptest::prelude::any::<u64>(),
        altered in proptest::collection::vec((0usize..600, 0u8..2), 0..4),
        budget in proptest::sample::select(vec![1024usize, 2048, 4096, 24_576]),
    ) {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as u32
        };
        let mut lines: Vec<String> = vec!["   Compiling shelf v0.1.0".into()];
        for _ in 0..copies {
            let pad = (next() % 2) as usize;
            for &t in &block {
                let nums = [next(), next(), next()];
                lines.push(fill(BLOCK_LINES[t], &nums, pad));
            }
        }
        for &(at, how) in &altered {
            let k = 1 + at % (lines.len() - 1);
            lines[k] = if how == 0 {
                format!("{} (distinct words here)", lines[k])
            } else {
                format!("error: checksum mismatch in chunk {}", next())
            };
        }
        lines.push("error: aborting due to previous errors".into());
        let input = lines.join("\n") + "\n";
        let checked = accounted_and_idempotent(input.as_bytes(), [budget]);
        proptest::prop_assert!(checked.is_ok(), "{}", checked.err().unwrap_or_default());
    }
}

/// A package manager's per-item lines, over the budget: each names a package and a
/// version of its own shape (`1.2-3`, `7:5.1.9-0+deb12u1`, `2.0~rc1`), the other
/// words the same. The run folds to its ends with a count; a line whose fixed words
/// differ (`Removing …`) and an error line (`E: …`) among them stay.
#[test]
fn per_item_lines_differing_in_name_and_version_fold_and_others_stay() {
    let versions = [
        "1.2-3",
        "7:5.1.9-0+deb12u1",
        "2.0~rc1-1",
        "0.8+5prealpha+1-16",
        "16.1+dfsg1-2+b1",
        "3.100-6",
    ];
    let mut s = String::new();
    for i in 0..1500usize {
        let name = format!("libitem{}-{}", i * 7 % 1000, ["core", "data", "dev"][i % 3]);
        let v = versions[(i * 5) % versions.len()];
        let line = match i {
            700 => format!("Removing {name}:amd64 ({v}) ..."),
            900 => format!("E: Sub-process returned an error code for {name}:amd64 ({v})"),
            _ => format!("Setting up {name}:amd64 ({v}) ..."),
        };
        s.push_str(&line);
        s.push('\n');
    }
    s.push_str("Processing triggers for libc-bin (2.36-9+deb12u4) ...\n");
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    assert!(out.contains("Removing libitem"), "{out}");
    assert!(
        out.contains("E: Sub-process returned an error code"),
        "{out}"
    );
    assert!(out.contains("Processing triggers for libc-bin"), "{out}");
    let folds = fold_markers(&out);
    assert!(!folds.is_empty(), "{out}");
    assert!(
        folds.iter().any(|m| m.contains("similar lines")),
        "{folds:?}"
    );
    assert!(out.len() <= cfg.max_bytes, "{} bytes", out.len());
    // Idempotent: a second pass changes nothing.
    assert_eq!(check(&out, &cfg), out);
}

/// Must not fire: per-item lines with versions of any shape whose description
/// column differs from each neighbour's in two words or more stay distinct (masking
/// the version as a number masks no word).
#[test]
fn per_item_lines_with_distinct_descriptions_do_not_fold() {
    let words = [
        "audio", "video", "codec", "library", "runtime", "plugin", "tools", "shared", "static",
        "debug", "common", "extra", "core",
    ];
    let versions = ["1.2-3", "7:5.1.9-0+deb12u1", "2.0~rc1-1", "3.100-6"];
    let mut s = String::new();
    for i in 0..1200usize {
        s.push_str(&format!(
            "ii  libitem  {}  amd64  {} {} for {}\n",
            versions[i % versions.len()],
            words[i % 7],
            words[i % 11],
            words[i % 13]
        ));
    }
    let out = check(&s, &Config::default());
    assert!(fold_markers(&out).is_empty(), "{out}");
}

/// A short log around a Python traceback of `frames` frames, each frame drawn by
/// `frame(k)` (its `File` line and its code line).
fn log_with_traceback(frames: usize, frame: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    for i in 0..40 {
        s.push_str(&format!("worker {i}: loaded batch {i} of 40\n"));
    }
    s.push_str("Traceback (most recent call last):\n");
    for k in 0..frames {
        s.push_str(&frame(k));
    }
    s.push_str("ValueError: bad payload in stage 399\n");
    for i in 0..10 {
        s.push_str(&format!("worker {i}: shutting down\n"));
    }
    s
}

/// The room `traceback-keep` frees goes back to the frames: a traceback of 400
/// distinct calls over the budget keeps as many frames as fit in it, not 6 + 12, and
/// ends within the budget with the header and the exception shown.
#[test]
fn a_traceback_of_distinct_frames_keeps_the_frames_that_fit() {
    let s = log_with_traceback(400, |k| {
        format!(
            "  File \"/srv/app/stage_{k}.py\", line {}, in handle_{k}\n    out = stage_{}(payload, options)\n",
            k * 3 + 1,
            k + 1
        )
    });
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    assert!(out.len() <= cfg.max_bytes, "{} bytes", out.len());
    assert!(out.len() > cfg.max_bytes / 10 * 9, "{} bytes", out.len());
    assert!(out.contains("Traceback (most recent call last):"), "{out}");
    assert!(
        out.contains("ValueError: bad payload in stage 399"),
        "{out}"
    );
    let frames = out.lines().filter(|l| l.starts_with("  File ")).count();
    assert!(frames > 100, "{frames} frames kept");
    assert!(out.contains(" · traceback-keep · "), "{out}");
    assert_eq!(check(&out, &cfg), out);
}

/// Must not fire: a recursion's frames (a cycle of three calls) get no room back:
/// the configured 6 + 12 frames stay.
#[test]
fn a_recursion_traceback_keeps_the_configured_frames() {
    let calls = ["parse_expr", "parse_term", "parse_factor"];
    let s = log_with_traceback(900, |k| {
        let f = calls[k % 3];
        format!(
            "  File \"/srv/app/calc.py\", line {}, in {f}\n    return self.{f}()\n",
            20 + k % 3
        )
    });
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    let frames = out.lines().filter(|l| l.starts_with("  File ")).count();
    assert_eq!(frames, 6 + 12, "{out}");
    assert!(
        out.contains("ValueError: bad payload in stage 399"),
        "{out}"
    );
}

/// One piece of a built rendered log (see
/// `rendered_rows_of_any_redraw_keep_accounting_and_idempotence`): `kind` picks the
/// shape, `n` a row distance or count, `w` a word.
fn rendered_piece(s: &mut String, kind: u8, n: usize, w: usize, k: usize) {
    const WORDS: [&str; 8] = [
        "Compiling shelf",
        "error: checksum mismatch in chunk",
        "    at parse (src/parse.rs:120)",
        "KeyError: 'rate_limit'",
        "Downloading index",
        "warning: unused variable",
        "  File \"calc.py\", line 52, in lookup",
        "Traceback (most recent call last):",
    ];
    let word = WORDS[w % WORDS.len()];
    match kind % 7 {
        // A plain line.
        0 | 1 => s.push_str(&format!("{word} {k}\n")),
        // `\r` frames of a progress bar, then its last frame's line ending.
        2 => {
            for f in 0..=n {
                s.push_str(&format!("Progress: [{:3}%] {word}\r", f * 7 % 100));
            }
            s.push_str(&format!("Progress: [100%] done {k}\n"));
        }
        // Cursor up `n` rows, a row drawn over, back down.
        3 => s.push_str(&format!("\x1b[{n}A\r\x1b[2K{word} {k}\x1b[{n}B\r")),
        // Save the cursor, draw on row `n`, restore it.
        4 => s.push_str(&format!("\x1b7\x1b[{n};1H{word} {k}\x1b8")),
        // Several rows drawn over by one line: up, write, up again, write.
        5 => s.push_str(&format!(
            "\x1b[{}A\r{word} {k}\x1b[1A\r{word} again\x1b[{}B\r",
            n + 1,
            n + 2
        )),
        // A line ending with a status redrawn in place.
        _ => s.push_str(&format!("{word} {k}\r\x1b[K{word} {}\n", k + 1)),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Built rendered logs (`\r` frames, cursor-up redraws `ESC[nA`, save/restore
    /// cursor, rows drawn over by later lines, interleaved with plain, salient and
    /// traceback lines), long enough to go over budgets of 512 to 4,096 bytes: the
    /// accounting checker holds and a second pass changes nothing. Rows redrawn by
    /// lines far apart give gaps whose rows show writes of lines another gap's rows
    /// show; every gap must still be named by a marker, or the output ends over the
    /// budget and a second pass elides the rows shown.
    #[test]
    fn rendered_rows_of_any_redraw_keep_accounting_and_idempotence(
        pieces in proptest::collection::vec((0u8..7, 1usize..48, 0usize..8), 40..240),
        budget in 512usize..=4096,
    ) {
        let mut s = String::new();
        for (k, &(kind, n, w)) in pieces.iter().enumerate() {
            rendered_piece(&mut s, kind, n, w, k);
        }
        let checked = accounted_and_idempotent(s.as_bytes(), [budget]);
        proptest::prop_assert!(checked.is_ok(), "{}", checked.err().unwrap_or_default());
    }
}

/// One piece of a built rendered log of repeated and shape-alike rows (see
/// `rendered_repeats_and_shape_runs_keep_accounting_and_idempotence`): `kind` picks
/// the shape, `n` a count or row distance, `w` a word.
fn repeat_piece(s: &mut String, kind: u8, n: usize, w: usize, k: usize) {
    const SAME: [&str; 4] = [
        "GET /healthz 200",
        "waiting for lock on build directory",
        "error: connection refused",
        "",
    ];
    let same = SAME[w % SAME.len()];
    let alike = |i: usize| format!("test shelf::case_{:04} ... ok", i * 7 + w);
    match kind % 8 {
        // A run of `n` identical lines.
        0 => {
            for _ in 0..n {
                s.push_str(same);
                s.push('\n');
            }
        }
        // `n` lines of one shape, digits changing.
        1 => {
            for i in 0..n {
                s.push_str(&alike(k * 64 + i));
                s.push('\n');
            }
        }
        // A row `n` above redrawn with the repeated line, or with a line of the shape.
        2 => s.push_str(&format!("\x1b[{n}A\r\x1b[2K{same}\x1b[{n}B\r")),
        3 => s.push_str(&format!("\x1b[{n}A\r\x1b[2K{}\x1b[{n}B\r", alike(k))),
        // Save the cursor, draw rows far below (from row `n * 16`, past the end of
        // many logs), restore it: a run of the repeated line, then a run of the
        // shape, then (on odd pieces) the repeated line again.
        4 => {
            s.push_str("\x1b7");
            for x in 0..3 * (w + 1) {
                let text = match x / (w + 1) {
                    0 => same.to_string(),
                    1 => alike(x),
                    _ if k % 2 == 1 => same.to_string(),
                    _ => break,
                };
                s.push_str(&format!("\x1b[{};1H{text}", n * 16 + x));
            }
            s.push_str("\x1b8");
        }
        // `\r` frames of a status line, ending on the repeated line.
        5 => {
            for f in 0..=n % 6 {
                s.push_str(&format!("Progress: [{:3}%]\r", f * 17 % 100));
            }
            s.push_str(same);
            s.push('\n');
        }
        // A traceback's end.
        6 => s.push_str(&format!(
            "Traceback (most recent call last):\n  File \"calc.py\", line {n}, in lookup\nKeyError: 'rate_limit_{k}'\n"
        )),
        // A plain line.
        _ => s.push_str(&format!("Compiling shelf v0.{k}.{n}\n")),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Built rendered logs of runs of identical lines and runs of lines of one shape
    /// (digits changing), with rows redrawn by later lines (`ESC[nA`), rows drawn far
    /// below by an early line (save cursor, `ESC[r;1H`, restore), `\r` frames and
    /// traceback ends, at budgets of 512 to 8,192 bytes: the accounting checker holds
    /// and a second pass changes nothing. A run or fold whose rows show only writes of
    /// lines an earlier marker names has no line left to name; its rows are shown,
    /// and must neither leave the output over the budget nor fold on a second pass.
    #[test]
    fn rendered_repeats_and_shape_runs_keep_accounting_and_idempotence(
        pieces in proptest::collection::vec((0u8..8, 1usize..40, 0usize..8), 20..160),
        budget in 512usize..=8192,
    ) {
        let mut s = String::new();
        for (k, &(kind, n, w)) in pieces.iter().enumerate() {
            repeat_piece(&mut s, kind, n, w, k);
        }
        let checked = accounted_and_idempotent(s.as_bytes(), [budget]);
        proptest::prop_assert!(checked.is_ok(), "{}", checked.err().unwrap_or_default());
    }
}

/// A row of a run rewritten by a later line (`ESC[s`, up 14 rows, erase, write,
/// `ESC[u`) with text of the run's own shape: the fold's marker names every original
/// line its rows show writes of, so the rewrite is shown or in its restore range
/// (before, the range ended at the last row's line and the rewrite was in no marker).
#[test]
fn a_row_rewritten_from_below_is_named_by_its_fold() {
    let mut s = String::new();
    for i in 0..20 {
        s.push_str(&format!("layer {i:02}: downloading 10% id={i:06}\n"));
    }
    s.push_str("\x1b[s\x1b[14A\x1b[2Klayer 06: downloading 97% id=900001\x1b[u");
    for i in 0..60 {
        s.push_str(&format!(
            "2024-05-01 INFO worker {:02} processed batch {i:03} of the nightly import run\n",
            i % 7
        ));
    }
    for budget in [2048, 4096] {
        let out = check(&s, &Config::with_budget(budget));
        let lines: Vec<&str> = s.split_inclusive('\n').collect();
        let in_marker = out.lines().filter(|l| l.starts_with("[snip: ")).any(|m| {
            let Some(r) = m.split(" · lines ").nth(1) else {
                return false;
            };
            let r = r.split(' ').next().unwrap();
            let (a, b) = r.split_once('-').unwrap();
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            lines[a - 1..b].concat().contains("id=900001")
        });
        assert!(
            out.contains("id=900001") || in_marker,
            "at {budget}:\n{out}"
        );
    }
}

/// A linter's report in sections (a file name, its warnings, a blank line), folded
/// and elided: every warning shown is shown under its own file's name. A fold's last
/// block and the tail start at a section's header, and the head does not end on a
/// header alone, so the warnings after a marker are never read as the previous
/// file's.
#[test]
fn warnings_after_a_fold_stay_under_their_own_file_name() {
    const KINDS: [&str; 3] = [
        "warning  Unexpected console statement  no-console",
        "warning  'x' is defined but never used  @typescript-eslint/no-unused-vars",
        "warning  Missing return type on function  @typescript-eslint/explicit-function-return-type",
    ];
    let (mut judged, mut folds, mut gaps) = (0, 0, 0);
    for files in [40, 90, 200] {
        let mut s = String::new();
        // Each warning's text (unique: its line number) and the file it belongs to.
        let mut owner: Vec<(String, String)> = Vec::new();
        let mut serial = 0;
        for f in 0..files {
            let name = format!("/home/dev/web/src/components/Widget{f}.tsx");
            s.push_str(&name);
            s.push('\n');
            for w in 0..1 + (f * 7 + 3) % 4 {
                serial += 1;
                // Every fifth file's warnings differ in more than numbers (distinct
                // messages: no fold takes them, the head and tail elide).
                let line = if f % 5 == 4 {
                    format!("  {serial}:{}  warning  '{}' is assigned a value but never used  no-unused-vars", 1 + w * 3, ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"][(f + w) % 6].repeat(1 + f % 3))
                } else {
                    format!("  {serial}:{}  {}", 1 + w * 3, KINDS[(f + w) % 2])
                };
                s.push_str(&line);
                s.push('\n');
                owner.push((line, name.clone()));
            }
            s.push('\n');
        }
        for budget in [4096, 8192, 16_384] {
            let out = check(&s, &Config::with_budget(budget));
            if out == s {
                continue;
            }
            folds += usize::from(!fold_markers(&out).is_empty());
            gaps += usize::from(out.contains("head-tail-elide"));
            judged += 1;
            let mut header = "";
            for l in out.lines() {
                if l.starts_with("/home/") {
                    header = l;
                } else if let Some((_, name)) = owner.iter().find(|(w, _)| w == l) {
                    assert_eq!(header, name, "{files} files at {budget}: {l:?}\n{out}");
                }
            }
        }
    }
    assert!(judged >= 7, "only {judged} outputs changed");
    assert!(
        folds >= 4 && gaps >= 2,
        "{folds} outputs with folds, {gaps} with gaps"
    );
}
