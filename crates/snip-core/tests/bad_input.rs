//! Bad input gets a sensible result or the original: never a panic, a stack overflow,
//! or a larger output.

mod common;

use snip_core::{Config, NoStore};

fn check(input: &[u8]) -> snip_core::Outcome {
    let o = common::compress(input);
    assert!(o.failed_open.is_none(), "failed open: {:?}", o.failed_open);
    assert!(o.output.len() <= input.len());
    if !o.changed {
        assert_eq!(o.output, input);
    }
    o
}

#[test]
fn empty_input() {
    let o = check(b"");
    assert!(!o.changed);
}

#[test]
fn invalid_utf8_and_nul_bytes_pass_or_shrink() {
    let mut s = Vec::new();
    for i in 0..20_000u32 {
        s.extend_from_slice(b"line \xff\xfe\x00 ");
        s.extend_from_slice(i.to_string().as_bytes());
        s.extend_from_slice(if i % 7 == 3 { b"\r" } else { b"\n" });
    }
    let o = check(&s);
    assert!(o.changed && o.output.len() <= Config::default().max_bytes);
    // Bytes that were kept are the original's: the first line is intact.
    assert!(o.output.starts_with(b"line \xff\xfe\x00 0\n"));
}

#[test]
fn one_hundred_megabyte_single_line() {
    let line = vec![b'x'; 100 * 1024 * 1024];
    let o = check(&line);
    assert!(o.changed && o.lossy);
    assert!(
        o.output.len() <= Config::default().max_bytes,
        "{}",
        o.output.len()
    );
    let text = String::from_utf8_lossy(&o.output);
    let m = text
        .lines()
        .find_map(snip_core::marker::parse)
        .expect("marker");
    assert_eq!(m.lines, Some((1, 1)));
}

/// `docs/contract.md`: no code point is split. The line is far over the budget, so it
/// must be cut (an unchanged output would prove nothing), and every kept piece of it
/// is whole characters of the original.
#[test]
fn multibyte_single_line_is_cut_on_code_points() {
    let line = "日本語のテキスト".repeat(20_000);
    let o = check(line.as_bytes());
    assert!(o.changed && o.lossy, "a 480 KB line over the budget is cut");
    assert!(
        o.output.len() < line.len() / 4,
        "{} bytes kept",
        o.output.len()
    );
    let out = std::str::from_utf8(&o.output).expect("the output is valid UTF-8");
    // The kept head is a whole-character prefix of the line, not empty.
    let head: String = out.chars().take_while(|c| !c.is_ascii()).collect();
    assert!(head.chars().count() >= 8, "head: {head:?}");
    assert!(line.starts_with(&head));
    // No replacement character: nothing was decoded from a split sequence.
    assert!(!out.contains('\u{FFFD}'));
}

#[test]
fn json_nested_one_hundred_thousand_deep() {
    let mut s = "[".repeat(100_000);
    s.push_str(&"]".repeat(100_000));
    // A JSON document is never cut as text (that would break it), and one too deep
    // for any parser to check after a rewrite is returned as it came.
    let o = check(s.as_bytes());
    assert!(!o.changed, "a 100,000-deep array came back changed");
    let mut obj = "{\"a\":".repeat(100_000);
    obj.push('1');
    obj.push_str(&"}".repeat(100_000));
    let o = check(obj.as_bytes());
    assert!(!o.changed, "a 100,000-deep object came back changed");
}

#[test]
fn truncated_json_is_treated_as_text() {
    let mut s = String::from("{\"items\": [");
    for i in 0..5000 {
        s.push_str(&format!("{{\"id\": {i}, \"name\": \"item {i}\"}},\n"));
    }
    let o = check(s.as_bytes());
    assert!(o.changed);
    assert!(o
        .rules
        .iter()
        .all(|r| r.id != snip_core::RuleId::JsonFields));
}

