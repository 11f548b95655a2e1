//! The one place the proxy calls the conversation pass. Keep it narrow: when the
//! pass's rule changes (e.g. how results leave the protected window), only this
//! function follows.

use crate::memo::Memo;
use serde_json::Value;
use snip_context::{compress_request, ContextReport, ContextSettings, Format, FormatChoice};
use snip_store::StoreHandle;

/// Runs the conversation pass over `request` read as `format`, keeping each replaced
/// original in `store`. `Some((request to send, report))` only when a result was
/// replaced; `None` when the pass changed nothing, is disabled, or the store is not
/// open (a summary must quote a restorable id). `stored` remembers the ids of
/// originals already stored, so a later request does not store them again.
pub(crate) fn conversation_pass(
    request: &Value,
    format: Format,
    settings: &ContextSettings,
    store: &StoreHandle,
    stored: &Memo<Option<String>>,
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
    let out = compress_request(request, FormatChoice::Fixed(format), settings, &mut put);
    out.changed.then_some((out.request, out.report))
}
