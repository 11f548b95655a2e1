//! Streaming compression for inputs too long to hold: memory stays bounded.
//!
//! The stream is cut into windows of at most [`WINDOW`] bytes at the last line end
//! within them (a first line longer than that runs on to its end, up to [`LINE_CUT`]);
//! the cuts depend on the input's bytes alone, never on how it was chunked, so the
//! same input read from a file or a pipe gives the same output. Each
//! window goes through the lossless rules (`terminal-render`, `ansi-strip`,
//! `repeat-collapse`) exactly as in [`crate::compress`]. The rendered lines then pass a
//! bounded selector: the first `max_bytes` are held back (a stream that ends under the
//! budget is printed whole); past that, the head (`head_bytes`) is written, the tail
//! (`tail_bytes`) is kept in a ring, and lines leaving the ring are elided, except
//! salient lines (the same words as `head-tail-elide`) with `salient_context` lines
//! after them, within `salient_bytes`: a line of a shape not shown yet while that
//! lasts, a copy of a shape shown while half of it lasts. Every gap gets a marker with
//! original line numbers (1-based, inclusive) and byte offsets (0-based, half-open),
//! which counts the error lines (salience 2 or above) it holds and names the first
//! four, as `head-tail-elide`'s do.
//!
//! A stream whose first window is a diff (as `diff-protect` detects it) or opens a JSON
//! document spanning lines is passed through byte for byte: eliding lines would change
//! the diff or break the JSON. JSON Lines (one document per line) are elided by whole
//! lines as text.
//!
//! A line longer than [`LINE_CUT`] is cut before a `\r` when it has one (a frame
//! boundary): the window's last frame is compared with the next one, whole, and
//! dropped as a redrawn frame or kept on a line of its own as the in-memory rendering
//! would; pieces of a cut line never count as repeated lines.
//!
//! Differences from the in-memory pipeline, by design: other redraws that span two
//! windows are rendered per window, `traceback-keep` does not run, and the original is not
//! retained (markers say so), since a stream may be far larger than the store's
//! per-entry cap. Memory: about `WINDOW` × 4 + `max_bytes` + the longest line, with a
//! line cut every [`LINE_CUT`] bytes, and while the stream may still end under the
//! budget its input up to 4 × `max_bytes` + 64 KiB.
//!
//! Like the pipeline, the stream leaves alone what snip already did: a stream that
//! ends under the budget and is a rendering snip made (it ends with the lossless
//! footer, `rule::lossless_rules_ran`, decided on the whole input) is read
//! again with its runs of identical lines kept as they are, so snip's output fed back
//! through a pipe comes out unchanged.

use crate::doc::{Eol, RawIndex};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::pipeline::lossless_in;
use crate::rule::RuleId;
use crate::rule::{Engine, Pass, Streamed, TextCounts};
use crate::rules::head_tail_elide::{salient_note, COUNTED_LINES};
use crate::rules::{self, terminal_render};
use crate::salience::{self, shape, ISLAND_LINE_MAX};
use crate::Config;
use std::collections::VecDeque;
use std::io::{self, Write};

/// Bytes of input processed at a time (cut at the last newline before it).
pub const WINDOW: usize = 1 << 20;
/// A line longer than this (bytes) is cut into pieces of this size.
pub const LINE_CUT: usize = 4 << 20;

/// A line's text: a range of the window being read (its rendered text) while the line
/// is handled within that window, copied out only when it outlives it (held in the
/// head, the tail ring, a repeat run or as the gap's last line): the lines a window
/// elides are never copied.
enum LineText {
    Window(usize, usize),
    Own(Vec<u8>),
}

struct SLine {
    text: LineText,
    eol: Eol,
    /// Original lines, 0-based inclusive.
    src: (u64, u64),
    /// Original bytes, 0-based half-open.
    raw: (u64, u64),
    /// [`salience::salience`] of `text`, when the window's scan found it.
    salience: Option<u8>,
}

impl SLine {
    /// The text's bytes; `win`: the rendered text of the window being read.
    fn bytes<'b>(&'b self, win: &'b [u8]) -> &'b [u8] {
        match &self.text {
            LineText::Window(a, b) => &win[*a..*b],
            LineText::Own(v) => v,
        }
    }

    fn len(&self) -> usize {
        match &self.text {
            LineText::Window(a, b) => b - a,
            LineText::Own(v) => v.len(),
        }
    }

    fn size(&self) -> usize {
        self.len() + self.eol.bytes().len()
    }
}

#[derive(Default)]
struct Gap {
    first: Option<(u64, u64)>, // (src line, raw start)
    last: (u64, u64),          // (src line, raw end)
    lines: u64,
    /// It holds a piece of a line cut for length (not the line's last piece).
    pieces: bool,
    /// Error lines (salience 2 or above) among its lines, and the first of their line
    /// numbers (0-based), for the marker to count and name.
    salient: u64,
    salient_at: Vec<u64>,
    salient_last: u64,
}

enum Phase {
    /// A diff, or a JSON document spanning lines: passed through byte for byte (a
    /// stream cannot keep a diff intact or JSON valid while eliding lines).
    Verbatim,
    /// Holding lines until the stream proves longer than the budget.
    Buffering(Vec<SLine>, usize),
    /// Head written; tail in a ring; the middle elided with islands.
    Eliding,
}

/// How much of an input's start [`passes_through`] needs (bytes), at least: a diff's
/// head (16 KiB) and the marker lines that start in it.
const GATE_HEAD: usize = 64 * 1024;

/// Whether `head`, an input's first bytes, holds all that [`passes_through`] reads of
/// it: 64 KiB and the first line of a JSON document (after a byte-order
/// mark and whitespace). `false` while more bytes could change the answer; an input
/// that ends first is whole.
pub fn holds_gate_head(head: &[u8]) -> bool {
    head.len() >= GATE_HEAD && rules::json_fields::holds_first_line(head)
}

/// Whether the stream passes an input starting with `head` through byte for byte (a
/// diff, a JSON document spanning lines: the gates its first window is read with), so
/// that a caller able to hold it whole can compress it in memory instead, where its own
/// rules apply. `head`: what [`holds_gate_head`] asks, or the whole input.
pub fn passes_through(head: &[u8]) -> bool {
    rules::REGISTRY
        .iter()
        .any(|r| matches!(r.stream, Streamed::PassThrough(gate) if gate(head)))
}

