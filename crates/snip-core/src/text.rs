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
