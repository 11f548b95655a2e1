//! Restore statuses: unknown, expired, malformed ids and requests, field scoping.

mod common;

use common::{corpus_dir, page_all, temp_store};
use snip_store::{RestoreMode, RestoreRequest, RestoreStatus, StoreHandle, StoreOptions};
use std::collections::BTreeMap;
use std::fs::{self, File, FileTimes};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

#[test]
fn unknown_id_is_not_found() {
    let (_d, store) = temp_store(|_| {});
    let r = store.restore(&RestoreRequest::bytes(
        "sn_0123456789abcdef01234567",
        0,
        None,
    ));
    assert_eq!(r.status, RestoreStatus::NotFound);
    assert!(r.content.is_none() && r.sha256.is_none());
    assert!(!r.note.contains('\n'));
}

#[test]
fn an_original_past_its_ttl_is_expired_then_collected() {
    let (_d, store) = temp_store(|o| o.ttl = Duration::from_secs(3600));
    let id = store.put(b"an old original\n").unwrap();
    let fresh = store.put(b"a fresh original\n").unwrap();
    let path = store.dir().join("objects").join(&id);
    let old = SystemTime::now() - Duration::from_secs(3601);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let r = store.restore(&RestoreRequest::full(&id));
    assert_eq!(r.status, RestoreStatus::Expired, "{}", r.note);
    assert!(r.content.is_none());
    let report = store.gc().unwrap();
    assert_eq!((report.expired, report.evicted, report.entries), (1, 0, 1));
    assert_eq!(
        store.restore(&RestoreRequest::full(&id)).status,
        RestoreStatus::NotFound
    );
    assert_eq!(
        store.restore(&RestoreRequest::full(&fresh)).status,
        RestoreStatus::Ok
    );
    // Storing it again starts its TTL over.
    assert_eq!(store.put(b"an old original\n").unwrap(), id);
    assert_eq!(
        store.restore(&RestoreRequest::full(&id)).status,
        RestoreStatus::Ok
    );
}

/// Every file under `root` with its size, mtime and atime (ns). Directories' atimes
/// are left out: listing them is what moves those.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, i64, i64, i64, i64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            let (at, atn) = if m.is_dir() {
                (0, 0)
            } else {
                (m.atime(), m.atime_nsec())
            };
            out.insert(p, (m.len(), m.mtime(), m.mtime_nsec(), at, atn));
        }
    }
    out
}

#[test]
fn malformed_ids_are_invalid_and_touch_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let store_dir = tmp.path().join("store");
    let store = snip_store::Store::open(&StoreOptions::in_dir(&store_dir)).unwrap();
    let real = store.put(b"a real original\n").unwrap();
    // Sentinels where a path built from a hostile id would land. Their atime is older
    // than their mtime, so any read would move it (relatime).
    let sentinel_abs = tmp.path().join("sentinel");
    for p in [&sentinel_abs, &store_dir.join("x"), &tmp.path().join("x")] {
        fs::write(p, b"secret").unwrap();
        let f = File::options().write(true).open(p).unwrap();
        f.set_times(
            FileTimes::new()
                .set_accessed(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
                .set_modified(SystemTime::now()),
        )
        .unwrap();
    }
    let before = snapshot(tmp.path());
    let overlong = format!("sn_{}", "a".repeat(100_000));
    let ids = [
        "",
        "../x",
        "../../x",
        "objects/../x",
        sentinel_abs.to_str().unwrap(),
        "/etc/passwd",
        "sn_0123456789abcdef0123456\0",
        "sn_0123456789abcdef\0/../../x",
        "sn_0123456789abcdef01234é",
        "sn_ü123456789abcdef0123456",
        "sn_0123456789ABCDEF01234567",
        "sn_0123456789abcdef0123456",
        &overlong,
        &real[..real.len() - 1],
        "sn_0123456789abcdef01234567/",
        " sn_0123456789abcdef0123456",
        "sn_0123456789abcdef0123456g",
        ".tmp-abc",
        "key",
        "lock",
    ];
    for id in ids {
        for mode in [
            RestoreMode::Bytes,
            RestoreMode::Lines,
            RestoreMode::Search,
            RestoreMode::Full,
        ] {
            let req = RestoreRequest {
                id: id.to_string(),
                mode,
                query: Some("x".into()),
                ..Default::default()
            };
            let r = store.restore(&req);
            assert_eq!(
                r.status,
                RestoreStatus::Invalid,
                "id {:?}",
                id.chars().take(40).collect::<String>()
            );
            assert!(!r.note.contains('\n') && r.note.len() < 300, "{}", r.note);
            assert!(r.id.chars().count() <= 64);
            assert!(r.content.is_none());
        }
    }
    assert_eq!(snapshot(tmp.path()), before, "an invalid id touched a file");
}

