//! Line indexes of large originals, kept in memory by a long-lived process (MCP
//! server, proxy, Hermes plugin): after a restore of an original over 1 MiB has read
//! it whole (and checked its SHA-256), or has read the index the shared store keeps
//! beside it, later `lines` pages of it read one window through the index kept here.
//! An id names its bytes (it is a keyed hash of them), so an index kept for an id is
//! the index of any entry with that id.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Most indexes kept (most recently used first).
const MAX_INDEXES: usize = 16;
/// Most bytes of offsets kept in all (an index larger than this is not kept).
const MAX_TOTAL_BYTES: usize = 8 << 20;

/// Where block `k` of a line index starts (lines `1 + 64 * k` to `64 * (k + 1)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    /// The number of lines of the original.
    pub(crate) total: u64,
    /// The offset of line `1 + 64 * k`.
    pub(crate) start: u64,
    /// The offset of line `1 + 64 * (k + 1)`, if there is such a line.
    pub(crate) next: Option<u64>,
}

/// A sparse line index: the number of lines and the offset of line `1 + 64 * k`.
#[derive(Debug)]
pub(crate) struct Sparse {
    pub(crate) count: u64,
    pub(crate) starts: Vec<u64>,
}

impl Sparse {
    /// Block `block`, if there is one.
    pub(crate) fn block(&self, block: u64) -> Option<Block> {
        let at = usize::try_from(block).ok()?;
        self.starts.get(at).map(|&start| Block {
            total: self.count,
            start,
            next: self.starts.get(at + 1).copied(),
        })
    }

    fn bytes(&self) -> usize {
        self.starts.len() * 8
    }
}

/// A small bounded map from id to line index, least recently used out first.
#[derive(Debug, Default)]
pub(crate) struct LineCache {
    kept: Mutex<VecDeque<(String, Arc<Sparse>)>>,
}

impl LineCache {
    /// The index of `id`, if kept (it becomes the most recently used).
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Sparse>> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let i = kept.iter().position(|(k, _)| k == id)?;
        let hit = kept.remove(i)?;
        let ix = Arc::clone(&hit.1);
        kept.push_front(hit);
        Some(ix)
    }

    /// Keeps the index of `id`, dropping the least recently used ones past the bounds.
    pub(crate) fn put(&self, id: &str, ix: Sparse) {
        if ix.bytes() > MAX_TOTAL_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(k, _)| k != id);
        kept.push_front((id.to_string(), Arc::new(ix)));
        let mut total = 0;
        let mut keep = 0;
        for (_, ix) in kept.iter() {
            if keep == MAX_INDEXES || total + ix.bytes() > MAX_TOTAL_BYTES {
                break;
            }
            total += ix.bytes();
            keep += 1;
        }
        kept.truncate(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sparse(n: usize) -> Sparse {
        Sparse {
            count: n as u64 * 64,
            starts: (0..n as u64).map(|k| k * 1000).collect(),
        }
    }

    #[test]
    fn bounded_and_most_recent_kept() {
        let c = LineCache::default();
        for i in 0..MAX_INDEXES + 3 {
            c.put(&format!("sn_{i}"), sparse(4));
        }
        assert!(c.get("sn_0").is_none());
        assert!(c.get("sn_2").is_none());
        assert!(c.get("sn_3").is_some());
        // sn_3 is now the most recent: a new one pushes out sn_4, not sn_3.
        c.put("sn_new", sparse(4));
        assert!(c.get("sn_3").is_some());
        assert!(c.get("sn_4").is_none());
        let block = |total, start, next| Some(Block { total, start, next });
        assert_eq!(
            c.get("sn_new").unwrap().block(2),
            block(256, 2000, Some(3000))
        );
        assert_eq!(c.get("sn_new").unwrap().block(3), block(256, 3000, None));
        assert_eq!(c.get("sn_new").unwrap().block(4), None);
        // By bytes: one too large is not kept; a large one pushes out older ones.
        c.put("huge", sparse(MAX_TOTAL_BYTES / 8 + 1));
        assert!(c.get("huge").is_none());
        // 8 MiB − 32 bytes: it and the newest 32-byte one fit, the older ones not.
        c.put("big", sparse(MAX_TOTAL_BYTES / 8 - 4));
        assert!(c.get("sn_3").is_none());
        c.put("small", sparse(4));
        // small + big = 8 MiB: sn_new, least recently used, is out.
        assert!(c.get("sn_new").is_none());
        assert!(c.get("big").is_some());
        assert!(c.get("small").is_some());
    }
}
