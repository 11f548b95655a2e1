//! The working document: lines with their provenance in the original, and markers.
//!
//! Rules transform a [`Doc`]; the pipeline renders it once at the end, when the store
//! id is known, so every marker can quote its restore call.

use crate::marker::Marker;
use std::borrow::Cow;

/// How a line ended in the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// No line ending (the last line of an input without a final newline).
    None,
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
}

impl Eol {
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Eol::None => b"",
            Eol::Lf => b"\n",
            Eol::CrLf => b"\r\n",
        }
    }
}

/// One line of the working document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Content start in [`Doc::buf`] (bytes, 0-based).
    pub start: usize,
    /// Content end in [`Doc::buf`] (exclusive), without the line ending.
    pub end: usize,
    /// The line ending.
    pub eol: Eol,
    /// First original line this line covers (0-based).
    pub src_first: u32,
    /// Last original line this line covers (0-based, inclusive).
    pub src_last: u32,
    /// `Some(i)`: this line is the marker `Doc::markers[i]` (content is empty).
    pub marker: Option<u32>,
}

/// Emptied buffers for a document's rendered text and line table, kept to be written
/// into again (see [`crate::rule::Text::scratch`]).
pub(crate) type Scratch = (Vec<u8>, Vec<Line>);

/// How a line reads for the section rules, which keep each shown line of output in
/// sections (a header, an indented body, a blank line: a linter's file name over its
/// warnings, `git log --stat`, rustc's diagnostics) under its own header:
/// `shape-fold`'s last block and `head-tail-elide`'s head, tail and islands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Form {
    /// Only spaces, tabs or nothing.
    Blank,
    /// Starts with a space or a tab: a section's body.
    Indented,
    /// Any other line: a section's header.
    Header,
}

/// Lines the section rules read from a line for its section's header or end.
pub(crate) const SECTION_LINES: usize = 12;

/// Lines over a buffer, plus the markers some lines stand for.
#[derive(Debug, Clone)]
pub(crate) struct Doc<'a> {
    pub buf: Cow<'a, [u8]>,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Markers that go after the last line (summaries of lossless removals).
    pub footer: Vec<Marker>,
}

/// The line ending most of the first 64 of `lines` use (`\n` on a tie or none).
pub(crate) fn dominant_eol(lines: &[Line]) -> Eol {
    let first = &lines[..lines.len().min(64)];
    let crlf = first.iter().filter(|l| l.eol == Eol::CrLf).count();
    let lf = first.iter().filter(|l| l.eol == Eol::Lf).count();
    if crlf > lf {
        Eol::CrLf
    } else {
        Eol::Lf
    }
}

/// A placeholder id, as long as a real one, used to size markers before rendering.
pub(crate) const SIZING_ID: &str = "sn_0000000000000000000000000000";

/// The original lines (0-based, inclusive) rendered rows `rows` show writes of: from
/// the least line any of them shows to the greatest (on rendered text a row redrawn
/// late holds writes from many lines, so the first and last rows need not hold them).
pub(crate) fn rows_lines(rows: &[Line]) -> (u32, u32) {
    rows.iter().fold((u32::MAX, 0), |(lo, hi), l| {
        (lo.min(l.src_first), hi.max(l.src_last).max(l.src_first))
    })
}

/// The line feeds that end `lines`, lines read straight from a text
/// ([`Doc::from_raw_at`]): every line but a last one without an ending.
pub(crate) fn line_feeds(lines: &[Line]) -> u32 {
    let open = lines.last().is_some_and(|l| l.eol == Eol::None);
    (lines.len() - usize::from(open)) as u32
}

