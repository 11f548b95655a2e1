//! What the proxy already worked out, remembered for the later requests of the same
//! conversation: every request carries the whole history again, so without it each
//! result would be compressed again, and each summarised original stored again, on
//! every request.
//!
//! An entry is found by a fast seeded hash of the result's text (foldhash) and then
//! compared with the text it was made for, byte for byte: a hit is always the same
//! text, so the proxy's output is the same with or without the memo. Bounded: when the
//! remembered bytes (each text, what was worked out for it, plus 64 per entry) pass
//! [`MEMO_MAX_BYTES`], everything is forgotten at once and worked out again as needed
//! (the same bytes come out: the rules are deterministic and the store's ids are
//! keyed hashes).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

/// Bytes of remembered text (the texts, their outputs and ids, plus 64 per entry) kept
/// at most, per memo.
pub const MEMO_MAX_BYTES: usize = 64 << 20;

/// Entries by the hash of their text: the text and what was worked out for it.
type Entries<V> = HashMap<u64, (Arc<[u8]>, V)>;

/// A bounded map from a text to what was worked out for it.
#[derive(Debug, Default)]
pub(crate) struct Memo<V> {
    seed: foldhash::fast::RandomState,
    /// The entries and the bytes they are counted for.
    inner: Mutex<(Entries<V>, usize)>,
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
        let key = self.seed.hash_one(text);
        if let Ok(g) = self.inner.lock() {
            if let Some((t, v)) = g.0.get(&key) {
                if **t == *text {
                    return v.clone();
                }
            }
        }
        let v = work();
        let add = text.len() + size(&v) + 64;
        if let Ok(mut g) = self.inner.lock() {
            if g.1 + add > MEMO_MAX_BYTES {
                g.0.clear();
                g.1 = 0;
            }
            if add <= MEMO_MAX_BYTES {
                // A different text under the same hash is replaced (still counted:
                // the count only over-states, and is reset with the map).
                g.0.insert(key, (Arc::from(text), v.clone()));
                g.1 += add;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_the_same_text_and_work_runs_once_per_text() {
        let memo: Memo<usize> = Memo::default();
        let mut runs = 0;
        for t in ["a", "b", "a", "b", "a"] {
            let v = memo.get_or(
                t.as_bytes(),
                |_| 0,
                || {
                    runs += 1;
                    t.len() * 10 + usize::from(t == "b")
                },
            );
            assert_eq!(v, 10 + usize::from(t == "b"));
        }
        assert_eq!(runs, 2);
    }
}
