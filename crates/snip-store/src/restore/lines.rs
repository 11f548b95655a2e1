//! A sparse index of a scope's lines (1-based), for `lines` and `search`.

/// Lines of a scope, indexed sparsely (the start of every [`LINE_STRIDE`]th line),
/// so that even 32 MiB of empty lines costs a few MiB. Line `n` (1-based) spans
/// `[start_of(n), end_of(n))`, including its `\n`.
pub(super) struct LineIndex<'a> {
    all: &'a [u8],
    sparse: Vec<u64>,
    count: u64,
}

/// Lines between two entries of the sparse line index.
const LINE_STRIDE: u64 = 64;
// A kept index (`LineCache`) is read as the shared store's stored index is.
const _: () = assert!(LINE_STRIDE == crate::redis_store::INDEX_STRIDE);

impl<'a> LineIndex<'a> {
    pub(super) fn new(all: &'a [u8]) -> Self {
        let mut sparse = Vec::with_capacity(all.len() / 2048 + 1);
        let mut count = 0u64;
        if !all.is_empty() {
            sparse.push(0);
            count = 1;
            let mut to_mark = LINE_STRIDE;
            for i in memchr::memchr_iter(b'\n', all) {
                if i + 1 < all.len() {
                    to_mark -= 1;
                    if to_mark == 0 {
                        sparse.push(i as u64 + 1);
                        to_mark = LINE_STRIDE;
                    }
                    count += 1;
                }
            }
        }
        LineIndex { all, sparse, count }
    }
    /// The index as [`super::LineCache`] keeps it.
    pub(super) fn sparse(&self) -> super::line_cache::Sparse {
        super::line_cache::Sparse {
            count: self.count,
            starts: self.sparse.clone(),
        }
    }
    pub(super) fn count(&self) -> u64 {
        self.count
    }
    /// Start of line `n` (1 ≤ n ≤ count).
    pub(super) fn start_of(&self, n: u64) -> u64 {
        let k = (n - 1) / LINE_STRIDE;
        let mut pos = self.sparse[k as usize] as usize;
        for _ in 0..(n - 1) % LINE_STRIDE {
            pos += memchr::memchr(b'\n', &self.all[pos..]).map_or(self.all.len() - pos, |i| i + 1);
        }
        pos as u64
    }
    /// End of line `n`, exclusive, including its `\n`.
    pub(super) fn end_of(&self, n: u64) -> u64 {
        self.line_end_from(self.start_of(n))
    }
    /// End (after the `\n`, or the scope's end) of the line holding byte `at`.
    pub(super) fn line_end_from(&self, at: u64) -> u64 {
        let at = at as usize;
        memchr::memchr(b'\n', &self.all[at..]).map_or(self.all.len(), |i| at + i + 1) as u64
    }
    /// The line (1-based) holding byte `at`.
    pub(super) fn line_of(&self, at: u64) -> u64 {
        let k = self.sparse.partition_point(|&s| s <= at).max(1) - 1;
        let from = self.sparse[k] as usize;
        let within = memchr::memchr_iter(b'\n', &self.all[from..at as usize]).count() as u64;
        k as u64 * LINE_STRIDE + 1 + within
    }
    /// End of line `n` without its `\n` or `\r\n`.
    pub(super) fn content_end_of(&self, n: u64) -> u64 {
        let s = self.start_of(n) as usize;
        let mut e = self.line_end_from(s as u64) as usize;
        if e > s && self.all[e - 1] == b'\n' {
            e -= 1;
        }
        if e > s && self.all[e - 1] == b'\r' {
            e -= 1;
        }
        e as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index() {
        let t = b"a\nbb\r\n\nc";
        let ix = LineIndex::new(t);
        assert_eq!(ix.count(), 4);
        assert_eq!((ix.start_of(2), ix.end_of(2)), (2, 6));
        assert_eq!(ix.content_end_of(2), 4);
        assert_eq!((ix.start_of(4), ix.end_of(4)), (7, 8));
        assert_eq!(LineIndex::new(b"x\n").count(), 1);
        assert_eq!(LineIndex::new(b"").count(), 0);
        // Against a naive index, across many strides, with and without a final \n.
        for tail in ["", "last"] {
            let text: String = (0..1000)
                .map(|i| "x".repeat(i % 7) + "\n")
                .collect::<String>()
                + tail;
            let t = text.as_bytes();
            let starts: Vec<u64> = std::iter::once(0)
                .chain(
                    t.iter()
                        .enumerate()
                        .filter(|(i, &c)| c == b'\n' && i + 1 < t.len())
                        .map(|(i, _)| i as u64 + 1),
                )
                .collect();
            let ix = LineIndex::new(t);
            assert_eq!(ix.count(), starts.len() as u64);
            for (k, &st) in starts.iter().enumerate() {
                let n = k as u64 + 1;
                assert_eq!(ix.start_of(n), st);
                let end = starts.get(k + 1).copied().unwrap_or(t.len() as u64);
                assert_eq!(ix.end_of(n), end);
                for at in st..end {
                    assert_eq!(ix.line_of(at), n);
                }
            }
        }
    }
}