impl<'a> Doc<'a> {
    /// Splits `input` into lines (on `\n`; a `\r` right before it is part of the ending).
    pub(crate) fn from_raw(input: &'a [u8]) -> Doc<'a> {
        Doc::from_raw_at(input, 0)
    }

    /// [`Doc::from_raw`] for a piece of a larger input whose first line is original
    /// line `first_line` (0-based).
    pub(crate) fn from_raw_at(input: &'a [u8], first_line: u32) -> Doc<'a> {
        // Counted first (a vector count, ~16 bytes per instruction): a table grown by
        // doubling would copy itself and touch up to twice the pages.
        let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', input).count() + 1);
        let mut start = 0usize;
        let mut n: u32 = first_line;
        for nl in crate::text::Newlines::new(input) {
            let (end, eol) = if nl > start && input[nl - 1] == b'\r' {
                (nl - 1, Eol::CrLf)
            } else {
                (nl, Eol::Lf)
            };
            lines.push(Line::text(start, end, eol, n));
            n = n.saturating_add(1);
            start = nl + 1;
        }
        if start < input.len() {
            lines.push(Line::text(start, input.len(), Eol::None, n));
        }
        Doc {
            buf: Cow::Borrowed(input),
            lines,
            markers: Vec::new(),
            footer: Vec::new(),
        }
    }

    /// An empty document owning its buffer.
    pub(crate) fn owned(capacity: usize) -> Doc<'static> {
        Doc {
            buf: Cow::Owned(Vec::with_capacity(capacity)),
            lines: Vec::new(),
            markers: Vec::new(),
            footer: Vec::new(),
        }
    }

    /// Adds `by` to every original line number the document holds (lines and line
    /// markers), for a piece rendered as if it started at line 0. Markers that quote
    /// byte offsets are left alone (pieces only hold line markers).
    pub(crate) fn shift_lines(&mut self, by: u32) {
        if by == 0 {
            return;
        }
        for l in &mut self.lines {
            l.src_first = l.src_first.saturating_add(by);
            l.src_last = l.src_last.saturating_add(by);
        }
        let by = u64::from(by);
        for m in self.markers.iter_mut().chain(self.footer.iter_mut()) {
            if let Some((a, b)) = &mut m.lines {
                *a += by;
                *b += by;
            }
            if let crate::marker::Recovery::Elided(crate::marker::RestoreCall::Lines {
                start,
                end,
            })
            | crate::marker::Recovery::Lossless(crate::marker::RestoreCall::Lines {
                start,
                end,
            }) = &mut m.recovery
            {
                *start += by;
                *end += by;
            }
        }
    }

    /// The content of line `l` (without its ending).
    #[inline]
    pub(crate) fn text(&self, l: &Line) -> &[u8] {
        &self.buf[l.start..l.end]
    }

    /// How line `l` reads for the section rules (see [`Form`]); `None` for a marker.
    pub(crate) fn form(&self, l: &Line) -> Option<Form> {
        if l.marker.is_some() {
            return None;
        }
        let t = self.text(l);
        Some(if t.trim_ascii().is_empty() {
            Form::Blank
        } else if matches!(t[0], b' ' | b'\t') {
            Form::Indented
        } else {
            Form::Header
        })
    }

    /// The line ending most lines use (for inserted marker lines).
    pub(crate) fn dominant_eol(&self) -> Eol {
        dominant_eol(&self.lines)
    }

    /// Adds a marker line covering original lines `src_first..=src_last` (0-based).
    pub(crate) fn marker_line(
        &mut self,
        m: Marker,
        eol: Eol,
        src_first: u32,
        src_last: u32,
    ) -> Line {
        self.markers.push(m);
        Line {
            start: 0,
            end: 0,
            eol,
            src_first,
            src_last,
            marker: Some((self.markers.len() - 1) as u32),
        }
    }

    /// Rendered size in bytes (markers sized with a placeholder id).
    pub(crate) fn size(&self) -> usize {
        let mut n = 0usize;
        let mut scratch = String::new();
        let mut sized = |m: &Marker| {
            scratch.clear();
            m.render_into(Some(SIZING_ID), &mut scratch);
            scratch.len()
        };
        for l in &self.lines {
            n += match l.marker {
                Some(i) => sized(&self.markers[i as usize]),
                None => l.end - l.start,
            } + l.eol.bytes().len();
        }
        for m in &self.footer {
            n += sized(m) + 2;
        }
        n
    }

    /// Size of one line as rendered (placeholder id for markers), ending included.
    #[inline]
    pub(crate) fn line_size(&self, l: &Line) -> usize {
        (match l.marker {
            Some(i) => self.marker_size(i),
            None => l.end - l.start,
        }) + l.eol.bytes().len()
    }

    /// Size of marker `i` as rendered with a placeholder id, ending excluded.
    #[cold]
    #[inline(never)]
    fn marker_size(&self, i: u32) -> usize {
        self.markers[i as usize].render(Some(SIZING_ID)).len()
    }

    /// Renders the document; markers quote `id` when the original is retained.
    pub(crate) fn render(&self, id: Option<&str>) -> Vec<u8> {
        self.render_markers_as(id, false)
    }

    /// [`Doc::render`], with each marker line written as a JSON string when `json` (JSON
    /// Lines, where every line must be a JSON value). Footer markers stay plain text.
    pub(crate) fn render_markers_as(&self, id: Option<&str>, json: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len().min(1 << 24) + 256);
        let mut scratch = String::new();
        let last = self.lines.len().saturating_sub(1);
        for (k, l) in self.lines.iter().enumerate() {
            match l.marker {
                Some(i) => {
                    scratch.clear();
                    self.markers[i as usize].render_into(id, &mut scratch);
                    if json {
                        crate::json::string::push_quoted(&scratch, &mut out);
                    } else {
                        out.extend_from_slice(scratch.as_bytes());
                    }
                }
                None => out.extend_from_slice(&self.buf[l.start..l.end]),
            }
            let mut eol = l.eol;
            if k == last && eol == Eol::None && !self.footer.is_empty() {
                eol = self.dominant_eol();
            }
            out.extend_from_slice(eol.bytes());
        }
        let ends_with_eol = self.lines.last().is_none_or(|l| l.eol != Eol::None);
        let eol = self.dominant_eol();
        for (k, m) in self.footer.iter().enumerate() {
            out.extend_from_slice(m.render(id).as_bytes());
            if ends_with_eol || k + 1 < self.footer.len() {
                out.extend_from_slice(eol.bytes());
            }
        }
        out
    }
}