#[test]
fn random_binary() {
    // xorshift: deterministic pseudo-random bytes.
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let data: Vec<u8> = (0..2_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    check(&data);
}

#[test]
fn escape_sequences_cut_short_and_cursor_storms() {
    check(b"\x1b[");
    check(b"\x1b]8;;file:///never-terminated");
    check(&b"\x1b[999999999A\x1b[99999999999999999999B\x1b[0;0H\x1b8\x1b[u".repeat(1000));
    check(&b"x\x08\x08\x08\x08\x1b[1000C\x1b[2K\r".repeat(5000));
}

#[test]
fn disabled_returns_input() {
    let cfg = Config {
        enabled: false,
        ..Config::default()
    };
    let input = b"a 1%\ra 2%\ra 3%\n".repeat(100);
    let o = snip_core::compress(&input, &cfg, &mut NoStore);
    assert!(!o.changed);
    assert_eq!(o.output, input);
}

#[test]
fn valid_json_with_nothing_to_elide_is_never_broken_by_line_rules() {
    // A pretty array of identical lines (repeat-collapse would break it) and a flat
    // object over the budget with no long string or array (head-tail would cut it).
    let arr = format!("[\n{}  0\n]\n", "  0,\n".repeat(50));
    let o = check(arr.as_bytes());
    if o.changed {
        serde_json::from_slice::<serde_json::Value>(&o.output).expect("valid");
    }
    let mut obj = String::from("{");
    for i in 0..5000 {
        obj.push_str(&format!("\"key{i}\": {i},\n"));
    }
    obj.push_str("\"last\": 0}\n");
    let o = check(obj.as_bytes());
    if o.changed {
        serde_json::from_slice::<serde_json::Value>(&o.output).expect("valid");
    }
}

#[test]
fn json_lines_over_budget_keep_whole_valid_lines() {
    let mut s = String::new();
    for i in 0..5000 {
        s.push_str(&format!(
            "{{\"seq\": {i}, \"msg\": \"event number {i}\", \"level\": \"info\"}}\n"
        ));
    }
    let o = check(s.as_bytes());
    assert!(o.changed && o.output.len() <= snip_core::Config::default().max_bytes);
    // Every line is a JSON value, the marker too (a JSON string holding it).
    let mut markers = 0;
    for line in String::from_utf8(o.output).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line is valid");
        if let Some(m) = v.as_str().and_then(snip_core::marker::parse) {
            assert!(m.lines.is_some() && m.bytes.is_some(), "{line}");
            markers += 1;
        }
    }
    assert!(markers >= 1);
}

/// Backspaces render as a terminal shows them: text written over is gone, and the
/// footer counts the backspaces (they used to leave such output untouched).
#[test]
fn backspace_overwrites_render_and_are_counted() {
    let input = "x".repeat(100).to_string() + &"\u{8}".repeat(100);
    let input = input.repeat(200);
    let o = check(input.as_bytes());
    assert!(o.changed);
    let text = String::from_utf8(o.output).unwrap();
    assert!(
        text.starts_with(&format!(
            "{}\n[snip: removed 20000 backspaces · terminal-render",
            "x".repeat(100)
        )),
        "{text}"
    );
    let r = o
        .rules
        .iter()
        .find(|r| r.id == snip_core::RuleId::TerminalRender)
        .expect("rendered");
    assert!(r.counts.contains(&("backspaces_removed", 20_000)));
}

/// Backspacing inside a line of megabytes would cost time quadratic in the line's
/// length to follow cell by cell; the emulator stops at a work budget instead, and the
/// text goes on unrendered (the elision rules still bound it).
#[test]
fn backspace_storm_in_a_huge_line_is_not_rendered() {
    let unit = "x".repeat(100) + &"\u{8}".repeat(20) + &"x".repeat(20);
    let input = unit.repeat(2 * 1024 * 1024 / unit.len());
    let o = check(input.as_bytes());
    assert!(o.changed);
    assert!(
        o.rules
            .iter()
            .all(|r| r.id != snip_core::RuleId::TerminalRender),
        "{:?}",
        o.rules
    );
    assert!(
        o.rules
            .iter()
            .any(|r| r.id == snip_core::RuleId::HeadTailElide),
        "{:?}",
        o.rules
    );
    assert!(o.output.len() <= Config::default().max_bytes);
}

/// A coloured line of a megabyte, cut: the marker counts the bytes elided from the line
/// as shown (escapes stripped), and points at the whole original line.
#[test]
fn cut_rendered_line_counts_shown_bytes() {
    let mut input: String = (0..100_000).map(|_| "\x1b[31ma\x1b[0m").collect();
    input.push('\n');
    let o = check(input.as_bytes());
    let text = String::from_utf8(o.output).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("bytes elided from line 1"))
        .unwrap_or_else(|| panic!("{text}"));
    let m = snip_core::marker::parse(line).unwrap();
    let n: usize = m.what.split(' ').next().unwrap().parse().unwrap();
    // The kept `a`s, and the few in the markers' words.
    let shown = text.matches('a').count();
    assert!(n > 50_000 && n < 100_000, "{n}");
    assert!(n + shown >= 100_000 && n + shown < 100_100, "{n} + {shown}");
    assert_eq!(m.bytes, Some((0, input.len() as u64)));
}

