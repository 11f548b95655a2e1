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

/// Lines over a buffer, plus the markers some lines stand for.
#[derive(Debug, Clone)]
pub(crate) struct Doc<'a> {
    pub buf: Cow<'a, [u8]>,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Markers that go after the last line (summaries of lossless removals).
    pub footer: Vec<Marker>,
}

/// A placeholder id, as long as a real one, used to size markers before rendering.
pub(crate) const SIZING_ID: &str = "sn_0000000000000000000000000000";

impl<'a> Doc<'a> {
    /// Splits `input` into lines (on `\n`; a `\r` right before it is part of the ending).
    pub(crate) fn from_raw(input: &'a [u8]) -> Doc<'a> {
        let mut lines = Vec::with_capacity(input.len() / 48 + 1);
        let mut start = 0usize;
        let mut n: u32 = 0;
        for nl in memchr::memchr_iter(b'\n', input) {
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

    /// The content of line `l` (without its ending).
    #[inline]
    pub(crate) fn text(&self, l: &Line) -> &[u8] {
        &self.buf[l.start..l.end]
    }

    /// The line ending most lines use (for inserted marker lines).
    pub(crate) fn dominant_eol(&self) -> Eol {
        let crlf = self
            .lines
            .iter()
            .take(64)
            .filter(|l| l.eol == Eol::CrLf)
            .count();
        let lf = self
            .lines
            .iter()
            .take(64)
            .filter(|l| l.eol == Eol::Lf)
            .count();
        if crlf > lf {
            Eol::CrLf
        } else {
            Eol::Lf
        }
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
        for l in &self.lines {
            n += match l.marker {
                Some(i) => self.markers[i as usize].render(Some(SIZING_ID)).len(),
                None => l.end - l.start,
            } + l.eol.bytes().len();
        }
        for m in &self.footer {
            n += m.render(Some(SIZING_ID)).len() + 2;
        }
        n
    }

    /// Size of one line as rendered (placeholder id for markers), ending included.
    pub(crate) fn line_size(&self, l: &Line) -> usize {
        (match l.marker {
            Some(i) => self.markers[i as usize].render(Some(SIZING_ID)).len(),
            None => l.end - l.start,
        }) + l.eol.bytes().len()
    }

    /// Renders the document; markers quote `id` when the original is retained.
    pub(crate) fn render(&self, id: Option<&str>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len().min(1 << 24) + 256);
        let last = self.lines.len().saturating_sub(1);
        for (k, l) in self.lines.iter().enumerate() {
            match l.marker {
                Some(i) => out.extend_from_slice(self.markers[i as usize].render(id).as_bytes()),
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

/// Byte offsets of original line starts, built only when a lossy marker needs them.
pub(crate) struct RawIndex {
    starts: Vec<usize>,
    len: usize,
}

impl RawIndex {
    pub(crate) fn new(input: &[u8]) -> RawIndex {
        let mut starts = Vec::with_capacity(input.len() / 48 + 2);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', input).map(|i| i + 1));
        RawIndex {
            starts,
            len: input.len(),
        }
    }

    /// Original byte range (0-based, half-open) of lines `first..=last` (0-based), with
    /// their line endings.
    pub(crate) fn bytes(&self, first: u32, last: u32) -> (u64, u64) {
        let s = self
            .starts
            .get(first as usize)
            .copied()
            .unwrap_or(self.len)
            .min(self.len);
        let e = self
            .starts
            .get(last as usize + 1)
            .copied()
            .unwrap_or(self.len)
            .min(self.len);
        (s as u64, e.max(s) as u64)
    }
}
