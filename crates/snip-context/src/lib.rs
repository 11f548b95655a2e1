//! snip-context: the conversation pass. Before an LLM API call, older tool results of
//! the request are replaced by one-line summaries while the newest stay whole. It
//! reads Anthropic Messages, OpenAI Chat Completions and OpenAI Responses requests.
//!
//! The pass is pure: it reads no files, environment or clock. It takes a request (or
//! just its `messages` array) as a [`serde_json::Value`], frozen [`ContextSettings`],
//! and a store callback that keeps each replaced original and returns its id; it
//! returns a [`ContextOutcome`] with the request to send and a [`ContextReport`].
//!
//! Rules (see `docs/context.md`):
//! - Conversations of fewer than [`ContextSettings::min_messages`] messages pass
//!   through.
//! - The newest [`ContextSettings::keep_last`] tool results stay whole. Older ones are
//!   released (may be summarised) only when it pays at the provider's cache prices
//!   (the release rule, `release.rs`): the pass replays the conversation's earlier
//!   calls and releases only when what it already saved against sending everything
//!   (with what per-result compression saved, as its markers state) pays for the
//!   cache re-write the release causes (so it never costs more than no
//!   compression, whatever the session's length), when the saving over the calls
//!   expected to follow outweighs that re-write, and when the savings given up since
//!   the last release reach it. The released count is a function of the
//!   conversation's prefix: it never falls, and the request between releases only
//!   grows at its end. With [`ContextSettings::batch`] set, the older fixed-batch rule
//!   applies instead.
//! - Each result that left the window, holds at least
//!   [`ContextSettings::min_chars`] chars of text, and whose summary is shorter, is
//!   replaced by a [`summary::Summary`] line, after its text was stored.
//! - Only the content of tool results changes: system, user and assistant text, tool
//!   calls, ids, `is_error`, `cache_control` and every other key stay as they are. A
//!   string content stays a string; a list of text blocks becomes a list of one text
//!   block.
//! - Summaries depend only on the original, its tool call and the store's id for it,
//!   so a result is summarised byte-identically on every later call; a summary in the
//!   input is left as it is (idempotent).
//! - Anything malformed or unknown passes through untouched, and so does everything
//!   when the pass panics.
//!
//! ```
//! use serde_json::json;
//! use snip_context::{compress_request, ContextSettings, FormatChoice};
//!
//! // Too short a conversation to touch: it passes through, and nothing is stored.
//! let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
//! let mut store = |_: &[u8]| -> Option<String> { unreachable!() };
//! let out = compress_request(&request, FormatChoice::Auto, &ContextSettings::default(), &mut store);
//! assert!(!out.changed);
//! assert_eq!(out.request, request);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod adapters;
pub mod cache;
pub mod digest;
mod release;
pub mod settings;
pub mod summary;

use serde::Serialize;
use serde_json::Value;
use std::fmt;

pub use cache::PassCache;
use cache::Verdict;
pub use settings::ContextSettings;
pub use summary::Summary;

/// A request format the pass understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// OpenAI chat completions: `role: "tool"` messages with `tool_call_id`, answering
    /// an assistant message's `tool_calls`.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic messages: `tool_result` blocks (with `tool_use_id`, optional
    /// `is_error`) answering `tool_use` blocks.
    Anthropic,
    /// OpenAI Responses: a request's `input` items, where `function_call_output` items
    /// (with `call_id`) answer `function_call` items. Only a `function_call_output`'s
    /// `output` is ever replaced.
    Responses,
}

impl Format {
    /// `openai` or `anthropic`.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Responses => "responses",
        }
    }
}

/// Which format to read a request as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormatChoice {
    /// Detect it from the messages; a request showing both formats' tool shapes (or
    /// neither) passes through.
    #[default]
    Auto,
    /// Read it as this format.
    Fixed(Format),
}

impl std::str::FromStr for FormatChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(FormatChoice::Auto),
            "openai" => Ok(FormatChoice::Fixed(Format::OpenAi)),
            "anthropic" => Ok(FormatChoice::Fixed(Format::Anthropic)),
            "responses" => Ok(FormatChoice::Fixed(Format::Responses)),
            _ => Err(format!(
                "unknown format {s:?}: expected openai, anthropic, responses or auto"
            )),
        }
    }
}