/// Compresses a stream pushed in chunks; writes output as soon as it is final.
pub struct StreamCompressor {
    config: Config,
    /// [`WINDOW`] and [`LINE_CUT`], smaller in tests.
    window_size: usize,
    line_cut: usize,
    /// Input not yet cut into windows: `pending[start..filled]`; `pending[filled..]` is
    /// space handed out by [`StreamCompressor::input_space`] (initialized once, reused:
    /// a reader fills it in place, so input is not copied a second time).
    pending: Vec<u8>,
    start: usize,
    filled: usize,
    /// Original line number (0-based) and byte offset of `pending[start]`.
    base_line: u64,
    base_off: u64,
    phase: Phase,
    ring: VecDeque<SLine>,
    ring_size: usize,
    gap: Gap,
    /// The current run of identical lines (up to `repeat_min` kept), and how many more.
    run: Vec<SLine>,
    run_extra: u64,
    run_last: (u64, u64),
    /// The last line added to the gap (may become context before an island).
    gap_tail: Option<SLine>,
    islands_used: usize,
    /// Shapes of the salient lines kept as islands (one island per shape).
    island_shapes: Vec<u64>,
    after: usize,
    /// The last text written ended inside a line (a piece of a cut line): a marker
    /// written next starts a new line first.
    open_line: bool,
    eol: Option<Eol>,
    /// What the per-window rules counted, over the whole stream.
    counts: TextCounts,
    total: u64,
    /// A repeat marker was written.
    repeated: bool,
    /// A gap marker was written.
    elided: bool,
    /// Scratch for the window's salience scan (folded text, matches), reused.
    folded: Vec<u8>,
    hits: Vec<(usize, usize, u8)>,
    /// Buffers of lines already elided, for the next lines' text (no allocation per
    /// line once the stream runs).
    spare: Vec<Vec<u8>>,
    /// The input so far, while the stream may still end under the budget and the
    /// input is at most [`StreamCompressor::hold_max`] bytes: at its end, a short
    /// stream that is a rendering snip made is read again with the rules that already
    /// ran on it left out (see [`StreamCompressor::finish`]).
    held: Option<Vec<u8>>,
    /// The whole input is a rendering snip made
    /// ([`crate::rule::lossless_rules_ran`]): runs of identical lines stay whole.
    lossless_ran: bool,
    /// The last rendered window's text and line table, emptied, for the next window's
    /// rendering, and its line starts: a window's big buffers are not freed (and given
    /// back to the system) only to be faulted in again for the next one.
    scratch: Option<crate::doc::Scratch>,
    /// Lines are evicted as they are fed, not held in the tail ring: set while a
    /// window's lines are fed that are known to leave the ring (see
    /// [`StreamCompressor::bulk_end`]), the ring being empty.
    direct: bool,
    /// Whether the stretches of plain lines in a window's elided middle are put in the
    /// gap in one step (off only to test them against the per-line path).
    fast: bool,
    /// Lines put in the gap in one step so far.
    in_stretches: u64,
}

/// What a finished stream did, for the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamSummary {
    /// Input bytes pushed.
    pub bytes_in: u64,
    /// Ids of the rules that changed something, in execution order.
    pub rules: Vec<&'static str>,
    /// Whether lines were elided (lossy).
    pub lossy: bool,
}

impl StreamCompressor {
    /// A compressor with a frozen copy of `config`.
    pub fn new(config: &Config) -> Self {
        Self::with_window(config, WINDOW, LINE_CUT)
    }

    /// A compressor cutting windows of `window` bytes and lines of `line_cut` bytes
    /// instead of [`WINDOW`] and [`LINE_CUT`] (both at least 1; `line_cut` at least
    /// `window`), so tests can cross window boundaries with small inputs.
    #[doc(hidden)]
    pub fn with_window(config: &Config, window: usize, line_cut: usize) -> Self {
        let window_size = window.max(1);
        StreamCompressor {
            config: config.clone(),
            window_size,
            line_cut: line_cut.max(window_size),
            pending: Vec::new(),
            start: 0,
            filled: 0,
            base_line: 0,
            base_off: 0,
            phase: Phase::Buffering(Vec::new(), 0),
            ring: VecDeque::new(),
            ring_size: 0,
            gap: Gap::default(),
            run: Vec::new(),
            run_extra: 0,
            run_last: (0, 0),
            gap_tail: None,
            islands_used: 0,
            island_shapes: Vec::new(),
            after: 0,
            open_line: false,
            eol: None,
            counts: TextCounts::default(),
            total: 0,
            repeated: false,
            elided: false,
            folded: Vec::new(),
            hits: Vec::new(),
            spare: Vec::new(),
            held: Some(Vec::new()),
            lossless_ran: false,
            scratch: None,
            direct: false,
            fast: true,
            in_stretches: 0,
        }
    }

    /// Turns off (or on) putting stretches of plain lines in the gap in one step, so
    /// tests can compare the output with the per-line path's. On by default.
    #[doc(hidden)]
    pub fn set_fast(&mut self, on: bool) {
        self.fast = on;
    }

    /// The most input bytes held for the end-of-stream check: four budgets and 64 KiB
    /// (snip's own output ends within the budget, plus the marker credit of a second
    /// pass; runs the stream collapses may make it longer than what it holds).
    fn hold_max(&self) -> usize {
        self.config
            .max_bytes
            .saturating_mul(4)
            .saturating_add(64 << 10)
    }

    /// Adds input bytes; writes whatever output is final. The windows of `chunk` are
    /// read in place: of the bytes pending from earlier pushes (an unfinished window),
    /// only the window they start is completed from a copy of `chunk`'s first bytes,
    /// and the unfinished end of `chunk` is copied to be held. A reader handing the
    /// stream large chunks thus has each byte copied about once per chunk's end, not
    /// once per byte.
    ///
    /// # Errors
    /// Only errors of `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut dyn Write) -> io::Result<()> {
        self.received(chunk);
        if matches!(self.phase, Phase::Verbatim) {
            return out.write_all(chunk);
        }
        let mut rest = chunk;
        while self.start < self.filled && !rest.is_empty() {
            // Complete the pending window: up to one window's worth (a line cut's
            // while a line longer than a window is pending).
            let have = self.filled - self.start;
            let want = if have < self.window_size {
                self.window_size - have
            } else {
                self.line_cut.saturating_sub(have).max(1)
            };
            let n = want.min(rest.len());
            self.space(n)[..n].copy_from_slice(&rest[..n]);
            self.take(n, out)?;
            let left = self.filled - self.start;
            if self.start > 0 && left <= n {
                // The window was cut, and what is left of the copy is `chunk`'s own
                // bytes: read on from them in place.
                rest = &rest[n - left..];
                self.start = 0;
                self.filled = 0;
            } else {
                rest = &rest[n..];
            }
        }
        if rest.is_empty() {
            return Ok(());
        }
        self.start = 0;
        self.filled = 0;
        let (at, result) = self.cut_windows(rest, out);
        result?;
        let rest = &rest[at..];
        self.space(rest.len())[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
        Ok(())
    }

    /// Space to read the next input bytes into, at least one window's worth (or a
    /// line cut's, while a long line is pending): fill a prefix of it, then
    /// [`StreamCompressor::commit`] how many bytes were filled. What the stream holds
    /// is moved to the front of its buffer first when that makes the room, so a reader
    /// feeding the stream this way copies each byte once (into this space) plus, now
    /// and then, the unfinished end of a window.
    pub fn input_space(&mut self) -> &mut [u8] {
        self.space(self.window_size)
    }

