//! Reproductions of issue 16's engine items, checked with the accounting checker.
//! Those still open are `#[ignore]`d with the item they pin; run them with
//! `cargo test -p snip-testkit --test issue16 -- --ignored`.

use snip_core::Config;
use snip_testkit::{check_accounting, compress_and_check, TempStore};

fn check(input: &[u8], budget: usize) -> Result<Vec<u8>, String> {
    let store = TempStore::new();
    compress_and_check(input, &Config::with_budget(budget), &store.handle).map(|(o, _)| o)
}

fn pretty_doc(n: usize) -> String {
    let v: serde_json::Value = (0..n)
        .map(|i| (format!("key{i}"), serde_json::Value::from("x".repeat(40))))
        .collect::<serde_json::Map<_, _>>()
        .into();
    serde_json::to_string_pretty(&v).expect("json")
}

#[test]
fn checker_reports_a_gap_and_a_wrong_kept_line() {
    let store = TempStore::new();
    let original = b"a\nb\nc\n";
    let gap =
        b"a\n[snip: 1 line elided \xc2\xb7 head-tail-elide \xc2\xb7 lines 3-3 \xc2\xb7 lossless]\n";
    let e = check_accounting(original, gap, &store.handle).unwrap_err();
    assert!(e.contains("leaves a gap"), "{e}");
    let wrong = b"a\nX\nc\n";
    let e = check_accounting(original, wrong, &store.handle).unwrap_err();
    assert!(e.contains("is not the original's bytes"), "{e}");
    let short =
        b"a\n[snip: 1 line elided \xc2\xb7 head-tail-elide \xc2\xb7 lines 2-2 \xc2\xb7 lossless]\n";
    let e = check_accounting(original, short, &store.handle).unwrap_err();
    assert!(e.contains("bytes 4-6 are accounted for by no"), "{e}");
}

#[test]
fn pretty_json_alone_is_accounted_for() {
    check(pretty_doc(800).as_bytes(), 2048).unwrap();
}

/// The output of a one-document input over the budget: the same whitespace around it
/// and a document with every key of the original's top-level object, or a marker
/// member standing for the elided ones.
fn assert_one_document_kept(input: &str, out: &[u8]) {
    let out = std::str::from_utf8(out).expect("utf-8");
    let lead = |s: &str| s.len() - s.trim_start().len();
    let trail = |s: &str| s.len() - s.trim_end().len();
    assert_eq!(
        lead(out),
        lead(input),
        "leading whitespace changed: {out:.200}"
    );
    assert_eq!(
        trail(out),
        trail(input),
        "trailing whitespace changed: {out:.200}"
    );
    let original: serde_json::Value = serde_json::from_str(input).expect("input is JSON");
    let v: serde_json::Value = serde_json::from_str(out).expect("output is one JSON document");
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_object()
            .map_or_else(Vec::new, |o| o.keys().cloned().collect())
    };
    assert!(v.is_object(), "not an object: {out:.200}");
    let kept = keys(&v);
    // Every key is kept, or stands in the range of an object marker member (the
    // accounting check restores those exactly).
    let marked = kept
        .iter()
        .any(|k| k.starts_with(snip_core::rules::json_fields::MARKER_KEY));
    assert!(
        marked || keys(&original).iter().all(|k| kept.contains(k)),
        "keys lost: {out:.300}"
    );
}

#[test]
fn item1_pretty_json_then_blank_line_stays_one_document() {
    let input = format!("{}\n\n", pretty_doc(800));
    let out = check(input.as_bytes(), 2048).unwrap();
    assert_one_document_kept(&input, &out);
}

#[test]
fn item1_blank_line_then_pretty_json_stays_one_document() {
    let input = format!("\n{}\n", pretty_doc(800));
    let out = check(input.as_bytes(), 2048).unwrap();
    assert_one_document_kept(&input, &out);
}

#[test]
fn item1_blank_line_then_one_line_json_keeps_its_keys() {
    let doc: serde_json::Value = serde_json::from_str(&pretty_doc(800)).unwrap();
    let input = format!("\n{doc}\n");
    let out = check(input.as_bytes(), 2048).unwrap();
    assert_one_document_kept(&input, &out);
}

