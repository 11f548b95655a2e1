//! What the proxy already worked out, remembered for the later requests of the same
//! conversation: every request carries the whole history again, so without it each
//! result would be compressed again, and each summarised original stored again, on
//! every request.
//!
//! Keys are SHA-256 digests of a result's text (the digest the store's ids are made
//! from). Bounded: when the remembered bytes pass [`MEMO_MAX_BYTES`], everything is
//! forgotten at once and worked out again as needed (the same bytes come out: the
//! rules are deterministic and the store's ids are keyed hashes).

use std::collections::HashMap;
use std::sync::Mutex;

/// Bytes of remembered text (outputs and ids, plus 64 per entry) kept at most.
pub const MEMO_MAX_BYTES: usize = 64 << 20;

/// A bounded map from a text's digest to what was worked out for it.
#[derive(Debug, Default)]
pub(crate) struct Memo<V> {
    inner: Mutex<(HashMap<[u8; 32], V>, usize)>,
}

impl<V: Clone> Memo<V> {
    /// The value remembered for `text`, or `work(text)` remembered (with `size`, its
    /// bytes). A poisoned lock (a panic elsewhere) just means no memo.
    pub(crate) fn get_or(
        &self,
        text: &[u8],
        size: impl Fn(&V) -> usize,
        work: impl FnOnce() -> V,
    ) -> V {
        let key = snip_store::id::sha256(text);
        if let Ok(g) = self.inner.lock() {
            if let Some(v) = g.0.get(&key) {
                return v.clone();
            }
        }
        let v = work();
        if let Ok(mut g) = self.inner.lock() {
            let add = size(&v) + 64;
            if g.1 + add > MEMO_MAX_BYTES {
                g.0.clear();
                g.1 = 0;
            }
            g.0.insert(key, v.clone());
            g.1 += add;
        }
        v
    }
}
