//! What the pass works out for each tool result, remembered between calls by a caller
//! that makes many of them over the same conversation (a proxy: every request carries
//! the whole history again).
//!
//! For each result the pass reads its text (is it a summary already, how many chars),
//! its [`Digest`], the bytes its summary would save and, once the original is stored,
//! the store's id and the rendered summary. All of it depends only on the result's
//! text, its error flag, its tool call and label, and `min_chars` (plus the store's id,
//! which is the same for the same bytes): that is the key. A key is found by a fast
//! seeded hash of it and then compared in full, so a hit is always the same key and
//! the pass gives byte-identical output with or without the cache.
//!
//! Memory is bounded: the cache counts the bytes it holds (the key's text, label and
//! call, the digest's and the summary's strings, plus [`ENTRY_OVERHEAD`] per entry),
//! and when an insertion would pass its limit it forgets everything at once (later
//! calls work it out again, with the same result).

use crate::adapters::Slot;
use crate::digest::{Call, Digest};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// The default limit of a [`PassCache`]: 32 MiB of counted bytes.
pub const DEFAULT_CACHE_BYTES: usize = 32 << 20;

/// Bytes counted per entry besides its strings (the map's slot, the entry and its
/// shared parts).
pub const ENTRY_OVERHEAD: usize = 256;

/// A bounded, thread-safe memory of the pass's per-result work, for
/// [`crate::compress_messages_cached`]. Use one cache per store: a remembered summary
/// quotes the id the store gave its original, and the original is not handed to the
/// store again while the cache remembers it.
#[derive(Debug)]
pub struct PassCache {
    max_bytes: usize,
    seed: foldhash::fast::RandomState,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<u64, Arc<Entry>>,
    bytes: usize,
}

/// A remembered result: its key, in full, and what was worked out for it.
#[derive(Debug)]
struct Entry {
    text: Box<str>,
    is_error: Option<bool>,
    tool: Box<str>,
    call: Call,
    min_chars: usize,
    probed: Arc<Probed>,
}

/// What releasing a result would do, worked out before the store is asked.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Its content is not text.
    Unsupported,
    /// It already is a summary.
    Summary,
    /// Under `min_chars`.
    Small,
    /// Its summary would not be shorter.
    NotSmaller,
    /// It would be replaced, saving `saving` bytes of text.
    Replace {
        /// What its summary quotes.
        digest: Digest,
        /// Bytes its summary would save.
        saving: usize,
    },
}

/// A result's [`Verdict`] and, once its original was stored, the store's id and the
/// rendered summary.
#[derive(Debug)]
pub(crate) struct Probed {
    pub verdict: Verdict,
    pub summary: OnceLock<(String, String)>,
}

impl Probed {
    pub(crate) fn new(verdict: Verdict) -> Self {
        Probed {
            verdict,
            summary: OnceLock::new(),
        }
    }
}

impl Default for PassCache {
    fn default() -> Self {
        PassCache::new(DEFAULT_CACHE_BYTES)
    }
}

impl PassCache {
    /// An empty cache holding at most `max_bytes` counted bytes (see the module's
    /// docs); a result larger than that on its own is never remembered.
    pub fn new(max_bytes: usize) -> Self {
        PassCache {
            max_bytes,
            seed: foldhash::fast::RandomState::default(),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Bytes counted now (at most the limit given to [`PassCache::new`]).
    pub fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |g| g.bytes)
    }

    /// Entries remembered now.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |g| g.map.len())
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, text: &str, slot: &Slot, min_chars: usize) -> u64 {
        let mut h = self.seed.build_hasher();
        h.write(text.as_bytes());
        h.write_u8(match slot.is_error {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
        h.write(slot.tool.as_bytes());
        h.write_usize(min_chars);
        if let Some(name) = &slot.call.name {
            h.write(name.as_bytes());
        }
        h.finish()
    }

    /// The work for `slot` (whose text is `text`): remembered, or done by `work` and
    /// remembered.
    pub(crate) fn probe(
        &self,
        text: &str,
        slot: &Slot,
        min_chars: usize,
        work: impl FnOnce() -> Verdict,
    ) -> Arc<Probed> {
        let key = self.key(text, slot, min_chars);
        let found = self
            .inner
            .lock()
            .ok()
            .and_then(|g| g.map.get(&key).cloned());
        if let Some(e) = found {
            if &*e.text == text
                && e.is_error == slot.is_error
                && *e.tool == slot.tool
                && e.min_chars == min_chars
                && e.call == slot.call
            {
                return e.probed.clone();
            }
        }
        let probed = Arc::new(Probed::new(work()));
        let entry = Entry {
            text: text.into(),
            is_error: slot.is_error,
            tool: slot.tool.as_str().into(),
            call: slot.call.clone(),
            min_chars,
            probed: probed.clone(),
        };
        let size = entry_bytes(&entry);
        if size <= self.max_bytes {
            if let Ok(mut g) = self.inner.lock() {
                if g.bytes + size > self.max_bytes {
                    g.map.clear();
                    g.bytes = 0;
                }
                if let Some(old) = g.map.insert(key, Arc::new(entry)) {
                    g.bytes -= entry_bytes(&old).min(g.bytes);
                }
                g.bytes += size;
            }
        }
        probed
    }

    /// Remembers the store's `id` and the rendered summary `line` for `probed` (an
    /// entry of this cache; the first one given stays).
    pub(crate) fn set_summary(&self, probed: &Probed, id: &str, line: &str) {
        if probed.summary.get().is_some() {
            return;
        }
        let size = id.len() + line.len();
        if let Ok(mut g) = self.inner.lock() {
            if g.bytes + size > self.max_bytes {
                // Forget everything; this entry is no longer counted (nor found).
                g.map.clear();
                g.bytes = 0;
                return;
            }
            if probed
                .summary
                .set((id.to_string(), line.to_string()))
                .is_ok()
            {
                g.bytes += size;
            }
        }
    }
}

/// The bytes an entry is counted for.
fn entry_bytes(e: &Entry) -> usize {
    let verdict = match &e.probed.verdict {
        Verdict::Replace { digest, .. } => digest_bytes(digest),
        _ => 0,
    };
    let summary = e
        .probed
        .summary
        .get()
        .map_or(0, |(id, line)| id.len() + line.len());
    ENTRY_OVERHEAD
        + e.text.len()
        + e.tool.len()
        + e.call.name.as_ref().map_or(0, String::len)
        + e.call.args.as_ref().map_or(0, value_bytes)
        + verdict
        + summary
}

fn digest_bytes(d: &Digest) -> usize {
    [&d.first, &d.error, &d.last, &d.facts]
        .iter()
        .map(|s| s.as_ref().map_or(0, String::len))
        .sum()
}

/// The bytes a JSON value holds: its strings and keys, plus 32 per value.
fn value_bytes(v: &Value) -> usize {
    32 + match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(value_bytes).sum(),
        Value::Object(o) => o.iter().map(|(k, v)| k.len() + value_bytes(v)).sum(),
        _ => 0,
    }
}
