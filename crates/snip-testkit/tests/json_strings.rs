//! Long JSON string fields holding logs (`{"stdout": "<thousands of lines>"}`): every
//! error line of an elided string is shown whole or counted, with its line number in
//! the decoded string, by the `json-fields` marker whose range holds it; the output
//! stays valid JSON near the budget, every marker restores exactly (the accounting
//! checker), and a second pass changes nothing.

use proptest::prelude::*;
use snip_core::salience::salience;
use snip_core::{compress, Config, NoStore};
use snip_testkit::{compress_and_check, Rng, TempStore};

/// A build log of `n` lines joined by `\n` (`\r\n` when `crlf`), with an error line at
/// each 1-based line number of `errors`; `ansi` colours every line. Returns the text
/// and, per error line, its number and its text without colours.
fn log(n: usize, errors: &[usize], ansi: bool, crlf: bool) -> (String, Vec<(usize, String)>) {
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
            lines.push(format!(
                "  CC      src/mod_{}/file_{i}.o -O2 -Wall -Wextra -fPIC",
                i % 97
            ));
        }
    }
    let eol = if crlf { "\r\n" } else { "\n" };
    (lines.join(eol), errs)
}

/// A `json-fields` marker inside a decoded string: the salient lines it counts, the
/// line numbers it lists, and its restore range (decoded bytes, half-open).
struct StrMarker {
    count: usize,
    listed: Vec<usize>,
    more: bool,
    range: (usize, usize),
}

/// The `json-fields` markers of the decoded string `s`.
fn markers(s: &str) -> Vec<StrMarker> {
    let mut out = Vec::new();
    for part in s.split("[snip: ").skip(1) {
        let Some(end) = part.find(")]") else { continue };
        let m = &part[..end];
        if !m.contains(" \u{b7} json-fields \u{b7} ") {
            continue;
        }
        let what = m.split(" \u{b7} ").next().unwrap();
        let num = |key: &str| -> usize {
            let at = m.find(key).unwrap_or_else(|| panic!("{key} in {m}")) + key.len();
            m[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap()
        };
        let (mut count, mut listed, mut more) = (0, Vec::new(), false);
        if let Some(rest) = what.split(", ").nth(1) {
            count = rest.split(' ').next().unwrap().parse().expect("a count");
            let list = what
                .split(" among them at string line")
                .nth(1)
                .expect("line numbers");
            let list = list.trim_start_matches('s');
            for t in list.split(", ") {
                match t.trim() {
                    "\u{2026}" => more = true,
                    n => listed.push(n.parse().expect("a line number")),
                }
            }
        }
        out.push(StrMarker {
            count,
            listed,
            more,
            range: (num(" start="), num(" end=")),
        });
    }
    out
}

/// Decoded byte range (half-open) of each 1-based line of `text`, its line ending
/// included.
fn line_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        out.push((at, at + piece.len()));
        at += piece.len();
    }
    out
}

/// Compresses `{"cmd": …, "stdout": text, "exit": 2}` at `budget` with a real store
/// and checks: accounting, valid JSON, within the budget, idempotent, and every error
/// line shown whole or counted (and listed while a marker lists line numbers) by the
/// marker whose range holds it. Returns the output length and the error lines shown.
fn check(text: &str, errs: &[(usize, String)], budget: usize) -> (usize, usize) {
    let doc = serde_json::json!({"cmd": "make -j8", "stdout": text, "exit": 2});
    check_doc(&doc, text, errs, budget)
}

/// [`check`] on `doc`, whose `/stdout` is `text`.
fn check_doc(
    doc: &serde_json::Value,
    text: &str,
    errs: &[(usize, String)],
    budget: usize,
) -> (usize, usize) {
    let input = serde_json::to_string(&doc).unwrap();
    let config = Config::with_budget(budget);
    let store = TempStore::new();
    let (out, _) = compress_and_check(input.as_bytes(), &config, &store.handle)
        .unwrap_or_else(|e| panic!("accounting at {budget}: {e}"));
    assert!(
        out.len() <= budget,
        "{} bytes over a {budget}-byte budget",
        out.len()
    );
    let again = compress(&out, &config, &mut NoStore);
    assert_eq!(
        String::from_utf8_lossy(&again.output),
        String::from_utf8_lossy(&out),
        "a second pass changed the output at {budget}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
    let s = v["stdout"].as_str().expect("stdout kept");
    let ranges = line_ranges(text);
    let ms = markers(s);
    let mut shown = 0;
    let mut counted = vec![0usize; ms.len()];
    let mut hidden_at: Vec<Vec<usize>> = vec![Vec::new(); ms.len()];
    for (n, line) in errs {
        // A line any byte of which (its line ending included) a marker's range holds
        // is counted by that marker, even when its text reads whole around the marker
        // (a cut just before its line ending, or just after a colour escape that
        // starts it): only a line no marker touches must be shown.
        let (a, b) = ranges[n - 1];
        let holders: Vec<usize> = (0..ms.len())
            .filter(|&k| ms[k].range.0 < b && a < ms[k].range.1)
            .collect();
        if holders.is_empty() && s.contains(line.as_str()) {
            shown += 1;
            continue;
        }
        assert_eq!(
            holders.len(),
            1,
            "budget {budget}: error line {n} neither shown nor in one marker"
        );
        counted[holders[0]] += 1;
        hidden_at[holders[0]].push(*n);
    }
    for (k, m) in ms.iter().enumerate() {
        assert_eq!(
            m.count, counted[k],
            "budget {budget}: marker over {:?} counts {} of {} hidden error lines",
            m.range, m.count, counted[k]
        );
        let first: Vec<usize> = hidden_at[k].iter().take(4).copied().collect();
        assert_eq!(m.listed, first, "budget {budget}: listed line numbers");
        assert_eq!(m.more, hidden_at[k].len() > 4);
    }
    (out.len(), shown)
}

/// The reported case: a 1.1 MB `stdout` of 20,000 lines with three error lines came
/// out at 1,741 bytes showing two of them; all three are shown and the budget is used.
#[test]
fn every_error_line_of_a_long_stdout_is_shown() {
    let (text, errs) = log(20_000, &[7000, 13000, 19000], false, false);
    assert!(text.len() > 1_000_000);
    let (len, shown) = check(&text, &errs, 24_576);
    assert_eq!(shown, 3);
    assert!(len > 24_576 * 9 / 10, "only {len} bytes of the budget used");
}

/// Generated logs of different sizes with 1 to 60 error lines at random places,
/// coloured or plain, `\n` or `\r\n` line ends, at budgets from the minimum up: every
/// error line is shown or counted where it is.
#[test]
fn generated_logs_show_or_count_every_error_line() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..8 {
        let n = 1_000 + rng.below(24_000);
        let k = 1 + rng.below(60);
        let mut at: Vec<usize> = (0..k).map(|_| 1 + rng.below(n)).collect();
        at.sort_unstable();
        at.dedup();
        let (ansi, crlf) = (case % 2 == 1, case % 4 >= 2);
        let (text, errs) = log(n, &at, ansi, crlf);
        for budget in [1024, 4096, 24_576] {
            let (len, shown) = check(&text, &errs, budget);
            if budget == 24_576 && errs.len() <= 10 {
                // A few error lines fit a quarter of the budget: all shown.
                assert_eq!(shown, errs.len(), "case {case}: {n} lines, {len} bytes");
            }
        }
    }
}