/// A field pointer names the last of two equal keys (RFC 6901 has no occurrence index),
/// so a string of a document with a repeated key restores by its raw byte range, which
/// the checker compares with the original's own bytes.
#[test]
fn item2_duplicate_keys_restore_by_byte_range() {
    for input in [
        format!(
            "{{\"k\": \"{}\", \"k\": \"{}\"}}",
            "A".repeat(2936),
            "B".repeat(68)
        ),
        format!(
            "{{\"a\": {{\"k\": \"{}\", \"j\": 1, \"k\": \"{}\"}}}}",
            "A".repeat(2936),
            "B".repeat(2000)
        ),
        // Keys equal once decoded.
        format!(
            "{{\"k\": \"{}\", \"\\u006b\": \"{}\"}}",
            "A".repeat(2936),
            "B".repeat(68)
        ),
    ] {
        let out = check(input.as_bytes(), 512).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("[snip: "), "{out}");
        assert!(
            !out.contains("field="),
            "a field pointer is ambiguous here: {out}"
        );
    }
}

#[test]

fn item3_lone_surrogate() {
    let input = format!("{{\"k\": \"\\ud800{}\"}}", "A".repeat(4000));
    check(input.as_bytes(), 512).unwrap();
}

#[test]

fn item3_byte_order_mark() {
    let input = format!("\u{feff}{{\"k\": \"{}\"}}", "A".repeat(4000));
    check(input.as_bytes(), 512).unwrap();
}

#[test]
fn item7_traceback_tail_zero() {
    let mut input = String::from("Traceback (most recent call last):\n");
    for i in 0..200 {
        input.push_str(&format!(
            "  File \"m{i}.py\", line {i}, in f{i}\n    f{i}()\n"
        ));
    }
    input.push_str("ValueError: boom\n");
    let mut cfg = Config::with_budget(512);
    cfg.traceback_tail_frames = 0;
    let store = TempStore::new();
    compress_and_check(input.as_bytes(), &cfg, &store.handle).unwrap();
}

/// Every count setting the docs allow (0 included) works at small and large budgets
/// on an input with tracebacks, salient lines, repeats and long lines: no setting
/// makes the pipeline fail open, and the output is accounted for.
#[test]
fn item7_every_count_setting_works() {
    let mut input = String::new();
    for t in 0..3 {
        input.push_str(&format!(
            "step {t} starting\nTraceback (most recent call last):\n"
        ));
        for i in 0..40 {
            input.push_str(&format!(
                "  File \"w{i}.py\", line {i}, in g{i}\n    g{i}()\n"
            ));
        }
        input.push_str(&format!("RuntimeError: worker {t} died\n"));
        for i in 0..30 {
            input.push_str(&format!("info tick {i} fine\nsame\nsame\nsame\n"));
        }
        input.push_str(&format!("error: disk {t} full {}\n", "z".repeat(3000)));
    }
    let settings: [fn(&mut Config, usize); 5] = [
        |c, v| c.traceback_head_frames = v,
        |c, v| c.traceback_tail_frames = v,
        |c, v| c.salient_context = v,
        |c, v| c.repeat_min = v,
        |c, v| c.json_array_keep = v,
    ];
    let store = TempStore::new();
    for budget in [1024, 2048, 8192] {
        for (k, set) in settings.iter().enumerate() {
            for v in [0, 1, 2, 1000] {
                let mut cfg = Config::with_budget(budget);
                set(&mut cfg, v);
                compress_and_check(input.as_bytes(), &cfg, &store.handle)
                    .unwrap_or_else(|e| panic!("setting {k} = {v} at {budget}: {e}"));
            }
        }
        for bytes in [0, 1, budget] {
            let mut cfg = Config::with_budget(budget);
            (cfg.head_bytes, cfg.tail_bytes, cfg.salient_bytes) = (bytes, bytes, bytes);
            compress_and_check(input.as_bytes(), &cfg, &store.handle)
                .unwrap_or_else(|e| panic!("head/tail/salient = {bytes} at {budget}: {e}"));
        }
    }
}

#[test]
// Issue 16 describes a failure of this shape; this input does not reproduce it.
fn item10_traceback_end_kept() {
    let mut input = String::new();
    for rec in [1041, 2077] {
        input.push_str("Traceback (most recent call last):\n");
        for i in 0..60 {
            input.push_str(&format!(
                "  File \"m{i}.py\", line {i}, in f{i}\n    f{i}()\n"
            ));
        }
        input.push_str(&format!("ValueError: invalid record {rec}\n"));
        if rec == 1041 {
            input.push_str(
                "\nDuring handling of the above exception, another exception occurred:\n\n",
            );
        }
    }
    let out = check(input.as_bytes(), 2048).unwrap();
    let out = String::from_utf8_lossy(&out);
    assert!(out.contains("invalid record 2077"), "{out}");
}