/// JSON Lines with many error lines (many islands, so many marker lines) at small
/// budgets: the quotes and escapes of the JSON-string markers are counted, so the
/// output stays within the budget and every line is JSON.
#[test]
fn json_lines_markers_are_counted_in_the_budget() {
    let mut s = String::new();
    for i in 0..1500 {
        if i % 97 == 50 {
            let word = char::from(b'a' + (i % 26) as u8)
                .to_string()
                .repeat(i % 7 + 1);
            s.push_str(&format!(
                "{{\"seq\": {i}, \"msg\": \"ERROR failed {word}\"}}\n"
            ));
        } else {
            s.push_str(&format!(
                "{{\"seq\": {i}, \"msg\": \"event number {i} ok\"}}\n"
            ));
        }
    }
    // Every budget from 1024 to 4096 (without the count, a budget of 1828 gave 1832 bytes).
    for budget in (1024..=4096).chain([24_576]) {
        let config = snip_core::Config::with_budget(budget);
        let o = snip_core::compress(s.as_bytes(), &config, &mut common::FakeStore(Vec::new()));
        assert!(
            o.changed && o.output.len() <= budget,
            "{budget}: {}",
            o.output.len()
        );
        let text = String::from_utf8(o.output).unwrap();
        let markers = text.lines().filter(|l| l.starts_with("\"[snip: ")).count();
        assert!(markers >= 1, "{budget}");
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).expect("each line is JSON");
        }
    }
}

/// Every numeric `SNIP_*` setting at its largest value (alone, and with the budget at
/// its largest too) is either refused with an error or runs: no arithmetic overflow
/// (a panic in a debug build, a wrapped share in a release one), in the in-memory
/// path, the sparse path for big inputs, and the stream.
#[test]
fn settings_at_their_largest_values_never_overflow() {
    const NUMERIC: [&str; 11] = [
        "SNIP_MAX_BYTES",
        "SNIP_HEAD_BYTES",
        "SNIP_TAIL_BYTES",
        "SNIP_SALIENT_BYTES",
        "SNIP_SALIENT_CONTEXT",
        "SNIP_TRACEBACK_HEAD",
        "SNIP_TRACEBACK_TAIL",
        "SNIP_REPEAT_MIN",
        "SNIP_JSON_STRING_KEEP",
        "SNIP_JSON_ARRAY_KEEP",
        "SNIP_DIFF_MAX_BYTES",
    ];
    let max = usize::MAX.to_string();
    let mut inputs: Vec<Vec<u8>> = common::corpus().into_iter().map(|c| c.bytes).collect();
    // Over 4 MiB and 64 budgets: the sparse path at the default budget.
    let mut big = Vec::new();
    for i in 0..150_000 {
        big.extend_from_slice(format!("step {i} compiling crate_{} ok\n", i % 7).as_bytes());
        if i % 9_000 == 17 {
            big.extend_from_slice(b"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: bad\nerror: failed\n");
        }
    }
    assert!(big.len() > 4 << 20, "{}", big.len());
    inputs.push(big);
    let mut ran = 0;
    // Each alone and with the budget; then all but the budget and the head and tail
    // shares (which the budget bounds) together, at the default budget and with it.
    let all = |k: &str| {
        NUMERIC.contains(&k)
            && !matches!(k, "SNIP_MAX_BYTES" | "SNIP_HEAD_BYTES" | "SNIP_TAIL_BYTES")
    };
    for name in NUMERIC.into_iter().chain(["all"]) {
        for with_budget in [false, true] {
            let config = match Config::from_lookup(|k| {
                (k == name || (with_budget && k == "SNIP_MAX_BYTES") || (name == "all" && all(k)))
                    .then(|| max.clone())
            }) {
                Ok(c) => c,
                Err(e) => {
                    assert!(e.to_string().contains(name), "refused, naming another: {e}");
                    continue;
                }
            };
            ran += 1;
            for input in &inputs {
                let o = snip_core::compress(input, &config, &mut common::FakeStore(Vec::new()));
                // A panic inside the rules is caught and the input returned: not a pass.
                assert!(o.failed_open.is_none(), "{name}: {:?}", o.failed_open);
                assert!(o.output.len() <= input.len(), "{name}");
                let mut s = snip_core::stream::StreamCompressor::new(&config);
                let mut out = Vec::new();
                for chunk in input.chunks(64 << 10) {
                    s.push(chunk, &mut out).unwrap();
                }
                s.finish(&mut out).unwrap();
            }
        }
    }
    // Most of them run (only a head or tail share over the budget is refused).
    assert!(ran >= 20, "{ran}");
}
