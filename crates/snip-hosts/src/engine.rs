//! The calls every host adapter makes: compress a tool output (keeping the original in
//! the store and writing a ledger row tagged with the host and tool), restore a slice
//! of an original, and summarize the ledger.

use serde_json::{json, Value};
use snip_core::{Config, Outcome, Retention};
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
    let outcome = snip_store::compress_recorded(input, &config, store(), source);
    finish(outcome, config.max_bytes)
}

/// What every outcome of this process goes through before a host sees it: a store
/// failure that left the output over `max_bytes` is remembered (see
/// [`store_failure`]).
fn finish(outcome: Outcome, max_bytes: usize) -> Outcome {
    if let Some(Retention::Failed { reason }) = &outcome.retention {
        if outcome.output.len() > max_bytes {
            let _ = NOT_KEPT.set(reason.clone());
        }
    }
    outcome
}

/// Why the store could not keep an original this process needed kept (so the output
/// stayed over the budget), the first time it happened.
static NOT_KEPT: OnceLock<String> = OnceLock::new();

/// The reason the store could not keep an original during this process, when that
/// left an output over the budget (only lossless rules applied); `None` otherwise.
pub fn store_failure() -> Option<&'static str> {
    NOT_KEPT.get().map(String::as_str)
}

/// The first settings error this process met (outputs then pass unchanged), recorded
/// by [`crate::common::core_config`].
pub(crate) static BAD_SETTING: OnceLock<String> = OnceLock::new();

/// The settings error that made this process pass outputs through unchanged (a
/// `SNIP_*` variable that is not valid, in its one-line form); `None` otherwise.
pub fn setting_error() -> Option<&'static str> {
    BAD_SETTING.get().map(String::as_str)
}

/// The restore tool's name as this process's host shows it to the model (see
/// [`set_restore_tool`]); unset: `snip_restore`, the MCP server's own name.
static RESTORE_TOOL: OnceLock<&'static str> = OnceLock::new();

/// Makes the markers of this process quote `tool` instead of `snip_restore`, e.g.
/// `mcp__snip__snip_restore` in Claude Code (the core renders it, so budgets count
/// it). `SNIP_RESTORE_TOOL`, when set, wins. The first call wins.
pub fn set_restore_tool(tool: &'static str) {
    let _ = RESTORE_TOOL.set(tool);
}

/// The host's restore tool name set by [`set_restore_tool`], if any.
pub(crate) fn host_restore_tool() -> Option<&'static str> {
    RESTORE_TOOL.get().copied()
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
        let o = finish(outcomes.next()?, config.max_bytes);
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