#[test]
// Issue 16 describes a failure of this shape; this input does not reproduce it.
fn item12_idempotent_with_raw_cr() {
    let mut input = String::new();
    for i in 0..400 {
        input.push_str(&format!("line {i} {}\n", "y".repeat(30)));
    }
    input.push_str("progress 1%\rprogress 2%\rprogress 3%\n");
    let cfg = Config::with_budget(1024);
    let once = snip_core::compress(input.as_bytes(), &cfg, &mut snip_core::NoStore).output;
    let twice = snip_core::compress(&once, &cfg, &mut snip_core::NoStore).output;
    assert_eq!(
        String::from_utf8_lossy(&once),
        String::from_utf8_lossy(&twice)
    );
}

/// A gap marker that starts inside a cut line and runs over whole lines after it:
/// `lines 16-19` with the bytes from the cut in line 16 to the end of line 19.
#[test]
fn a_cut_line_marker_over_following_lines_is_accounted_for() {
    let input = include_bytes!("regressions/cut-line-then-whole-lines.txt");
    check(input, 1802).unwrap();
}

/// Found by the `stream` fuzz target: a gap marker's byte count is computed as
/// `end - start` with `start > end` (an inverted range; a panic with overflow checks,
/// a wrapped count without). Input: the fuzz target's form (budget byte, chunking
/// seed byte, then the stream).
#[test]
fn item11_stream_gap_range_is_not_inverted() {
    let data = include_bytes!("regressions/stream-gap-underflow.bin");
    let cfg = Config::with_budget(128 + data[0] as usize * 64);
    let input = &data[2..];
    let run = |chunk: usize| {
        let mut s = snip_core::stream::StreamCompressor::new(&cfg);
        let mut out = Vec::new();
        for c in input.chunks(chunk) {
            s.push(c, &mut out).unwrap();
        }
        s.finish(&mut out).unwrap();
        out
    };
    let whole = run(input.len());
    for chunk in [1, 7, 97] {
        assert_eq!(run(chunk), whole, "chunks of {chunk}");
    }
}

/// Issue 17, item 6: a short run of `\r` frames is rendered without a footer (one
/// would outweigh the saving); the output is the terminal's rendering, accounted for.
#[test]
fn issue17_item6_short_frame_run_is_rendered_and_accounted_for() {
    let input = b"Rebasing (1/3)\rRebasing (2/3)\rRebasing (3/3)\rSuccessfully rebased and updated refs/heads/main.\n";
    let out = check(input, 24576).unwrap();
    assert!(!out.contains(&b'\r'), "{}", String::from_utf8_lossy(&out));
    assert!(out.len() < input.len());
}

/// A single long line cut by both the head and the tail: the marker between them
/// ends where the shown tail starts (it ended one byte later, the line's ending
/// counted in a range inside the line).
#[test]
fn item12_one_line_cut_at_both_ends_tiles() {
    for (len, budget) in [(50_000, 2048), (9_000, 4096), (300_000, 1024)] {
        let line: String = (0..len).map(|i| (b'a' + (i % 23) as u8) as char).collect();
        for input in [
            format!("{line}\nlast\n"),
            format!("first\n{line}\n"),
            format!("{line}\n"),
        ] {
            check(input.as_bytes(), budget)
                .unwrap_or_else(|e| panic!("{len} bytes at {budget}: {e}"));
        }
    }
}

/// The head's cut piece of a long line and an island window that starts where it
/// ends are one line of the output (they printed as two lines with no marker
/// between them).
#[test]
fn item12_head_piece_and_island_of_one_line_stay_one_line() {
    for pad in [3300usize, 3400, 3500] {
        let mut input = String::from("start\n");
        input.push_str(&"q".repeat(pad));
        input.push_str(" error: the cause ");
        input.push_str(&"r".repeat(6000));
        input.push('\n');
        for i in 0..200 {
            input.push_str(&format!("after {i}\n"));
        }
        let out = check(input.as_bytes(), 8192).unwrap_or_else(|e| panic!("pad {pad}: {e}"));
        let out = String::from_utf8_lossy(&out);
        assert!(out.contains("error: the cause"), "{out}");
        // Every output line of q's is followed by its own marker or its own text.
        for l in out.lines() {
            assert!(
                !l.starts_with(" error"),
                "line split without a marker: {out}"
            );
        }
    }
}

