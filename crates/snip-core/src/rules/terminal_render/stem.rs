//! Frame stems: when a redraw replaces the row it overdraws.

/// Whether `b` shows nothing (ASCII whitespace only).
pub(crate) fn is_blank(b: &[u8]) -> bool {
    b.iter().all(|c| c.is_ascii_whitespace())
}

/// Whether the blank frame `frame` (see [`is_blank`]), drawn from the row's first
/// column over `old`, leaves nothing of `old` visible: a space writes a blank cell,
/// while a tab only moves the cursor to the next tab stop (every 8 cells) and other
/// whitespace moves nothing, so the cells they pass keep what `old` showed there. A
/// frame of tabs erases nothing; a frame of spaces at least as wide as `old` erases it.
pub(crate) fn erases(frame: &[u8], old: &[u8]) -> bool {
    // The cells the frame's spaces write, as sorted half-open column ranges.
    let mut written: Vec<(usize, usize)> = Vec::new();
    let mut col = 0usize;
    for &c in frame {
        match c {
            b' ' => match written.last_mut() {
                Some(r) if r.1 == col => r.1 += 1,
                _ => written.push((col, col + 1)),
            },
            b'\t' => {
                col = (col / 8 + 1) * 8;
                continue;
            }
            _ => continue,
        }
        col += 1;
    }
    // Every visible cell of `old` must be one of them (cells are visited left to
    // right: one pass over the ranges).
    let mut k = 0usize;
    let mut covered = |a: usize, b: usize| {
        while k < written.len() && written[k].1 <= a {
            k += 1;
        }
        written.get(k).is_some_and(|r| r.0 <= a && b <= r.1)
    };
    let mut col = 0usize;
    for chunk in old.utf8_chunks() {
        for c in chunk.valid().chars() {
            let w = match c {
                '\t' => {
                    col = (col / 8 + 1) * 8;
                    continue;
                }
                ' ' => 1,
                c => {
                    let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    if w > 0 && !c.is_whitespace() && !covered(col, col + w) {
                        return false;
                    }
                    w
                }
            };
            col += w;
        }
        for _ in chunk.invalid() {
            if !covered(col, col + 1) {
                return false;
            }
            col += 1;
        }
    }
    true
}

/// Whether the frame `old`, drawn over by `new` after a `\r`, leaves nothing a
/// terminal would show: blank, or the same bar (see [`same_bar`]). Otherwise the
/// rendering keeps `old` on a line of its own.
pub(crate) fn overdrawn(old: &[u8], new: &[u8]) -> bool {
    is_blank(old) || same_bar(new, old)
}

/// Whether `new` redraws the same bar as `old`: equal stems, or (beyond
/// progress-squash) a final frame that extends the stem, as in
/// `Reading package lists... 98%` → `Reading package lists... Done`.
pub(super) fn same_bar(new: &[u8], old: &[u8]) -> bool {
    same_stem(stem(new), stem(old))
}

/// [`same_bar`] on the two frames' stems.
pub(super) fn same_stem(a: &[u8], b: &[u8]) -> bool {
    a == b || (b.len() >= 4 && a.starts_with(b))
}

/// Bytes that end a stem: ASCII digits, the bar glyphs `# = > | [`, and 0xE2 (the
/// lead byte of U+2500–259F, checked further in [`stem`]).
const STEM_END: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = true;
        c += 1;
    }
    t[b'#' as usize] = true;
    t[b'=' as usize] = true;
    t[b'>' as usize] = true;
    t[b'|' as usize] = true;
    t[b'[' as usize] = true;
    t[0xE2] = true;
    t
};

/// The frame's stem: text before the first digit or bar glyph, trimmed.
pub(super) fn stem(b: &[u8]) -> &[u8] {
    let (s, e) = stem_span(b);
    &b[s..e]
}

/// Whether `c` may be a spinner's glyph: one of `| / - \ *`, or a character outside
/// ASCII that is not a letter or digit (braille `⠋`, `◐`, `✶`, `✻`, `🕐`…).
fn is_spinner_glyph(c: char) -> bool {
    matches!(c, '|' | '/' | '-' | '\\' | '*') || (!c.is_ascii() && !c.is_alphanumeric())
}

/// The length in bytes of a spinner's glyph and the whitespace after it at the start
/// of `b` (0 when `b` does not start with one, or nothing visible follows it: a stem
/// starting at the frame's end means a blank frame): a spinner draws a different
/// glyph on each frame (`⠋ Installing`, `⠙ Installing`), so the glyph is not part of
/// the stem.
fn spinner_len(b: &[u8]) -> usize {
    let head = &b[..b.len().min(8)];
    let s = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    let mut cs = s.char_indices();
    match (cs.next(), cs.next()) {
        (Some((_, g)), Some((at, w))) if is_spinner_glyph(g) && w.is_ascii_whitespace() => {
            let end = at
                + b[at..]
                    .iter()
                    .take_while(|c| c.is_ascii_whitespace())
                    .count();
            if end < b.len() {
                end
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// [`stem`] as a half-open byte range of `b`.
pub(super) fn stem_span(b: &[u8]) -> (usize, usize) {
    // Leading whitespace and a spinner's glyph never end a stem: skip them first, then
    // the stem runs to the first stem-ending byte, less trailing whitespace.
    let mut start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    start += spinner_len(&b[start..]);
    let mut end = b.len();
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if STEM_END[c as usize] {
            // U+2500–259F (box drawing and block elements) are E2 94 80 – E2 96 9F.
            if c != 0xE2 || (i + 1 < b.len() && (0x94..=0x96).contains(&b[i + 1])) {
                end = i;
                break;
            }
        }
        i += 1;
    }
    while end > start && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    // A spinner's glyph at the end of the stem (`Loading modules /`, `Waiting ⠙`),
    // after whitespace: not part of it either.
    let g = trailing_glyph(&b[start..end]);
    if g > 0 && end - g > start && b[end - g - 1].is_ascii_whitespace() {
        end -= g;
        while end > start && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
    }
    (start, end)
}

/// The length in bytes of a spinner's glyph ending `b` (0 when `b` does not end with
/// one; see [`is_spinner_glyph`]).
fn trailing_glyph(b: &[u8]) -> usize {
    let tail = &b[b.len().saturating_sub(4)..];
    (1..=tail.len())
        .rev()
        .find_map(|n| {
            let s = std::str::from_utf8(&tail[tail.len() - n..]).ok()?;
            let mut cs = s.chars();
            let c = cs.next()?;
            (cs.next().is_none() && is_spinner_glyph(c)).then_some(n)
        })
        .unwrap_or(0)
}
