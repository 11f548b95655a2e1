//! The bench's store: a real `snip-store` in a private temporary directory, so a run
//! never touches the user's store and every restore call goes through the real
//! restore protocol.

use crate::clue::CallArgs;
use crate::report::{BenchStore, Restored};
use snip_core::{Retain, Retention};
use snip_store::{RestoreMode, RestoreRequest, Store, StoreOptions};
use std::io::Write as _;

/// Size of a store key in bytes (see [`TempStore::with_key`]).
pub const KEY_LEN: usize = snip_store::id::KEY_LEN;

/// A store of originals in a temporary directory, removed when dropped.
#[derive(Debug)]
pub struct TempStore {
    store: Store,
    // Declared after `store`, so the directory outlives the store when dropped.
    _dir: tempfile::TempDir,
}

impl TempStore {
    /// Opens a store with default limits in a new temporary directory.
    ///
    /// # Errors
    /// A message when the directory cannot be made or the store cannot be opened.
    pub fn new() -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("snip-bench-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary store directory: {e}"))?;
        let opts = StoreOptions::in_dir(dir.path().join("store"));
        let store = Store::open(&opts).map_err(|e| format!("cannot open the bench store: {e}"))?;
        Ok(TempStore { store, _dir: dir })
    }

    /// [`TempStore::new`] with `key` as the store's key instead of random bytes, so the
    /// same original gets the same id on every run (ids are keyed hashes of the
    /// original; see `snip_store::id`).
    ///
    /// # Errors
    /// As [`TempStore::new`], or a message when the key file cannot be written.
    pub fn with_key(key: [u8; KEY_LEN]) -> Result<Self, String> {
        let fresh = TempStore::new()?;
        // The store keeps its key in `<store>/key` (made private on open): write ours
        // over it, then open the store again so that it reads it.
        let path = fresh.store.dir().join("key");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)?;
            f.write_all(&key)?;
            f.sync_all()
        };
        write().map_err(|e| format!("cannot write the bench store's key: {e}"))?;
        let opts = StoreOptions::in_dir(fresh.store.dir().to_path_buf());
        let store = Store::open(&opts).map_err(|e| format!("cannot open the bench store: {e}"))?;
        Ok(TempStore {
            store,
            _dir: fresh._dir,
        })
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }
}

/// Reads a store key written as 64 hexadecimal characters (either case).
///
/// # Errors
/// A message when `hex` is not exactly 64 hexadecimal characters.
pub fn parse_key(hex: &str) -> Result<[u8; KEY_LEN], String> {
    let bad = || format!("a store key is {} hexadecimal characters", 2 * KEY_LEN);
    let digits = hex.as_bytes();
    if digits.len() != 2 * KEY_LEN || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    let mut key = [0u8; KEY_LEN];
    for (k, pair) in key.iter_mut().zip(digits.chunks(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
        *k = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// The store request a parsed call stands for (the response cap is the store's default).
///
/// # Errors
/// A message when the mode is not one of `bytes`, `lines`, `search`, `full`.
pub fn request(call: &CallArgs) -> Result<RestoreRequest, String> {
    let mode = match call.mode.as_str() {
        "bytes" => RestoreMode::Bytes,
        "lines" => RestoreMode::Lines,
        "search" => RestoreMode::Search,
        "full" => RestoreMode::Full,
        other => return Err(format!("unknown restore mode `{other}`")),
    };
    Ok(RestoreRequest {
        id: call.id.clone(),
        mode,
        start: call.start,
        end: call.end,
        query: call.query.clone(),
        field: call.field.clone(),
        ..RestoreRequest::default()
    })
}

impl BenchStore for TempStore {
    fn retain(&mut self, original: &[u8]) -> Retention {
        Retain::retain(&mut self.store, original)
    }

    fn restore(&mut self, call: &CallArgs) -> Result<Restored, String> {
        let response = self.store.restore(&request(call)?);
        let json = serde_json::to_vec(&response).map_err(|e| e.to_string())?;
        Ok(Restored {
            response_bytes: json.len() as u64,
            text: response.content.unwrap_or_default(),
        })
    }
}
