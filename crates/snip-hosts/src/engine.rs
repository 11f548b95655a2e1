//! The calls every host adapter makes: compress a tool output (keeping the original in
//! the store and writing a ledger row tagged with the host and tool), restore a slice
//! of an original, and summarize the ledger.

use serde_json::{json, Value};
use snip_core::{Config, Outcome};
use snip_store::{RestoreRequest, StoreHandle};
use std::sync::OnceLock;

/// The store, opened once per process from `SNIP_STORE*` variables.
fn store() -> &'static StoreHandle {
    static STORE: OnceLock<StoreHandle> = OnceLock::new();
    STORE.get_or_init(snip_store::open_from_env)
}

/// Compresses `input` (one tool output, raw bytes) for `source`, e.g.
/// `claude-code:Bash` or `opencode:bash`. The original is retained in the store and a
/// ledger row is written when the output changes.
///
/// Never fails: a configuration error, a store that cannot be opened or any internal
/// error yields an unchanged (or lossless-only) [`Outcome`] (fail open).
pub fn compress(input: &[u8], source: &str) -> Outcome {
    compress_within(input, source, usize::MAX)
}

/// [`compress`] with the budget lowered to `max_bytes` when that is below the
/// configured one (see [`within`]): for one of several outputs that share a budget.
pub fn compress_within(input: &[u8], source: &str, max_bytes: usize) -> Outcome {
    let Ok(config) = crate::common::core_config() else {
        return Outcome::unchanged(input);
    };
    snip_store::compress_recorded(input, &within(&config, max_bytes), store(), source)
}

/// `config` with its budget lowered to `max_bytes` (never raised), and the head, tail
/// and salient shares scaled with it, so they keep their proportions.
pub fn within(config: &Config, max_bytes: usize) -> Config {
    if max_bytes >= config.max_bytes {
        return config.clone();
    }
    let scale = |v: usize| (v as u128 * max_bytes as u128 / config.max_bytes as u128) as usize;
    Config {
        max_bytes,
        head_bytes: scale(config.head_bytes),
        tail_bytes: scale(config.tail_bytes),
        salient_bytes: scale(config.salient_bytes),
        ..config.clone()
    }
}

/// Compresses a UTF-8 string field. Returns `None` when nothing shrank or the output
/// is not valid UTF-8 (the core never splits a code point, so this only guards
/// against a broken invariant).
pub fn compress_str(input: &str, source: &str) -> Option<String> {
    compress_str_within(input, source, usize::MAX)
}

/// [`compress_str`] within `max_bytes` (see [`compress_within`]).
pub fn compress_str_within(input: &str, source: &str, max_bytes: usize) -> Option<String> {
    let outcome = compress_within(input.as_bytes(), source, max_bytes);
    if !outcome.changed || outcome.output.len() >= input.len() {
        return None;
    }
    String::from_utf8(outcome.output).ok()
}

/// Answers one restore request (see `docs/restore.md`) with the store's response in
/// its JSON form.
pub fn restore_request(req: &RestoreRequest) -> Value {
    serde_json::to_value(store().restore(req))
        .unwrap_or_else(|e| json!({ "status": "error", "note": e.to_string() }))
}

/// The savings ledger summary (every rewrite, including those that saved nothing).
pub fn stats() -> Value {
    match store() {
        StoreHandle::Open(s) => serde_json::to_value(s.stats(None))
            .unwrap_or_else(|e| json!({ "status": "error", "note": e.to_string() })),
        StoreHandle::Disabled => {
            json!({ "status": "unavailable", "note": "the store is off (SNIP_STORE=0)" })
        }
        StoreHandle::Unavailable(why) => json!({ "status": "unavailable", "note": why }),
    }
}
