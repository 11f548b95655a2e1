//! Salient lines of text over the budget: the end of the last traceback always
//! shows (issue 16 item 10), and every distinct error line gets a place or a count
//! (issue 17 item 2). Inputs are built here; every output is checked with the
//! accounting checker.

use proptest::prelude::*;
use snip_core::Config;
use snip_testkit::{compress_and_check, TempStore};

fn check(input: &str, cfg: &Config) -> String {
    let store = TempStore::new();
    let (out, _) = compress_and_check(input.as_bytes(), cfg, &store.handle)
        .unwrap_or_else(|e| panic!("accounting: {e}"));
    String::from_utf8(out).expect("utf-8")
}

/// `n` lines of ordinary log, numbered from `from`.
fn log(s: &mut String, from: usize, n: usize) {
    for i in from..from + n {
        s.push_str(&format!(
            "2026-01-01 12:00:{:02} INFO request {i} served in {}ms\n",
            i % 60,
            i % 97
        ));
    }
}

fn traceback(s: &mut String, frames: usize, last: &str) {
    s.push_str("Traceback (most recent call last):\n");
    for i in 0..frames {
        s.push_str(&format!(
            "  File \"/srv/app/mod{i}.py\", line {}, in step{i}\n    step{}(ctx)\n",
            10 + i,
            i + 1
        ));
    }
    s.push_str(last);
    s.push('\n');
}

/// Whether line `n` (1-based) of the input is shown or named by a marker's count.
fn placed_or_counted(out: &str, text: &str, n: usize) -> bool {
    out.contains(text)
        || out.lines().any(|l| {
            l.starts_with("[snip: ")
                && l.split(" among them at ").nth(1).is_some_and(|r| {
                    r.split(" · ")
                        .next()
                        .unwrap_or("")
                        .split(", ")
                        .any(|x| x == n.to_string())
                })
        })
}

/// A traceback's end in the middle of a log shows at every budget the docs allow,
/// with frames elided or not, alone or after an earlier traceback whose end differs
/// from it only in digits.
#[test]
fn the_last_traceback_end_always_shows() {
    for budget in [1024, 1200, 1536, 2048, 4096, 24_576] {
        for frames in [3, 40] {
            for chained in [false, true] {
                let mut s = String::new();
                log(&mut s, 0, 300);
                if chained {
                    traceback(&mut s, frames, "ValueError: invalid record 1041");
                    s.push_str(
                        "\nDuring handling of the above exception, another exception occurred:\n\n",
                    );
                }
                traceback(&mut s, frames, "ValueError: invalid record 2077");
                log(&mut s, 300, 600);
                let cfg = Config::with_budget(budget);
                let out = check(&s, &cfg);
                assert!(
                    out.contains("ValueError: invalid record 2077\n"),
                    "budget {budget}, {frames} frames, chained {chained}:\n{out}"
                );
                assert!(out.len() <= budget, "budget {budget}: {} bytes", out.len());
            }
        }
    }
}

/// A JVM trace: its exception line, then `frames` frames, `... N more`, then each
/// cause in `causes` the same way (`Caused by: …`, an indented detail line under the
/// last one, as PostgreSQL's driver prints).
fn jvm_trace(s: &mut String, frames: usize, causes: &[&str]) {
    s.push_str("java.lang.RuntimeException: request processing failed\n");
    for (c, cause) in std::iter::once(&"").chain(causes).enumerate() {
        if c > 0 {
            s.push_str(&format!("Caused by: {cause}\n"));
            if c == causes.len() {
                s.push_str("  Detail: Key (customer_id)=(98231) is not present.\n");
            }
        }
        for i in 0..frames {
            s.push_str(&format!(
                "\tat org.acme.layer{c}.Step{i}.invoke(Step{i}.java:{})\n",
                10 + i
            ));
        }
        s.push_str(&format!("\t... {} more\n", 40 + c));
    }
}

