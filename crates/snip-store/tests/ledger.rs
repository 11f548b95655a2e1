//! The ledger file: rotation at 5 MiB keeping one old file, damaged lines skipped.

mod common;

use common::temp_store;
use snip_store::ledger::LEDGER_ROTATE_BYTES;
use snip_store::LedgerRow;
use std::io::Write;

fn row(i: u64, note_len: usize) -> LedgerRow {
    LedgerRow {
        time_ms: 1_000 + i,
        source: "test".into(),
        before: 1000 + i,
        after: 10,
        rules: vec!["head-tail-elide".into()],
        id: None,
        retained: false,
        lossy: true,
        note: Some("n".repeat(note_len)),
    }
}

#[test]
fn the_ledger_rotates_past_5_mib_keeping_one_old_file() {
    let (_d, store) = temp_store(|_| {});
    let dir = store.dir().to_path_buf();
    // Rows of ~100 KB: 60 of them pass 5 MiB once.
    for i in 0..60 {
        store.try_record(&row(i, 100_000)).unwrap();
    }
    let old = std::fs::metadata(dir.join("ledger.jsonl.1")).unwrap().len();
    let cur = std::fs::metadata(dir.join("ledger.jsonl")).unwrap().len();
    assert!(old > LEDGER_ROTATE_BYTES, "{old}");
    assert!(cur < LEDGER_ROTATE_BYTES, "{cur}");
    // Both files are read, oldest first: every row is still counted.
    let rows = store.ledger(None);
    assert_eq!(rows.len(), 60);
    assert!(rows.windows(2).all(|w| w[0].time_ms < w[1].time_ms));
    // A second rotation replaces the old file: the oldest rows are gone.
    for i in 60..120 {
        store.try_record(&row(i, 100_000)).unwrap();
    }
    let rows = store.ledger(None);
    assert!(rows.len() < 120 && rows.len() >= 50, "{}", rows.len());
    assert_eq!(rows.last().unwrap().time_ms, 1_000 + 119);
}

/// A ledger holding row 1, then `damage` written as it is, then rows `then`.
fn damaged_ledger(damage: &[u8], then: &[u64]) -> (tempfile::TempDir, snip_store::Store) {
    let (d, store) = temp_store(|_| {});
    store.try_record(&row(1, 0)).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(store.dir().join("ledger.jsonl"))
        .unwrap();
    f.write_all(damage).unwrap();
    drop(f);
    for &i in then {
        store.try_record(&row(i, 0)).unwrap();
    }
    (d, store)
}

#[test]
fn damaged_ledger_lines_are_skipped_and_counted() {
    let (_d, store) = damaged_ledger(b"{\"time_ms\": 5, \"trunc\n\n", &[2]);
    let (rows, bad) = store.ledger_rows(None);
    assert_eq!((rows.len(), bad), (2, 1));
    let s = store.stats(None);
    assert_eq!((s.rewrites, s.unreadable_rows), (2, 1));
}

/// A crash can leave a row without its newline; the next row is appended to it. That
/// row is still read (the cut one is counted as unreadable).
#[test]
fn a_row_appended_to_a_cut_row_is_read() {
    let (_d, store) = damaged_ledger(b"{\"time_ms\":5,\"source\":\"fil", &[2, 3]);
    let (rows, bad) = store.ledger_rows(None);
    let times: Vec<u64> = rows.iter().map(|r| r.time_ms).collect();
    assert_eq!((times, bad), (vec![1_001, 1_002, 1_003], 1));
}
