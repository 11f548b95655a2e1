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
    let Ok(config) = crate::common::core_config() else {
        return Outcome::unchanged(input);
    };
    snip_store::compress_recorded(input, &config, store(), source)
}

/// Compresses a UTF-8 string field. Returns `None` when nothing shrank or the output
/// is not valid UTF-8 (the core never splits a code point, so this only guards
/// against a broken invariant).
pub fn compress_str(input: &str, source: &str) -> Option<String> {
    shrunk(input, compress(input.as_bytes(), source))
}

/// Compresses texts a reader sees together under `config`'s one budget (see
/// [`snip_store::compress_parts`]); an absent text counts as empty. Each answer is as
/// [`compress_str`]'s.
pub fn compress_parts_str<const N: usize>(
    texts: [Option<&str>; N],
    config: &Config,
    source: &str,
) -> [Option<String>; N] {
    let parts = texts.map(|t| t.unwrap_or_default().as_bytes());
    let outcomes = snip_store::compress_parts(&parts, config, store(), source);
    let mut outcomes = outcomes.into_iter();
    texts.map(|t| {
        let o = outcomes.next()?;
        shrunk(t?, o)
    })
}

/// `outcome`'s output as a string when it is shorter than `input`.
fn shrunk(input: &str, outcome: Outcome) -> Option<String> {
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
