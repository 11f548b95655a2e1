//! A temp file made ahead of a put (`Store::prepare_spare`): the next small put of a
//! new original writes it and renames it into place instead of creating a file, and
//! never writes a file that is no longer the one it made.

mod common;

use common::temp_store;
use snip_store::{RestoreRequest, Store, StoreOptions};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The `.tmp-*` and `.new-*` files in `objects/`.
fn temps(store: &Store) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(store.dir().join("objects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(".tmp-") || n.starts_with(".new-")
        })
        .collect();
    v.sort();
    v
}

fn ino(p: &Path) -> u64 {
    fs::symlink_metadata(p).unwrap().ino()
}

/// The whole original of `id`, paged through bytes restores.
fn restore_all(store: &Store, id: &str) -> Vec<u8> {
    common::page_all(store, RestoreRequest::bytes(id, 0, None)).0
}

fn log(tag: &str) -> Vec<u8> {
    (0..2000)
        .map(|i| format!("{tag} line {i}: ok\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn a_put_of_a_new_original_renames_the_spare_into_place() {
    let (_d, store) = temp_store(|_| {});
    assert!(!store.has_spare());
    assert!(store.prepare_spare().unwrap());
    assert!(store.has_spare());
    assert!(!store.prepare_spare().unwrap(), "one spare at a time");
    let spare = temps(&store);
    assert_eq!(spare.len(), 1, "{spare:?}");
    assert!(spare[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with(".tmp-"));
    assert_eq!(fs::metadata(&spare[0]).unwrap().mode() & 0o777, 0o600);
    let made = ino(&spare[0]);

    let original = log("first");
    let id = store.put(&original).unwrap();
    let entry = store.dir().join("objects").join(&id);
    // The entry is the spare's file, written and renamed: no file was created.
    assert_eq!(ino(&entry), made);
    assert!(temps(&store).is_empty());
    assert!(!store.has_spare());
    assert_eq!(restore_all(&store, &id), original, "restored in full");

    // Without a spare, a put creates its file as before.
    let id2 = store.put(&log("second")).unwrap();
    assert_eq!(restore_all(&store, &id2), log("second"));
    assert!(temps(&store).is_empty());
}

#[test]
fn a_spare_is_not_used_for_an_original_already_kept() {
    let (_d, store) = temp_store(|_| {});
    let id = store.put(&log("kept")).unwrap();
    store.prepare_spare().unwrap();
    assert_eq!(store.put(&log("kept")).unwrap(), id);
    assert!(store.has_spare(), "refreshing an entry leaves the spare");
    assert_eq!(temps(&store).len(), 1);
}

#[test]
fn a_spare_replaced_or_removed_is_never_written_or_renamed() {
    let (_d, store) = temp_store(|_| {});
    // A first put writes the usage counters, so the next puts do not rescan (a
    // rescan removes temp files no one holds locked, as a dead writer's).
    store.put(b"first").unwrap();
    // Replaced by another file under the same name: the put leaves that file alone
    // and creates its own.
    store.prepare_spare().unwrap();
    let spare = temps(&store).pop().unwrap();
    fs::remove_file(&spare).unwrap();
    fs::write(&spare, b"someone else's").unwrap();
    let id = store.put(&log("a")).unwrap();
    assert_eq!(restore_all(&store, &id), log("a"));
    assert_eq!(fs::read(&spare).unwrap(), b"someone else's");
    fs::remove_file(&spare).unwrap();

    // Removed: the put creates its own file.
    store.prepare_spare().unwrap();
    let spare = temps(&store).pop().unwrap();
    fs::remove_file(&spare).unwrap();
    let id = store.put(&log("b")).unwrap();
    assert_eq!(restore_all(&store, &id), log("b"));
    assert!(temps(&store).is_empty());
}

#[test]
fn a_cleaner_leaves_a_held_spare_and_the_store_removes_it_when_dropped() {
    let (d, store) = temp_store(|_| {});
    store.prepare_spare().unwrap();
    let spare = temps(&store).pop().unwrap();
    // Another process's cleaner (another open store) sees a locked temp file.
    let other = Store::open(&StoreOptions::in_dir(d.path().join("store"))).unwrap();
    let report = other.gc().unwrap();
    assert_eq!(report.stale_temp_files, 0);
    assert!(spare.exists());
    drop(store);
    assert!(!spare.exists(), "dropping the store removes its spare");
}

#[test]
fn a_spare_left_by_an_exited_process_is_removed_by_the_next_cleaner() {
    let (d, store) = temp_store(|_| {});
    store.prepare_spare().unwrap();
    let spare = temps(&store).pop().unwrap();
    // The process exits without dropping the store: its lock goes, the file stays.
    std::mem::forget(store);
    // (The lock is on the forgotten store's open file; a copy of the file without it
    // stands for what an exited process leaves.)
    let left = spare.with_file_name(".tmp-left-by-exited");
    fs::copy(&spare, &left).unwrap();
    let other = Store::open(&StoreOptions::in_dir(d.path().join("store"))).unwrap();
    assert_eq!(other.gc().unwrap().stale_temp_files, 1);
    assert!(!left.exists());
    assert!(spare.exists(), "the live one is still held");
}