/// A short run whose last frame erases the line (a spinner cleared with `ESC[0K`,
/// `ESC[2K`): the terminal shows nothing, the output is empty, and the checker
/// accepts it (it took the footer, then the only line, for text).
#[test]
fn issue16_erased_short_frame_run_renders_empty_and_accounted_for() {
    for input in [
        &b"\xe2\xa0\x99\x1b[1G\x1b[0K"[..],
        b"abc\x1b[2K",
        b"\xe2\xa0\x99\x1b[1G\x1b[0K\xe2\xa0\xb9\x1b[1G\x1b[0K",
    ] {
        let out = check(input, 24576)
            .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(input)));
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    }
    let out = check(b"ab\x1b[1G\x1b[0Kc", 24576).unwrap();
    assert_eq!(out, b"c");
}

/// Found by the `hook` target: a long line ending in `\n` inside a text whose lines
/// mostly end in `\r\n` is cut by head-tail-elide and ended with the dominant `\r\n`;
/// the checker took only `\n` as the end of a cut line.
#[test]
fn issue16_a_cut_lf_line_in_a_crlf_text_is_accounted_for() {
    let mut input = String::new();
    for i in 0..6 {
        input.push_str(&format!(
            "function f{i}(n,t){{var r=[];return n&&t(n,{i})}}"
        ));
    }
    let long = input.repeat(8);
    let mut input = format!("{long}\n");
    for i in 0..40 {
        input.push_str(&format!(
            "\u{2502} rich/module_{}.py {:>20} \u{2502} {:>6} \u{2502}\r\n",
            ["alpha", "beta", "gamma", "delta", "eps"][i % 5],
            i * 7,
            1000 + i * 37
        ));
    }
    input.push_str("Error: in prepare, no such column: pth\r\n");
    let mut cut = 0;
    for budget in (768..=2048).step_by(64) {
        let out =
            check(input.as_bytes(), budget).unwrap_or_else(|e| panic!("budget {budget}: {e}"));
        if out.starts_with(&long.as_bytes()[..64]) && !out.starts_with(long.as_bytes()) {
            cut += 1;
        }
    }
    assert!(cut > 0, "the long line was never cut");
}

/// A traceback of `frames` recursion frames (two lines each) and its exception line.
fn python_recursion(frames: usize) -> String {
    let mut s = String::from("Traceback (most recent call last):\n");
    for i in 0..frames {
        s.push_str(&format!(
            "  File \"/srv/app/mod{}.py\", line {}, in step\n    return step(x - 1)\n",
            i % 3,
            10 + i
        ));
    }
    s.push_str("RecursionError: maximum recursion depth exceeded\n");
    s
}

/// How many outputs of `inputs` at `budgets` show both a `shape-fold` and a
/// `traceback-keep` marker, and every failure of the accounting checker.
fn fold_and_traceback(inputs: &[(String, String)], budgets: &[usize]) -> (usize, Vec<String>) {
    let (mut both, mut failures) = (0, Vec::new());
    for (name, input) in inputs {
        for &b in budgets {
            let budget = snip_core::config::MIN_MAX_BYTES + b * 64;
            match check(input.as_bytes(), budget) {
                Ok(out) => {
                    let t = String::from_utf8_lossy(&out);
                    if t.contains("· shape-fold ·") && t.contains("· traceback-keep ·") {
                        both += 1;
                    }
                }
                Err(e) => failures.push(format!("{name} at {budget}: {e}")),
            }
        }
    }
    (both, failures)
}

/// A generated input of a given size.
type Build = fn(usize) -> String;