/// Why a request passed through whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// `enabled` is false.
    Disabled,
    /// Not an object with a `messages` array (or, for Responses, an `input` array),
    /// nor an array of messages.
    NotARequest,
    /// Fewer messages than `min_messages`.
    TooShort,
    /// No tool-result shape of either format was found (auto-detection).
    NoToolResults,
    /// Tool shapes of more than one format were found (auto-detection).
    Ambiguous,
    /// A message or block does not have the shape its format requires.
    Malformed(String),
    /// The pass panicked; the request is returned as it came.
    Panicked(String),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Disabled => f.write_str("disabled"),
            Skip::NotARequest => f.write_str("not a request: no messages or input array"),
            Skip::TooShort => f.write_str("fewer messages than min_messages"),
            Skip::NoToolResults => f.write_str("no tool results"),
            Skip::Ambiguous => f.write_str("tool shapes of more than one format found"),
            Skip::Malformed(why) => write!(f, "malformed: {why}"),
            Skip::Panicked(why) => write!(f, "internal error: {why}"),
        }
    }
}

/// What the pass did to one request. Counts are tool results unless named otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ContextReport {
    /// The format read (`None` when the request passed through before that).
    pub format: Option<Format>,
    /// Why the request passed through whole, if it did (see [`Skip`]).
    pub skipped: Option<String>,
    /// Entries of the `messages` array.
    pub messages: usize,
    /// Tool results in the request.
    pub tool_results: usize,
    /// Oldest tool results released by the release rule (they may be summarised).
    pub left_window: usize,
    /// Results replaced by a summary in this call.
    pub summarised: usize,
    /// Results that already were a summary (left as they are).
    pub already_summarised: usize,
    /// Results under `min_chars`.
    pub kept_small: usize,
    /// Results whose content is not text (images, documents, missing content).
    pub kept_unsupported: usize,
    /// Results whose summary would not be shorter.
    pub kept_not_smaller: usize,
    /// Results kept whole because the store did not return an id.
    pub store_failed: usize,
    /// Bytes of the originals replaced in this call (their text, UTF-8).
    pub original_bytes: usize,
    /// Bytes of the summaries that replaced them.
    pub summary_bytes: usize,
    /// Store ids of the replaced originals, oldest first.
    pub ids: Vec<String>,
}

/// The result of a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextOutcome {
    /// The request (or messages array) to send. Equal to the input when `changed` is
    /// false.
    pub request: Value,
    /// Whether any tool result was replaced.
    pub changed: bool,
    /// What happened.
    pub report: ContextReport,
}

/// The store callback: keeps `original` (a tool result's text, UTF-8 bytes) and returns
/// its id (`sn_` + lowercase hex), or `None` when it could not keep it (that result
/// then stays whole). The same bytes must get the same id for summaries to be
/// byte-stable across calls.
pub type StoreFn<'a> = dyn FnMut(&[u8]) -> Option<String> + 'a;

/// Runs the pass over a whole request: an object with a `messages` array (OpenAI chat
/// completions or Anthropic messages), an object with an `input` array (OpenAI
/// Responses), or a bare array of messages or input items. Every other key (`system`,
/// `instructions`, `tools`, `model`, …) is left as it is. An object with both arrays is
/// read by its `messages` unless `format` is [`Format::Responses`]; an `input` that is
/// a string (a plain prompt) passes through.
pub fn compress_request(
    request: &Value,
    format: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
) -> ContextOutcome {
    match request {
        Value::Object(map) => {
            let responses = match format {
                FormatChoice::Fixed(Format::Responses) => true,
                FormatChoice::Fixed(_) => false,
                FormatChoice::Auto => {
                    !map.contains_key("messages") && map.get("input").is_some_and(Value::is_array)
                }
            };
            let (key, format) = if responses {
                ("input", FormatChoice::Fixed(Format::Responses))
            } else {
                ("messages", format)
            };
            match map.get(key) {
                Some(list @ Value::Array(_)) => {
                    let out = compress_messages(list, format, settings, store);
                    if !out.changed {
                        return ContextOutcome {
                            request: request.clone(),
                            ..out
                        };
                    }
                    let mut req = map.clone();
                    req.insert(key.to_string(), out.request);
                    ContextOutcome {
                        request: Value::Object(req),
                        changed: true,
                        report: out.report,
                    }
                }
                _ => pass_through(request, Skip::NotARequest, ContextReport::default()),
            }
        }
        Value::Array(_) => compress_messages(request, format, settings, store),
        _ => pass_through(request, Skip::NotARequest, ContextReport::default()),
    }
}

