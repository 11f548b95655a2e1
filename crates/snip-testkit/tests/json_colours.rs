//! Coloured JSON strings (ANSI escapes written as `\u001b` JSON escapes) that
//! `json-fields` elides, at the configured or the tight keep: the lossless text rules
//! that strip the kept pieces' escapes must say so in a footer, so the output's kept
//! bytes that differ from the original are accounted for. Every output: the accounting
//! checker with a real store, valid JSON, a second pass identical.

use snip_core::{compress, Config, NoStore};
use snip_testkit::{compress_and_check, Rng, TempStore};

/// A coloured log of `n` lines: some plain, some wrapped in colour escapes, some with
/// a colour escape in the middle, some error lines.
fn coloured_log(rng: &mut Rng, n: usize) -> String {
    let mut out = String::new();
    for i in 1..=n {
        match rng.below(6) {
            0 => out.push_str(&format!("\x1b[31mFAILED test_{i} - boom\x1b[0m")),
            1 => out.push_str(&format!("\x1b[32mok\x1b[0m {i}")),
            2 => out.push_str(&format!("ERROR: step {i} failed \x1b[1mbold\x1b[0m tail")),
            3 => out.push_str(&"word ".repeat(1 + rng.below(40))),
            4 => out.push_str(&format!("\x1b[33mwarning:\x1b[0m unused {i}")),
            _ => out.push_str(&format!("line {i} of the build")),
        }
        out.push('\n');
    }
    out
}

/// One document of a few shapes holding coloured strings.
fn document(rng: &mut Rng, shape: usize) -> serde_json::Value {
    let n = 20 + rng.below(600);
    match shape % 4 {
        0 => serde_json::json!({"tool": "run", "stdout": coloured_log(rng, n), "exit": 1}),
        1 => serde_json::json!({
            "stdout": coloured_log(rng, n),
            "stderr": coloured_log(rng, n / 2 + 5),
            "notes": ["a", "b"],
        }),
        2 => serde_json::json!([coloured_log(rng, n), {"log": coloured_log(rng, n / 3 + 5)}]),
        _ => {
            let items: Vec<_> = (0..1 + rng.below(12))
                .map(|k| serde_json::json!({"k": k, "out": coloured_log(rng, n / 4 + 5)}))
                .collect();
            serde_json::json!({"results": items})
        }
    }
}

fn check(input: &[u8], budget: usize, what: &str) {
    let config = Config::with_budget(budget);
    let store = TempStore::new();
    let (out, _) = compress_and_check(input, &config, &store.handle)
        .unwrap_or_else(|e| panic!("{what} at {budget}: {e}"));
    serde_json::from_slice::<serde_json::Value>(&out)
        .unwrap_or_else(|e| panic!("{what} at {budget}: not JSON: {e}"));
    let again = compress(&out, &config, &mut NoStore);
    assert_eq!(
        String::from_utf8_lossy(&again.output),
        String::from_utf8_lossy(&out),
        "{what} at {budget}: a second pass changed the output"
    );
}

/// Generated documents of several shapes and sizes at budgets from 1,024 to 8,192.
#[test]
fn coloured_strings_elided_at_any_keep_are_accounted_for() {
    let mut rng = Rng(0x00dd_c010_u64 | 1);
    for case in 0..24 {
        let doc = document(&mut rng, case);
        let input = serde_json::to_string(&doc).unwrap();
        assert!(input.contains("\\u001b["), "case {case}: coloured");
        for budget in [1024, 1087, 1536, 2048, 3000, 4096, 6000, 8192] {
            check(input.as_bytes(), budget, &format!("case {case}"));
        }
    }
}

/// The reported case: a 22,465-byte `{"tool", "stdout", "notes", "exit"}` document
/// whose coloured `stdout` is elided at the tight keep under a 1,087-byte budget.
#[test]
fn the_reported_coloured_stdout_at_1087_bytes_is_accounted_for() {
    let input = include_bytes!("regressions/json-coloured-string-tight-keep-1087.json");
    check(input, 1087, "reported case");
}

/// A raw ESC byte inside a string is not JSON (RFC 8259 wants control characters
/// escaped): such a document goes through the text rules, and is accounted for there.
#[test]
fn raw_escape_bytes_in_a_would_be_string_are_text_and_accounted_for() {
    let mut rng = Rng(0x5eed_0000_0000_0001);
    for case in 0..4 {
        let log = coloured_log(&mut rng, 200 + 300 * case);
        let input = format!("{{\"stdout\": \"{}\"}}", log.replace('\n', "\\n"));
        assert!(serde_json::from_str::<serde_json::Value>(&input).is_err());
        for budget in [1024, 2048, 4096, 8192] {
            let config = Config::with_budget(budget);
            let store = TempStore::new();
            compress_and_check(input.as_bytes(), &config, &store.handle)
                .unwrap_or_else(|e| panic!("case {case} at {budget}: {e}"));
        }
    }
}
