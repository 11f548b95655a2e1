//! The one place the proxy calls the conversation pass, through its documented entry
//! point for a request's JSON text (`snip_context::compress_request_json`, with the
//! cache-aware release rule). Keep it narrow: when the pass's entry point changes, only
//! this function follows.
//!
//! The pass reads Anthropic Messages and Chat Completions requests (a `messages`
//! array); it has no reader for the Responses API's `input` items, so Responses
//! requests get the per-result step only.

use crate::memo::Memo;
use snip_context::{compress_request_json, ContextReport, ContextSettings, Format, FormatChoice};
use snip_store::StoreHandle;
use std::borrow::Cow;

/// Runs the conversation pass over the JSON `request` read as `format`, keeping each
/// replaced original in `store`. `Some((the pass's body, report))` only when a result
/// was replaced (the body is the pass's compact re-serialisation: the caller splices
/// its changed results into the client's bytes); `None` when the pass changed nothing,
/// is disabled, or the store is not open (a summary must quote a restorable id).
/// `stored` remembers the ids of originals already stored, so a later request does not
/// store them again.
pub(crate) fn conversation_pass(
    request: &[u8],
    format: Format,
    settings: &ContextSettings,
    store: &StoreHandle,
    stored: &Memo<Option<String>>,
) -> Option<(Vec<u8>, ContextReport)> {
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
    let (out, report) =
        compress_request_json(request, FormatChoice::Fixed(format), settings, &mut put);
    match out {
        Cow::Owned(body) if report.summarised > 0 => Some((body, report)),
        _ => None,
    }
}