    /// [`StreamCompressor::input_space`] with at least `want` bytes free.
    fn space(&mut self, want: usize) -> &mut [u8] {
        if self.pending.len() - self.filled < want && self.start > 0 {
            self.pending.copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.start = 0;
        }
        if self.pending.len() - self.filled < want {
            // Room for a few windows, so moving the unfinished end to the front is rare.
            let len = (self.filled + want).max(self.window_size.saturating_mul(4));
            self.pending.resize(len, 0);
        }
        &mut self.pending[self.filled..]
    }

    /// Takes the first `n` bytes of the last [`StreamCompressor::input_space`] as
    /// input (as [`StreamCompressor::push`] would take them); writes whatever output is
    /// final.
    ///
    /// # Errors
    /// Only errors of `out`.
    ///
    /// # Panics
    /// `n` is longer than that space.
    pub fn commit(&mut self, n: usize, out: &mut dyn Write) -> io::Result<()> {
        let (from, to) = (self.filled, self.filled + n);
        assert!(to <= self.pending.len(), "commit past the input space");
        let pending = std::mem::take(&mut self.pending);
        self.received(&pending[from..to]);
        self.pending = pending;
        self.take(n, out)
    }

    /// [`StreamCompressor::commit`] of bytes already counted as received.
    fn take(&mut self, n: usize, out: &mut dyn Write) -> io::Result<()> {
        let to = self.filled + n;
        let pending = std::mem::take(&mut self.pending);
        self.filled = to;
        let result = if matches!(self.phase, Phase::Verbatim) {
            let r = out.write_all(&pending[self.start..to]);
            self.start = to;
            r
        } else {
            let (at, r) = self.cut_windows(&pending[self.start..to], out);
            self.start += at;
            r
        };
        self.pending = pending;
        if self.start == self.filled {
            self.start = 0;
            self.filled = 0;
        }
        result
    }

    /// Counts input bytes and holds them while the stream may end short.
    fn received(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let (hold_max, buffering) = (self.hold_max(), matches!(self.phase, Phase::Buffering(..)));
        if let Some(h) = &mut self.held {
            if h.len() + chunk.len() > hold_max || !buffering {
                self.held = None;
            } else {
                h.extend_from_slice(chunk);
            }
        }
    }

    /// Reads every whole window at the start of `input` (what is not yet cut); returns
    /// how many bytes they took, and the first error of `out`.
    fn cut_windows(&mut self, input: &[u8], out: &mut dyn Write) -> (usize, io::Result<()>) {
        // Every cut depends only on the first `window_size` (or `line_cut`) bytes of
        // what is not yet cut, never on how many bytes happen to be there: the same
        // input in any chunking is cut into the same windows, so gives the same output.
        let mut at = 0;
        loop {
            let rest = &input[at..];
            if matches!(self.phase, Phase::Verbatim) {
                // A gate passed the stream through at its first window: the rest too.
                let r = out.write_all(rest);
                return (input.len(), r);
            }
            if rest.len() < self.window_size {
                return (at, Ok(()));
            }
            let (cut, next_frame) = match memchr::memrchr(b'\n', &rest[..self.window_size]) {
                Some(i) => (i + 1, None),
                None => match memchr::memchr(b'\n', &rest[self.window_size..]) {
                    // The first line ends past the window but before the line cut.
                    Some(i) if self.window_size + i < self.line_cut => {
                        (self.window_size + i + 1, None)
                    }
                    _ if rest.len() >= self.line_cut => self.line_cut(rest),
                    _ => return (at, Ok(())),
                },
            };
            at += cut;
            if let Err(e) = self.window(&rest[..cut], next_frame.as_deref(), out) {
                return (at, Err(e));
            }
        }
    }

    /// Ends the stream: writes the rest, the last gap's marker, the tail and a footer.
    /// Returns what the stream did (nothing, for a document passed through).
    ///
    /// # Errors
    /// Only errors of `out`.
    pub fn finish(self, out: &mut dyn Write) -> io::Result<StreamSummary> {
        self.finish_counted(out).map(|(summary, _)| summary)
    }

    /// [`StreamCompressor::finish`], with how many window lines went to the gap in
    /// stretches put there in one step (the rest were fed one by one).
    ///
    /// # Errors
    /// Only errors of `out`.
    #[doc(hidden)]
    pub fn finish_counted(mut self, out: &mut dyn Write) -> io::Result<(StreamSummary, u64)> {
        let pending = std::mem::take(&mut self.pending);
        let rest = &pending[self.start..self.filled];
        if !rest.is_empty() {
            self.window(rest, None, out)?;
        }
        let stretched = self.in_stretches;
        self.finish_rest(out).map(|summary| (summary, stretched))
    }

    /// The end of [`StreamCompressor::finish`], every window read.
    fn finish_rest(mut self, out: &mut dyn Write) -> io::Result<StreamSummary> {
        let passed_through = StreamSummary {
            bytes_in: self.total,
            ..StreamSummary::default()
        };
        if matches!(self.phase, Phase::Verbatim) {
            return Ok(passed_through);
        }
        // A stream that ends under the budget is held whole: when it is a rendering
        // snip made, it is read again with the lossless rules' decision made on the
        // whole input, as in memory (its runs stay as they are). Nothing was written.
        if let (Phase::Buffering(..), Some(held)) = (&self.phase, &self.held) {
            if !self.lossless_ran && crate::rule::lossless_rules_ran(held) {
                let held = self.held.take().expect("matched above");
                let mut again =
                    StreamCompressor::with_window(&self.config, self.window_size, self.line_cut);
                again.lossless_ran = true;
                again.held = None;
                again.fast = self.fast;
                again.push(&held, out)?;
                return again.finish(out);
            }
        }
        self.held = None;
        // Every line held is owned once a window is done: no window's text is needed.
        let win: &[u8] = &[];
        self.flush_run(win, out)?;
        match std::mem::replace(&mut self.phase, Phase::Eliding) {
            Phase::Buffering(lines, _) => {
                let n = lines.len();
                for (k, l) in lines.into_iter().enumerate() {
                    out.write_all(l.bytes(win))?;
                    let eol = if k + 1 == n && l.eol == Eol::None && self.has_footer() {
                        self.eol()
                    } else {
                        l.eol
                    };
                    out.write_all(eol.bytes())?;
                }
            }
            Phase::Eliding => {
                if let Some(l) = self.gap_tail.take() {
                    self.add_to_gap(l);
                }
                self.close_gap(out)?;
                let n = self.ring.len();
                for (k, l) in std::mem::take(&mut self.ring).into_iter().enumerate() {
                    out.write_all(l.bytes(win))?;
                    let eol = if k + 1 == n && l.eol == Eol::None && self.has_footer() {
                        self.eol()
                    } else {
                        l.eol
                    };
                    out.write_all(eol.bytes())?;
                }
            }
            Phase::Verbatim => return Ok(passed_through),
        }
        let c = &self.counts;
        if let Some(m) = Marker::lossless_footer(c.frames, c.backspaces, c.escapes, None) {
            out.write_all(m.render(None).as_bytes())?;
            out.write_all(self.eol().bytes())?;
        }
        // In table order: the per-window rules by their own receipt rows, the rules
        // this engine does across windows by what it did.
        let rules = rules::REGISTRY
            .iter()
            .filter(|r| match (r.stream, r.pass) {
                (Streamed::PerWindow, Pass::Lossless { report, .. }) => report(c).is_some(),
                (Streamed::AcrossWindows, _) => match r.id {
                    RuleId::RepeatCollapse => self.repeated,
                    RuleId::HeadTailElide => self.elided,
                    _ => false,
                },
                _ => false,
            })
            .map(|r| r.id.as_str());
        Ok(StreamSummary {
            bytes_in: self.total,
            rules: rules.collect(),
            lossy: self.elided,
        })
    }

