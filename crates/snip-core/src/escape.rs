//! Escape sequences: the one lexer of ESC, CSI, OSC, DCS/APC/PM/SOS and two- and
//! three-byte escapes, used by `ansi-strip`, `terminal-render`, the stream engine and
//! [`crate::text::strip_ansi`]. It measures an escape ([`escape_len`]), classifies it
//! ([`moves_cursor`]) and strips escapes from text ([`strip`]); what an escape does
//! to the screen is `terminal-render`'s.

use std::borrow::Cow;

/// Length of the escape sequence at `s[0] == ESC` (at least 1; an unterminated one
/// runs to the end of `s` or of the line). An escape never holds a control character
/// after its ESC: a terminal acts on a control met inside an escape (ECMA-48 § 5.4;
/// a line feed still moves to the next line), so the escape ends before it. Above
/// all, a line ending is never inside an escape: every rule and the stream number the
/// original's lines by the `\n`s they see, and a swallowed one shifted every later
/// line number a marker cites.
pub(crate) fn escape_len(s: &[u8]) -> usize {
    let Some(&kind) = s.get(1) else { return 1 };
    if !kind.is_ascii() || kind < 0x20 {
        // ESC before a multi-byte character: drop the ESC alone, never half a
        // character. ESC before a control (`\n`, `\r`, another ESC): the ESC alone.
        return 1;
    }
    match kind {
        b'[' => {
            let mut j = 2;
            while j < s.len() && (0x30..=0x3f).contains(&s[j]) {
                j += 1;
            }
            while j < s.len() && (0x20..=0x2f).contains(&s[j]) {
                j += 1;
            }
            if j < s.len() && is_csi_final(s[j]) {
                j + 1
            } else {
                j
            }
        }
        b']' | b'P' | b'_' | b'^' | b'X' => {
            let cap = s.len().min(1 << 16);
            let mut j = 2;
            while j < cap {
                match s[j] {
                    0x07 => return j + 1,
                    0x1b if s.get(j + 1) == Some(&b'\\') => return j + 2,
                    0x1b | b'\n' => return j,
                    _ => j += 1,
                }
            }
            crate::text::floor_char_boundary(s, cap).max(2)
        }
        // A character set's designation: its final byte is printable, never a control.
        b'(' | b')' | b'*' | b'+' | b'#' | b'%'
            if s.get(2).is_some_and(|&c| (0x20..0x7f).contains(&c)) =>
        {
            3
        }
        _ => 2,
    }
}

/// Whether `b` ends a CSI sequence (a final byte, `@` to `~`).
#[inline]
pub(crate) fn is_csi_final(b: u8) -> bool {
    (0x40..=0x7e).contains(&b)
}

/// The length of the colour escape (SGR: `ESC [`, digits and `;`, then `m`) at the
/// start of `s`, or `None` for any other escape. Equal to [`escape_len`] where it
/// answers (tested); SGR neither moves the cursor nor holds a line ending.
#[inline]
pub(crate) fn sgr_len(s: &[u8]) -> Option<usize> {
    if s.get(1) != Some(&b'[') {
        return None;
    }
    let mut j = 2;
    while let Some(&c) = s.get(j) {
        match c {
            b'0'..=b'9' | b';' => j += 1,
            b'm' => return Some(j + 1),
            _ => return None,
        }
    }
    None
}

/// The offset of the next ESC in `b`. Coloured output has a few bytes between
/// escapes, where a plain loop beats a SIMD call; long runs go to `memchr`.
#[inline]
pub(crate) fn next_esc(b: &[u8]) -> Option<usize> {
    const SHORT: usize = 16;
    for (i, &c) in b.iter().take(SHORT).enumerate() {
        if c == 0x1b {
            return Some(i);
        }
    }
    if b.len() <= SHORT {
        return None;
    }
    memchr::memchr(0x1b, &b[SHORT..]).map(|k| k + SHORT)
}

/// Whether the escape at the start of `s` (`n` bytes long, from
/// [`escape_len`]) moves the cursor, erases, or saves or
/// restores the cursor: the escapes `terminal-render` interprets.
pub(crate) fn moves_cursor(s: &[u8], n: usize) -> bool {
    match s.get(1) {
        Some(b'7') | Some(b'8') => true,
        Some(b'[') => {
            matches!(
                s[n - 1],
                b'A' | b'B'
                    | b'C'
                    | b'D'
                    | b'E'
                    | b'F'
                    | b'G'
                    | b'H'
                    | b'f'
                    | b'J'
                    | b'K'
                    | b'd'
                    | b's'
                    | b'u'
                    | b'`'
            ) && !s[2..n - 1].starts_with(b"?")
        }
        _ => false,
    }
}

/// Removes escapes from `b`, appending the rest to `out`; returns how many were removed.
pub(crate) fn strip_into(b: &[u8], out: &mut Vec<u8>) -> u64 {
    let mut n = 0;
    let mut i = 0;
    while let Some(k) = next_esc(&b[i..]) {
        out.extend_from_slice(&b[i..i + k]);
        i += k;
        i += escape_len(&b[i..]);
        n += 1;
    }
    out.extend_from_slice(&b[i..]);
    n
}

/// Strips a byte string (used on text that has not been split into lines).
pub fn strip(b: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr(0x1b, b).is_none() {
        return Cow::Borrowed(b);
    }
    let mut out = Vec::with_capacity(b.len());
    strip_into(b, &mut out);
    Cow::Owned(out)
}

/// The terminal controls an input holds, found once so that the pipeline and the
/// rules do not scan the input again for each question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Controls {
    /// An ESC byte (an escape sequence, or a stray ESC).
    pub escape: bool,
    /// A backspace.
    pub backspace: bool,
    /// A `\r` not followed by `\n` (under a pseudo-terminal every line ends in `\r\n`).
    pub lone_cr: bool,
}

