//! snip's own marker lines do not count against the budget on a second pass (so an
//! output compressed again is unchanged), but only up to what a first pass can leave
//! over the budget: a flood of marker-shaped lines is compressed like other text.

use snip_core::{compress, Config, NoStore};
use snip_testkit::{compress_and_check, TempStore};

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

/// A log with a traceback at its end: at tiny budgets the first pass keeps the
/// traceback's end and the markers around it, and may end over the budget.
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
    v.extend_from_slice(b"ValueError: invalid record 2077 in batch 14\n");
    v
}

#[test]
fn a_second_pass_changes_nothing_at_small_budgets() {
    let input = traceback_log();
    for budget in [640, 1024, 1536, 2048, 4096, 8192] {
        let cfg = Config::with_budget(budget);
        let first = compress(&input, &cfg, &mut NoStore).output;
        let second = compress(&first, &cfg, &mut NoStore).output;
        assert!(
            first == second,
            "{budget}: a second pass changed {} bytes into {}",
            first.len(),
            second.len()
        );
    }
}