#[test]
fn malformed_requests_are_invalid() {
    let (_d, store) = temp_store(|_| {});
    let id = store.put(b"line 1\nline 2\nline 3\n").unwrap();
    let cases = [
        RestoreRequest::bytes(&id, 22, None),
        RestoreRequest::bytes(&id, 5, Some(3)),
        RestoreRequest::lines(&id, 0, None),
        RestoreRequest::lines(&id, 4, None),
        RestoreRequest::lines(&id, 3, Some(2)),
        RestoreRequest::search(&id, ""),
        RestoreRequest::search(&id, &"q".repeat(2000)),
        RestoreRequest {
            max_bytes: Some(3),
            ..RestoreRequest::bytes(&id, 0, None)
        },
        RestoreRequest {
            field: Some("/a".into()),
            ..RestoreRequest::bytes(&id, 0, None)
        },
    ];
    for req in cases {
        let r = store.restore(&req);
        assert_eq!(r.status, RestoreStatus::Invalid, "{req:?}");
        assert!(!r.note.contains('\n'));
    }
    // Ends past the end are clamped, not errors; over-large caps are clamped to 64 KiB.
    let r = store.restore(&RestoreRequest::bytes(&id, 0, Some(1 << 40)));
    assert_eq!((r.status, r.end), (RestoreStatus::Ok, Some(21)));
    let big = store.put(&vec![b'y'; 200_000]).unwrap();
    let r = store.restore(&RestoreRequest {
        max_bytes: Some(1 << 30),
        ..RestoreRequest::bytes(&big, 0, None)
    });
    assert_eq!(r.content.unwrap().len(), 65536);
    // A JSON request with an unknown field or a bad mode is invalid.
    let h = StoreHandle::Open(store);
    let r = h.restore_json(&format!(r#"{{"id":"{id}","offset":3}}"#));
    assert_eq!(r.status, RestoreStatus::Invalid);
    let r = h.restore_json(&format!(
        r#"{{"id":"{id}","mode":"lines","start":2,"end":2}}"#
    ));
    assert_eq!(r.content.as_deref(), Some("line 2\n"));
}

#[test]
fn a_turned_off_or_broken_store_is_unavailable() {
    let req = RestoreRequest::full("sn_0123456789abcdef01234567");
    let off = StoreHandle::from_lookup(|k| (k == "SNIP_STORE").then(|| "0".to_string()));
    assert!(matches!(off, StoreHandle::Disabled));
    assert_eq!(off.restore(&req).status, RestoreStatus::Unavailable);
    let bad = StoreHandle::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| "relative".to_string()));
    let r = bad.restore(&req);
    assert_eq!(r.status, RestoreStatus::Unavailable);
    assert!(r.note.contains("SNIP_STORE_DIR"), "{}", r.note);
}

/// Finds the JSON pointer of the longest string in `v`.
fn longest_string(v: &serde_json::Value, at: String, best: &mut (usize, String)) {
    match v {
        serde_json::Value::String(s) if s.len() > best.0 => *best = (s.len(), at),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                longest_string(x, format!("{at}/{i}"), best);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                longest_string(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    best,
                );
            }
        }
        _ => {}
    }
}

