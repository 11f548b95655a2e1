//! Store safety: modes 0700/0600, refused symlinks and foreign owners, planted files.

mod common;

use common::temp_store;
use snip_store::{LedgerRow, RestoreRequest, RestoreStatus, Store, StoreError, StoreOptions};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn mode(p: &std::path::Path) -> u32 {
    fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn directories_are_0700_and_files_0600() {
    let (_d, store) = temp_store(|_| {});
    let id = store.put(b"an original\n").unwrap();
    store
        .try_record(&LedgerRow {
            time_ms: 1,
            source: "test".into(),
            before: 10,
            after: 5,
            rules: vec![],
            id: Some(id.clone()),
            retained: true,
            lossy: true,
            note: None,
            host: None,
        })
        .unwrap();
    let dir = store.dir().to_path_buf();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("objects")), 0o700);
    for f in ["key", "lock", "ledger.jsonl"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    assert_eq!(mode(&dir.join("objects").join(&id)), 0o600);
    // No other file was left behind (temp files are renamed or removed).
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["key", "ledger.jsonl", "lock", "objects"]);
    assert_eq!(fs::read_dir(dir.join("objects")).unwrap().count(), 1);
}

#[test]
fn an_existing_readable_directory_keeps_its_mode_and_its_originals_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let store = Store::open(&StoreOptions::in_dir(&dir)).unwrap();
    store.put(b"an original").unwrap();
    // The directory the user named (it may be $HOME) is not changed; what snip made
    // in it is private.
    assert_eq!(mode(&dir), 0o755);
    assert_eq!(mode(&dir.join("objects")), 0o700);
    assert_eq!(mode(&dir.join("key")), 0o600);
    // objects/ is snip's own: loosened, it is tightened again.
    fs::set_permissions(dir.join("objects"), fs::Permissions::from_mode(0o755)).unwrap();
    Store::open(&StoreOptions::in_dir(&dir)).unwrap();
    assert_eq!(mode(&dir.join("objects")), 0o700);
}

#[test]
fn a_directory_others_can_write_to_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    for m in [0o777, 0o1777, 0o703, 0o770, 0o775, 0o720] {
        let dir = tmp.path().join(format!("shared-{m:o}"));
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(m)).unwrap();
        let err = Store::open(&StoreOptions::in_dir(&dir)).unwrap_err();
        assert!(matches!(err, StoreError::Refused { .. }), "{err}");
        assert!(
            err.to_string().contains("other users can write to it"),
            "{err}"
        );
        assert_eq!(mode(&dir), m, "mode changed");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "something was created"
        );
    }
}

#[test]
fn a_symlinked_store_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = Store::open(&StoreOptions::in_dir(&link)).unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    // Spelled with a trailing slash or a `.`, the path names the link's target: still
    // refused. A `..` could lead anywhere: refused.
    let spelled = link.to_str().unwrap();
    for p in [
        format!("{spelled}/"),
        format!("{spelled}//"),
        format!("{spelled}/."),
        format!("{spelled}/../link"),
    ] {
        let e = Store::open(&StoreOptions::in_dir(&p)).unwrap_err();
        assert!(matches!(e, StoreError::Refused { .. }), "{p}: {e}");
    }
    let msg = err.to_string();
    assert!(
        msg.contains("symlink") && msg.contains("SNIP_STORE_DIR") && !msg.contains('\n'),
        "{msg}"
    );
    assert_eq!(
        fs::read_dir(&real).unwrap().count(),
        0,
        "nothing written through the link"
    );
    // A symlinked objects/ directory inside a real store is refused too.
    let store_dir = tmp.path().join("store");
    Store::open(&StoreOptions::in_dir(&store_dir)).unwrap();
    fs::remove_dir(store_dir.join("objects")).unwrap();
    std::os::unix::fs::symlink(&real, store_dir.join("objects")).unwrap();
    assert!(matches!(
        Store::open(&StoreOptions::in_dir(&store_dir)),
        Err(StoreError::Refused { .. })
    ));
}

#[test]
fn a_foreign_owned_store_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = if rustix::process::geteuid().is_root() {
        let d = tmp.path().join("theirs");
        fs::create_dir(&d).unwrap();
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&d, Some(65534), Some(65534)).unwrap();
        d
    } else {
        // Not root: a root-owned directory is foreign.
        std::path::PathBuf::from("/usr")
    };
    let err = Store::open(&StoreOptions::in_dir(&dir)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Refused { .. }), "{msg}");
    assert!(msg.contains("owned by uid"), "{msg}");
    if dir != std::path::Path::new("/usr") {
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    }
}

