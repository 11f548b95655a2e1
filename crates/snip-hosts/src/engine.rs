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
/// [`store_failure`]), and restore calls quoting the fresh id take the host's name for
/// the restore tool (see [`set_restore_tool`]).
fn finish(mut outcome: Outcome, max_bytes: usize) -> Outcome {
    if let Some(Retention::Failed { reason }) = &outcome.retention {
        if outcome.output.len() > max_bytes {
            let _ = NOT_KEPT.set(reason.clone());
        }
    }
    if let (Some(tool), Some(Retention::Retained { id })) = (RESTORE_TOOL.get(), &outcome.retention)
    {
        outcome.output = name_restore_tool(&outcome.output, id, tool);
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

/// The restore tool's name as this process's host shows it to the model (see
/// [`set_restore_tool`]); unset: `snip_restore`, the MCP server's own name.
static RESTORE_TOOL: OnceLock<&'static str> = OnceLock::new();

/// Makes the markers of this process quote `tool` instead of `snip_restore`, e.g.
/// `mcp__snip__snip_restore` in Claude Code. The first call wins.
pub fn set_restore_tool(tool: &'static str) {
    let _ = RESTORE_TOOL.set(tool);
}

/// `output` with the restore calls that quote this outcome's store id renamed to
/// `tool`, plain (`snip_restore(id="sn_…"`) and JSON-escaped (`snip_restore(id=\"sn_…\"`).
/// Only calls naming this fresh id are touched, so text of the original that happens
/// to quote other restore calls stays as it was.
fn name_restore_tool(output: &[u8], id: &str, tool: &str) -> Vec<u8> {
    let pairs = [
        (
            format!("snip_restore(id=\"{id}\""),
            format!("{tool}(id=\"{id}\""),
        ),
        (
            format!("snip_restore(id=\\\"{id}\\\""),
            format!("{tool}(id=\\\"{id}\\\""),
        ),
    ];
    let mut out = Vec::with_capacity(output.len() + 64);
    let mut i = 0;
    'scan: while i < output.len() {
        for (from, to) in &pairs {
            if output[i..].starts_with(from.as_bytes()) {
                out.extend_from_slice(to.as_bytes());
                i += from.len();
                continue 'scan;
            }
        }
        out.push(output[i]);
        i += 1;
    }
    out
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

#[cfg(test)]
mod tests {
    use super::name_restore_tool;

    #[test]
    fn renames_only_this_outcomes_calls() {
        let out = concat!(
            "a\n[snip: x · head-tail-elide · restore: snip_restore(id=\"sn_1\", mode=\"full\")]\n",
            "\"[snip: y · json-fields · restore: snip_restore(id=\\\"sn_1\\\", mode=\\\"full\\\")]\"\n",
            "quoted by the original: snip_restore(id=\"sn_2\", mode=\"full\")\n",
        );
        let got = String::from_utf8(name_restore_tool(
            out.as_bytes(),
            "sn_1",
            "mcp__snip__snip_restore",
        ))
        .unwrap();
        assert_eq!(
            got,
            concat!(
                "a\n[snip: x · head-tail-elide · restore: mcp__snip__snip_restore(id=\"sn_1\", mode=\"full\")]\n",
                "\"[snip: y · json-fields · restore: mcp__snip__snip_restore(id=\\\"sn_1\\\", mode=\\\"full\\\")]\"\n",
                "quoted by the original: snip_restore(id=\"sn_2\", mode=\"full\")\n",
            )
        );
    }
}