    /// Where to cut `pending` (what is not yet cut into windows), a line of at least [`LINE_CUT`] bytes so far: before the
    /// last `\r` within [`LINE_CUT`] when there is one (a frame boundary: the window
    /// ends with a whole frame, which the next frame draws over), with that next
    /// frame's bytes; else at [`LINE_CUT`] on a code point boundary.
    ///
    /// Only the first `line_cut` bytes are looked at (so the cut does not depend on the
    /// chunking): the next frame must end within them to be compared, so the cut is
    /// before the last `\r` but one; with a single `\r`, the next frame is the rest
    /// of those bytes.
    fn line_cut(&self, pending: &[u8]) -> (usize, Option<Vec<u8>>) {
        let prefix = &pending[..self.line_cut];
        let limit = crate::text::floor_char_boundary(prefix, self.line_cut).max(1);
        let Some(last) = memchr::memrchr(b'\r', &prefix[..limit]).filter(|&c| c > 0) else {
            return (limit, None);
        };
        let (c, end) = match memchr::memrchr(b'\r', &prefix[..last]).filter(|&b| b > 0) {
            Some(b) => (b, last),
            None => (last, prefix.len()),
        };
        let frame = &prefix[c + 1..end];
        (c, Some(crate::escape::strip(frame).into_owned()))
    }

    fn has_footer(&self) -> bool {
        let c = &self.counts;
        c.frames > 0 || c.backspaces > 0 || c.escapes > 0
    }

    fn eol(&self) -> Eol {
        self.eol.unwrap_or(Eol::Lf)
    }

    /// Renders one window and feeds its lines on. `next_frame`: the window was cut
    /// inside a line, before a `\r`, and this frame comes next: the window's last row
    /// is a frame it draws over, dropped as a removed frame unless a terminal would
    /// keep it (then it ends its line here).
    fn window(
        &mut self,
        raw: &[u8],
        next_frame: Option<&[u8]>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        // The gates that pass a stream through look at its first window.
        if self.base_off == 0
            && rules::REGISTRY
                .iter()
                .any(|r| matches!(r.stream, Streamed::PassThrough(gate) if gate(raw)))
        {
            self.phase = Phase::Verbatim;
        }
        if matches!(self.phase, Phase::Verbatim) {
            self.base_off += raw.len() as u64;
            return out.write_all(raw);
        }
        // The rules the table runs per window, as in memory (escapes stripped line by
        // line); repeats and elision are this engine's, across windows.
        let l = lossless_in(
            Engine::Stream,
            raw,
            0,
            &self.config,
            false,
            self.lossless_ran,
            self.scratch.take(),
        );
        self.counts.merge(&l.counts);
        let newlines = l.newlines;
        let (mut doc, raw_offsets) = (l.doc, l.raw_offsets);
        let mut index = RawLines::new(raw, raw_offsets);
        let bl = self.base_line;
        if self.eol.is_none() {
            self.eol = Some(doc.dominant_eol());
        }
        let mut lines = std::mem::take(&mut doc.lines);
        self.window_salience(&doc.buf, &lines);
        if let (Some(next), Some(last)) = (next_frame, lines.last_mut()) {
            if last.marker.is_none() && last.eol == Eol::None {
                let text = &doc.buf[last.start..last.end];
                if terminal_render::overdrawn(text, next) {
                    self.counts.frames += u64::from(!terminal_render::is_blank(text));
                    lines.pop();
                } else {
                    last.eol = self.eol();
                }
            }
        }
        let hits = std::mem::take(&mut self.hits);
        let win: &[u8] = &doc.buf;
        let result = self.window_lines(&lines, win, &doc.markers, &hits, &mut index, out);
        self.direct = false;
        let mut hits = hits;
        hits.clear();
        self.hits = hits;
        self.keep_lines(win);
        result?;
        // The window's buffers, for the next one.
        if let std::borrow::Cow::Owned(buf) = doc.buf {
            lines.clear();
            self.scratch = Some((buf, lines));
        }
        // A window cut inside a line: the next window's first line is the same line.
        // The rules read every line of the window, and counted its line feeds.
        let count = || memchr::memchr_iter(b'\n', raw).count() as u64;
        let newlines = newlines.map_or_else(count, u64::from);
        debug_assert_eq!(newlines, count(), "line feeds the rules read");
        self.base_line = bl + newlines;
        self.base_off += raw.len() as u64;
        Ok(())
    }

    /// Window line `l` as the stream's line (`hits`: the window's salient-word scan).
    fn sline(
        &self,
        l: &crate::doc::Line,
        doc_markers: &[Marker],
        hits: &[(usize, usize, u8)],
        index: &mut RawLines,
    ) -> SLine {
        let (text, salience) = match l.marker {
            Some(i) => (
                LineText::Own(doc_markers[i as usize].render(None).into_bytes()),
                None,
            ),
            None => (LineText::Window(l.start, l.end), line_salience(l, hits)),
        };
        let (bl, bo) = (self.base_line, self.base_off);
        let (a, b) = index.bytes(l);
        SLine {
            text,
            eol: l.eol,
            src: (bl + u64::from(l.src_first), bl + u64::from(l.src_last)),
            raw: (bo + a, bo + b),
            salience,
        }
    }