/// The pass on a request's JSON text: what a proxy calls for each outgoing request.
/// `request` is the body of an OpenAI chat-completions, OpenAI Responses or Anthropic
/// messages request (UTF-8 JSON); the release decision (see `docs/context.md`, "The release rule") is
/// made inside from the request alone, so no state is kept between calls.
///
/// Returns the body to send and the report. When nothing was replaced (including input
/// that is not JSON, not a request, or malformed: the report says why), the body is
/// `request` itself, byte for byte; otherwise it is the rewritten request as compact
/// JSON. Never fails and never panics.
pub fn compress_request_json<'a>(
    request: &'a [u8],
    format: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
) -> (std::borrow::Cow<'a, [u8]>, ContextReport) {
    let Ok(value) = serde_json::from_slice::<Value>(request) else {
        let report = ContextReport {
            skipped: Some(Skip::NotARequest.to_string()),
            ..ContextReport::default()
        };
        return (std::borrow::Cow::Borrowed(request), report);
    };
    let out = compress_request(&value, format, settings, store);
    if !out.changed {
        return (std::borrow::Cow::Borrowed(request), out.report);
    }
    match serde_json::to_vec(&out.request) {
        Ok(bytes) => (std::borrow::Cow::Owned(bytes), out.report),
        Err(_) => (std::borrow::Cow::Borrowed(request), out.report),
    }
}

/// Runs the pass over a `messages` array, or a Responses `input` array (what the Python
/// binding `snip.compress_messages(messages, **settings)` calls). Anything else passes
/// through.
pub fn compress_messages(
    messages: &Value,
    format: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
) -> ContextOutcome {
    compress_messages_with(messages, format, settings, store, None)
}

/// [`compress_messages`] remembering its per-result work in `cache` for later calls
/// (each result's digest and saving, and once stored its id and summary; see
/// [`PassCache`]). The outcome is the same as [`compress_messages`]' for the same
/// input and store, byte for byte, except that a result the cache remembers as stored
/// is not handed to `store` again. For a caller that runs the pass on every request of
/// long conversations (a proxy): one cache per store.
pub fn compress_messages_cached(
    messages: &Value,
    format: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
    cache: &PassCache,
) -> ContextOutcome {
    compress_messages_with(messages, format, settings, store, Some(cache))
}

fn compress_messages_with(
    messages: &Value,
    format: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
    cache: Option<&PassCache>,
) -> ContextOutcome {
    let Value::Array(list) = messages else {
        return pass_through(messages, Skip::NotARequest, ContextReport::default());
    };
    let mut report = ContextReport {
        messages: list.len(),
        ..ContextReport::default()
    };
    if !settings.enabled {
        return pass_through(messages, Skip::Disabled, report);
    }
    if list.len() < settings.min_messages {
        return pass_through(messages, Skip::TooShort, report);
    }
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut report = report.clone();
        let result = run_pass(list, format, settings, store, cache, &mut report);
        (result, report)
    }));
    match run {
        Ok((Ok(Some(new)), report)) => ContextOutcome {
            request: Value::Array(new),
            changed: true,
            report,
        },
        Ok((Ok(None), report)) => ContextOutcome {
            request: messages.clone(),
            changed: false,
            report,
        },
        Ok((Err(skip), r)) => pass_through(messages, skip, r),
        Err(panic) => {
            let why = snip_core::util::panic_message(panic.as_ref(), "panic");
            report.format = None;
            pass_through(messages, Skip::Panicked(why), report)
        }
    }
}

fn pass_through(v: &Value, skip: Skip, mut report: ContextReport) -> ContextOutcome {
    report.skipped = Some(skip.to_string());
    ContextOutcome {
        request: v.clone(),
        changed: false,
        report,
    }
}

/// The length of a dummy id used to check a summary would be shorter before storing the
/// original (the store's ids are `sn_` + 24 hex).
const PROBE_ID: &str = "sn_000000000000000000000000";