/// A header-first trace (JVM `Caused by:` chains, Node's `TypeError: …` over `at`
/// frames) names its cause above its frames: the last such exception line shows at
/// every budget, before frames and ordinary error lines, like a Python traceback's
/// last line does.
#[test]
fn the_root_cause_of_a_header_first_trace_shows() {
    for budget in [1024, 1536, 2048, 4096, 24_576] {
        for frames in [8, 300] {
            let mut s = String::new();
            log(&mut s, 0, 400);
            jvm_trace(
                &mut s,
                frames,
                &[
                    "org.hibernate.exception.ConstraintViolationException: could not execute statement",
                    "org.postgresql.util.PSQLException: insert violates foreign key \"orders_customer_fk\"",
                ],
            );
            log(&mut s, 400, 600);
            // The log `s` at `budget`: `cause` shown, and within the budget.
            let shows = |s: &str, cause: &str, what: &str| {
                let out = check(s, &Config::with_budget(budget));
                assert!(
                    out.contains(cause),
                    "{what}, budget {budget}, {frames} frames:\n{out}"
                );
                assert!(out.len() <= budget, "budget {budget}: {} bytes", out.len());
            };
            shows(
                &s,
                "Caused by: org.postgresql.util.PSQLException: insert violates",
                "JVM",
            );

            let mut s = String::new();
            log(&mut s, 0, 400);
            s.push_str("TypeError: Cannot read properties of undefined (reading 'id')\n");
            for i in 0..frames {
                s.push_str(&format!(
                    "    at handler{i} (/srv/app/route{i}.js:{}:7)\n",
                    3 + i
                ));
            }
            log(&mut s, 400, 600);
            shows(
                &s,
                "TypeError: Cannot read properties of undefined (reading 'id')\n",
                "Node",
            );
        }
    }
}

