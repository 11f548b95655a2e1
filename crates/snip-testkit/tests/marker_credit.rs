//! snip's own marker lines do not count against the budget on a second pass (so an
//! output compressed again is unchanged), but only up to what a first pass can leave
//! over the budget: a flood of marker-shaped lines is compressed like other text.

use snip_core::Config;
use snip_testkit::{accounted_and_idempotent, compress_and_check, TempStore};

/// `n` lines shaped like snip's repeat-collapse marker, and nothing else.
fn marker_flood(n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * 80);
    for i in 0..n {
        let line = format!(
            "[snip: previous line repeated {} more times · repeat-collapse · lossless]\n",
            i % 7 + 1
        );
        v.extend_from_slice(line.as_bytes());
    }
    v
}

#[test]
fn a_flood_of_marker_shaped_lines_is_compressed() {
    for (n, budget) in [(20_000, 24_576), (2_000, 4_096), (400, 1_024)] {
        let input = marker_flood(n);
        let store = TempStore::new();
        let (out, checked) =
            compress_and_check(&input, &Config::with_budget(budget), &store.handle)
                .unwrap_or_else(|e| panic!("{n} lines at {budget}: {e}"));
        assert!(
            checked.markers > 0,
            "{n} lines at {budget}: passed unchanged"
        );
        // The budget plus one marker line.
        assert!(
            out.len() <= budget + 400,
            "{n} lines at {budget}: {} bytes",
            out.len()
        );
    }
}

/// A log with a traceback in its middle whose exception line is long (a dict's repr,
/// 850 bytes): it is the last traceback end, kept whatever the budget, so at small
/// budgets the first pass ends over the budget by it and the gap markers around it.
fn traceback_log() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..3_000 {
        v.extend_from_slice(format!("INFO worker {i} processed batch {}\n", i * 7).as_bytes());
        if i % 500 == 250 {
            v.extend_from_slice(format!("ERROR worker {i} lost connection to db-{i}\n").as_bytes());
        }
    }
    v.extend_from_slice(b"Traceback (most recent call last):\n");
    for k in 0..30 {
        v.extend_from_slice(
            format!("  File \"/srv/app/module_{k}.py\", line {}, in handler_{k}\n    result = step_{k}(payload)\n", k * 13 + 7)
                .as_bytes(),
        );
    }
    let fields: Vec<String> = (0..50).map(|k| format!("'field_{k}': {}", k * 7)).collect();
    v.extend_from_slice(
        format!(
            "ValueError: invalid record 2077 in batch 14: {{{}}}\n",
            fields.join(", ")
        )
        .as_bytes(),
    );
    for i in 0..1_000 {
        v.extend_from_slice(format!("INFO cleanup {i} released lock {}\n", i * 3).as_bytes());
    }
    v
}

/// The first pass ends over the budget (by the kept traceback end and its markers)
/// at the smaller budgets; its marker lines are credited, so a second pass changes
/// nothing. Without the credit the second pass elides the exception line at those
/// budgets.
#[test]
fn a_second_pass_changes_nothing_at_small_budgets() {
    let input = traceback_log();
    let budgets = [1024, 1088, 1152, 1216, 1280, 1536, 2048, 4096, 8192];
    let outputs = accounted_and_idempotent(&input, budgets).unwrap_or_else(|e| panic!("{e}"));
    let over: Vec<usize> = outputs
        .iter()
        .zip(budgets)
        .filter(|(o, b)| o.len() > *b)
        .map(|(_, b)| b)
        .collect();
    assert!(
        over.len() >= 3,
        "the first pass should end over the budget at the small budgets (the credit's case); over at {over:?}"
    );
    for (out, budget) in outputs.iter().zip(budgets) {
        let text = String::from_utf8_lossy(out);
        assert!(
            text.contains("ValueError: invalid record 2077"),
            "{budget}:\n{text}"
        );
    }
}