#[test]
fn a_planted_symlink_entry_is_not_followed() {
    let (d, store) = temp_store(|_| {});
    let secret = d.path().join("secret");
    fs::write(&secret, b"not yours").unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    let id = store.id_for(b"something").unwrap();
    std::os::unix::fs::symlink(&secret, store.dir().join("objects").join(&id)).unwrap();
    let r = store.restore(&RestoreRequest::full(&id));
    assert_eq!(r.status, RestoreStatus::Error, "{}", r.note);
    assert!(r.content.is_none());
}

#[test]
fn a_key_readable_by_others_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    Store::open(&StoreOptions::in_dir(&dir)).unwrap();
    fs::set_permissions(dir.join("key"), fs::Permissions::from_mode(0o644)).unwrap();
    let err = Store::open(&StoreOptions::in_dir(&dir)).unwrap_err();
    assert!(err.to_string().contains("chmod 600"), "{err}");
}

#[test]
fn ids_are_stable_per_store_and_differ_across_stores() {
    let (_a, one) = temp_store(|_| {});
    let (_b, two) = temp_store(|_| {});
    let x = b"the same original";
    assert_eq!(one.id_for(x).unwrap(), one.put(x).unwrap());
    let reopened = Store::open(one.options()).unwrap();
    assert_eq!(reopened.id_for(x).unwrap(), one.id_for(x).unwrap());
    assert_ne!(
        one.id_for(x).unwrap(),
        two.id_for(x).unwrap(),
        "ids are keyed per store"
    );
}

#[test]
fn a_damaged_entry_answers_error_not_partial_content() {
    let (_d, store) = temp_store(|_| {});
    let id = store.put(&vec![b'z'; 5000]).unwrap();
    let path = store.dir().join("objects").join(&id);
    let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(3000).unwrap();
    let r = store.restore(&RestoreRequest::bytes(&id, 0, None));
    assert_eq!(r.status, RestoreStatus::Error);
    assert!(r.note.contains("damaged"), "{}", r.note);
    // The note says what to do, in one line, and the file is gone.
    assert!(
        r.note.contains("re-run the command") && !r.note.contains('\n'),
        "{}",
        r.note
    );
    assert!(!path.exists());
    // Storing the original again repairs it.
    assert_eq!(store.put(&vec![b'z'; 5000]).unwrap(), id);
    assert_eq!(
        store.restore(&RestoreRequest::bytes(&id, 0, None)).status,
        RestoreStatus::Ok
    );
}

/// Flips one bit of byte `at` of the original stored as `id` (the file keeps its size).
fn flip(store: &Store, id: &str, at: u64) {
    use std::os::unix::fs::FileExt;
    let path = store.dir().join("objects").join(id);
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8];
    let at = snip_store::HEADER_LEN as u64 + at;
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x20], at).unwrap();
}

/// An entry whose header is not snip's is damaged too: the restore says so, says what
/// to do, and removes it, so that storing the original again writes it afresh.
#[test]
fn an_entry_with_a_damaged_header_is_removed_with_a_note_that_says_what_to_do() {
    let (_d, store) = temp_store(|_| {});
    let original = vec![b'q'; 5000];
    let id = store.put(&original).unwrap();
    let path = store.dir().join("objects").join(&id);
    {
        use std::os::unix::fs::FileExt;
        let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(b"garbage!", 0).unwrap();
    }
    let r = store.restore(&RestoreRequest::bytes(&id, 0, None));
    assert_eq!(r.status, RestoreStatus::Error);
    assert!(
        r.note.contains("damaged")
            && r.note.contains("re-run the command")
            && !r.note.contains('\n'),
        "{}",
        r.note
    );
    assert!(!path.exists());
    assert_eq!(store.put(&original).unwrap(), id);
    assert_eq!(
        store.restore(&RestoreRequest::bytes(&id, 0, None)).status,
        RestoreStatus::Ok
    );
}

