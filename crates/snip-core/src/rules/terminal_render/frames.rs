//! The fast path for `\r`-only text: frames as slices of the input, no emulator.

use super::stem::{erases, is_blank, same_stem, stem_span};
use super::Rendered;
use crate::doc::{Doc, Eol, Line};

/// [`render_at`](super::render_at) for text whose only controls are `\r` and `\n` (no escape, no
/// backspace), as rsync, tqdm without colour and most download meters write it. With
/// nothing but carriage returns, a frame always replaces its row whole (no overlay),
/// so every line shown is one frame: a slice of the input, no copy. Gives exactly the
/// emulator's output (tested against [`Term`]).
pub(super) fn render_frames(
    input: &[u8],
    first_line: u32,
    mut starts: Option<Vec<usize>>,
) -> Option<Rendered<'_>> {
    /// The row being drawn: its current frame, the frame pending under it, and earlier
    /// frames with a different stem kept above it.
    struct Row {
        text: (usize, usize),
        pending: Option<(usize, usize)>,
        erased: bool,
        aside: Vec<(usize, usize)>,
        /// The stem of the last frame compared, as `(frame, stem)` ranges of the
        /// input: that frame is the next comparison's older frame.
        stem: Option<((usize, usize), (usize, usize))>,
    }
    let mut lines: Vec<Line> = Vec::with_capacity(input.len() / 48 + 1);
    let mut frames = 0u64;
    let mut line_no = first_line;
    let mut newlines = 0u32;
    let mut row = Row {
        text: (0, 0),
        pending: None,
        erased: false,
        aside: Vec::new(),
        stem: None,
    };
    let stem_of = |r: (usize, usize)| {
        let (s, e) = stem_span(&input[r.0..r.1]);
        (r.0 + s, r.0 + e)
    };
    // Resolves the pending frame as `Term::resolve` does.
    let resolve = |row: &mut Row, frames: &mut u64| {
        let Some(prev) = row.pending.take() else {
            return;
        };
        let new = row.text;
        // A frame's stem starts at its first visible byte: a stem starting at the
        // frame's end means a blank frame. The older frame is usually the one compared
        // last time: its stem is known.
        let cur = stem_of(new);
        let old = match row.stem {
            Some((r, s)) if r == prev => s,
            _ => stem_of(prev),
        };
        row.stem = Some((new, cur));
        let prev_blank = old.0 == prev.1;
        if cur.0 == new.1 {
            // A blank frame: an erase of the row, or skipped; removed either way.
            if erases(&input[new.0..new.1], &input[prev.0..prev.1]) {
                row.text = (new.0, new.0);
                row.erased = true;
            } else {
                row.text = prev;
            }
            *frames += 1;
        } else if same_stem(&input[cur.0..cur.1], &input[old.0..old.1]) {
            *frames += 1;
        } else if !prev_blank {
            row.aside.push(prev);
        }
    };
    // One scan for both controls: `\r` ends a frame (unless it is part of `\r\n`),
    // `\n` ends a line.
    let n = input.len();
    let mut seg = 0;
    let mut first = true;
    row.text = (0, 0);
    let write = |row: &mut Row, first: bool, s: usize, e: usize| {
        if e > s {
            if !first && row.text.0 != row.text.1 {
                row.pending = Some(row.text);
            }
            row.text = (s, e);
            row.erased = false;
        }
    };
    let mut end_line = |row: &mut Row, eol: Option<Eol>, lines: &mut Vec<Line>| {
        let text_line = |(a, b): (usize, usize), eol: Eol| Line::text(a, b, eol, line_no);
        match eol {
            Some(eol) => {
                if !row.aside.is_empty() {
                    lines.extend(row.aside.drain(..).map(|r| text_line(r, eol)));
                }
                if !(row.erased && row.text.0 == row.text.1) {
                    lines.push(text_line(row.text, eol));
                }
            }
            None => {
                // The last line, without a newline: frames kept above it end in `\n`.
                lines.extend(row.aside.drain(..).map(|r| text_line(r, Eol::Lf)));
                if row.text.0 != row.text.1 {
                    lines.push(text_line(row.text, Eol::None));
                }
            }
        }
        line_no = line_no.saturating_add(1);
    };
    for p in crate::text::CrLf::new(input) {
        if input[p] == b'\r' {
            if input.get(p + 1) == Some(&b'\n') {
                continue;
            }
            let erased = row.erased;
            write(&mut row, first, seg, p);
            if row.pending.is_some() {
                resolve(&mut row, &mut frames);
            } else if !first && (p == seg || (erased && is_blank(&input[seg..p]))) {
                // An empty frame (`\r\r`), or a blank one over an erased row, is
                // skipped: a frame removed. Not the first of a line (`\ronly one
                // frame` stays as it is).
                frames += 1;
            }
            first = false;
        } else {
            newlines += 1;
            if let Some(s) = starts.as_mut() {
                s.push(p + 1);
            }
            let crlf = p > seg && input[p - 1] == b'\r';
            let end = if crlf { p - 1 } else { p };
            write(&mut row, first, seg, end);
            resolve(&mut row, &mut frames);
            end_line(
                &mut row,
                Some(if crlf { Eol::CrLf } else { Eol::Lf }),
                &mut lines,
            );
            row.text = (p + 1, p + 1);
            row.erased = false;
            first = true;
        }
        seg = p + 1;
    }
    if seg < n || !first {
        write(&mut row, first, seg, n);
        resolve(&mut row, &mut frames);
        end_line(&mut row, None, &mut lines);
    }
    if frames == 0 {
        return None;
    }
    Some(Rendered {
        doc: Doc {
            buf: std::borrow::Cow::Borrowed(input),
            lines,
            markers: Vec::new(),
            footer: Vec::new(),
        },
        frames_removed: frames,
        backspaces_removed: 0,
        escapes_removed: 0,
        line_starts: starts,
        newlines,
    })
}
