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
use crate::escape::strip_into;
use crate::rule::{Text, TextCounts};
use std::borrow::Cow;

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

/// The lossless pass: strips the escapes left in the working text (none when it was
/// read without them, see `terminal-render`'s pass).
pub(crate) fn pass(t: &mut Text<'_>) {
    if t.controls.escape && !t.escapes_stripped {
        let n = apply(t.doc());
        t.counts.escapes += n;
        t.raw_offsets &= n == 0;
    }
}

/// The receipt row: `escapes_removed` (by the renderer or this rule); `None` when
/// none was.
pub(crate) fn report(c: &TextCounts) -> Option<crate::RuleReport> {
    (c.escapes > 0).then(|| crate::RuleReport {
        id: crate::RuleId::AnsiStrip,
        counts: vec![("escapes_removed", c.escapes)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Eol;
    use crate::escape::strip_unless_cursor;

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
