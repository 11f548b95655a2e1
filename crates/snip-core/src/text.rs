//! Byte-level text helpers: UTF-8-safe cuts and line splitting.

use wide::u8x16;

/// The largest index `<= i` that does not fall inside a UTF-8 code point of `b`
/// (continuation bytes are skipped backwards, at most 3).
pub fn floor_char_boundary(b: &[u8], i: usize) -> usize {
    let mut i = i.min(b.len());
    let mut n = 0;
    while i > 0 && i < b.len() && (b[i] & 0xC0) == 0x80 && n < 3 {
        i -= 1;
        n += 1;
    }
    i
}

/// The smallest index `>= i` that does not fall inside a UTF-8 code point of `b`.
pub fn ceil_char_boundary(b: &[u8], i: usize) -> usize {
    let mut i = i.min(b.len());
    let mut n = 0;
    while i < b.len() && (b[i] & 0xC0) == 0x80 && n < 3 {
        i += 1;
        n += 1;
    }
    i
}

/// Removes ANSI escape sequences (SGR, CSI, OSC incl. OSC 8 links, DCS…) from `b`,
/// keeping every other byte. Borrowed when there is nothing to remove.
pub fn strip_ansi(b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    crate::escape::strip(b)
}

/// The offsets of every `\n` (and, with `CR`, every `\r`) in a byte string, in
/// order: what `memchr::memchr_iter(b'\n', input)` (or `memchr2_iter(b'\r', b'\n',
/// input)`) yields, faster where they are dense. Text lines are a few dozen bytes and
/// progress output redraws as often; a search call per byte found costs more there
/// than a 32-bit mask of each 32-byte block, taken bit by bit (figures:
/// docs/benchmark.md, "Design measurements").
pub(crate) struct Hits<'a, const CR: bool> {
    input: &'a [u8],
    /// Start of the next block to load.
    next: usize,
    /// Start of the block whose mask is `mask`.
    base: usize,
    /// Bit `i`: byte `base + i` is a byte sought and not yet yielded.
    mask: u32,
}

/// Offsets of every `\r` and `\n`.
pub(crate) type CrLf<'a> = Hits<'a, true>;
/// Offsets of every `\n`.
pub(crate) type Newlines<'a> = Hits<'a, false>;

impl<'a, const CR: bool> Hits<'a, CR> {
    pub(crate) fn new(input: &'a [u8]) -> Hits<'a, CR> {
        Hits {
            input,
            next: 0,
            base: 0,
            mask: 0,
        }
    }
}

impl<const CR: bool> Iterator for Hits<'_, CR> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            let rest = self.input.get(self.next..)?;
            if rest.is_empty() {
                return None;
            }
            let block = &rest[..rest.len().min(32)];
            let mut m = 0u32;
            if let Ok(b) = <&[u8; 32]>::try_from(block) {
                m = mask::<CR>(b);
            } else {
                for (i, &c) in block.iter().enumerate() {
                    m |= u32::from((CR && c == b'\r') | (c == b'\n')) << i;
                }
            }
            self.base = self.next;
            self.next += block.len();
            self.mask = m;
        }
        let i = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.base + i)
    }
}

/// Bit `i` set: `b[i]` is `\n` (or, with `CR`, `\r`). 16-byte compares and a byte
/// mask (`pcmpeqb`/`pmovmskb` on x86-64); the same loop written over bytes is
/// vectorised by the compiler into many more shuffles (docs/benchmark.md, "Design
/// measurements").
#[inline]
fn mask<const CR: bool>(b: &[u8; 32]) -> u32 {
    let (lo, hi) = b.split_at(16);
    let half = |h: &[u8]| {
        let v = u8x16::new(h.try_into().expect("16 bytes"));
        let lf = v.simd_eq(u8x16::splat(b'\n'));
        if CR {
            (lf | v.simd_eq(u8x16::splat(b'\r'))).to_bitmask()
        } else {
            lf.to_bitmask()
        }
    };
    half(lo) | (half(hi) << 16)
}

/// The bytes of every capture in `fixtures/corpus/` (the `.txt` files), for unit
/// tests that check a rule on real output.
#[cfg(test)]
pub(crate) fn corpus_captures() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("fixtures/corpus") {
        let path = e.expect("dir entry").path();
        if path.extension().is_some_and(|x| x == "txt") {
            out.push(std::fs::read(&path).expect("capture"));
        }
    }
    out
}

/// [`crate::util::SplitMix64`] from `seed` as a closure, for generated test inputs.
#[cfg(test)]
pub(crate) fn splitmix(seed: u64) -> impl FnMut() -> u64 {
    let mut r = crate::util::SplitMix64(seed);
    move || r.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CrLf` and `Newlines` yield exactly what `memchr2_iter` and `memchr_iter`
    /// yield, at every length and density.
    #[test]
    fn offsets_match_memchr() {
        let mut next = splitmix(3);
        for len in (0..200).chain([1000, 4096, 65_537]) {
            for density in [2u64, 5, 40, 1000] {
                let input: Vec<u8> = (0..len)
                    .map(|_| match next() % density {
                        0 => b'\r',
                        1 => b'\n',
                        _ => b"ab \xe2\x96\x88"[(next() % 5) as usize],
                    })
                    .collect();
                let want: Vec<usize> = memchr::memchr2_iter(b'\r', b'\n', &input).collect();
                assert_eq!(
                    CrLf::new(&input).collect::<Vec<_>>(),
                    want,
                    "{len} {density}"
                );
                let want: Vec<usize> = memchr::memchr_iter(b'\n', &input).collect();
                assert_eq!(
                    Newlines::new(&input).collect::<Vec<_>>(),
                    want,
                    "{len} {density}"
                );
            }
        }
    }
}