    /// Feeds a window's lines on (`win`: its rendered text; `hits`: its salient-word
    /// scan). Once the stream is eliding, the lines before [`Self::bulk_end`] are
    /// evicted as they are fed (they cannot stay in the tail ring), and each stretch of
    /// them that can only join the gap ([`Self::plain_stretch`]) joins it in one step.
    fn window_lines(
        &mut self,
        lines: &[crate::doc::Line],
        win: &[u8],
        markers: &[Marker],
        hits: &[(usize, usize, u8)],
        index: &mut RawLines,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        // Decided once the stream elides (at the window's start, or at the line that
        // made it start eliding).
        let mut bulk_end = None;
        // Lines before this one are fed one by one (a stretch looked at ended there).
        let mut per_line_until = 0;
        let mut k = 0;
        while k < lines.len() {
            if bulk_end.is_none()
                && self.fast
                && !self.lossless_ran
                && matches!(self.phase, Phase::Eliding)
            {
                let end = k + self.bulk_end(&lines[k..], win);
                if end > k {
                    // Every line in the ring is evicted before the window's lines from
                    // `end` on are all fed: evicted now, in the same order.
                    while let Some(e) = self.ring.pop_front() {
                        self.ring_size -= e.size();
                        self.evicted(e, win, out)?;
                    }
                    self.direct = true;
                }
                bulk_end = Some(end);
            }
            if Some(k) == bulk_end {
                self.direct = false;
            }
            if self.direct && k >= per_line_until {
                let end = bulk_end.unwrap_or(0);
                if let Some((m, seen)) = self.plain_stretch(lines, k, end, win, hits, out)? {
                    if m > k {
                        self.gap_stretch(lines, k, m, hits, index);
                        k = m;
                        continue;
                    }
                    per_line_until = seen;
                }
            }
            let l = self.sline(&lines[k], markers, hits, index);
            self.repeat(l, win, out)?;
            k += 1;
        }
        Ok(())
    }

    /// Where the window's lines stop being sure to leave the tail ring: the lines fed
    /// from line `k` on (each line that is not a repeat of the one before it, a piece
    /// of a cut line or a marker is fed, at its size) fill more than the ring holds,
    /// so every line fed before line `k` is evicted. 0: no such line.
    fn bulk_end(&self, lines: &[crate::doc::Line], win: &[u8]) -> usize {
        let mut fed = 0usize;
        for k in (1..lines.len()).rev() {
            let (l, p) = (&lines[k], &lines[k - 1]);
            let starts_run = l.marker.is_none()
                && (l.eol == Eol::None
                    || (p.marker.is_none()
                        && (p.eol == Eol::None || win[p.start..p.end] != win[l.start..l.end])));
            if starts_run {
                fed += l.end - l.start + l.eol.bytes().len();
                if fed > self.config.tail_bytes {
                    return k;
                }
            }
        }
        0
    }

    /// The stretch of plain lines from line `k` (before `end`, lines being evicted as
    /// they are fed) that can only join the gap, as `(m, seen)`: lines `k..m` go to the
    /// gap with line `m - 1` as its last line, and lines up to `seen` were looked at.
    /// A plain line holds no salient word (or no island can be afforded any more), is
    /// no marker, no piece of a cut line and not longer than a piece, and comes after
    /// the line before it in the original; runs of identical lines may be in the
    /// stretch (their markers hold no salient word), not at its end. Writes what the
    /// run pending before line `k` gives, as the per-line path does when line `k`
    /// comes. `None`: line `k` is not the start of one.
    fn plain_stretch(
        &mut self,
        lines: &[crate::doc::Line],
        k: usize,
        end: usize,
        win: &[u8],
        hits: &[(usize, usize, u8)],
        out: &mut dyn Write,
    ) -> io::Result<Option<(usize, usize)>> {
        let text = |l: &crate::doc::Line| &win[l.start..l.end];
        let piece = (self.config.tail_bytes / 4).clamp(256, ISLAND_LINE_MAX);
        let plain = |l: &crate::doc::Line| {
            l.marker.is_none() && l.eol != Eol::None && l.end - l.start <= piece
        };
        let first = &lines[k];
        if self.lossless_ran || !plain(first) {
            return Ok(None);
        }
        if let Some(r) = self.run.first() {
            if r.bytes(win) == text(first) {
                return Ok(None);
            }
        }
        // Line `k` ends the pending run, as it would coming through `repeat`.
        self.flush_run(win, out)?;
        if self.after > 0 {
            return Ok(None);
        }
        let mut h = hits.partition_point(|&(_, b, _)| b <= first.start);
        // `m`: the stretch so far (its last line not a repeat, the next line not a
        // repeat of it); `run`: how many identical lines end at `j - 1`.
        let (mut m, mut repeated, mut repeated_at_m) = (k, false, false);
        let mut run = 0usize;
        let mut j = k;
        while j < lines.len() {
            let l = &lines[j];
            // Line `j` joins the run of line `j - 1` (a marker's text is not looked at:
            // it may).
            let same = j > k
                && (l.marker.is_some() || (l.eol != Eol::None && text(&lines[j - 1]) == text(l)));
            if !same {
                // A run of `run` lines ended at `j - 1`.
                if run >= self.config.repeat_min.max(3) {
                    repeated = true;
                }
                if run == 1 {
                    (m, repeated_at_m) = (j, repeated);
                }
                run = 0;
            }
            if j >= end || !plain(l) {
                break;
            }
            if j > k {
                let p = &lines[j - 1];
                if l.start < p.end || l.src_first <= p.src_last {
                    break;
                }
            }
            if !hits.is_empty() {
                while hits[h].1 <= l.start {
                    h += 1;
                }
                // The sentinel's start is past every line.
                if hits[h].0 < l.end {
                    break;
                }
            }
            run += 1;
            j += 1;
        }
        self.repeated |= repeated_at_m;
        Ok(Some((m, j.max(k + 1))))
    }

    /// Lines `k..m`, a stretch [`Self::plain_stretch`] found, into the gap: what the
    /// per-line path does evicting them one by one, none of them an island or context
    /// (the gap's last line goes to the gap, line `m - 1` becomes its last line).
    fn gap_stretch(
        &mut self,
        lines: &[crate::doc::Line],
        k: usize,
        m: usize,
        hits: &[(usize, usize, u8)],
        index: &mut RawLines,
    ) {
        self.in_stretches += (m - k) as u64;
        if let Some(t) = self.gap_tail.take() {
            self.add_to_gap(t);
        }
        if m - k >= 2 {
            // The lines come one after the other in the original: the first one's
            // start and the last one's end are the span's.
            let (f, l) = (&lines[k], &lines[m - 2]);
            let (bl, bo) = (self.base_line, self.base_off);
            let (a, b) = index.span(f, l);
            let src = (bl + u64::from(f.src_first), bl + u64::from(l.src_last));
            self.gap.first = Some(match self.gap.first {
                None => (src.0, bo + a),
                Some((x, y)) => (x.min(src.0), y.min(bo + a)),
            });
            let (x, y) = self.gap.last;
            self.gap.last = if self.gap.lines == 0 {
                (src.1, bo + b)
            } else {
                (x.max(src.1), y.max(bo + b))
            };
            self.gap.lines += (m - 1 - k) as u64;
        }
        let no_markers: &[Marker] = &[];
        self.gap_tail = Some(self.sline(&lines[m - 1], no_markers, hits, index));
        self.after = 0;
    }

