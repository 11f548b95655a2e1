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
        host: None,
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

/// Whole rows or none: under a file-size limit that cuts a row part-way, the write
/// fails and nothing of it stays; the next row lands whole and `stats` reads every
/// good row with no unreadable line. The cut happens in a child process (this test
/// binary re-run under `ulimit -f`, SIGXFSZ ignored so the write fails with EFBIG).
#[test]
fn a_row_cut_by_a_full_disk_is_not_left_in_the_ledger() {
    let (_tmp, store) = temp_store(|_| {});
    store.try_record(&row(1, 10)).unwrap();
    let path = store.dir().join("ledger.jsonl");
    // Pad with a blank line so the file ends 40 bytes short of 4 KiB.
    let len = std::fs::metadata(&path).unwrap().len();
    let pad = 4096 - 40 - len as usize;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&[vec![b' '; pad - 1], vec![b'\n']].concat())
        .unwrap();
    drop(f);
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 4; exec \"$0\" --exact --ignored --nocapture child_appends_one_row")
        .arg(&exe)
        .env("SNIP_LEDGER_CHILD_DIR", store.dir())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{err}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        err.contains("append failed"),
        "the child's append did not fail: {err}"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        4096 - 40,
        "part of a row stayed"
    );
    store.try_record(&row(3, 10)).unwrap();
    let (rows, bad) = store.ledger_rows(None);
    let times: Vec<u64> = rows.iter().map(|r| r.time_ms).collect();
    assert_eq!((times, bad), (vec![1_001, 1_003], 0));
}

/// A row left without its newline (a writer killed mid-row by an older version) does
/// not swallow the next one: the writer starts its row on a new line.
#[test]
fn a_row_after_a_cut_row_starts_on_its_own_line() {
    let (_tmp, store) = temp_store(|_| {});
    store.try_record(&row(1, 10)).unwrap();
    let path = store.dir().join("ledger.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"time_ms":1002,"source":"te"#).unwrap();
    drop(f);
    store.try_record(&row(3, 10)).unwrap();
    let (rows, bad) = store.ledger_rows(None);
    let times: Vec<u64> = rows.iter().map(|r| r.time_ms).collect();
    assert_eq!((times, bad), (vec![1_001, 1_003], 1));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n") && text.lines().count() == 3, "{text}");
}

/// Run by `a_row_cut_by_a_full_disk_is_not_left_in_the_ledger` in a child process.
#[test]
#[ignore = "run as a child process by a_row_cut_by_a_full_disk_is_not_left_in_the_ledger"]
fn child_appends_one_row() {
    let Some(dir) = std::env::var_os("SNIP_LEDGER_CHILD_DIR") else {
        return;
    };
    let store = snip_store::Store::open(&snip_store::StoreOptions::in_dir(dir)).unwrap();
    match store.try_record(&row(2, 400)) {
        Ok(()) => println!("append succeeded"),
        Err(e) => println!("append failed: {e}"),
    }
}
