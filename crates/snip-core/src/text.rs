//! Byte-level text helpers: UTF-8-safe cuts and line splitting.

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