    /// `repeat-collapse` across the whole stream: a run of identical lines keeps its
    /// first line and one marker with the count and original line numbers.
    fn repeat(&mut self, l: SLine, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        // A piece of a line cut for length (no line ending) is not a line: it never
        // starts or joins a run. A rendering snip made keeps its runs.
        if l.eol == Eol::None || self.lossless_ran {
            self.flush_run(win, out)?;
            return self.feed(l, win, out);
        }
        if let Some(first) = self.run.first() {
            if first.bytes(win) == l.bytes(win) {
                if self.run.len() < self.config.repeat_min.max(2) {
                    self.run.push(l);
                } else {
                    self.run_extra += 1;
                    self.run_last = (l.src.1, l.raw.1);
                    self.recycle(l.text);
                }
                return Ok(());
            }
        }
        self.flush_run(win, out)?;
        self.run.push(l);
        Ok(())
    }

    fn flush_run(&mut self, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        // The run's buffer goes back once emptied: no allocation per line.
        let mut run = std::mem::take(&mut self.run);
        let r = self.flush_run_of(&mut run, win, out);
        run.clear();
        self.run = run;
        r
    }

    fn flush_run_of(
        &mut self,
        run: &mut Vec<SLine>,
        win: &[u8],
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let extra = std::mem::take(&mut self.run_extra);
        if run.len() >= self.config.repeat_min.max(2) && (run.len() > 2 || extra > 0) {
            let mut lines = run.drain(..);
            let first = lines.next().expect("run has a first line");
            let rest: Vec<SLine> = lines.collect();
            let (a, s) = (rest[0].src.0, rest[0].raw.0);
            let (b, e) = if extra > 0 {
                self.run_last
            } else {
                let last = rest.last().expect("non-empty");
                (last.src.1, last.raw.1)
            };
            let count = rest.len() as u64 + extra;
            self.repeated = true;
            let m = repeat_marker(count, a, b);
            let eol = first.eol;
            self.feed(first, win, out)?;
            let text = LineText::Own(m.render(None).into_bytes());
            return self.feed(
                SLine {
                    text,
                    eol,
                    src: (a, b),
                    raw: (s, e),
                    salience: None,
                },
                win,
                out,
            );
        }
        for l in run.drain(..) {
            self.feed(l, win, out)?;
        }
        Ok(())
    }

    fn feed(&mut self, l: SLine, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        // A line longer than a quarter of the tail room goes in pieces (cut on UTF-8
        // boundaries, no line ending between them), so head and tail stay in budget;
        // pieces no longer than an island's line, so a piece that holds an error can be
        // one (`head-tail-elide` shows a window of a long line the same way).
        let piece = (self.config.tail_bytes / 4).clamp(256, ISLAND_LINE_MAX);
        if l.len() > piece {
            let bytes = l.bytes(win);
            let (eol, src, raw) = (l.eol, l.src, l.raw);
            let text: &[u8] = bytes;
            let mut at = 0;
            while at < text.len() {
                let mut end = crate::text::floor_char_boundary(text, (at + piece).min(text.len()));
                if end <= at {
                    end = (at + piece).min(text.len());
                }
                let last = end == text.len();
                let r0 = raw.0 + at as u64;
                let r1 = if last { raw.1 } else { raw.0 + end as u64 };
                let p = SLine {
                    text: match &l.text {
                        LineText::Window(a, _) => LineText::Window(a + at, a + end),
                        LineText::Own(v) => LineText::Own(v[at..end].to_vec()),
                    },
                    eol: if last { eol } else { Eol::None },
                    src,
                    raw: (r0.min(raw.1), r1.min(raw.1)),
                    salience: None,
                };
                self.feed_line(p, win, out)?;
                at = end;
            }
            return Ok(());
        }
        self.feed_line(l, win, out)
    }

    fn feed_line(&mut self, l: SLine, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        match &mut self.phase {
            Phase::Buffering(lines, size) => {
                *size += l.size();
                lines.push(l);
                if *size > self.config.max_bytes {
                    let lines = std::mem::take(lines);
                    self.phase = Phase::Eliding;
                    self.held = None;
                    let mut head = 0usize;
                    let mut in_head = true;
                    for l in lines {
                        if in_head && head + l.size() <= self.config.head_bytes {
                            head += l.size();
                            out.write_all(l.bytes(win))?;
                            out.write_all(l.eol.bytes())?;
                            self.open_line = l.eol == Eol::None;
                        } else {
                            in_head = false;
                            self.push_ring(l, win, out)?;
                        }
                    }
                }
                Ok(())
            }
            Phase::Eliding => self.push_ring(l, win, out),
            // Verbatim streams never reach the line selector.
            Phase::Verbatim => {
                out.write_all(l.bytes(win))?;
                out.write_all(l.eol.bytes())
            }
        }
    }

    fn push_ring(&mut self, l: SLine, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        if self.direct {
            // Known to leave the ring, which is empty: evicted as it comes.
            return self.evicted(l, win, out);
        }
        self.ring_size += l.size();
        self.ring.push_back(l);
        while self.ring_size > self.config.tail_bytes && self.ring.len() > 1 {
            let e = self.ring.pop_front().expect("ring is non-empty");
            self.ring_size -= e.size();
            self.evicted(e, win, out)?;
        }
        Ok(())
    }

    fn evicted(&mut self, mut l: SLine, win: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let small = l.len() <= ISLAND_LINE_MAX;
        // Every line leaving the ring is read: one that is not shown is counted in
        // its gap's marker (the scan once stopped when the islands were full, and
        // later error lines were elided without a word).
        let prio = l
            .salience
            .unwrap_or_else(|| salience::salience(l.bytes(win)));
        l.salience = Some(prio);
        if self.after > 0 && small && self.islands_used + l.size() <= self.config.salient_bytes {
            self.after -= 1;
            self.islands_used += l.size();
            out.write_all(l.bytes(win))?;
            self.open_line = l.eol == Eol::None;
            let eol = l.eol;
            self.recycle(l.text);
            return out.write_all(eol.bytes());
        }
        self.after = 0;
        let cost = l.size() + 220;
        // The budget test first: once the islands are full, no line is scanned.
        // A line of a shape not shown yet takes the island budget while it lasts; a
        // copy of a shape shown takes only its first half (the stream cannot look
        // ahead: later distinct errors keep room, as `head-tail-elide` places every
        // distinct shape before copies).
        let island = (small && self.islands_used + cost <= self.config.salient_bytes && prio >= 2)
            .then(|| shape(l.bytes(win)))
            .and_then(|s| {
                if !self.island_shapes.contains(&s) {
                    Some(Some(s))
                } else {
                    (self.islands_used + cost <= self.config.salient_bytes / 2).then_some(None)
                }
            });
        if let Some(new_shape) = island {
            if let Some(shape) = new_shape {
                if self.island_shapes.len() < 256 {
                    self.island_shapes.push(shape);
                }
            }
            let before = if self.config.salient_context > 0 {
                self.gap_tail.take()
            } else {
                None
            };
            if let Some(b) = &before {
                self.islands_used += b.size();
            } else if let Some(t) = self.gap_tail.take() {
                self.add_to_gap(t);
            }
            self.close_gap(out)?;
            if let Some(b) = before {
                out.write_all(b.bytes(win))?;
                out.write_all(b.eol.bytes())?;
                self.recycle(b.text);
            }
            self.islands_used += cost;
            out.write_all(l.bytes(win))?;
            out.write_all(l.eol.bytes())?;
            self.open_line = l.eol == Eol::None;
            self.after = self.config.salient_context;
            self.recycle(l.text);
            return Ok(());
        }
        if let Some(t) = self.gap_tail.replace(l) {
            self.add_to_gap(t);
        }
        Ok(())
    }