impl Line {
    pub(crate) fn text(start: usize, end: usize, eol: Eol, src: u32) -> Line {
        Line {
            start,
            end,
            eol,
            src_first: src,
            src_last: src,
            marker: None,
        }
    }
}

/// Maps original line numbers to byte offsets, built only when a lossy marker needs
/// them: every line start of the input, or (for an input reduced to a few pieces) the
/// start of each piece, from which lines are found by counting newlines.
pub(crate) enum RawIndex<'a> {
    /// Every line start of `input`.
    Full { input: &'a [u8], starts: Vec<usize> },
    /// `(line, offset)` anchors, sorted by line: original line `line` (0-based) starts
    /// at byte `offset` of `input`.
    Anchored {
        input: &'a [u8],
        anchors: Vec<(u32, usize)>,
    },
}

impl<'a> RawIndex<'a> {
    pub(crate) fn new(input: &'a [u8]) -> RawIndex<'a> {
        Self::new_in(input, Vec::new())
    }

    /// [`RawIndex::new`], in `starts`'s buffer (emptied first).
    pub(crate) fn new_in(input: &'a [u8], mut starts: Vec<usize>) -> RawIndex<'a> {
        starts.clear();
        starts.reserve(input.len() / 48 + 2);
        starts.push(0);
        starts.extend(crate::text::Newlines::new(input).map(|i| i + 1));
        RawIndex::Full { input, starts }
    }

    /// The index of `input` from its line starts (0, then the offset after each `\n`,
    /// in order), as a scan that already passed every `\n` collected them: the same
    /// index as [`RawIndex::new`], without a second scan. The last start may be left
    /// out when it is the input's length (after a final `\n`): a start past the list
    /// reads as the input's end.
    pub(crate) fn from_starts(input: &'a [u8], starts: Vec<usize>) -> RawIndex<'a> {
        debug_assert_eq!(starts.first(), Some(&0));
        RawIndex::Full { input, starts }
    }

    /// The line starts of `lines`, the lines [`Doc::from_raw`] made of an input (0 for
    /// an empty one), for [`RawIndex::from_starts`].
    pub(crate) fn starts_of(lines: &[Line]) -> Vec<usize> {
        let mut starts: Vec<usize> = lines.iter().map(|l| l.start).collect();
        if starts.is_empty() {
            starts.push(0);
        }
        starts
    }

    /// An index that finds line starts from `anchors` (`(line, offset)`, any order;
    /// line 0 at offset 0 is implied).
    pub(crate) fn anchored(input: &'a [u8], mut anchors: Vec<(u32, usize)>) -> RawIndex<'a> {
        anchors.push((0, 0));
        anchors.sort_unstable();
        anchors.dedup_by_key(|a| a.0);
        RawIndex::Anchored { input, anchors }
    }

    /// Byte offset where original line `line` (0-based) starts (the input's length
    /// past the last line).
    fn start(&self, line: u32) -> usize {
        match self {
            RawIndex::Full { input, starts } => starts
                .get(line as usize)
                .copied()
                .unwrap_or(input.len())
                .min(input.len()),
            RawIndex::Anchored { input, anchors } => {
                let k = anchors.partition_point(|a| a.0 <= line).saturating_sub(1);
                let (mut l, base) = anchors[k];
                let base = base.min(input.len());
                if l == line {
                    return base;
                }
                for nl in memchr::memchr_iter(b'\n', &input[base..]) {
                    l += 1;
                    if l == line {
                        return base + nl + 1;
                    }
                }
                input.len()
            }
        }
    }

    /// The bytes original line `line` (0-based) printed, without its line ending
    /// (empty past the last line).
    pub(crate) fn line(&self, line: u32) -> &'a [u8] {
        let input: &'a [u8] = match self {
            RawIndex::Full { input, .. } | RawIndex::Anchored { input, .. } => input,
        };
        let (s, e) = (self.start(line), self.start(line.saturating_add(1)));
        let l = &input[s..e.max(s)];
        let l = l.strip_suffix(b"\n").unwrap_or(l);
        l.strip_suffix(b"\r").unwrap_or(l)
    }

    /// Original byte range (0-based, half-open) of lines `first..=last` (0-based), with
    /// their line endings.
    pub(crate) fn bytes(&self, first: u32, last: u32) -> (u64, u64) {
        let s = self.start(first);
        let e = self.start(last.saturating_add(1));
        (s as u64, e.max(s) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The starts of [`Doc::from_raw`]'s lines make the same index as a scan (the
    /// pipeline's plain-text path builds it so).
    #[test]
    fn index_from_line_starts_agrees_with_a_scan() {
        for input in [
            &b""[..],
            b"a",
            b"a\n",
            b"\n\n",
            b"a\r\nbb\n\nccc",
            b"x\ny\n",
        ] {
            let starts = RawIndex::starts_of(&Doc::from_raw(input).lines);
            let (a, b) = (RawIndex::from_starts(input, starts), RawIndex::new(input));
            for first in 0..6 {
                for last in first..6 {
                    assert_eq!(a.bytes(first, last), b.bytes(first, last), "{input:?}");
                }
            }
        }
    }

    #[test]
    fn anchored_index_agrees_with_full() {
        let input = b"a\nbb\n\nccc\r\ndddd\nlast";
        let full = RawIndex::new(input);
        for anchors in [vec![], vec![(2, 5)], vec![(1, 2), (4, 11)], vec![(5, 16)]] {
            let a = RawIndex::anchored(input, anchors.clone());
            for first in 0..8 {
                for last in first..8 {
                    assert_eq!(
                        a.bytes(first, last),
                        full.bytes(first, last),
                        "{anchors:?} {first}..={last}"
                    );
                }
            }
        }
    }
}
