//! Helpers shared by the store's integration tests.
#![allow(dead_code)]

use snip_store::{
    RestoreMode, RestoreRequest, RestoreResponse, RestoreStatus, Store, StoreOptions,
};
use std::path::{Path, PathBuf};

/// The real captures shipped in the repository.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus")
}

/// Every capture (`*.txt`) in the corpus, sorted by name, with its bytes.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(corpus_dir())
        .expect("fixtures/corpus")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(
        v.len() >= 26,
        "expected the 26 corpus captures, found {}",
        v.len()
    );
    v
}

/// A fresh store in a temp dir (kept alive by the returned guard).
pub fn temp_store(tune: impl FnOnce(&mut StoreOptions)) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = StoreOptions::in_dir(dir.path().join("store"));
    tune(&mut o);
    let s = Store::open(&o).unwrap();
    (dir, s)
}

/// Pages through `req` (bytes or lines), following `next`, and returns the
/// concatenated exact bytes and the pages.
pub fn page_all(store: &Store, mut req: RestoreRequest) -> (Vec<u8>, Vec<RestoreResponse>) {
    let mut out = Vec::new();
    let mut pages = Vec::new();
    loop {
        let r = store.restore(&req);
        assert_eq!(r.status, RestoreStatus::Ok, "{:?}", r.note);
        out.extend(r.content_bytes().unwrap());
        let next = r.next;
        if let Some(n) = next {
            match req.mode {
                RestoreMode::Bytes => assert_eq!(Some(n), r.end, "bytes: next is this page's end"),
                RestoreMode::Lines => assert_eq!(Some(n), r.end.map(|e| e + 1)),
                _ => {}
            }
        }
        pages.push(r);
        assert!(pages.len() < 1_000_000, "paging does not end");
        match next {
            Some(n) => req.start = Some(n),
            None => return (out, pages),
        }
    }
}

/// Lines `a..=b` (1-based) of `text`, each with its `\n`, computed independently of
/// the store.
pub fn lines_of(text: &[u8], a: u64, b: u64) -> Vec<u8> {
    text.split_inclusive(|&c| c == b'\n')
        .skip((a - 1) as usize)
        .take((b + 1 - a) as usize)
        .flatten()
        .copied()
        .collect()
}