    /// The salient words of a window's rendered text, in one scan, into `self.hits`
    /// (see [`line_salience`]); none when no line could become an island any more
    /// (the islands' budget is spent), so the lines are then never scanned.
    fn window_salience(&mut self, buf: &[u8], lines: &[crate::doc::Line]) {
        self.hits.clear();
        if lines.is_empty() {
            return;
        }
        let hits = &mut self.hits;
        salience::each_match_whole(buf, &mut self.folded, |a, b, prio| hits.push((a, b, prio)));
        // A sentinel: `line_salience` tells an empty scan from a skipped one.
        hits.push((usize::MAX, usize::MAX, 0));
    }

    fn add_to_gap(&mut self, l: SLine) {
        // A rendered line's source lines need not follow the previous line's (a cursor
        // move redraws earlier rows): the gap spans the least start and the greatest
        // end of its lines, so its range is never inverted.
        self.gap.first = Some(match self.gap.first {
            None => (l.src.0, l.raw.0),
            Some((a, s)) => (a.min(l.src.0), s.min(l.raw.0)),
        });
        let (b, e) = self.gap.last;
        self.gap.last = if self.gap.lines == 0 {
            (l.src.1, l.raw.1)
        } else {
            (b.max(l.src.1), e.max(l.raw.1))
        };
        self.gap.lines += 1;
        self.gap.pieces |= l.eol == Eol::None;
        // A line cut in pieces counts once.
        let line = l.src.0;
        if l.salience.is_some_and(|p| p >= 2)
            && (self.gap.salient == 0 || self.gap.salient_last != line)
        {
            self.gap.salient += 1;
            self.gap.salient_last = line;
            if self.gap.salient_at.len() < COUNTED_LINES {
                self.gap.salient_at.push(line);
            }
        }
        self.recycle(l.text);
    }

    /// Copies out the text of every line held past the window being read (`win`, its
    /// rendered text): the run, the tail ring, the gap's last line and the lines held
    /// back while the stream may still end under the budget. Into spare buffers when
    /// there are some.
    fn keep_lines(&mut self, win: &[u8]) {
        let spare = &mut self.spare;
        let mut own = |l: &mut SLine| {
            if let LineText::Window(a, b) = l.text {
                let text = &win[a..b];
                l.text = LineText::Own(match spare.pop() {
                    Some(mut v) => {
                        v.clear();
                        v.extend_from_slice(text);
                        v
                    }
                    None => text.to_vec(),
                });
            }
        };
        self.run.iter_mut().for_each(&mut own);
        self.ring.iter_mut().for_each(&mut own);
        if let Some(l) = self.gap_tail.as_mut() {
            own(l);
        }
        if let Phase::Buffering(lines, _) = &mut self.phase {
            lines.iter_mut().for_each(&mut own);
        }
    }

    /// Keeps the buffer of a line no longer needed, for [`Self::keep_lines`] (a bounded
    /// number of buffers of at most an island line's length each).
    fn recycle(&mut self, t: LineText) {
        if let LineText::Own(b) = t {
            if self.spare.len() < 256 && b.capacity() <= ISLAND_LINE_MAX {
                self.spare.push(b);
            }
        }
    }

    fn close_gap(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let Some((a, s)) = self.gap.first.take() else {
            return Ok(());
        };
        let (b, e) = self.gap.last;
        let what = if a == b && self.gap.pieces {
            // The middle of one long line, whose ends are shown.
            format!("{} bytes elided from line {}", e - s, a + 1)
        } else {
            format!(
                "{} ({} bytes) elided",
                crate::marker::lines_word(b - a + 1),
                e - s
            )
        };
        let what = if self.gap.salient > 0 {
            let at: Vec<u64> = self.gap.salient_at.iter().map(|k| k + 1).collect();
            what + &salient_note(self.gap.salient, &at)
        } else {
            what
        };
        self.elided = true;
        let m = Marker {
            what,
            rule: RuleId::HeadTailElide,
            lines: Some((a + 1, b + 1)),
            bytes: Some((s, e)),
            recovery: Recovery::Elided(RestoreCall::Lines {
                start: a + 1,
                end: b + 1,
            }),
        };
        self.gap = Gap::default();
        if std::mem::take(&mut self.open_line) {
            out.write_all(self.eol().bytes())?;
        }
        out.write_all(m.render(None).as_bytes())?;
        out.write_all(self.eol().bytes())
    }
}

/// The original byte ranges of a window's lines (0-based, half-open, from the window's
/// start): the rendered text's own offsets when it is the window's bytes, else each
/// line's start found by counting newlines forward from the last one asked for (a
/// window's lines are asked for in order, and the lines a stretch puts in the gap are
/// never asked for), with a whole index of the window built only if a line is asked
/// for before the last one.
enum RawLines<'a> {
    /// The rendered text is the window's bytes.
    Same,
    /// `nl` newlines of `raw` come before offset `at`; `last`: the last line start
    /// found, `(line, offset)`.
    Forward {
        raw: &'a [u8],
        nl: u32,
        at: usize,
        last: (u32, usize),
        hint: usize,
    },
    Full(RawIndex<'a>),
}

