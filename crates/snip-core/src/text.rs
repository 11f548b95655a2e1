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
    crate::rules::ansi_strip::strip(b)
}

/// The offsets of every `\r` and `\n` in a byte string, in order: what
/// `memchr::memchr2_iter(b'\r', b'\n', input)` yields, faster where they are dense.
/// Progress output redraws every few dozen bytes; a search call per byte found costs
/// more there than building a 32-bit mask of each 32-byte block (which the compiler
/// turns into vector compares) and taking its set bits.
pub(crate) struct CrLf<'a> {
    input: &'a [u8],
    /// Start of the next block to load.
    next: usize,
    /// Start of the block whose mask is `mask`.
    base: usize,
    /// Bit `i`: byte `base + i` is `\r` or `\n` and not yet yielded.
    mask: u32,
}

impl<'a> CrLf<'a> {
    pub(crate) fn new(input: &'a [u8]) -> CrLf<'a> {
        CrLf {
            input,
            next: 0,
            base: 0,
            mask: 0,
        }
    }
}

impl Iterator for CrLf<'_> {
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
                m = cr_lf_mask(b);
            } else {
                for (i, &c) in block.iter().enumerate() {
                    m |= u32::from((c == b'\r') | (c == b'\n')) << i;
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

/// Bit `i` set: `b[i]` is `\r` or `\n`. Two 16-byte compares and a byte mask
/// (`pcmpeqb`/`pmovmskb` on x86-64); the same loop written over bytes is vectorised
/// by the compiler into some 85 instructions of shuffles, against 16 here.
#[inline]
fn cr_lf_mask(b: &[u8; 32]) -> u32 {
    let (lo, hi) = b.split_at(16);
    let half = |h: &[u8]| {
        let v = u8x16::new(h.try_into().expect("16 bytes"));
        (v.simd_eq(u8x16::splat(b'\r')) | v.simd_eq(u8x16::splat(b'\n'))).to_bitmask()
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

/// SplitMix64 from `seed`: the same numbers on every machine, for generated test inputs.
#[cfg(test)]
pub(crate) fn splitmix(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CrLf` yields exactly what `memchr2_iter` yields, at every length and density.
    #[test]
    fn cr_lf_offsets_match_memchr2() {
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
            }
        }
    }
}