/// More error lines than fit: most are counted, by line number, in the markers between
/// the ones shown; the room left is still used.
#[test]
fn errors_that_do_not_fit_are_counted_with_their_line_numbers() {
    let at: Vec<usize> = (0..400).map(|k| 50 + k * 49).collect();
    let (text, errs) = log(20_000, &at, false, false);
    for budget in [1024, 4096, 24_576] {
        let (len, shown) = check(&text, &errs, budget);
        assert!(shown < errs.len(), "{budget}: all shown in {len} bytes?");
        assert!(len > budget / 2, "{budget}: only {len} bytes used");
    }
}

/// One line of a random log: plain, salient (priority 1 to 3), escapes that JSON
/// spells out (quotes, backslashes, tabs, control bytes), long or multibyte, or
/// coloured (ANSI escapes, which the lossless text rules strip from an elided
/// string's kept ends and count in their footer). A plain line (kind 0) never holds a
/// word of priority 2 or more, so it is never counted as an error line.
fn any_line() -> impl Strategy<Value = (u8, String)> {
    prop_oneof![
        6 => "[a-z0-9 ./=:-]{0,60}".prop_map(|s| (0, s)),
        1 => "[a-z ]{0,30}".prop_map(|s| (0, format!("\x1b[32m{s}\x1b[0m"))),
        1 => "[a-z ]{0,30}".prop_map(|s| (3, s)),
        1 => "[a-z ]{0,20}".prop_map(|s| (0, format!("say \"{s}\" \\ \t\u{1} caf\u{e9} \u{1f600}"))),
        1 => "[a-z ]{0,20}".prop_map(|s| (0, format!("warning: {s}"))),
        1 => "[a-z ]{700,900}".prop_map(|s| (1, s)),
        1 => "[a-z ]{0,30}".prop_map(|s| (1, s)),
        1 => "[a-z ]{0,30}".prop_map(|s| (2, s)),
    ]
    // Random letters can spell a salient word (`errno`, `killed`, `fatal`), which
    // makes a plain line an error line to the markers' count: plain lines hold none.
    .prop_filter("a plain line holds no salient word", |(kind, s)| {
        *kind != 0 || salience(s.as_bytes()) < 2
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random logs in a `stdout` field, with error lines (short and long), `\n`
    /// or `\r\n` ends, beside other members: accounted, valid, within the budget,
    /// idempotent, and every error line shown whole or counted where it is.
    #[test]
    fn random_logs_in_json_show_or_count_every_error_line(
        lines in prop::collection::vec(any_line(), 1..3000),
        crlf in any::<bool>(),
        budget in 1024usize..8192,
        extra in prop::collection::vec("[a-z ]{0,300}", 0..30),
    ) {
        let mut errs = Vec::new();
        let mut out = Vec::with_capacity(lines.len());
        for (i, (kind, body)) in lines.iter().enumerate() {
            let n = i + 1;
            out.push(match kind {
                1 => {
                    // An error line (a long one when the body is long).
                    let text = format!("ERROR: step {n} failed {body}");
                    errs.push((n, text.clone()));
                    text
                }
                2 => {
                    let text = format!("FAILED test_{n} - {body}");
                    errs.push((n, text.clone()));
                    text
                }
                3 => {
                    // A coloured error line: looked for without its colours, which
                    // a kept island shows as printed and kept ends lose to the
                    // lossless text rules (counted in their footer).
                    let text = format!("FAILED test_{n} - {body}");
                    errs.push((n, text.clone()));
                    format!("\x1b[31m{text}\x1b[0m")
                }
                _ => body.clone(),
            });
        }
        let text = out.join(if crlf { "\r\n" } else { "\n" });
        let doc = serde_json::json!({"tool": "run", "stdout": text, "notes": extra, "exit": 1});
        check_doc(&doc, &text, &errs, budget);
    }
}
