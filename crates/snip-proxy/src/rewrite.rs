//! What the proxy does to a request body it understands: per-result compression of
//! tool results not yet compressed, then the conversation pass. Everything here is
//! synchronous (it runs on a blocking thread) and fails open: any error or panic gives
//! `None`, and the caller forwards the original bytes.

use crate::context_pass::conversation_pass;
use crate::memo::Memo;
use crate::splice;
use serde_json::Value;
use snip_context::{ContextSettings, Format, PassCache};
use snip_core::Config;
use snip_store::{LedgerRow, StoreHandle};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A request shape the proxy rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages, `POST /v1/messages` (any query, e.g. `?beta=true`).
    AnthropicMessages,
    /// Anthropic token counting, `POST /v1/messages/count_tokens`: rewritten like a
    /// Messages request, so counts match what the proxy will send.
    AnthropicCountTokens,
    /// OpenAI Chat Completions, `POST /v1/chat/completions`.
    OpenAiChat,
    /// OpenAI Responses, `POST /v1/responses` (`function_call_output` items).
    OpenAiResponses,
}

impl Api {
    /// The ledger `source` of rows for this shape.
    pub fn source(self) -> &'static str {
        match self {
            Api::AnthropicMessages | Api::AnthropicCountTokens => "proxy:anthropic",
            Api::OpenAiChat => "proxy:openai-chat",
            Api::OpenAiResponses => "proxy:openai-responses",
        }
    }

    /// The conversation pass's format for this shape: the list it reads is the
    /// request's `messages` array, or a Responses request's `input` items.
    fn context_format(self) -> Option<Format> {
        match self {
            Api::AnthropicMessages | Api::AnthropicCountTokens => Some(Format::Anthropic),
            Api::OpenAiChat => Some(Format::OpenAi),
            Api::OpenAiResponses => Some(Format::Responses),
        }
    }
}

/// What a rewrite produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The body to forward: the client's bytes with each rewritten tool result's
    /// content value replaced (every other byte is the client's).
    pub body: Vec<u8>,
    /// Tool results whose text the per-result rules changed.
    pub results_compressed: usize,
    /// Older tool results the conversation pass replaced by a summary.
    pub summarised: usize,
    /// Bytes of tool-result text each step replaced, before (UTF-8): the per-result
    /// step's originals plus the conversation pass's originals (a result compressed
    /// and then summarised counts at both steps).
    pub before: u64,
    /// Bytes of what replaced them, after, counted the same way. `before - after` is
    /// exactly the text bytes this request no longer carries.
    pub after: u64,
}

/// Rewrites request bodies with frozen settings and one store.
#[derive(Debug)]
pub struct Rewriter {
    config: Config,
    context: ContextSettings,
    store: StoreHandle,
    /// A result's text → its compressed text (`None`: left as it is).
    compressed: Memo<Option<std::sync::Arc<str>>>,
    /// An original the conversation pass stored → its store id.
    stored: Memo<Option<String>>,
    /// The conversation pass's work on each result (see `snip_context::PassCache`).
    pass_cache: PassCache,
}

impl Rewriter {
    /// A rewriter compressing results with `config`, running the conversation pass
    /// with `context`, keeping originals in `store` (and writing one ledger row per
    /// rewritten request there).
    pub fn new(config: Config, context: ContextSettings, store: StoreHandle) -> Self {
        Rewriter {
            config,
            context,
            store,
            compressed: Memo::default(),
            stored: Memo::default(),
            pass_cache: PassCache::default(),
        }
    }

    /// The store originals go to.
    pub fn store(&self) -> &StoreHandle {
        &self.store
    }

    /// Rewrites `body` as `api`: `None` when it is not JSON of that shape, nothing
    /// changed, or anything failed (the caller then forwards `body` as it came).
    pub fn rewrite(&self, api: Api, body: &[u8]) -> Option<Rewritten> {
        let out = catch_unwind(AssertUnwindSafe(|| self.rewrite_inner(api, body)))
            .ok()
            .flatten()?;
        if let StoreHandle::Open(s) = &self.store {
            let mut row =
                LedgerRow::context_summary(api.source(), out.before, out.after, out.summarised);
            row.rules = Vec::new();
            if out.results_compressed > 0 {
                row.rules.push("proxy-tool-results".into());
            }
            if out.summarised > 0 {
                row.rules.push("context-summary".into());
            }
            row.note = Some(format!(
                "request body: {} tool results compressed, {} summarised",
                out.results_compressed, out.summarised
            ));
            s.record(&row);
        }
        Some(out)
    }