#[test]
fn field_scopes_to_one_json_string_of_a_corpus_capture() {
    let (_d, store) = temp_store(|_| {});
    for name in [
        "pip-inspect-json-notty.txt",
        "cargo-metadata-json-notty.txt",
    ] {
        let original = fs::read(corpus_dir().join(name)).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&original).unwrap();
        let mut best = (0, String::new());
        longest_string(&doc, String::new(), &mut best);
        let (len, pointer) = best;
        assert!(len > 100, "{name}: no long string");
        let decoded = doc
            .pointer(&pointer)
            .unwrap()
            .as_str()
            .unwrap()
            .as_bytes()
            .to_vec();
        let id = store.put(&original).unwrap();
        let mut req = RestoreRequest::bytes(&id, 0, None);
        req.field = Some(pointer.clone());
        req.max_bytes = Some(500);
        let (got, pages) = page_all(&store, req);
        assert!(
            got == decoded,
            "{name}: field {pointer} pages differ from the decoded string"
        );
        assert_eq!(pages[0].scope_bytes, Some(decoded.len() as u64));
        assert_eq!(pages[0].total_bytes, Some(original.len() as u64));
        assert_eq!(pages[0].field.as_deref(), Some(pointer.as_str()));
        // An inner slice, as a json-fields marker would quote it.
        let (s, e) = (len as u64 / 3, 2 * len as u64 / 3);
        let mut req = RestoreRequest::bytes(&id, s, Some(e));
        req.field = Some(pointer.clone());
        req.max_bytes = Some(65536);
        let r = store.restore(&req);
        assert_eq!(r.content_bytes().unwrap(), decoded[s as usize..e as usize]);
        // Lines within the field.
        let mut req = RestoreRequest::lines(&id, 1, Some(1));
        req.field = Some(pointer.clone());
        let r = store.restore(&req);
        assert_eq!(r.status, RestoreStatus::Ok);
        assert!(decoded.starts_with(&r.content_bytes().unwrap()));
        // A non-string value gives its exact text in the original.
        let parent = &pointer[..pointer.rfind('/').unwrap()];
        let mut req = RestoreRequest::bytes(&id, 0, None);
        req.field = Some(parent.to_string());
        req.max_bytes = Some(65536);
        let (raw, _) = page_all(&store, req);
        let reparsed: serde_json::Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(&reparsed, doc.pointer(parent).unwrap());
        assert!(
            original.windows(raw.len()).any(|w| w == raw),
            "{name}: not the exact text"
        );
        // Missing keys and bad pointers are invalid.
        for bad in ["/no such key", "no-slash", &format!("{pointer}/0")] {
            let mut req = RestoreRequest::bytes(&id, 0, None);
            req.field = Some(bad.to_string());
            let r = store.restore(&req);
            assert_eq!(r.status, RestoreStatus::Invalid, "{bad}");
        }
    }
}

/// A malformed range is `invalid` before the lookup: the same answer for an id the
/// store holds, one it evicted, and one it never had (and with no store at all).
#[test]
fn a_malformed_range_is_invalid_before_the_lookup() {
    let (_d, store) = temp_store(|_| {});
    let held = store.put(b"one\ntwo\nthree\n").unwrap();
    let absent = "sn_0123456789abcdef01234567";
    let bad = |id: &str| {
        [
            RestoreRequest::lines(id, 5, Some(2)),
            RestoreRequest::lines(id, 0, None),
            RestoreRequest::bytes(id, 9, Some(3)),
            RestoreRequest::search(id, ""),
            RestoreRequest {
                max_bytes: Some(1),
                ..RestoreRequest::full(id)
            },
        ]
    };
    for id in [held.as_str(), absent] {
        for req in bad(id) {
            let r = store.restore(&req);
            assert_eq!(r.status, RestoreStatus::Invalid, "{id} {req:?}: {}", r.note);
            let none = snip_store::RestoreResponse::no_store(&req, Path::new("/nonexistent"));
            assert_eq!(
                none.status,
                RestoreStatus::Invalid,
                "{req:?}: {}",
                none.note
            );
        }
    }
    // A well-formed request for the absent id is still not_found.
    let r = store.restore(&RestoreRequest::lines(absent, 2, Some(5)));
    assert_eq!(r.status, RestoreStatus::NotFound);
}
