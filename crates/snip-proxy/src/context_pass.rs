//! The one place the proxy calls the conversation pass, through its entry point for a
//! request's message list (`snip_context::compress_messages_cached`, with the
//! cache-aware release rule, remembering each result's digest and summary between
//! requests). Keep it narrow: when the pass's entry point changes, only this
//! function follows.
//!
//! The pass reads Anthropic Messages and Chat Completions requests (a `messages`
//! array) and Responses requests (the `input` items, `Format::Responses`: only a
//! `function_call_output`'s `output` is ever replaced). `Api::context_format`
//! (`rewrite.rs`) names the format for each API shape.

use crate::memo::Memo;
use serde_json::Value;
use snip_context::{
    compress_messages_cached, ContextReport, ContextSettings, Format, FormatChoice, PassCache,
};
use snip_store::StoreHandle;

/// Runs the conversation pass over the array `list` (a request's `messages`, or a
/// Responses request's `input`) read as
/// `format`, keeping each replaced original in `store`. `Some((the new array,
/// report))` only when a result was replaced (the caller carries its changed results
/// into the client's bytes); `None` when the pass changed nothing, is disabled, or the
/// store is not open (a summary must quote a restorable id). `stored` remembers the
/// ids of originals already stored, so a later request does not store them again;
/// `cache` remembers the pass's work on each result (its digest, and once stored its
/// summary), so a later request does not read it again.
pub(crate) fn conversation_pass(
    list: &Value,
    format: Format,
    settings: &ContextSettings,
    store: &StoreHandle,
    stored: &Memo<Option<String>>,
    cache: &PassCache,
) -> Option<(Value, ContextReport)> {
    if !settings.enabled {
        return None;
    }
    let s = store.store()?;
    let mut put = |bytes: &[u8]| {
        stored.get_or(
            bytes,
            |id| id.as_ref().map_or(0, String::len),
            || s.put(bytes).ok(),
        )
    };
    let out =
        compress_messages_cached(list, FormatChoice::Fixed(format), settings, &mut put, cache);
    (out.changed && out.report.summarised > 0).then_some((out.request, out.report))
}
