//! `ansi-strip` — remove the escape sequences that remain after terminal rendering.
//!
//! **What it does.** Removes SGR colours and every other CSI sequence, OSC strings
//! (including OSC 8 hyperlinks, whose visible text is kept), DCS/APC/PM/SOS strings and
//! two- and three-byte escapes. Text bytes, including `\r` and invalid UTF-8, are kept.
//!
//! **Why.** Colour codes are ~20% of a coloured test run's bytes and carry nothing a
//! model reads.
//!
//! **Example.** `\x1b[31mFAILED\x1b[0m x` → `FAILED x`.
//!
//! **Options.** None. Lossless in meaning; applies at any size.

use crate::doc::{Doc, Line};
use crate::escape::{escape_len, moves_cursor, next_esc, sgr_len, strip_into};
use std::borrow::Cow;

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

/// Strips every line of `doc`. Returns the number of escapes removed (0: unchanged).
pub(crate) fn apply(doc: &mut Doc<'_>) -> u64 {
    if memchr::memchr(0x1b, &doc.buf).is_none() {
        return 0;
    }
    let mut out = Vec::with_capacity(doc.buf.len());
    let mut n = 0;
    let mut lines = Vec::with_capacity(doc.lines.len());
    for l in &doc.lines {
        let start = out.len();
        if l.marker.is_none() {
            n += strip_into(&doc.buf[l.start..l.end], &mut out);
        }
        lines.push(Line {
            start,
            end: out.len(),
            ..*l
        });
    }
    doc.buf = Cow::Owned(out);
    doc.lines = lines;
    n
}

/// The receipt row: `escapes_removed`; `None` when none was.
pub(crate) fn report(escapes: u64) -> Option<crate::RuleReport> {
    (escapes > 0).then(|| crate::RuleReport {
        id: crate::RuleId::AnsiStrip,
        counts: vec![("escapes_removed", escapes)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Eol;

    /// One pass over the whole text gives what stripping line by line gives.
    #[test]
    fn whole_text_strip_agrees_with_per_line_strip() {
        let alphabet: [&[u8]; 14] = [
            b"a",
            b"\x1b",
            b"\x1b[",
            b"31m",
            b"\x1b[0m",
            b"\n",
            b"\r\n",
            b"(",
            b"]",
            b"0;t",
            b"\x07",
            b"\\",
            "é".as_bytes(),
            b"\x1b[?25l",
        ];
        let mut next = crate::text::splitmix(7u64);
        let mut compared = 0;
        for _ in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(next() % 20) {
                input.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            let Some((text, n)) = strip_unless_cursor(&input) else {
                continue;
            };
            let mut doc = Doc::from_raw(&input);
            let m = apply(&mut doc);
            let whole = Doc::from_raw(&text);
            assert_eq!(n, m, "{input:?}");
            assert_eq!(whole.render(None), doc.render(None), "{input:?}");
            // Same original line numbers (a last line emptied by the strip is not
            // shown either way).
            let src = |d: &Doc<'_>| -> Vec<(u32, u32)> {
                let mut v: Vec<_> = d.lines.iter().map(|l| (l.src_first, l.src_last)).collect();
                if d.lines
                    .last()
                    .is_some_and(|l| l.start == l.end && l.eol == Eol::None)
                {
                    v.pop();
                }
                v
            };
            assert_eq!(src(&whole), src(&doc), "{input:?}");
            compared += 1;
        }
        assert!(compared > 10_000, "{compared}");
    }
}