impl<'a> RawLines<'a> {
    fn new(raw: &'a [u8], same: bool) -> RawLines<'a> {
        if same {
            RawLines::Same
        } else {
            RawLines::Forward {
                raw,
                nl: 0,
                at: 0,
                last: (0, 0),
                hint: 0,
            }
        }
    }

    /// The next line asked for is likely past the next `bytes` bytes (a guess that
    /// only saves time: the newlines in them are counted in one step when there are
    /// fewer than the line asked for needs).
    fn hint(&mut self, bytes: usize) {
        if let RawLines::Forward { hint, .. } = self {
            *hint = bytes;
        }
    }

    /// Original bytes of window lines `f` to `l`, which come one after the other in the
    /// original (their source lines increase): from `f`'s start to `l`'s end.
    fn span(&mut self, f: &crate::doc::Line, l: &crate::doc::Line) -> (u64, u64) {
        if let RawLines::Same = self {
            return (f.start as u64, (l.end + l.eol.bytes().len()) as u64);
        }
        let s = self.start(f.src_first);
        // As many bytes as the lines' text takes in the original when they were copied
        // as they are: the newlines in them (all but `l`'s) counted in one step.
        self.hint(l.end - f.start);
        let e = self.start(l.src_last.saturating_add(1));
        (s as u64, e.max(s) as u64)
    }

    /// Original bytes of window line `l`, its line ending included.
    fn bytes(&mut self, l: &crate::doc::Line) -> (u64, u64) {
        match self {
            RawLines::Same => (l.start as u64, (l.end + l.eol.bytes().len()) as u64),
            _ => {
                let s = self.start(l.src_first);
                let e = self.start(l.src_last.saturating_add(1));
                (s as u64, e.max(s) as u64)
            }
        }
    }

    /// Where original line `line` (window-relative) starts: after the window's
    /// `line`-th newline, the window's end past the last line (as [`RawIndex`]).
    fn start(&mut self, line: u32) -> usize {
        let RawLines::Forward {
            raw,
            nl,
            at,
            last,
            hint,
        } = self
        else {
            return match self {
                RawLines::Full(ri) => ri.bytes(line, line).0 as usize,
                _ => unreachable!("only asked of an index"),
            };
        };
        let raw: &'a [u8] = raw;
        if line == 0 {
            return 0;
        }
        if line == last.0 {
            return last.1;
        }
        if line <= *nl {
            // Backwards (a cursor move drew an earlier row): a whole index from now on.
            *self = RawLines::Full(RawIndex::new(raw));
            return self.start(line);
        }
        let mut d = (line - *nl) as usize;
        let h = std::mem::take(hint).min(raw.len() - *at);
        if h > 0 {
            let c = memchr::memchr_iter(b'\n', &raw[*at..*at + h]).count();
            if c < d {
                *at += h;
                *nl += c as u32;
                d -= c;
            }
        }
        // Whole blocks with fewer newlines than are still to pass, counted.
        const BLOCK: usize = 4096;
        while d > 64 && raw.len() - *at > BLOCK {
            let c = memchr::memchr_iter(b'\n', &raw[*at..*at + BLOCK]).count();
            if c >= d {
                break;
            }
            *at += BLOCK;
            *nl += c as u32;
            d -= c;
        }
        match memchr::memchr_iter(b'\n', &raw[*at..]).nth(d - 1) {
            Some(p) => {
                *at += p + 1;
                *nl = line;
                *last = (line, *at);
                *at
            }
            None => raw.len(),
        }
    }
}

/// The salience of window line `l` from the window's scan `hits` (the searcher's
/// matches in `buf` as half-open offsets with their priority, in order, ending with a
/// `usize::MAX` sentinel), when that scan stands for a scan of the line alone: its
/// text is at most [`ISLAND_LINE_MAX`] bytes (one chunk of [`salience::salience`]) and
/// no match crosses its start or end (rendered lines sit next to each other in `buf`,
/// or apart, with their line endings between them). `None`: not scanned, or a match crosses;
/// [`salience::salience`] decides then.
fn line_salience(l: &crate::doc::Line, hits: &[(usize, usize, u8)]) -> Option<u8> {
    if hits.is_empty() || l.end - l.start > ISLAND_LINE_MAX {
        return None;
    }
    // Matches do not overlap: their ends are in order too.
    let first = hits.partition_point(|&(_, end, _)| end <= l.start);
    let mut best = 0;
    for &(a, b, p) in &hits[first..] {
        if a >= l.end {
            break;
        }
        if a < l.start || b > l.end {
            return None;
        }
        best = best.max(p);
    }
    Some(best)
}

/// The marker of a run of identical lines: `count` more copies of the first, on
/// original lines `a`..=`b` (0-based; the marker says them 1-based).
fn repeat_marker(count: u64, a: u64, b: u64) -> Marker {
    Marker {
        what: format!("previous line repeated {count} more times"),
        rule: RuleId::RepeatCollapse,
        lines: Some((a + 1, b + 1)),
        bytes: None,
        recovery: Recovery::Lossless(RestoreCall::Lines {
            start: a + 1,
            end: b + 1,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Line;

    /// A repeat marker holds no salient word, whatever its numbers: a run's marker
    /// never becomes an island, so a stretch put in the gap in one step may hold runs.
    #[test]
    fn repeat_markers_are_never_salient() {
        for (count, a, b) in [
            (1, 1, 2),
            (99, 0, 100),
            (u64::MAX, u64::MAX - 2, u64::MAX - 1),
        ] {
            let m = repeat_marker(count, a, b);
            let text = m.render(None);
            assert_eq!(salience::salience(text.as_bytes()), 0, "{text}");
            // Never cut into pieces either (a piece is at least 256 bytes).
            assert!(text.len() < 256, "{text}");
        }
    }

    /// A line's salience from the window's one scan is the line's own scan whenever
    /// it is given: on lines laid next to each other (as rendered lines are) and
    /// apart, with words cut across line boundaries, in every spelling, and with
    /// overlapping words, whose leftmost-first choice a crossing match could change.
    #[test]
    fn window_scan_gives_each_line_its_own_salience() {
        const PIECES: &[&str] = &[
            "err",
            "or",
            "ERROR",
            "Error",
            "eRRor",
            "fail",
            "ed",
            " ",
            "\t",
            "not ",
            "no",
            "t ok ",
            "found",
            "x",
            "cannot ",
            "can",
            "killed",
            "warning",
            "WARN",
            "panic",
            "1",
            "\r",
            "\n",
            "aborting",
            "caused by",
        ];
        let mut next = crate::text::splitmix(19);
        let (mut given, mut lines_seen) = (0, 0);
        for _ in 0..2000 {
            let mut buf = Vec::new();
            let mut lines = Vec::new();
            for _ in 0..(next() % 8 + 1) {
                let start = buf.len();
                for _ in 0..(next() % 6) {
                    buf.extend_from_slice(
                        PIECES[(next() % PIECES.len() as u64) as usize].as_bytes(),
                    );
                }
                lines.push(Line::text(start, buf.len(), Eol::None, 0));
                if next().is_multiple_of(2) {
                    buf.push(b'\n');
                }
            }
            let mut hits = Vec::new();
            salience::each_match_whole(&buf, &mut Vec::new(), |a, b, p| hits.push((a, b, p)));
            hits.push((usize::MAX, usize::MAX, 0));
            for l in &lines {
                lines_seen += 1;
                if let Some(s) = line_salience(l, &hits) {
                    given += 1;
                    let text = &buf[l.start..l.end];
                    assert_eq!(
                        s,
                        salience::salience(text),
                        "{:?} in {:?}",
                        String::from_utf8_lossy(text),
                        String::from_utf8_lossy(&buf)
                    );
                }
            }
            // Not scanned: no salience given.
            assert!(lines.iter().all(|l| line_salience(l, &[]).is_none()));
        }
        // The scan stands for most lines (only crossing matches fall back).
        assert!(given * 10 > lines_seen * 7, "{given} of {lines_seen}");
    }
}
