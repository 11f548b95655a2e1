//! Write-behind (`Store::write_behind`): a put holds the original in memory and
//! returns its id; the same store restores it at once, `write_pending` writes it as a
//! put would, and a write that fails keeps it restorable here and makes the next put
//! write at once (and report the error).

mod common;

use common::temp_store;
use snip_store::{LedgerRow, RestoreRequest, RestoreStatus, Store, StoreOptions};
use std::fs;

fn log(tag: &str) -> Vec<u8> {
    (0..2000)
        .map(|i| format!("{tag} line {i}: ok\n"))
        .collect::<String>()
        .into_bytes()
}

/// The whole original of `id` as `store` restores it.
fn restore_all(store: &Store, id: &str) -> Vec<u8> {
    common::page_all(store, RestoreRequest::bytes(id, 0, None)).0
}

/// Another handle on the same directory: what another process sees.
fn other(store: &Store) -> Store {
    let opts = StoreOptions {
        dir: store.dir().to_path_buf(),
        ..store.options().clone()
    };
    Store::open(&opts).unwrap()
}

fn entry_file(store: &Store, id: &str) -> std::path::PathBuf {
    store.dir().join("objects").join(id)
}

#[test]
fn a_held_original_restores_at_once_and_from_another_store_once_written() {
    let (_d, store) = temp_store(|_| {});
    store.write_behind();
    let original = log("held");
    let id = store.put(&original).unwrap();
    assert_eq!(
        id,
        store.id_for(&original).unwrap(),
        "the id a put would give"
    );
    assert!(store.has_pending());
    assert!(!entry_file(&store, &id).exists(), "held, not written yet");
    assert_eq!(
        restore_all(&store, &id),
        original,
        "this store reads it from memory"
    );
    let search = store.restore(&RestoreRequest::search(&id, "line 1999:"));
    assert_eq!(search.status, RestoreStatus::Ok, "{}", search.note);
    assert!(store.contains(&id));
    // Another store of the same directory in this process (other options, as a call
    // with other settings opens) shares what is held.
    let elsewhere = other(&store);
    assert_eq!(restore_all(&elsewhere, &id), original);

    // The same original again while held: one entry.
    assert_eq!(store.put(&original).unwrap(), id);
    store.write_pending().unwrap();
    assert!(!store.has_pending());
    assert!(entry_file(&store, &id).is_file());
    assert_eq!(restore_all(&elsewhere, &id), original);
    assert_eq!(restore_all(&store, &id), original);
}

#[test]
fn ledger_rows_are_appended_with_the_writes_and_read_after_them() {
    let (_d, store) = temp_store(|_| {});
    store.write_behind();
    let original = log("row");
    let id = store.put(&original).unwrap();
    let mut row = LedgerRow::context_summary("test", original.len() as u64, 10, 1);
    row.id = Some(id.clone());
    store.record(&row);
    let ledger = store.dir().join("ledger.jsonl");
    assert!(!ledger.exists(), "held with the original");
    // Reading the ledger through the holding store writes what it holds first.
    let rows = store.ledger(None);
    assert_eq!(rows.len(), 1);
    assert!(!store.has_pending());
    assert_eq!(fs::read_to_string(&ledger).unwrap().lines().count(), 1);
    assert!(entry_file(&store, &id).is_file());
}

#[test]
fn dropping_the_store_writes_what_it_holds() {
    let (_d, store) = temp_store(|_| {});
    let elsewhere = other(&store);
    store.write_behind();
    let original = log("dropped");
    let id = store.put(&original).unwrap();
    drop(store);
    assert_eq!(restore_all(&elsewhere, &id), original);
}

#[test]
fn a_failed_write_keeps_the_original_here_and_the_next_put_writes_at_once() {
    let (_d, store) = temp_store(|_| {});
    store.write_behind();
    let objects = store.dir().join("objects");
    let first = log("first");
    let id = store.put(&first).unwrap();
    // `objects/` out of the way and a file in its place: every write fails, as on a
    // full or read-only disk (a permission would not bind root).
    let aside = store.dir().join("objects.aside");
    fs::rename(&objects, &aside).unwrap();
    fs::write(&objects, b"not a directory").unwrap();
    assert!(store.write_pending().is_err());
    assert!(store.has_pending(), "the original stays held");
    assert_eq!(restore_all(&store, &id), first, "and restorable here");
    let second = log("second");
    assert!(
        store.put(&second).is_err(),
        "the next put is written at once and reports the error"
    );
    fs::remove_file(&objects).unwrap();
    fs::rename(&aside, &objects).unwrap();
    store.write_pending().unwrap();
    assert!(!store.has_pending());
    assert_eq!(restore_all(&other(&store), &id), first);
    // Written: write-behind is on again.
    let third = log("third");
    let id3 = store.put(&third).unwrap();
    assert!(store.has_pending());
    assert!(!entry_file(&store, &id3).exists());
    store.flush().unwrap();
    assert_eq!(restore_all(&other(&store), &id3), third);
}

#[test]
fn held_bytes_are_bounded_and_a_put_past_the_bound_is_written_at_once() {
    let (_d, store) = temp_store(|o| o.max_entry_bytes = 40 << 20);
    store.write_behind();
    let big = vec![b'a'; 33 << 20];
    let id = store.put(&big).unwrap();
    assert!(!entry_file(&store, &id).exists(), "held");
    let mut other_big = vec![b'b'; 33 << 20];
    other_big[0] = b'c';
    let id2 = store.put(&other_big).unwrap();
    assert!(
        entry_file(&store, &id2).is_file(),
        "over {} held bytes: written at once",
        snip_store::HELD_MAX_BYTES
    );
    store.flush().unwrap();
    assert!(entry_file(&store, &id).is_file());
}

#[test]
fn what_no_store_could_write_is_written_by_flush_held_into_the_directory_made_again() {
    let (_d, store) = temp_store(|_| {});
    store.write_behind();
    let dir = store.dir().to_path_buf();
    let original = log("orphan");
    let id = store.put(&original).unwrap();
    // The whole store directory removed (a cache cleared) before the write.
    fs::remove_dir_all(&dir).unwrap();
    assert!(store.write_pending().is_err());
    drop(store); // its drop cannot write either: the original stays held
    snip_store::flush_held();
    let again = Store::open(&StoreOptions::in_dir(&dir)).unwrap();
    assert!(!again.has_pending());
    assert_eq!(restore_all(&again, &id), original);
}
