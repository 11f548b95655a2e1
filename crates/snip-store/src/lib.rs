//! snip-store: all of snip's disk I/O.
//!
//! - The **store of originals**: every original a lossy rewrite shortened is kept in a
//!   private directory (0700, files 0600), written atomically, bounded by TTL, total
//!   size, entry count and entry size, evicted oldest first, safe with many processes
//!   ([`Store`]). Ids are keyed hashes of the original ([`id`]).
//! - **Restore**: bounded slices of an original by bytes, lines, literal search or in
//!   full, optionally scoped to one JSON field ([`RestoreRequest`],
//!   [`RestoreResponse`]; the protocol is `docs/restore.md`).
//! - The **savings ledger**: one JSON line per rewrite and an honest summary
//!   ([`LedgerRow`], [`Stats`]).
//! - [`compress_recorded`]: the one call every surface makes: compress, retain,
//!   record, and never error or panic.
//!
//! ```
//! use snip_core::Config;
//! use snip_store::{compress_recorded, StoreHandle};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let dir = dir.path().to_string_lossy().into_owned();
//! let store = StoreHandle::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| dir.clone()));
//! let log: String = (0..5000).map(|i| format!("line {i}: ok\n")).collect();
//! let out = compress_recorded(log.as_bytes(), &Config::default(), &store, "example");
//! // Shortened, and the original kept: the marker quotes the restore call.
//! assert!(out.output.len() < log.len());
//! assert!(out.id().is_some());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod behind;
mod entry;
pub mod error;
mod fields;
mod fsutil;
pub mod id;
pub mod ledger;
pub mod options;
mod parts;
pub mod reader;
mod receipt;
mod redis_store;
pub mod restore;
mod store;

pub use behind::{flush_held, HELD_MAX_BYTES};
pub use entry::HEADER_LEN;
pub use error::StoreError;
pub use fields::{compress_json_fields, Fields, MIN_FIELD_CHARS};
pub use ledger::{LedgerRow, SourceStats, Stats};
pub use options::{StoreOptions, StoreUrl};
pub use parts::{compress_parts, within};
pub use reader::{compress_reader, compress_reader_sized, Compressed, ReadError};
pub use receipt::Receipt;
pub use restore::{
    Align, Encoding, JsonText, RestoreMode, RestoreRequest, RestoreResponse, RestoreStatus,
    SearchMatch,
};
pub use store::{GcReport, Store};

use snip_core::{Config, Outcome, Retain, Retention};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The store as a surface holds it: open, turned off, or unavailable (with why).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // One per process or surface; never in a collection.
pub enum StoreHandle {
    /// An open store.
    Open(Store),
    /// `SNIP_STORE=0`: nothing is retained or recorded; lossy markers say the original
    /// is not retained.
    Disabled,
    /// The store could not be opened (bad settings, refused or unwritable directory):
    /// compression applies only lossless rules. Holds the one-line reason.
    Unavailable(String),
}

impl StoreHandle {
    /// Opens the store described by `opts`; never fails (see the variants).
    pub fn open(opts: &StoreOptions) -> StoreHandle {
        if !opts.enabled {
            return StoreHandle::Disabled;
        }
        match Store::open(opts) {
            Ok(s) => StoreHandle::Open(s),
            Err(e) => StoreHandle::Unavailable(e.to_string()),
        }
    }

    /// Reads the options through `lookup` and opens the store.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> StoreHandle {
        match StoreOptions::from_lookup(lookup) {
            Ok(o) => StoreHandle::open(&o),
            Err(e) => StoreHandle::Unavailable(e.to_string()),
        }
    }

    /// The open store, if any.
    pub fn store(&self) -> Option<&Store> {
        match self {
            StoreHandle::Open(s) => Some(s),
            _ => None,
        }
    }

    /// Answers a restore request; `unavailable` when the store is off or not open.
    pub fn restore(&self, req: &RestoreRequest) -> RestoreResponse {
        match self {
            StoreHandle::Open(s) => s.restore(req),
            StoreHandle::Disabled => RestoreResponse::failure(
                req,
                RestoreStatus::Unavailable,
                "the store of originals is off (SNIP_STORE=0); nothing can be restored",
            ),
            StoreHandle::Unavailable(why) => {
                RestoreResponse::failure(req, RestoreStatus::Unavailable, why.clone())
            }
        }
    }

    /// Answers a restore request given as JSON (e.g. an MCP tool's arguments); a
    /// malformed request answers `invalid`.
    pub fn restore_json(&self, json: &str) -> RestoreResponse {
        match RestoreRequest::from_json(json) {
            Ok(req) => self.restore(&req),
            Err(resp) => *resp,
        }
    }

    /// Keeps `original` in the store when it is open: the [`Retention`] a marker may
    /// cite (`Retained` only once the original is written), `Off` or `Failed` with why.
    pub fn retention(&self, original: &[u8]) -> Retention {
        match self {
            StoreHandle::Open(s) => match s.put(original) {
                Ok(id) => Retention::Retained { id },
                Err(e) => Retention::Failed {
                    reason: e.to_string(),
                },
            },
            StoreHandle::Disabled => Retention::Off,
            StoreHandle::Unavailable(why) => Retention::Failed {
                reason: why.clone(),
            },
        }
    }
}