/// Error lines that differ only in digits, among many warnings: each is shown or
/// counted with its line number in a marker.
#[test]
fn every_error_line_is_shown_or_counted() {
    for budget in [1024, 2048, 8192, 24_576] {
        for errors in [2, 4, 40, 400] {
            let mut s = String::new();
            let mut at = Vec::new();
            let total = 6000;
            for i in 0..total {
                if i % (total / errors) == total / errors / 2 {
                    let text = format!("ERROR acct-{:05}: balance check failed", 10_000 + i * 7);
                    s.push_str(&text);
                    at.push((i + 1, text));
                } else {
                    s.push_str(&format!("WARN shard {} slow: {}ms\n", i % 13, i % 331));
                    continue;
                }
                s.push('\n');
            }
            let out = check(&s, &Config::with_budget(budget));
            for (n, text) in &at {
                assert!(
                    placed_or_counted(&out, text, *n) || out.contains(", …"),
                    "budget {budget}, {errors} errors: line {n} lost:\n{out}"
                );
            }
            // With few errors every one is placed or named, none hidden behind "…".
            if errors <= 4 {
                for (n, text) in &at {
                    assert!(
                        placed_or_counted(&out, text, *n),
                        "budget {budget}: {n}\n{out}"
                    );
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Random logs with error lines anywhere: every error line shows or is counted
    /// (named, or in a count that says there are more), and the output is accounted
    /// for.
    #[test]
    fn error_lines_are_never_silently_dropped(
        lines in prop::collection::vec((0u8..20, 0u32..100_000), 200..3000),
        budget in 1024usize..16_384,
    ) {
        let mut s = String::new();
        let mut errs = Vec::new();
        for (k, (kind, v)) in lines.iter().enumerate() {
            if *kind == 0 {
                let t = format!("error: job {v} failed");
                errs.push((k + 1, t.clone()));
                s.push_str(&t);
            } else {
                s.push_str(&format!("step {v} done in {}ms", v % 977));
            }
            s.push('\n');
        }
        let out = check(&s, &Config::with_budget(budget));
        let named_all = !out.contains(", …");
        for (n, t) in &errs {
            prop_assert!(!named_all || placed_or_counted(&out, t, *n), "line {} lost", n);
        }
    }
}

/// No `head-tail-elide` marker is longer than the bytes it stands for (class 8):
/// gaps of whole lines a little longer than the small-gap threshold, between islands
/// close together, are shown instead.
#[test]
fn no_marker_is_longer_than_what_it_removes() {
    for between in 2..9 {
        for width in [20usize, 30, 45] {
            let mut s = String::new();
            log(&mut s, 0, 200);
            for k in 0..60 {
                s.push_str(&format!("error: check {k} failed\n"));
                for i in 0..between {
                    s.push_str(&format!("{}{i}\n", "-".repeat(width)));
                }
            }
            log(&mut s, 200, 200);
            let out = check(&s, &Config::with_budget(8192));
            for l in out.lines() {
                let Some(m) = snip_core::marker::parse(l) else {
                    continue;
                };
                if m.rule != "head-tail-elide" {
                    continue;
                }
                let (a, b) = m.bytes.expect("bytes");
                assert!(
                    (l.len() as u64) < b - a,
                    "{between} lines of {width}: marker of {} bytes for {}: {l}",
                    l.len(),
                    b - a
                );
            }
        }
    }
}

/// `n` log lines of varied words (not folded), an error line among every 25, so
/// that islands compete for the salient room.
fn varied_log(s: &mut String, from: usize, n: usize) {
    const WORDS: [&str; 16] = [
        "alpha", "fetch", "index", "merge", "queue", "proxy", "shard", "token", "cache", "build",
        "delta", "route", "table", "write", "sweep", "lease",
    ];
    let mut seed = 0x2545_f491_u32.wrapping_add(from as u32);
    let mut word = move || {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        WORDS[(seed >> 16) as usize % WORDS.len()]
    };
    for i in from..from + n {
        let (a, b, c) = (word(), word(), word());
        if i % 25 == 7 {
            s.push_str(&format!("{a} {b}: error: {c} {i} failed to {a}\n"));
        } else {
            s.push_str(&format!("{a} {b} /srv/{c}/part{i}.bin\n"));
        }
    }
}

/// A traceback's end in the middle of a varied log, after rendering wrote other text
/// over the row above it: the cursor moved back up over the traceback (`ESC[nA`), a
/// saved position restored (`ESC 7`/`ESC 8`, `ESC[s`/`ESC[u`), a `\r` redraw of the
/// last frame's code line. The row above the exception line is then not indented,
/// yet the tool printed the exception right after a frame: it is the last traceback
/// end and shows at every budget.
#[test]
fn the_last_traceback_end_shows_whatever_the_rendering_wrote_above_it() {
    let exc = "KeyError: 'rate_limit'";
    let frames = |s: &mut String| {
        s.push_str("Traceback (most recent call last):\n");
        for d in 0..3 {
            s.push_str(&format!(
                "  File \"/srv/app/calc.py\", line {}, in parse_{d}\n    value = self.parse_{}()\n",
                20 + d,
                d + 1
            ));
        }
    };
    // What goes between the frames and the log after the traceback.
    let shapes: [(&str, String); 5] = [
        (
            "cursor up over the code row",
            format!("{exc}\n\x1b[2Aretrying in 5s\x1b[K\x1b[2B\r"),
        ),
        (
            "cursor up over frame and code rows",
            format!("{exc}\n\x1b[3Aattempt 2 of 3\x1b[K\nwaiting\x1b[K\n\n"),
        ),
        (
            "ESC 7 / ESC 8",
            format!("\x1b7    value = 1\n{exc}\n\x1b8status: failed\x1b[K\n\n"),
        ),
        (
            "ESC[s / ESC[u",
            format!("\x1b[s    total = 0\n{exc}\n\x1b[ucleanup done\x1b[K\n\n"),
        ),
        (
            "\\r redraw of the code row",
            format!("    value = 1\r\x1b[Kretry 1/3\n{exc}\n"),
        ),
    ];
    for (name, between) in &shapes {
        for (before, after) in [(300, 600), (900, 120)] {
            let mut s = String::new();
            varied_log(&mut s, 0, before);
            frames(&mut s);
            s.push_str(between);
            varied_log(&mut s, before, after);
            for budget in (1024..=8192).step_by(512) {
                let out = check(&s, &Config::with_budget(budget));
                assert!(
                    out.contains(&format!("{exc}\n")),
                    "{name}, {before}+{after} lines, budget {budget}:\n{out}"
                );
            }
        }
    }
}

/// A listing of paths and package names, some of which hold an error word inside the
/// name (`es-errors/`, `compile/errors.d.ts`, `ref_error`, `libgpg-error0`): those
/// names are not error reports, so they neither split `shape-fold`'s run nor become
/// islands; the run folds to one marker on each side of the one real error line (a
/// `Permission denied` from the tool), which stays. Before, each such name was a
/// salient line that stayed in the run with a marker on each side of it.
#[test]
fn error_words_inside_names_do_not_split_a_listing() {
    let names = [
        "es-errors/index",
        "ajv/dist/compile/errors",
        "ajv/dist/compile/ref_error",
        "libgpg-error0/types",
        "undici-types/mock-errors",
        "@vitest/utils/dist/error",
        "requests.exceptions/stub",
        "node/assert/strict",
    ];
    let mut s = String::new();
    for i in 0..1600 {
        if i == 800 {
            s.push_str("find: 'node_modules/.cache/locked': Permission denied\n");
        }
        if i % 40 == 20 {
            let n = names[(i / 40) % names.len()];
            s.push_str(&format!("node_modules/pkg-{i}/{n}.d.ts\n"));
        } else {
            s.push_str(&format!("node_modules/pkg-{i}/lib/module_{i}.d.ts\n"));
        }
    }
    let cfg = Config::default();
    assert!(s.len() > cfg.max_bytes);
    let out = check(&s, &cfg);
    assert!(
        out.contains("find: 'node_modules/.cache/locked': Permission denied\n"),
        "{out}"
    );
    let markers: Vec<&str> = out.lines().filter(|l| l.starts_with("[snip: ")).collect();
    assert!(
        markers.len() <= 2,
        "{} markers:\n{}",
        markers.len(),
        markers.join("\n")
    );
    assert!(
        markers.iter().all(|m| m.contains(" · shape-fold · ")),
        "{}",
        markers.join("\n")
    );
}

/// A tally that nothing went wrong (`0 errors`, `failed=0`, `Errors: 0`) is not an
/// error report: among thousands of such lines, the one line whose count is not zero
/// is shown, whatever the counter's form, at budgets from 4 to 24 KiB.
#[test]
fn the_one_nonzero_count_among_zero_tallies_is_shown() {
    let forms: [fn(usize, usize) -> String; 4] = [
        |i, n| format!("checked src/m_{i:04}.c: 0 warnings, {n} errors, exit status 0\n"),
        |i, n| format!("job {i}: passed=12 failed={n} skipped=1\n"),
        |i, n| format!("[{i:05}] lint done. Errors: {n}, Warnings: 0\n"),
        |i, n| format!("{{\"file\": \"f{i}.ts\", \"failures\": {n}}}\n"),
    ];
    for (k, form) in forms.iter().enumerate() {
        for (lines, odd) in [(3000, 1777), (800, 3), (5000, 4990)] {
            let text: String = (0..lines)
                .map(|i| form(i, if i == odd { 5 } else { 0 }))
                .collect();
            let want = form(odd, 5);
            for budget in [4096, 12_000, 24_576] {
                let out = check(&text, &Config::with_budget(budget));
                assert!(
                    out.contains(want.trim_end()),
                    "form {k}, {lines} lines, line {odd} at {budget}: not shown"
                );
            }
        }
    }
}