/// An entry file copied (or renamed) under another entry's name holds a sound
/// original, but not that id's: the restore says the original is damaged instead of
/// serving the other one's bytes with `ok`, removes the file, and storing the
/// original again repairs it; `snip gc` removes such a file too.
#[test]
fn an_entry_file_under_another_ids_name_is_never_served_as_it() {
    let (_d, store) = temp_store(|_| {});
    let (a, b) = (vec![b'a'; 4000], vec![b'b'; 4000]);
    let (id_a, id_b) = (store.put(&a).unwrap(), store.put(&b).unwrap());
    let objects = store.dir().join("objects");
    fs::copy(objects.join(&id_a), objects.join(&id_b)).unwrap();
    assert_eq!(
        store.restore(&RestoreRequest::bytes(&id_a, 0, None)).status,
        RestoreStatus::Ok
    );
    let r = store.restore(&RestoreRequest::bytes(&id_b, 0, None));
    assert_eq!(r.status, RestoreStatus::Error, "{r:?}");
    assert!(
        r.content.is_none() || r.content.as_deref() == Some(""),
        "{r:?}"
    );
    assert!(
        r.note.contains("damaged") && r.note.contains("another original") && !r.note.contains('\n'),
        "{}",
        r.note
    );
    assert!(!objects.join(&id_b).exists());
    assert_eq!(store.put(&b).unwrap(), id_b);
    let r = store.restore(&RestoreRequest::bytes(&id_b, 0, None));
    assert_eq!(
        (r.status, r.content.as_deref()),
        (RestoreStatus::Ok, Some("b".repeat(4000).as_str()))
    );
    // Renamed by hand: `snip gc` finds it.
    fs::rename(objects.join(&id_a), objects.join(&id_b)).unwrap();
    let r = store.gc().unwrap();
    assert_eq!((r.damaged, r.entries), (1, 0), "{r:?}");
}

/// `snip gc` removes entries whose header is damaged or disagrees with the file's
/// size (it kept them, and counted them among the originals), and keeps the others.
#[test]
fn gc_removes_damaged_entries() {
    let (_d, store) = temp_store(|_| {});
    let good = store.put(&vec![b'g'; 3000]).unwrap();
    let cut = store.put(&vec![b'c'; 3000]).unwrap();
    let garbled = store.put(&vec![b'x'; 3000]).unwrap();
    let objects = store.dir().join("objects");
    fs::OpenOptions::new()
        .write(true)
        .open(objects.join(&cut))
        .unwrap()
        .set_len(1000)
        .unwrap();
    {
        use std::os::unix::fs::FileExt;
        let f = fs::OpenOptions::new()
            .write(true)
            .open(objects.join(&garbled))
            .unwrap();
        f.write_all_at(b"garbage!", 0).unwrap();
    }
    let r = store.gc().unwrap();
    assert_eq!((r.damaged, r.entries), (2, 1), "{r:?}");
    assert!(store.contains(&good));
    assert!(!objects.join(&cut).exists() && !objects.join(&garbled).exists());
}

#[test]
fn a_same_size_damaged_entry_is_never_served() {
    let (_d, store) = temp_store(|_| {});
    let original = br#"{"log":"line one\nline two\nline three\n"}"#.to_vec();
    let id = store.id_for(&original).unwrap();
    let mut field = RestoreRequest::bytes(&id, 0, None);
    field.field = Some("/log".into());
    for req in [
        RestoreRequest::bytes(&id, 0, Some(4)),
        RestoreRequest::bytes(&id, 30, None),
        RestoreRequest::lines(&id, 1, None),
        RestoreRequest::search(&id, "line"),
        RestoreRequest::full(&id),
        field,
    ] {
        assert_eq!(store.put(&original).unwrap(), id);
        flip(&store, &id, 20);
        let r = store.restore(&req);
        assert_eq!(r.status, RestoreStatus::Error, "{req:?}");
        assert!(r.content.is_none());
        assert!(
            r.note.contains("damaged") && r.note.contains("sha256") && !r.note.contains('\n'),
            "{}",
            r.note
        );
        // Removed, so storing the original again repairs it.
        assert!(!store.contains(&id));
        assert_eq!(store.put(&original).unwrap(), id);
        assert_eq!(store.restore(&req).status, RestoreStatus::Ok, "{req:?}");
    }
    // Over 1 MiB too: a bytes page anywhere, the damage inside its window or not,
    // reads and checks the whole original (it read only its window, and a page over
    // the damage answered `ok` with the damaged bytes).
    let big: Vec<u8> = (0..60_000)
        .flat_map(|i| format!("request {i} served\n").into_bytes())
        .collect();
    assert!(big.len() as u64 > snip_store::restore::VERIFY_ALWAYS_MAX_BYTES);
    for (damage, page) in [(500_050, 500_000), (10, 500_000), (900_000, 0)] {
        let id = store.put(&big).unwrap();
        flip(&store, &id, damage);
        let r = store.restore(&RestoreRequest::bytes(&id, page, Some(page + 100)));
        assert_eq!(
            r.status,
            RestoreStatus::Error,
            "damage at {damage}, page at {page}"
        );
        assert!(r.content.is_none());
        assert!(!store.contains(&id));
    }
    let id = store.put(&big).unwrap();
    let page = store.restore(&RestoreRequest::bytes(&id, 500_000, Some(500_100)));
    assert_eq!(page.status, RestoreStatus::Ok);
    assert_eq!(page.content_bytes().unwrap(), &big[500_000..500_100]);
    flip(&store, &id, 10);
    let r = store.restore(&RestoreRequest::lines(&id, 5, Some(6)));
    assert_eq!(r.status, RestoreStatus::Error);
    assert!(!store.contains(&id));
}

