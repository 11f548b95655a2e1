//! The JSON string codec: decoding and encoding string content (between the quotes),
//! finding cut points that fall between whole escapes and code points ([`CutIndex`]),
//! and writing a string literal ([`push_quoted`]). Used by the working document (marker
//! lines written as JSON strings) and by `json-fields`.

use memchr::memchr;
use std::fmt::Write as _;

/// Bytes that end a run of plain string content.
pub(crate) static STR_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |acc, &c| {
        acc * 16 + (c as char).to_digit(16).unwrap_or(0)
    })
}

/// The escape at `raw[j]` (a backslash): its raw length and the code point it stands
/// for. A surrogate pair counts as one escape of 12 bytes; a lone surrogate is U+FFFD.
pub(crate) fn escape_at(raw: &[u8], j: usize) -> (usize, char) {
    match raw.get(j + 1) {
        Some(b'u') if j + 6 <= raw.len() => {
            let hi = hex4(&raw[j + 2..j + 6]);
            if (0xD800..0xDC00).contains(&hi)
                && raw.len() >= j + 12
                && raw[j + 6] == b'\\'
                && raw[j + 7] == b'u'
            {
                let lo = hex4(&raw[j + 8..j + 12]);
                if (0xDC00..0xE000).contains(&lo) {
                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return (12, char::from_u32(cp).unwrap_or('\u{fffd}'));
                }
            }
            (6, char::from_u32(hi).unwrap_or('\u{fffd}'))
        }
        Some(b'b') => (2, '\u{8}'),
        Some(b'f') => (2, '\u{c}'),
        Some(b'n') => (2, '\n'),
        Some(b'r') => (2, '\r'),
        Some(b't') => (2, '\t'),
        Some(&c) => (2, c as char),
        None => (1, '\u{fffd}'),
    }
}

/// The first backslash in `raw[from..]` (`raw.len()` when none). Escapes are often close
/// together (`\n` every line), so the next 16 bytes are looked at before `memchr`.
pub(crate) fn next_backslash(raw: &[u8], from: usize) -> usize {
    let near = (from + 16).min(raw.len());
    if let Some(p) = raw[from..near].iter().position(|&b| b == b'\\') {
        return from + p;
    }
    memchr(b'\\', &raw[near..]).map_or(raw.len(), |p| near + p)
}

/// Decodes raw JSON string content (between the quotes) into UTF-8 bytes.
pub(crate) fn decode(raw: &[u8], out: &mut Vec<u8>) {
    let mut r = 0;
    while r < raw.len() {
        let next = next_backslash(raw, r);
        out.extend_from_slice(&raw[r..next]);
        r = next;
        if r >= raw.len() {
            return;
        }
        let (len, ch) = escape_at(raw, r);
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        r += len;
    }
}

/// Encodes UTF-8 text as JSON string content (no quotes): `"`, `\` and control
/// characters are escaped, everything else is copied.
pub(crate) fn encode(s: &[u8], out: &mut Vec<u8>) {
    let mut run = 0;
    for (i, &c) in s.iter().enumerate() {
        if !STR_SPECIAL[c as usize] {
            continue;
        }
        out.extend_from_slice(&s[run..i]);
        run = i + 1;
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                let _ = write!(VecWriter(out), "\\u{:04x}", c);
            }
        }
    }
    out.extend_from_slice(&s[run..]);
}

pub(crate) struct VecWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for VecWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// A walk from the start: what [`CutIndex::locate`] must agree with.
#[cfg(test)]
pub(crate) fn locate(raw: &[u8], target: usize, down: bool) -> (usize, usize) {
    locate_from(raw, (0, 0), target, down)
}

/// Finds a cut in raw JSON string content at decoded offset `target`: the largest unit
/// boundary at or below it (`down`) or the smallest at or above it, walking from `from`,
/// a known unit boundary `(raw offset, decoded offset)` at or before the target. Units
/// are whole escapes (a surrogate pair is one) and whole UTF-8 code points. Returns
/// `(raw offset, decoded offset)`; past the end, the end.
fn locate_from(raw: &[u8], from: (usize, usize), target: usize, down: bool) -> (usize, usize) {
    let (mut r, mut d) = from;
    loop {
        let next = next_backslash(raw, r);
        let seg = next - r;
        if d + seg >= target {
            let p = r + (target - d);
            let p = if down {
                crate::text::floor_char_boundary(raw, p)
            } else {
                crate::text::ceil_char_boundary(raw, p)
            };
            return (p, d + (p - r));
        }
        d += seg;
        r = next;
        if r >= raw.len() {
            return (r, d);
        }
        let (rl, ch) = escape_at(raw, r);
        let dl = ch.len_utf8();
        if d + dl > target {
            return if down { (r, d) } else { (r + rl, d + dl) };
        }
        r += rl;
        d += dl;
        if d == target {
            return (r, d);
        }
    }
}

