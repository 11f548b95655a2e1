//! Long JSON string fields holding logs: every error line of the string is shown or
//! named (by its line number in the decoded string) by the marker that covers it, the
//! output stays valid JSON within the budget, and every marker restores exactly.

use snip_core::Config;
use snip_testkit::{compress_and_check, TempStore};

/// A build log of `n` lines (1-based line numbers) with error lines at `errors`;
/// `ansi` colours every line.
fn log(n: usize, errors: &[usize], ansi: bool) -> (String, Vec<(usize, String)>) {
    let mut lines = Vec::with_capacity(n);
    let mut errs = Vec::new();
    for i in 1..=n {
        if errors.contains(&i) {
            let text = format!("ERROR: step {i} failed: undefined reference to `sym_{i}'");
            errs.push((i, text.clone()));
            lines.push(if ansi {
                format!("\x1b[31m{text}\x1b[0m")
            } else {
                text
            });
        } else if ansi {
            lines.push(format!(
                "\x1b[32m  CC\x1b[0m  src/mod_{}/file_{i}.o -O2",
                i % 97
            ));
        } else {
            lines.push(format!("  CC      src/mod_{}/file_{i}.o -O2 -Wall", i % 97));
        }
    }
    (lines.join("\n"), errs)
}

/// The line numbers named by the markers in `s` (a decoded string of the output), and
/// the error lines they count.
fn named_lines(s: &str) -> (Vec<usize>, usize) {
    let mut out = Vec::new();
    let mut count = 0;
    for part in s.split("[snip: ").skip(1) {
        let what = part.split(" · ").next().unwrap_or("");
        if let Some(k) = what.split(", ").nth(1).and_then(|t| t.split(' ').next()) {
            count += k.parse::<usize>().expect("a count");
        }
        if let Some(list) = what.split(" at string line").nth(1) {
            let list = list.trim_start_matches('s');
            for n in list.split([',', ' ']).filter_map(|t| t.trim().parse().ok()) {
                out.push(n);
            }
        }
    }
    (out, count)
}

/// Every string value of `v`, with its pointer.
fn strings(v: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::String(s) => out.push((at, s.clone())),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                strings(x, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                strings(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// Compresses `doc` at `budget`, checks the accounting, validity and budget, and
/// that each error line of each string is shown or counted by a marker (and named by
/// its line number when the marker lists it). Returns the output and how many error
/// lines were shown.
fn check(
    doc: &serde_json::Value,
    budget: usize,
    logs: &[(&str, &[(usize, String)])],
) -> (String, usize) {
    let input = serde_json::to_string(doc).unwrap();
    let store = TempStore::new();
    let (out, _) = compress_and_check(
        input.as_bytes(),
        &Config::with_budget(budget),
        &store.handle,
    )
    .unwrap_or_else(|e| panic!("accounting: {e}"));
    let out = String::from_utf8(out).expect("UTF-8");
    assert!(
        out.len() <= budget,
        "{} bytes over a {budget}-byte budget",
        out.len()
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("output is valid JSON");
    let mut all = Vec::new();
    strings(&v, String::new(), &mut all);
    let mut shown = 0;
    for (ptr, errs) in logs {
        let s = &all
            .iter()
            .find(|(p, _)| p == ptr)
            .unwrap_or_else(|| panic!("{ptr} gone"))
            .1;
        let (named, counted) = named_lines(s);
        let mut here = 0;
        for (n, text) in errs.iter() {
            if s.contains(text.as_str()) {
                here += 1;
                assert!(!named.contains(n), "{ptr}: line {n} shown and named");
            }
        }
        for n in &named {
            assert!(
                errs.iter().any(|(k, _)| k == n),
                "{ptr}: line {n} named, not an error"
            );
        }
        assert_eq!(
            here + counted,
            errs.len(),
            "{ptr}: errors shown + counted: {s}"
        );
        shown += here;
    }
    (out, shown)
}

#[test]
fn every_error_line_of_a_long_stdout_is_shown() {
    let (text, errs) = log(20_000, &[7000, 13000, 19000], false);
    let doc = serde_json::json!({"cmd": "make", "stdout": text, "exit": 2});
    let (out, shown) = check(&doc, 24_576, &[("/stdout", &errs)]);
    assert_eq!(shown, 3, "{out}");
    // The room left is given to the string: more than half the budget is used.
    assert!(out.len() > 12_288, "only {} bytes used", out.len());
}

#[test]
fn coloured_errors_are_shown() {
    let at: Vec<usize> = (0..40).map(|k| 300 + k * 487).collect();
    let (text, errs) = log(20_000, &at, true);
    let doc = serde_json::json!({"cmd": "test", "stdout": text, "exit": 1});
    let (_, shown) = check(&doc, 24_576, &[("/stdout", &errs)]);
    assert_eq!(shown, 40);
}

#[test]
fn several_layouts_show_or_name_every_error() {
    let (a, ea) = log(6_000, &[1500, 3000, 4500], false);
    let (b, eb) = log(5_000, &[10, 2500, 4990], false);
    let docs = [
        (
            serde_json::json!({"stdout": a, "stderr": b, "code": 1}),
            vec!["/stdout", "/stderr"],
        ),
        (
            serde_json::json!({"result": {"ok": false, "log": a}, "meta": {"output": b}}),
            vec!["/result/log", "/meta/output"],
        ),
        (
            serde_json::json!({"outputs": [a, b]}),
            vec!["/outputs/0", "/outputs/1"],
        ),
    ];
    for (doc, ptrs) in docs {
        let logs = [(ptrs[0], &ea[..]), (ptrs[1], &eb[..])];
        let (_, shown) = check(&doc, 24_576, &logs);
        assert_eq!(shown, 6, "{doc:.80}");
    }
}

#[test]
fn errors_that_do_not_fit_are_named_with_their_line_numbers() {
    let at: Vec<usize> = (0..200).map(|k| 50 + k * 97).collect();
    let (text, errs) = log(20_000, &at, false);
    let doc = serde_json::json!({"output": text});
    for budget in [4096, 24_576] {
        let (out, shown) = check(&doc, budget, &[("/output", &errs)]);
        assert!(shown < 200, "{budget}: all shown in {} bytes?", out.len());
    }
}