#[test]
fn caps_are_enforced_oldest_first() {
    let (_d, store) = temp_store(|o| {
        o.max_entries = 10;
        o.max_entry_bytes = 4000;
    });
    // Over the entry cap: not retained.
    let err = store.put(&vec![b'a'; 4001]).unwrap_err();
    assert!(
        err.to_string().contains("SNIP_STORE_MAX_ENTRY_BYTES"),
        "{err}"
    );
    let mut ids = Vec::new();
    for i in 0..25u32 {
        ids.push(
            store
                .put(format!("original number {i}\n").as_bytes())
                .unwrap(),
        );
        let n = fs::read_dir(store.dir().join("objects")).unwrap().count();
        assert!(n <= 10, "{n} entries over a cap of 10");
        // Distinct mtimes so that "oldest" is well defined.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The newest are kept, the oldest evicted.
    assert!(store.contains(ids.last().unwrap()));
    assert!(!store.contains(&ids[0]));
    let kept: Vec<bool> = ids.iter().map(|id| store.contains(id)).collect();
    let first_kept = kept.iter().position(|&k| k).unwrap();
    assert!(
        kept[first_kept..].iter().all(|&k| k),
        "eviction is oldest first: {kept:?}"
    );
}

#[test]
fn the_root_directory_is_refused_as_a_store() {
    let err = Store::open(&StoreOptions::in_dir("/")).unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("root directory"), "{err}");
    assert!(!std::path::Path::new("/objects").exists());
}

/// The ledger and the lock are opened with the checks the object files get: a file
/// open to others or owned by someone else is refused and never written.
#[test]
fn a_ledger_or_lock_not_private_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&StoreOptions::in_dir(&dir)).unwrap();
    let row = snip_store::LedgerRow::context_summary("test", 10, 5, 1);
    store.try_record(&row).unwrap();
    let ledger = dir.join("ledger.jsonl");
    let good = fs::read(&ledger).unwrap();

    fs::set_permissions(&ledger, fs::Permissions::from_mode(0o644)).unwrap();
    let err = store.try_record(&row).unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    assert_eq!(fs::read(&ledger).unwrap(), good, "a row was appended");
    fs::set_permissions(&ledger, fs::Permissions::from_mode(0o600)).unwrap();

    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&ledger, Some(65534), Some(65534)).unwrap();
        let err = store.try_record(&row).unwrap_err();
        assert!(err.to_string().contains("owned by uid 65534"), "{err}");
        assert_eq!(fs::read(&ledger).unwrap(), good, "a row was appended");
        std::os::unix::fs::chown(&ledger, Some(0), Some(0)).unwrap();
    }

    let lock = dir.join("lock");
    fs::set_permissions(&lock, fs::Permissions::from_mode(0o666)).unwrap();
    let err = store.try_record(&row).unwrap_err();
    assert!(matches!(err, StoreError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("lock"), "{err}");
    assert_eq!(fs::read(&ledger).unwrap(), good, "a row was appended");
}