/// Raw bytes between two checkpoints of a [`CutIndex`].
const CHECKPOINT_STEP: usize = 4096;

/// Unit boundaries of one long string, about every [`CHECKPOINT_STEP`] raw bytes, so a
/// cut anywhere costs one short walk instead of a walk from the start.
pub(crate) struct CutIndex {
    /// `(raw offset, decoded offset)` pairs, increasing, starting at `(0, 0)`.
    checkpoints: Vec<(usize, usize)>,
    /// Decoded length of the whole string in bytes.
    pub(crate) dec_len: usize,
}

impl CutIndex {
    pub(crate) fn new(raw: &[u8]) -> Self {
        let mut checkpoints = vec![(0, 0)];
        let (mut r, mut d) = (0usize, 0usize);
        let mut next_cp = CHECKPOINT_STEP;
        loop {
            let next = next_backslash(raw, r);
            while next_cp < next {
                let p = crate::text::floor_char_boundary(raw, next_cp).max(r);
                if p > checkpoints[checkpoints.len() - 1].0 {
                    checkpoints.push((p, d + (p - r)));
                }
                next_cp += CHECKPOINT_STEP;
            }
            d += next - r;
            r = next;
            if r >= raw.len() {
                return CutIndex {
                    checkpoints,
                    dec_len: d,
                };
            }
            let (rl, ch) = escape_at(raw, r);
            r += rl;
            d += ch.len_utf8();
            if r >= next_cp {
                checkpoints.push((r, d));
                next_cp = r + CHECKPOINT_STEP;
            }
        }
    }

    /// The cut at decoded offset `target` (see [`locate_from`]).
    pub(crate) fn locate(&self, raw: &[u8], target: usize, down: bool) -> (usize, usize) {
        let k = self.checkpoints.partition_point(|c| c.1 <= target);
        locate_from(raw, self.checkpoints[k.max(1) - 1], target, down)
    }
}

/// Appends `text` as a JSON string literal, quotes included.
pub(crate) fn push_quoted(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    encode(text.as_bytes(), out);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_respects_escapes_and_code_points() {
        let raw = br#"ab\u00e9\ud83d\ude00\n\u00"#;
        // a b é(2) 😀(4) \n(1) then a truncated tail we never cut into.
        assert_eq!(locate(raw, 2, true), (2, 2));
        assert_eq!(locate(raw, 3, true), (2, 2));
        assert_eq!(locate(raw, 3, false), (8, 4));
        assert_eq!(locate(raw, 5, true), (8, 4));
        assert_eq!(locate(raw, 5, false), (20, 8));
        let utf8 = "aé😀b".as_bytes();
        assert_eq!(locate(utf8, 2, true), (1, 1));
        assert_eq!(locate(utf8, 2, false), (3, 3));
        assert_eq!(locate(utf8, 4, false), (7, 7));
    }

    #[test]
    fn cut_index_agrees_with_a_walk_from_the_start() {
        let raw: Vec<u8> = (0..3000)
            .map(|i| match i % 7 {
                0 => "\\u00e9".to_string(),
                1 => "\\ud83d\\ude00".to_string(),
                2 => "é😀".to_string(),
                3 => "\\n".to_string(),
                _ => format!("{i}"),
            })
            .collect::<String>()
            .into_bytes();
        let index = CutIndex::new(&raw);
        assert!(index.checkpoints.len() > 3);
        assert_eq!(index.dec_len, locate(&raw, usize::MAX, true).1);
        for target in (0..index.dec_len + 3).step_by(61) {
            for down in [true, false] {
                assert_eq!(index.locate(&raw, target, down), locate(&raw, target, down));
            }
        }
    }

    #[test]
    fn decode_and_encode_round_trip() {
        let raw = br#"q\"b\\s\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00\ud800x"#;
        let mut d = Vec::new();
        decode(raw, &mut d);
        assert_eq!(d, "q\"b\\s/\u{8}\u{c}\n\r\t\u{1}é😀\u{fffd}x".as_bytes());
        let mut e = Vec::new();
        encode(&d, &mut e);
        let mut again = Vec::new();
        decode(&e, &mut again);
        assert_eq!(again, d);
    }
}