fn run_pass(
    list: &[Value],
    choice: FormatChoice,
    settings: &ContextSettings,
    store: &mut StoreFn<'_>,
    cache: Option<&PassCache>,
    report: &mut ContextReport,
) -> Result<Option<Vec<Value>>, Skip> {
    let format = match choice {
        FormatChoice::Fixed(f) => f,
        FormatChoice::Auto => adapters::detect(list)?,
    };
    report.format = Some(format);
    let slots = adapters::scan(format, list)?;
    report.tool_results = slots.len();
    // Only results older than the protected window may ever be released; read them once.
    let may_leave = slots.len().saturating_sub(settings.keep_last);
    let probes: Vec<Probe> = slots[..may_leave]
        .iter()
        .map(|slot| probe(slot, settings, cache))
        .collect();
    let mut saving: Vec<usize> = probes.iter().map(Probe::saving).collect();
    saving.resize(slots.len(), 0);
    let msg_bytes: Vec<usize> = list.iter().map(release::message_len).collect();
    // The calls made so far: the request before each run of model output, and this one.
    let mut calls: Vec<usize> = (0..list.len())
        .filter(|&i| {
            adapters::is_model_output(format, &list[i])
                && (i == 0 || !adapters::is_model_output(format, &list[i - 1]))
        })
        .collect();
    calls.push(list.len());
    calls.dedup();
    let result_msg: Vec<usize> = slots.iter().map(|s| s.msg).collect();
    let banked: Vec<usize> = slots
        .iter()
        .map(|s| s.text.as_deref().map_or(0, release::banked))
        .collect();
    let leaving = release::released(
        settings,
        &release::Shape {
            msg_bytes: &msg_bytes,
            result_msg: &result_msg,
            saving: &saving,
            calls: &calls,
            banked: &banked,
        },
    );
    report.left_window = leaving;
    let mut replacements = Vec::new();
    for (slot, p) in slots.iter().zip(probes).take(leaving) {
        let text = p.text;
        let d = match &p.probed.verdict {
            Verdict::Unsupported => {
                report.kept_unsupported += 1;
                continue;
            }
            Verdict::Summary => {
                report.already_summarised += 1;
                continue;
            }
            Verdict::Small => {
                report.kept_small += 1;
                continue;
            }
            Verdict::NotSmaller => {
                report.kept_not_smaller += 1;
                continue;
            }
            Verdict::Replace { digest, .. } => digest,
        };
        // A remembered result was stored before: its id and summary are the ones the
        // store and `Summary::render` gave it then (the same bytes get the same id).
        let (id, line) = match p.probed.summary.get() {
            Some((id, line)) => (id.clone(), line.clone()),
            None => {
                let Some(id) = store(text.as_bytes()).filter(|id| valid_id(id)) else {
                    report.store_failed += 1;
                    continue;
                };
                let line = Summary::new(slot.tool.clone(), text.len(), d, &id).render();
                if let Some(c) = cache {
                    c.set_summary(&p.probed, &id, &line);
                }
                (id, line)
            }
        };
        if line.len() >= text.len() {
            report.kept_not_smaller += 1;
            continue;
        }
        report.summarised += 1;
        report.original_bytes += text.len();
        report.summary_bytes += line.len();
        report.ids.push(id);
        replacements.push((slot, line));
    }
    if replacements.is_empty() {
        return Ok(None);
    }
    let mut out = list.to_vec();
    for (slot, line) in replacements {
        adapters::replace(format, &mut out, slot, line);
    }
    Ok(Some(out))
}

/// What releasing one result would do, decided before the store is asked: its text and
/// [`cache::Verdict`], shared with the cache when there is one.
struct Probe<'a> {
    text: &'a str,
    probed: std::sync::Arc<cache::Probed>,
}

impl Probe<'_> {
    fn saving(&self) -> usize {
        match self.probed.verdict {
            Verdict::Replace { saving, .. } => saving,
            _ => 0,
        }
    }
}

fn probe<'a>(
    slot: &'a adapters::Slot,
    settings: &ContextSettings,
    cache: Option<&PassCache>,
) -> Probe<'a> {
    let Some(text) = slot.text.as_deref() else {
        return Probe {
            text: "",
            probed: std::sync::Arc::new(cache::Probed::new(Verdict::Unsupported)),
        };
    };
    let work = || verdict(text, slot, settings);
    let probed = match cache {
        Some(c) => c.probe(text, slot, settings.min_chars, work),
        None => std::sync::Arc::new(cache::Probed::new(work())),
    };
    Probe { text, probed }
}

fn verdict(text: &str, slot: &adapters::Slot, settings: &ContextSettings) -> Verdict {
    if summary::is_summary(text) {
        return Verdict::Summary;
    }
    if text.chars().count() < settings.min_chars {
        return Verdict::Small;
    }
    let d = digest::digest_call(text, slot.is_error, &slot.call);
    let line = Summary::new(slot.tool.clone(), text.len(), &d, PROBE_ID).render();
    if line.len() >= text.len() {
        return Verdict::NotSmaller;
    }
    Verdict::Replace {
        saving: text.len() - line.len(),
        digest: d,
    }
}

/// `sn_` followed by 1–64 lowercase hex digits.
fn valid_id(id: &str) -> bool {
    id.len() > 3
        && id.len() <= 67
        && id.starts_with("sn_")
        && id[3..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
