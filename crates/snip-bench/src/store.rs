//! The bench's store: a real `snip-store` in a private temporary directory, so a run
//! never touches the user's store and every restore call goes through the real
//! restore protocol.

use crate::clue::CallArgs;
use crate::report::{BenchStore, Restored};
use snip_core::{Retain, Retention};
use snip_store::{RestoreMode, RestoreRequest, Store, StoreOptions};

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

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }
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