/// A run of lines of one shape (for `shape-fold`) right before a traceback whose
/// middle frames `traceback-keep` elides, for each family of traceback, short and long
/// runs (one of them of the frames' own shape), with and without a line between, at
/// budgets from the settable minimum up: the fold's marker and the traceback's name
/// disjoint ranges, and with the kept lines they tile the original.
#[test]
fn a_shape_fold_then_a_traceback_keep_marker_tile_the_original() {
    let tracebacks: [(&str, Build); 5] = [
        ("python", python_recursion),
        ("jvm", |n| {
            let mut s =
                String::from("Exception in thread \"main\" java.lang.IllegalStateException: bad\n");
            for i in 0..n {
                s.push_str(&format!(
                    "\tat com.acme.Worker.step(Worker.java:{})\n",
                    100 + i
                ));
            }
            s.push_str("Caused by: java.io.IOException: closed\n\tat com.acme.Io.read(Io.java:7)\n\t... 12 more\n");
            s
        }),
        ("node", |n| {
            let mut s = String::from("TypeError: x is not a function\n");
            for i in 0..n {
                s.push_str(&format!(
                    "    at step (/srv/app/index.js:{}:{})\n",
                    10 + i,
                    i % 40
                ));
            }
            s
        }),
        ("rust", |n| {
            let mut s = String::from(
                "thread 'main' panicked at src/main.rs:4:5:\nboom\nstack backtrace:\n",
            );
            for i in 0..n {
                s.push_str(&format!(
                    "  {i}: app::step\n             at ./src/main.rs:{}:9\n",
                    20 + i
                ));
            }
            s
        }),
        ("go", |n| {
            let mut s = String::from("panic: boom\n\ngoroutine 1 [running]:\n");
            for i in 0..n {
                s.push_str(&format!(
                    "main.step(0x{i:x})\n\t/srv/app/main.go:{} +0x1d\n",
                    30 + i
                ));
            }
            s.push_str("exit status 2\n");
            s
        }),
    ];
    let runs: [Build; 3] = [
        |i| {
            format!(
                "2026-12-01 12:00:{:02} INFO worker {} processed batch {} in {}ms\n",
                i % 60,
                i % 7,
                3000 + i,
                i % 90
            )
        },
        |i| format!("test case_{i:04} ... ok\n"),
        // Lines of a Node frame's shape, before the traceback's header.
        |i| format!("    at step (/srv/app/index.js:{}:{})\n", 500 + i, i % 40),
    ];
    let mut inputs = Vec::new();
    for (name, tb) in tracebacks {
        for (r, run) in runs.iter().enumerate() {
            for len in [12, 400] {
                for between in ["", "collecting results\n"] {
                    let mut input = String::from("starting\n");
                    (0..len).for_each(|i| input.push_str(&run(i)));
                    input.push_str(between);
                    input.push_str(&tb(200));
                    input.push_str("done in 3s\n");
                    inputs.push((format!("{name}, run {r} of {len}, {between:?}"), input));
                }
            }
        }
    }
    let (both, failures) = fold_and_traceback(&inputs, &[0, 2, 8, 32]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(both > 0, "no output shows both markers");
}

/// The same on rendered text: rows of one shape, a traceback, then the cursor moves
/// back up over the traceback to redraw some rows and down past it again. A redrawn
/// row holds writes from after the traceback, so a fold of the rows took a range
/// running past the traceback-keep marker's start (`lines 3-82` before `lines 35-38`).
/// A fold now names only lines short of the markers after it.
#[test]
fn a_shape_fold_of_rows_redrawn_after_a_traceback_does_not_overlap_its_marker() {
    let mut inputs = Vec::new();
    for rows in [6, 20, 80] {
        for frames in [20, 60] {
            for (from, to) in [(0, rows), (rows - 2, rows), (0, 2)] {
                let mut input = String::from("starting\n");
                for r in 0..rows {
                    input.push_str(&format!("  worker {r}: batch {} ok\n", r * 3));
                }
                let tb = python_recursion(frames);
                input.push_str(&tb);
                // Up to row `from`, redraw rows from..to, back down below the traceback.
                let below = tb.lines().count() + rows;
                input.push_str(&format!("\x1b[{}A", below - from));
                for r in from..to {
                    input.push_str(&format!("\x1b[2K  worker {r}: batch {} ok\n", r * 3 + 1));
                }
                input.push_str(&format!("\x1b[{}B", below - to));
                input.push_str("done\n");
                inputs.push((format!("{rows} rows, {frames} frames, {from}..{to}"), input));
            }
        }
    }
    let (both, failures) = fold_and_traceback(&inputs, &[0, 1, 2, 4, 8, 16, 32]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(both > 0, "no output shows both markers");
}