    fn rewrite_inner(&self, api: Api, body: &[u8]) -> Option<Rewritten> {
        let text = std::str::from_utf8(body).ok()?;
        let scan = splice::scan(api, text)?;
        let spans = &scan.spans;
        // The pass keeps the newest `keep_last` results whole: with no more results
        // than that it cannot change anything. When it runs, the `messages` array is
        // read into a tree once, and both steps work on that tree: the per-result
        // step takes each result's content from it (and writes its output back, which
        // the pass then reads), the pass runs on it, and its changes are found by
        // comparing each result's content before and after.
        let format = api
            .context_format()
            .filter(|_| self.context.enabled && self.store.store().is_some())
            .filter(|_| spans.len() > self.context.keep_last);
        let mut tree: Option<Vec<Value>> = match format {
            Some(_) => Some(serde_json::from_str(&text[scan.list.clone()]).ok()?),
            None => None,
        };
        // Per result: the bytes to put in its place, if any.
        let mut edits: Vec<Option<Vec<u8>>> = vec![None; spans.len()];
        let (mut before, mut after) = (0u64, 0u64);
        let mut results_compressed = 0;
        if self.config.enabled {
            let types: &[&str] = match api {
                Api::OpenAiResponses => &["input_text", "output_text", "text"],
                _ => &["text"],
            };
            let mut compress = |text: &str| {
                let new = self.compress_text(text)?;
                before += text.len() as u64;
                after += new.len() as u64;
                Some(new)
            };
            for (s, edit) in spans.iter().zip(&mut edits) {
                if is_restore_tool(s.tool.as_deref()) {
                    continue;
                }
                let mut parsed;
                let content = match tree.as_mut() {
                    Some(list) => content_mut(api, list, s.path)?,
                    None => match serde_json::from_str::<Value>(&text[s.range.clone()]) {
                        Ok(v) => {
                            parsed = v;
                            &mut parsed
                        }
                        Err(_) => continue,
                    },
                };
                if compress_content(content, types, &mut compress) {
                    *edit = Some(serde_json::to_vec(content).ok()?);
                    results_compressed += 1;
                }
            }
        }
        let mut summarised = 0;
        if let (Some(format), Some(list)) = (format, tree) {
            let list = Value::Array(list);
            if let Some((new, report)) = conversation_pass(
                &list,
                format,
                &self.context,
                &self.store,
                &self.stored,
                &self.pass_cache,
            ) {
                // Only results are carried over, and only when the pass kept every
                // result where it was; anything else it did is not used.
                let mut carried = Vec::new();
                let mut same_places = true;
                for (k, s) in spans.iter().enumerate() {
                    let was = content_at(api, &list, s.path);
                    let now = content_at(api, &new, s.path);
                    match (was, now) {
                        (Some(was), Some(now)) if was != now => {
                            carried.push((k, serde_json::to_vec(now).ok()?));
                        }
                        (Some(_), Some(_)) => {}
                        _ => {
                            same_places = false;
                            break;
                        }
                    }
                }
                if same_places && !carried.is_empty() {
                    for (k, bytes) in carried {
                        edits[k] = Some(bytes);
                    }
                    summarised = report.summarised;
                    before += report.original_bytes as u64;
                    after += report.summary_bytes as u64;
                }
            }
        }
        if edits.iter().all(Option::is_none) {
            return None;
        }
        let edits: Vec<_> = spans
            .iter()
            .zip(edits)
            .filter_map(|(s, e)| Some((s.range.clone(), e?)))
            .collect();
        Some(Rewritten {
            body: splice::apply(body, &edits),
            results_compressed,
            summarised,
            before,
            after,
        })
    }

    /// One tool result's text through the per-result rules: `Some` only when the
    /// output is shorter and valid UTF-8. The original goes to the store under its
    /// keyed id, so the same text gives the same bytes (id and marker) on every call.
    fn compress_text(&self, text: &str) -> Option<String> {
        let out = self.compressed.get_or(
            text.as_bytes(),
            |v| v.as_ref().map_or(0, |s| s.len()),
            || self.compress_uncached(text).map(std::sync::Arc::from),
        );
        out.map(|s| s.to_string())
    }

    fn compress_uncached(&self, text: &str) -> Option<String> {
        let outcome = snip_store::compress_kept(text.as_bytes(), &self.config, &self.store);
        if !outcome.changed || outcome.output.len() >= text.len() {
            return None;
        }
        String::from_utf8(outcome.output).ok()
    }
}

/// Whether a tool's results are snip's own restore output, which is never compressed
/// again (a restore must return exact bytes).
fn is_restore_tool(name: Option<&str>) -> bool {
    name.is_some_and(|n| n.contains("snip_restore"))
}

/// The content value of the tool result at `path` (see [`splice::ResultSpan::path`])
/// in a `messages` (or `input`) array read as `api`.
fn content_at(api: Api, list: &Value, path: (usize, usize)) -> Option<&Value> {
    let entry = list.get(path.0)?;
    match api {
        Api::AnthropicMessages | Api::AnthropicCountTokens => {
            entry.get("content")?.get(path.1)?.get("content")
        }
        Api::OpenAiChat => entry.get("content"),
        Api::OpenAiResponses => entry.get("output"),
    }
}

/// [`content_at`] for changing it in place.
fn content_mut(api: Api, list: &mut [Value], path: (usize, usize)) -> Option<&mut Value> {
    let entry = list.get_mut(path.0)?;
    match api {
        Api::AnthropicMessages | Api::AnthropicCountTokens => entry
            .get_mut("content")?
            .get_mut(path.1)?
            .get_mut("content"),
        Api::OpenAiChat => entry.get_mut("content"),
        Api::OpenAiResponses => entry.get_mut("output"),
    }
}

type CompressFn<'a> = dyn FnMut(&str) -> Option<String> + 'a;

/// Compresses a content value in place: a string, or the `text` of each block of a
/// list whose `type` is one of `text_types`. Other blocks (images, documents) and
/// every other key (`cache_control` included) stay. Returns whether anything changed.
fn compress_content(content: &mut Value, text_types: &[&str], f: &mut CompressFn<'_>) -> bool {
    match content {
        Value::String(s) => match f(s) {
            Some(new) => {
                *s = new;
                true
            }
            None => false,
        },
        Value::Array(blocks) => {
            let mut changed = false;
            for b in blocks {
                let is_text = b
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| text_types.contains(&t));
                if !is_text {
                    continue;
                }
                if let Some(Value::String(s)) = b.get_mut("text") {
                    if let Some(new) = f(s) {
                        *s = new;
                        changed = true;
                    }
                }
            }
            changed
        }
        _ => false,
    }
}