/// Opens the store from the process environment (`SNIP_STORE`, `SNIP_STORE_DIR`, …).
pub fn open_from_env() -> StoreHandle {
    StoreHandle::from_lookup(|k| std::env::var(k).ok())
}

struct HandleRetain<'a>(&'a StoreHandle);

/// Retention for the shared store, sent later: each original gets its id now and is
/// sent with the ledger row in one round trip ([`compress_shared`]).
struct Deferred<'a> {
    store: &'a Store,
    pending: Vec<redis_store::Pending>,
}

impl Retain for Deferred<'_> {
    fn retain(&mut self, original: &[u8]) -> Retention {
        let id = self
            .store
            .check_size(original.len() as u64)
            .and_then(|()| self.store.key());
        match id {
            Ok(key) => {
                let digest = id::sha256(original);
                let id = key.id_for_digest(&digest);
                self.pending
                    .push(redis_store::Pending::new(id.clone(), &digest, original));
                Retention::Retained { id }
            }
            Err(e) => Retention::Failed {
                reason: e.to_string(),
            },
        }
    }
}

/// [`compress_recorded`] on the shared store: the originals and the ledger row go in
/// one pipeline after compressing. The output is returned only once they are written;
/// when that fails, the input is compressed again with the store failed (lossless
/// rules only), so no marker cites an original that was not kept.
fn compress_shared(
    input: &[u8],
    config: &Config,
    store: &Store,
    shared: &redis_store::Redis,
    source: &str,
) -> Outcome {
    let mut deferred = Deferred {
        store,
        pending: Vec::new(),
    };
    let outcome = snip_core::compress(input, config, &mut deferred);
    let row = (config.enabled && (outcome.changed || input.len() > config.max_bytes))
        .then(|| LedgerRow::from_outcome(&outcome, source));
    match shared.write(&deferred.pending, row.as_ref()) {
        Ok(()) => outcome,
        Err(e) if deferred.pending.is_empty() => {
            let _ = e; // only the ledger row was lost, as with a full disk
            outcome
        }
        Err(e) => {
            let reason = e.to_string();
            snip_core::compress(input, config, &mut Refuse(&reason))
        }
    }
}

/// Retention that always fails with one reason.
struct Refuse<'a>(&'a str);

impl Retain for Refuse<'_> {
    fn retain(&mut self, _original: &[u8]) -> Retention {
        Retention::Failed {
            reason: self.0.to_string(),
        }
    }
}

impl Retain for HandleRetain<'_> {
    fn retain(&mut self, original: &[u8]) -> Retention {
        self.0.retention(original)
    }
}

/// Compresses `input` with the store behind `store`, and appends a ledger row for
/// every call that changed something or was over budget (`config.max_bytes`), tagged
/// with `source` (e.g. `filter`, `hook:claude-code`).
///
/// Never errors and never panics: a panic anywhere inside gives the input back
/// unchanged with [`Outcome::failed_open`] set. When the store fails to keep the
/// original, the core sees [`Retention::Failed`] and applies only lossless rules; when
/// the store is off it sees [`Retention::Off`].
pub fn compress_recorded(
    input: &[u8],
    config: &Config,
    store: &StoreHandle,
    source: &str,
) -> Outcome {
    guarded(input, || {
        if let StoreHandle::Open(s) = store {
            if let Some(r) = s.shared() {
                return compress_shared(input, config, s, r, source);
            }
        }
        let outcome = snip_core::compress(input, config, &mut HandleRetain(store));
        if let StoreHandle::Open(s) = store {
            if config.enabled && (outcome.changed || input.len() > config.max_bytes) {
                s.record(&LedgerRow::from_outcome(&outcome, source));
            }
        }
        outcome
    })
}

/// [`compress_recorded`] without the ledger row: originals go to the store behind
/// `store`, and the caller writes its own rows (the proxy writes one per request, not
/// one per tool result). Never errors and never panics, as [`compress_recorded`].
pub fn compress_kept(input: &[u8], config: &Config, store: &StoreHandle) -> Outcome {
    guarded(input, || {
        snip_core::compress(input, config, &mut HandleRetain(store))
    })
}

/// `run()`, or `input` unchanged with [`Outcome::failed_open`] set when it panics.
fn guarded(input: &[u8], run: impl FnOnce() -> Outcome) -> Outcome {
    let run = catch_unwind(AssertUnwindSafe(run));
    run.unwrap_or_else(|panic| {
        let why = snip_core::util::panic_message(panic.as_ref(), "unknown panic");
        let mut o = Outcome::unchanged(input);
        o.failed_open = Some(format!("internal panic: {why}"));
        o
    })
}