impl Controls {
    pub(crate) fn scan(input: &[u8]) -> Controls {
        let (mut escape, mut backspace) = (false, false);
        if let Some(i) = memchr::memchr2(0x1b, 0x08, input) {
            let rest = &input[i + 1..];
            if input[i] == 0x1b {
                escape = true;
                backspace = memchr::memchr(0x08, rest).is_some();
            } else {
                backspace = true;
                escape = memchr::memchr(0x1b, rest).is_some();
            }
        }
        let lone_cr = memchr::memchr_iter(b'\r', input).any(|i| input.get(i + 1) != Some(&b'\n'));
        Controls {
            escape,
            backspace,
            lone_cr,
        }
    }

    /// Controls that draw frames without an escape: a backspace or a lone `\r`.
    pub(crate) fn frames(&self) -> bool {
        self.backspace || self.lone_cr
    }
}

/// Strips every escape of `b` in one pass (a line ending is never inside an escape,
/// so lines stay where they were), or `None` as soon as one is an escape
/// `terminal-render` interprets (cursor, erase, save/restore). Returns the text and
/// the number of escapes removed.
pub(crate) fn strip_unless_cursor(b: &[u8]) -> Option<(Vec<u8>, u64)> {
    let mut out = Vec::with_capacity(b.len());
    let mut n = 0;
    let mut i = 0;
    while let Some(k) = next_esc(&b[i..]) {
        out.extend_from_slice(&b[i..i + k]);
        i += k;
        // Most escapes in coloured output set colours (`ESC [ 1;31 m`): nothing to
        // check for those beyond their bytes.
        if let Some(len) = sgr_len(&b[i..]) {
            i += len;
            n += 1;
            continue;
        }
        let mut len = escape_len(&b[i..]);
        if b[i..i + len].iter().any(|&c| c == b'\n' || c == b'\r') {
            // Never across a line ending: parse as the per-line strip would, with the
            // line's content ending before its `\r\n` or `\n`.
            let nl = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k);
            let end = if b[nl - 1] == b'\r' { nl - 1 } else { nl };
            len = escape_len(&b[i..end]).clamp(1, end - i);
        }
        if moves_cursor(&b[i..], len) {
            return None;
        }
        i += len;
        n += 1;
    }
    out.extend_from_slice(&b[i..]);
    Some((out, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colour fast path measures what the general parser measures, and is not
    /// taken for anything that moves the cursor.
    #[test]
    fn sgr_fast_path_agrees_with_escape_len() {
        let alphabet: &[u8] = b"\x1b[0123456789;;;mmmm:AHK?\n\r ";
        let mut next = crate::text::splitmix(11u64);
        let mut taken = 0;
        for _ in 0..50_000 {
            let mut s = if next().is_multiple_of(4) {
                vec![0x1b]
            } else {
                b"\x1b[".to_vec()
            };
            for _ in 0..(next() % 8) {
                s.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            if let Some(len) = sgr_len(&s) {
                assert_eq!(len, escape_len(&s), "{s:?}");
                assert!(!moves_cursor(&s, len), "{s:?}");
                taken += 1;
            }
        }
        assert!(taken > 5_000, "{taken}");
        assert_eq!(sgr_len(b"\x1b[1;31mx"), Some(7));
        assert_eq!(sgr_len(b"\x1b[2K"), None);
        assert_eq!(sgr_len(b"\x1b[31"), None);
    }

    /// No escape holds a line feed, and no escape but a string (OSC, DCS, APC, PM,
    /// SOS, which end at their terminator) holds a control character after its ESC:
    /// random byte strings that start with ESC, over an alphabet of introducers,
    /// parameters, finals and controls.
    #[test]
    fn no_escape_holds_a_line_feed_or_a_control() {
        let alphabet: &[u8] = b"\x1b[]()#%P_^X\\;0189mAHKB\x07\n\r\x08\t ~\x7f\xc3\xa9";
        let mut next = crate::text::splitmix(23u64);
        for _ in 0..100_000 {
            let mut s = vec![0x1b];
            for _ in 0..(next() % 10) {
                s.push(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            let n = escape_len(&s);
            assert!((1..=s.len()).contains(&n), "{s:?}: {n}");
            assert!(
                !s[..n].contains(&b'\n'),
                "{s:?}: a line feed inside ({n} bytes)"
            );
            let string = matches!(s.get(1), Some(b']' | b'P' | b'_' | b'^' | b'X'));
            assert!(
                string || !s[1..n].iter().any(|&c| c < 0x20),
                "{s:?}: a control inside ({n} bytes)"
            );
        }
        assert_eq!(escape_len(b"\x1b\nx"), 1);
        assert_eq!(escape_len(b"\x1b(\nx"), 2);
        assert_eq!(escape_len(b"\x1b(Bx"), 3);
        assert_eq!(escape_len(b"\x1b\x1b[31m"), 1);
    }

    #[test]
    fn strips_sgr_osc8_and_modes() {
        assert_eq!(&*strip(b"\x1b[31mFAILED\x1b[0m x"), b"FAILED x");
        assert_eq!(
            &*strip(b"\x1b]8;id=1;file:///a\x1b\\a.txt\x1b]8;;\x1b\\ ok"),
            b"a.txt ok"
        );
        assert_eq!(&*strip(b"\x1b[?25lx\x1b[?25h"), b"x");
        assert_eq!(&*strip(b"\x1b(Bx"), b"x");
        assert_eq!(&*strip(b"tail\x1b"), b"tail");
        assert_eq!(&*strip(b"\x1b]0;title\x07rest"), b"rest");
    }
}
