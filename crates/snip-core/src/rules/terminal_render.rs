//! `terminal-render` — collapse redraws to the frame a terminal would show.
//!
//! **What it does.** Interprets carriage returns, backspaces and the cursor and erase
//! escapes that progress bars, spinners and live displays use (`ESC[nA/B/C/D/E/F/G`,
//! `ESC[H`/`f`, `ESC[d`, `ESC[K`/`1K`/`2K`, `ESC[J`, `ESC 7`/`ESC 8`, `ESC[s`/`ESC[u`,
//! scroll regions) over a window of rows, and keeps what a person would read.
//!
//! **Why.** A 300-step tqdm loop is ~15,000 bytes of redraws whose last frame is all a
//! terminal shows; a model reads every byte of it.
//!
//! **Semantics** (compatible with progress-squash): lines split on `\n`; a `\r` right
//! before `\n` is a line ending. A `\r` starts a new *frame* on the same row. A frame's
//! *stem* is its text before the first digit or bar glyph (`# = > | [`, U+2580–259F,
//! U+2500–257F), trimmed. When a frame ends, if its stem equals the stem of what the row
//! held (or extends it, as `… Done` ends `… 98%`), it replaces it (one frame removed); if the stems differ, the older text is kept
//! on its own line (text written between redraws is never lost). Whitespace-only frames
//! are skipped, unless they are at least as wide as the row (an erase: a terminal shows
//! nothing there); a skipped (or empty) frame that is not the first of its line counts
//! as removed. Erase escapes discard what they erase (counted as frames removed).
//! Absolute cursor positioning (`ESC[r;cH`, as apt draws its `Progress:` status line)
//! writes to a status row that is shown at the end only if it is still on screen.
//! SGR, OSC (incl. OSC 8 links) and mode escapes are dropped here and counted for
//! `ansi-strip`.
//!
//! **Example.** `get 10%\rget 50%\rget 100%\n` → `get 100%\n` (2 frames removed).
//!
//! **Options.** None. Output is only used when at least one frame was removed or a
//! cursor/erase escape was interpreted; otherwise the input is left as it is.

use crate::doc::{Doc, Eol, Line};
use crate::escape::moves_cursor;
use std::collections::{BTreeMap, VecDeque};
use unicode_width::UnicodeWidthChar;

/// The largest cursor parameter honoured (columns, rows, counts): wider than any
/// real terminal.
const MAX_PARAM: usize = 1000;

/// Rows above the cursor that cursor-up can still reach; older rows are committed.
const WINDOW: usize = 512;

/// What rendering produced.
pub(crate) struct Rendered<'a> {
    pub doc: Doc<'a>,
    pub frames_removed: u64,
    /// Backspace controls rendered (what they erased or let be written over is gone).
    pub backspaces_removed: u64,
    pub escapes_removed: u64,
    /// When asked for ([`render_applicable`]'s `starts`): the byte offset where each
    /// line of the input starts (0, then each `\n` + 1), as [`RawIndex`] wants them;
    /// the render loop passes every `\n` anyway.
    ///
    /// [`RawIndex`]: crate::doc::RawIndex
    pub line_starts: Option<Vec<usize>>,
}

/// Whether `input` (whose [`Controls`] are `c`) holds anything this rule interprets:
/// a frame control, or an escape that moves the cursor, erases, or saves or restores it.
fn applies_with(input: &[u8], c: Controls) -> bool {
    if c.frames() {
        return true;
    }
    if !c.escape {
        return false;
    }
    // Escapes: only cursor, erase and save/restore ones need rendering; colours and
    // links are left to `ansi-strip`.
    let mut i = 0;
    while let Some(k) = memchr::memchr(0x1b, &input[i..]) {
        i += k;
        let s = &input[i..];
        let n = crate::escape::escape_len(s);
        if moves_cursor(s, n) {
            return true;
        }
        i += n.max(1);
    }
    false
}

/// The terminal controls an input holds, found once so that the pipeline and this
/// rule do not scan the input again for each question.
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

/// Renders `input`. `None` when nothing collapses and no cursor escape was used.
pub(crate) fn render(input: &[u8]) -> Option<Rendered<'_>> {
    render_at(input, 0)
}

/// [`render`] for a piece of a larger input whose first line is original line
/// `first_line` (0-based): the rendered lines carry original line numbers.
pub(crate) fn render_at(input: &[u8], first_line: u32) -> Option<Rendered<'_>> {
    let c = Controls::scan(input);
    if !applies_with(input, c) {
        return None;
    }
    render_applicable(input, first_line, c, false)
}

/// [`render_at`] for a caller that already knows the input holds something to render
/// (a frame control or a cursor escape) and its [`Controls`]: no second scan.
/// With `starts`, also collects [`Rendered::line_starts`] where that is free (text whose
/// only controls are `\r` and `\n`).
pub(crate) fn render_applicable(
    input: &[u8],
    first_line: u32,
    c: Controls,
    starts: bool,
) -> Option<Rendered<'_>> {
    if !c.escape && !c.backspace {
        let starts = starts.then(|| {
            let mut v = Vec::with_capacity(input.len() / 48 + 2);
            v.push(0);
            v
        });
        return render_frames(input, first_line, starts);
    }
    // The emulator's line count can differ from the input's `\n`s (an escape may
    // swallow one): its callers index the input themselves.
    render_term(input, first_line)
}

/// [`render_at`] by the full emulator ([`Term`]), whatever the input holds.
fn render_term(input: &[u8], first_line: u32) -> Option<Rendered<'static>> {
    let mut t = Term::new(input.len(), first_line);
    t.run(input);
    let dirty = t.dirty || t.frames_removed > 0;
    if !dirty || t.gave_up {
        return None;
    }
    let frames_removed = t.frames_removed;
    let backspaces_removed = t.backspaces;
    let escapes_removed = t.escapes;
    Some(Rendered {
        doc: t.finish(),
        frames_removed,
        backspaces_removed,
        escapes_removed,
        line_starts: None,
    })
}

/// [`render_at`] for text whose only controls are `\r` and `\n` (no escape, no
/// backspace), as rsync, tqdm without colour and most download meters write it. With
/// nothing but carriage returns, a frame always replaces its row whole (no overlay),
/// so every line shown is one frame: a slice of the input, no copy. Gives exactly the
/// emulator's output (tested against [`Term`]).
fn render_frames(
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
    let wide = |r: (usize, usize)| width(&input[r.0..r.1]);
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
            if wide(new) >= wide(prev) {
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
    })
}

/// What a frame drew since the last `\r` (a backspace or an escape counts as visible).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Nothing,
    Blank,
    Visible,
}

#[derive(Debug, Default)]
struct Row {
    text: Vec<u8>,
    eol: Option<Eol>,
    src_first: u32,
    src_last: u32,
    /// Emptied by an erase: an empty erased row is not shown.
    erased: bool,
}

impl Row {
    fn new(src: u32) -> Row {
        Row {
            src_first: src,
            src_last: src,
            ..Row::default()
        }
    }
}

/// A frame being written over a row's earlier content.
struct Pending {
    prev: Vec<u8>,
}

struct Term {
    rows: VecDeque<Row>,
    /// Absolute index of `rows[0]`.
    base: usize,
    /// Absolute cursor row.
    cur: usize,
    /// Cursor column in cells; `None` = at the end of the row's text.
    col: Option<usize>,
    /// The column was set by `\r` or CHA (frame semantics) rather than by backspace.
    frame_origin: bool,
    /// A `\r` was seen on this line; what was drawn since the last one; whether the row
    /// was erased then. With no frame pending, a `\r` after an empty frame, or after a
    /// blank one over an erased row, skips it (counted as removed, as the plain path
    /// does).
    cr_in_line: bool,
    since_cr: Drawn,
    erased_at_cr: bool,
    pending: Option<Pending>,
    /// The position `ESC 7` / `ESC[s` saved: absolute row, column in cells.
    saved: Option<(usize, usize)>,
    /// Status rows written by absolute positioning, keyed by screen row.
    status: BTreeMap<u32, Row>,
    /// `Some(r)`: the cursor is on status row `r`.
    on_status: Option<u32>,
    line_no: u32,
    frames_removed: u64,
    /// Backspace controls interpreted.
    backspaces: u64,
    escapes: u64,
    dirty: bool,
    out: Doc<'static>,
    /// Emptied row buffers, reused for new rows (no allocation per line).
    pool: Vec<Vec<u8>>,
    /// An empty buffer a new frame is written into while the old one is pending (no
    /// allocation per frame).
    spare: Vec<u8>,
    /// Bytes of row text that column arithmetic has walked so far (cursor moves,
    /// backspaces, overwrites): each such step scans its row.
    work: u64,
    /// [`Term::work`] allowed for this input; past it the emulator gives up.
    work_limit: u64,
    /// The input drew in ways that would cost more than [`Term::work_limit`] to
    /// follow (e.g. backspacing inside a line of megabytes): nothing is rendered.
    gave_up: bool,
}

/// Starting capacity of a row's buffer, bytes: a row written in many small pieces
/// (text between escapes) is not regrown from nothing piece by piece. Kept small: an
/// input of under 512 lines holds every row until the end, and at 128 bytes or more
/// the rows of a 50 KB apt log (~430) were enough for glibc to give the freed heap
/// back after each call and fault it in again on the next (13 faults per call from
/// Python; none at 64, for ~6% more instructions than at 256).
const ROW_CAPACITY: usize = 64;

/// Work allowed per input byte (see [`Term::work`]). Progress output moves the cursor
/// on rows of a few hundred bytes: a few hundred bytes of work per input byte at most.
/// Backspacing through a 10 MB line would be quadratic.
const WORK_PER_BYTE: u64 = 256;
/// Work allowed whatever the input's size.
const WORK_MIN: u64 = 64 << 20;

impl Term {
    fn new(cap: usize, first_line: u32) -> Term {
        let mut rows = VecDeque::new();
        rows.push_back(Row::new(first_line));
        Term {
            rows,
            base: 0,
            cur: 0,
            col: None,
            frame_origin: false,
            cr_in_line: false,
            since_cr: Drawn::Nothing,
            erased_at_cr: false,
            pending: None,
            saved: None,
            status: BTreeMap::new(),
            on_status: None,
            line_no: first_line,
            frames_removed: 0,
            backspaces: 0,
            escapes: 0,
            dirty: false,
            out: {
                let mut out = Doc::owned(cap / 2);
                out.lines.reserve(cap / 64 + 1);
                out
            },
            pool: Vec::new(),
            spare: Vec::new(),
            work: 0,
            work_limit: (cap as u64).saturating_mul(WORK_PER_BYTE).max(WORK_MIN),
            gave_up: false,
        }
    }

    /// Counts the current row as walked once; `false` when the work allowed is spent.
    fn charge(&mut self) -> bool {
        let n = match self.on_status {
            Some(r) => self.status.get(&r).map_or(0, |row| row.text.len()),
            None => self.rows[self.cur - self.base].text.len(),
        } as u64;
        self.work = self.work.saturating_add(n);
        if self.work > self.work_limit {
            self.gave_up = true;
        }
        !self.gave_up
    }

    /// The row the cursor is on (called for every piece of text written).
    #[inline]
    fn row(&mut self) -> &mut Row {
        if let Some(r) = self.on_status {
            return self.status_row(r);
        }
        let i = self.cur - self.base;
        &mut self.rows[i]
    }

    #[inline(never)]
    fn status_row(&mut self, r: u32) -> &mut Row {
        let src = self.line_no;
        self.status.entry(r).or_insert_with(|| Row::new(src))
    }

    fn run(&mut self, input: &[u8]) {
        let n = input.len();
        let has_bs = memchr::memchr(0x08, input).is_some();
        let mut i = 0;
        while i < n {
            let rest = &input[i..];
            let mut next = next_special(rest);
            if has_bs {
                if let Some(b) = memchr::memchr(0x08, &rest[..next]) {
                    next = b;
                }
            }
            if next > 0 {
                if self.since_cr != Drawn::Visible {
                    self.since_cr = if is_blank(&rest[..next]) {
                        Drawn::Blank
                    } else {
                        Drawn::Visible
                    };
                }
                // Writing at a column (not appending) walks the row.
                if self.col.is_some() && !self.charge() {
                    return;
                }
                self.write(&rest[..next]);
                i += next;
                continue;
            }
            match rest[0] {
                b'\n' => {
                    self.newline(Eol::Lf);
                    self.cr_in_line = false;
                    i += 1;
                }
                b'\r' => {
                    if rest.get(1) == Some(&b'\n') {
                        self.newline(Eol::CrLf);
                        self.cr_in_line = false;
                        i += 2;
                    } else {
                        if self.pending.is_some() {
                            self.resolve();
                        } else if self.cr_in_line
                            && (self.since_cr == Drawn::Nothing
                                || (self.erased_at_cr && self.since_cr == Drawn::Blank))
                        {
                            // As the plain path: an empty frame, or a blank one over an
                            // erased row, skipped.
                            self.frames_removed += 1;
                        }
                        self.cr_in_line = true;
                        self.since_cr = Drawn::Nothing;
                        self.erased_at_cr = self.on_status.is_none() && self.row().erased;
                        self.col = Some(0);
                        self.frame_origin = true;
                        i += 1;
                    }
                }
                0x08 => {
                    self.since_cr = Drawn::Visible;
                    if !self.charge() {
                        return;
                    }
                    self.resolve();
                    self.backspaces += 1;
                    let c = self.cur_col();
                    self.col = Some(c.saturating_sub(1));
                    self.frame_origin = false;
                    self.dirty = true;
                    i += 1;
                }
                _ => {
                    self.since_cr = Drawn::Visible;
                    if !self.charge() {
                        return;
                    }
                    i += self.escape(rest);
                }
            }
        }
        self.resolve();
    }

    /// Current column in cells.
    fn cur_col(&mut self) -> usize {
        match self.col {
            Some(c) => c,
            None => width(&self.row().text),
        }
    }

    fn write(&mut self, text: &[u8]) {
        let src = self.line_no;
        match self.col {
            None => {
                let row = self.row();
                row.text.extend_from_slice(text);
                row.src_last = src;
            }
            Some(0) if self.frame_origin && self.on_status.is_none() => {
                let row_nonempty = !self.row().text.is_empty();
                if row_nonempty && self.pending.is_none() {
                    // The frame is drawn into an emptied buffer: the spare, else one
                    // from the pool (rows kept aside by `resolve` take theirs along).
                    let spare = if self.spare.capacity() > 0 {
                        std::mem::take(&mut self.spare)
                    } else {
                        self.pool
                            .pop()
                            .unwrap_or_else(|| Vec::with_capacity(ROW_CAPACITY))
                    };
                    let prev = std::mem::replace(&mut self.row().text, spare);
                    self.pending = Some(Pending { prev });
                }
                let row = self.row();
                row.text.extend_from_slice(text);
                row.src_last = src;
                row.erased = false;
                self.col = None;
            }
            Some(c) => {
                let on_status = self.on_status.is_some();
                let row = self.row();
                let w = width(&row.text);
                if c == 0 && on_status && !row.text.is_empty() {
                    // A status line redrawn in place: the old one is a removed frame.
                    row.text.clear();
                    self.frames_removed += 1;
                    let row = self.row();
                    row.text.extend_from_slice(text);
                    row.src_last = src;
                    self.col = None;
                    return;
                }
                if c >= w {
                    row.text.extend(std::iter::repeat_n(b' ', c - w));
                    row.text.extend_from_slice(text);
                    row.src_last = src;
                    self.col = None;
                } else {
                    let new_col = overwrite(&mut row.text, c, text);
                    row.src_last = src;
                    self.dirty = true;
                    let w2 = width(&self.row().text);
                    self.col = if new_col >= w2 { None } else { Some(new_col) };
                }
            }
        }
    }

    /// Ends the current frame: keep it, or keep the older text on its own line.
    fn resolve(&mut self) {
        let Some(mut p) = self.pending.take() else {
            return;
        };
        let src = self.line_no;
        let row = self.row();
        if is_blank(&row.text) {
            // A blank frame: an erase of the row, or skipped; removed either way.
            if width(&row.text) >= width(&p.prev) {
                row.text.clear();
                row.erased = true;
            } else {
                std::mem::swap(&mut row.text, &mut p.prev);
            }
            self.frames_removed += 1;
            self.recycle(p.prev);
        } else if same_bar(&row.text, &p.prev) {
            self.frames_removed += 1;
            self.recycle(p.prev);
        } else if is_blank(&p.prev) {
            self.recycle(p.prev);
        } else {
            let kept = Row {
                text: p.prev,
                eol: None,
                src_first: row.src_first,
                src_last: src,
                erased: false,
            };
            row.src_first = src;
            let at = self.cur - self.base;
            self.rows.insert(at, kept);
            self.cur += 1;
        }
    }

    /// Keeps an emptied frame buffer for the next frame.
    fn recycle(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() > self.spare.capacity() {
            buf.clear();
            self.spare = buf;
        }
    }

    fn newline(&mut self, eol: Eol) {
        self.resolve();
        if self.on_status.is_some() {
            // A newline while on a status row leaves it (apt never does this).
            self.on_status = None;
        }
        let i = self.cur - self.base;
        self.rows[i].eol = Some(eol);
        // Rows pushed aside by a different stem on this line share its ending.
        let mut k = i;
        while k > 0 && self.rows[k - 1].eol.is_none() {
            self.rows[k - 1].eol = Some(eol);
            k -= 1;
        }
        self.line_no = self.line_no.saturating_add(1);
        self.cur += 1;
        if self.cur - self.base == self.rows.len() {
            let mut row = Row::new(self.line_no);
            row.text = self
                .pool
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(ROW_CAPACITY));
            self.rows.push_back(row);
        }
        self.col = if self.rows[self.cur - self.base].text.is_empty() {
            None
        } else {
            self.frame_origin = true;
            Some(0)
        };
        while self.cur - self.base > WINDOW {
            let r = self.rows.pop_front().expect("window is non-empty");
            self.base += 1;
            self.commit(r);
        }
    }

    fn commit(&mut self, mut r: Row) {
        if r.erased && r.text.is_empty() {
            self.pool.push(r.text);
            return;
        }
        let buf = self.out.buf.to_mut();
        let start = buf.len();
        buf.extend_from_slice(&r.text);
        let end = buf.len();
        self.out.lines.push(Line {
            start,
            end,
            eol: r.eol.unwrap_or(Eol::Lf),
            src_first: r.src_first,
            src_last: r.src_last.max(r.src_first),
            marker: None,
        });
        r.text.clear();
        if self.pool.len() < 64 {
            self.pool.push(std::mem::take(&mut r.text));
        }
    }

    fn finish(mut self) -> Doc<'static> {
        // The row after a final newline is a phantom unless something was written to it.
        let rows = std::mem::take(&mut self.rows);
        let last = rows.len().saturating_sub(1);
        for (k, mut r) in rows.into_iter().enumerate() {
            if k == last && r.text.is_empty() && r.eol.is_none() {
                continue;
            }
            if k == last && r.eol.is_none() {
                r.eol = Some(Eol::None);
            }
            self.commit(r);
        }
        let status = std::mem::take(&mut self.status);
        for (_, r) in status {
            if !r.text.is_empty() && !is_blank(&r.text) {
                if let Some(l) = self.out.lines.last_mut() {
                    if l.eol == Eol::None {
                        l.eol = Eol::Lf;
                    }
                }
                self.commit(Row {
                    eol: Some(Eol::None),
                    ..r
                });
            }
        }
        // Keep "no final newline" only if the input had none.
        self.out
    }

    /// Handles the escape at the start of `s` (`s[0] == ESC`); returns bytes consumed.
    fn escape(&mut self, s: &[u8]) -> usize {
        self.escapes += 1;
        let Some(&kind) = s.get(1) else { return 1 };
        match kind {
            b'[' => self.csi(s),
            _ if !kind.is_ascii() => 1,
            b']' | b'P' | b'_' | b'^' | b'X' => crate::escape::escape_len(s),
            b'7' => {
                self.resolve();
                self.save_cursor();
                self.dirty = true;
                2
            }
            b'8' => {
                self.resolve();
                self.restore_cursor();
                2
            }
            _ => crate::escape::escape_len(s),
        }
    }

    fn csi(&mut self, s: &[u8]) -> usize {
        // ESC [ params intermediates final
        let mut j = 2;
        while j < s.len() && (0x30..=0x3f).contains(&s[j]) {
            j += 1;
        }
        while j < s.len() && (0x20..=0x2f).contains(&s[j]) {
            j += 1;
        }
        if j >= s.len() {
            return s.len();
        }
        let fin = s[j];
        if !(0x40..=0x7e).contains(&fin) {
            return j; // malformed: drop what was read, keep the next byte as text
        }
        let params = &s[2..j];
        let len = j + 1;
        if params.first() == Some(&b'?') || params.first() == Some(&b'>') {
            return len; // private modes (cursor visibility, bracketed paste…)
        }
        // Parameters are capped: a column or row past any real terminal's size moves
        // the cursor no further (no work or memory in proportion to a huge number).
        let p = |k: usize, d: usize| -> usize {
            let v = params
                .split(|&b| b == b';')
                .nth(k)
                .and_then(|x| std::str::from_utf8(x).ok())
                .and_then(|x| x.parse::<usize>().ok())
                .unwrap_or(0);
            if v == 0 {
                d
            } else {
                v.min(MAX_PARAM)
            }
        };
        match fin {
            b'm' => {}
            b'A' | b'F' => {
                self.resolve();
                let n = p(0, 1);
                // The column is kept (0 for `F`): read it before leaving the row, where
                // "at the end of the text" means something else.
                let col = if fin == b'F' { 0 } else { self.cur_col() };
                self.leave_status();
                self.cur = self.cur.saturating_sub(n).max(self.base);
                self.col = Some(col);
                self.frame_origin = fin == b'F';
                self.dirty = true;
            }
            b'B' | b'E' => {
                self.resolve();
                let n = p(0, 1);
                let col = if fin == b'E' { 0 } else { self.cur_col() };
                self.leave_status();
                self.cur = (self.cur + n).min(self.base + self.rows.len() - 1);
                self.col = Some(col);
                self.frame_origin = fin == b'E';
                self.dirty = true;
            }
            b'G' | b'`' => {
                let c = p(0, 1) - 1;
                if c == 0 {
                    // To the first column: a new frame, as after `\r`.
                    self.resolve();
                }
                self.col = Some(c);
                self.frame_origin = c == 0;
                self.dirty = true;
            }
            // Moves along the row do not end the frame being drawn (`a ESC[5C b` is
            // one frame).
            b'C' => {
                let c = (self.cur_col() + p(0, 1)).min(MAX_PARAM);
                self.col = Some(c);
                self.frame_origin = false;
                self.dirty = true;
            }
            b'D' => {
                let c = self.cur_col().saturating_sub(p(0, 1));
                self.col = Some(c);
                self.frame_origin = false;
                self.dirty = true;
            }
            b'H' | b'f' => {
                self.resolve();
                let r = p(0, 1) as u32;
                self.on_status = Some(r);
                self.col = Some(p(1, 1) - 1);
                self.frame_origin = false;
                self.dirty = true;
            }
            b'd' => {
                self.resolve();
                self.on_status = Some(p(0, 1) as u32);
                self.dirty = true;
            }
            b'K' => {
                self.resolve();
                self.erase_line(p(0, 0).min(2) as u8, params.is_empty());
            }
            b'J' => {
                self.resolve();
                self.erase_display(params);
            }
            b's' => {
                self.resolve();
                self.save_cursor();
            }
            b'u' => {
                self.resolve();
                self.restore_cursor();
            }
            _ => {}
        }
        len
    }

    /// `ESC 7` / `ESC[s`: remembers the cursor's row and column (a column in cells,
    /// not "the end of the text", which moves as the row is written).
    fn save_cursor(&mut self) {
        let col = self.cur_col();
        self.saved = Some((self.cur, col));
        self.dirty = true;
    }

    /// `ESC 8` / `ESC[u`: back to the saved position, as often as it is asked (a
    /// terminal keeps the saved position: a status line is redrawn by restoring,
    /// erasing and writing, again and again). A row that has left the window since
    /// is out of reach: the oldest row in the window stands for it.
    fn restore_cursor(&mut self) {
        if let Some((r, c)) = self.saved {
            self.on_status = None;
            self.cur = r.max(self.base).min(self.base + self.rows.len() - 1);
            self.col = Some(c);
            self.frame_origin = false;
        }
        self.dirty = true;
    }

    fn leave_status(&mut self) {
        self.on_status = None;
    }

    /// `ESC[K` (mode 0: to the end), `ESC[1K` (to the start), `ESC[2K` (whole row).
    fn erase_line(&mut self, mode: u8, default: bool) {
        let mode = if default { 0 } else { mode };
        let col = self.col;
        let row = self.row();
        let (mut removed, mut dirty) = (false, false);
        match (mode, col) {
            (0, None) => {}
            (0, Some(c)) => {
                let cut = byte_at_col(&row.text, c);
                if cut < row.text.len() {
                    removed = !is_blank(&row.text[cut..]);
                    row.text.truncate(cut);
                    if c == 0 {
                        row.erased = true;
                    }
                    dirty = true;
                }
            }
            (1, _) => {
                let c = col.unwrap_or(usize::MAX);
                let cut = byte_at_col(&row.text, c.saturating_add(1));
                let w = width(&row.text[..cut]);
                row.text.splice(..cut, std::iter::repeat_n(b' ', w));
                dirty = true;
            }
            _ => {
                removed = !is_blank(&row.text);
                row.text.clear();
                row.erased = true;
                dirty = true;
            }
        }
        if removed {
            self.frames_removed += 1;
        }
        self.dirty |= dirty;
    }

    /// `ESC[J`: erase from the cursor to the end of the screen (rows below and status
    /// rows); `ESC[2J`/`ESC[3J` clear the screen, but the text stays readable here.
    fn erase_display(&mut self, params: &[u8]) {
        if !(params.is_empty() || params == b"0") {
            self.dirty = true;
            return;
        }
        self.erase_line(0, true);
        let keep = self.cur - self.base + 1;
        while self.rows.len() > keep {
            let r = self.rows.pop_back().expect("len > keep");
            if !is_blank(&r.text) {
                self.frames_removed += 1;
            }
        }
        let removed = self.status.values().filter(|r| !is_blank(&r.text)).count();
        self.frames_removed += removed as u64;
        self.status.clear();
        self.dirty = true;
    }
}

/// The offset of the next `\r`, `\n` or ESC in `s` (or its length). Escape-dense
/// output has runs of a few bytes between them, where a plain loop beats a SIMD call;
/// long runs go to `memchr3`.
#[inline]
fn next_special(s: &[u8]) -> usize {
    const SHORT: usize = 24;
    for (i, &b) in s.iter().take(SHORT).enumerate() {
        if b == b'\r' || b == b'\n' || b == 0x1b {
            return i;
        }
    }
    if s.len() <= SHORT {
        return s.len();
    }
    SHORT + memchr::memchr3(b'\r', b'\n', 0x1b, &s[SHORT..]).unwrap_or(s.len() - SHORT)
}

/// Display width in terminal cells (invalid UTF-8 bytes count one cell each).
pub(crate) fn width(b: &[u8]) -> usize {
    if b.is_ascii() {
        return b.len();
    }
    let mut w = 0;
    for chunk in b.utf8_chunks() {
        w += chunk
            .valid()
            .chars()
            .map(|c| c.width().unwrap_or(0))
            .sum::<usize>();
        w += chunk.invalid().len();
    }
    w
}

/// The byte offset where cell column `col` starts (the end if the row is shorter).
fn byte_at_col(b: &[u8], col: usize) -> usize {
    if b.is_ascii() {
        return col.min(b.len());
    }
    let mut w = 0;
    let mut off = 0;
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            if w >= col {
                return off;
            }
            w += c.width().unwrap_or(0);
            off += c.len_utf8();
        }
        for _ in chunk.invalid() {
            if w >= col {
                return off;
            }
            w += 1;
            off += 1;
        }
    }
    off
}

/// Writes `text` over `row` from cell column `col`; returns the column after it.
fn overwrite(row: &mut Vec<u8>, col: usize, text: &[u8]) -> usize {
    let start = byte_at_col(row, col);
    let tw = width(text);
    let end_col = col + tw;
    let end = byte_at_col(row, end_col).max(start);
    row.splice(start..end, text.iter().copied());
    end_col
}

/// Whether `b` shows nothing (ASCII whitespace only).
pub(crate) fn is_blank(b: &[u8]) -> bool {
    b.iter().all(|c| c.is_ascii_whitespace())
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
fn same_bar(new: &[u8], old: &[u8]) -> bool {
    same_stem(stem(new), stem(old))
}

/// [`same_bar`] on the two frames' stems.
fn same_stem(a: &[u8], b: &[u8]) -> bool {
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
pub(crate) fn stem(b: &[u8]) -> &[u8] {
    let (s, e) = stem_span(b);
    &b[s..e]
}

/// [`stem`] as a half-open byte range of `b`.
fn stem_span(b: &[u8]) -> (usize, usize) {
    // Leading whitespace never ends a stem: skip it first, then the stem runs to the
    // first stem-ending byte, less trailing whitespace.
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
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
    (start, end)
}

/// The receipt row: `frames_removed`, and `backspaces_removed` when there were any;
/// `None` when neither changed anything.
pub(crate) fn report(frames: u64, backspaces: u64) -> Option<crate::RuleReport> {
    if frames == 0 && backspaces == 0 {
        return None;
    }
    let mut counts = vec![("frames_removed", frames)];
    if backspaces > 0 {
        counts.push(("backspaces_removed", backspaces));
    }
    Some(crate::RuleReport {
        id: crate::RuleId::TerminalRender,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(input: &[u8]) -> (String, u64) {
        match render(input) {
            Some(x) => (
                String::from_utf8_lossy(&x.doc.render(None)).into_owned(),
                x.frames_removed,
            ),
            None => (String::from_utf8_lossy(input).into_owned(), 0),
        }
    }

    /// The plain-frame path gives exactly the emulator's output.
    #[test]
    fn plain_frames_agree_with_the_emulator() {
        let mut rendered = 0;
        let mut check = |input: &[u8]| {
            // The line starts collected on the way are the input's.
            if let Some(r) = render_frames(input, 0, Some(vec![0])) {
                let crate::doc::RawIndex::Full { starts, .. } = crate::doc::RawIndex::new(input)
                else {
                    unreachable!("RawIndex::new is full")
                };
                assert_eq!(r.line_starts.as_ref(), Some(&starts), "{input:?}");
            }
            let fast = render_frames(input, 7, None);
            let slow = render_term(input, 7);
            match (fast, slow) {
                (None, None) => {}
                (Some(f), Some(s)) => {
                    rendered += 1;
                    assert_eq!(f.frames_removed, s.frames_removed, "{input:?}");
                    assert_eq!(f.doc.render(None), s.doc.render(None), "{input:?}");
                    let src = |d: &Doc<'_>| -> Vec<(u32, u32, Eol)> {
                        d.lines
                            .iter()
                            .map(|l| (l.src_first, l.src_last, l.eol))
                            .collect()
                    };
                    assert_eq!(src(&f.doc), src(&s.doc), "{input:?}");
                }
                (f, s) => panic!(
                    "{input:?}: plain {:?} vs emulator {:?}",
                    f.map(|r| r.frames_removed),
                    s.map(|r| r.frames_removed)
                ),
            }
        };
        let alphabet: [&[u8]; 12] = [
            b"a",
            b"b",
            b" ",
            b"1",
            b"5%",
            b"\r",
            b"\r",
            b"\n",
            b"\r\n",
            "é".as_bytes(),
            "日".as_bytes(),
            b"get ",
        ];
        let mut next = crate::text::splitmix(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let mut input = Vec::new();
            for _ in 0..len {
                input.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            check(&input);
        }
        for case in [
            &b"a 1%\ra 2%"[..],
            b"10%\r20%\r30%",
            b"abc\r   \r\n",
            b"abc\r  \r\n",
            b"abc\r   \rX\n",
            b"\r\r\n",
            b"x\r\r\r",
            b"Downloading 10%\rERROR: disk full\rDownloading 20%\n",
        ] {
            check(case);
        }
        // And every capture of the corpus, with its escapes and backspaces removed.
        let captures = crate::text::corpus_captures();
        assert_eq!(captures.len(), 26);
        for raw in captures {
            let plain: Vec<u8> = crate::escape::strip(&raw)
                .iter()
                .copied()
                .filter(|&b| b != 0x08)
                .collect();
            check(&plain);
        }
        // Most random cases have frames to remove: the comparison is not vacuous.
        assert!(rendered > 1_000, "{rendered}");
    }

    #[test]
    fn stems() {
        assert_eq!(stem(b"Downloading 10%"), b"Downloading");
        assert_eq!(stem(b"10%"), b"");
        assert_eq!(stem("get |###".as_bytes()), b"get");
        assert_eq!(stem("x \u{2588}\u{2588} 5".as_bytes()), b"x");
    }

    #[test]
    fn progress_squash_small_cases() {
        assert_eq!(
            r(b"plain output\nwith lines\n"),
            ("plain output\nwith lines\n".into(), 0)
        );
        assert_eq!(r(b"\ronly one frame\n").1, 0);
        assert_eq!(
            r(b"Downloading 10%\rERROR: disk full\rDownloading 20%\n").1,
            0
        );
        assert_eq!(
            r(b"Downloading 10%\rDownloading 20%\rDownloading 30%\rERROR: disk full\n"),
            ("Downloading 30%\nERROR: disk full\n".into(), 2)
        );
        assert_eq!(
            r(b"step 1/3\rstep 2/3\rstep 3/3\r\nnext\r\n"),
            ("step 3/3\r\nnext\r\n".into(), 2)
        );
        assert_eq!(
            r(b"\x1b[2K\rStep 1/3\x1b[K\r\x1b[2KStep 2/3\x1b[K\r\x1b[2KStep 3/3\x1b[K\ndone\n"),
            ("Step 3/3\ndone\n".into(), 2)
        );
        assert_eq!(
            r(b"\rget |#     | 10%\rget |###   | 50%\rget |######| 100%\n"),
            ("get |######| 100%\n".into(), 2)
        );
        assert_eq!(r(b"a 1%\ra 2%"), ("a 2%".into(), 1));
        assert_eq!(r(b"10%\r20%\r30%"), ("30%".into(), 2));
    }

    #[test]
    fn multi_line_redraw_keeps_last_frame_and_log_lines() {
        let mut s = Vec::new();
        s.extend_from_slice(b"a 0%\r\nb 0%");
        for k in 1..=3 {
            s.extend_from_slice(b"\r\x1b[2K\x1b[1A\x1b[2K");
            if k == 2 {
                s.extend_from_slice(b"log: mirror switched\r\n");
            }
            s.extend_from_slice(format!("a {k}0%\r\nb {k}0%").as_bytes());
        }
        s.extend_from_slice(b"\r\ndone\r\n");
        let (out, n) = r(&s);
        assert_eq!(out, "log: mirror switched\r\na 30%\r\nb 30%\r\ndone\r\n");
        assert_eq!(n, 6);
    }

    #[test]
    fn status_line_is_dropped_when_erased() {
        let s = b"Unpacking x\r\n\x1b7\x1b[40;0fProgress: [ 10%]\x1b8Setting up x\r\n\x1b7\x1b[40;0fProgress: [ 20%]\x1b8done\r\n\x1b[1A\x1b[J\r\nN: notice\r\n";
        let (out, _) = r(s);
        assert!(!out.contains("Progress"), "{out}");
        assert!(
            out.contains("Setting up x") && out.contains("N: notice"),
            "{out}"
        );
    }

    /// `tput cuu1; tput el` after a newline: the cursor goes up in column 0 (the
    /// column it was in), so the erase clears the old line instead of nothing.
    #[test]
    fn cursor_up_keeps_the_column() {
        let mut s = b"start\nstatus 0\n".to_vec();
        for k in 1..=50 {
            s.extend_from_slice(format!("\x1b[1A\x1b[Kstatus {k}\n").as_bytes());
        }
        s.extend_from_slice(b"end\n");
        assert_eq!(r(&s), ("start\nstatus 50\nend\n".into(), 50));
        // Two rows at once, erased to the end of the screen.
        let mut s = b"a 0\nb 0\n".to_vec();
        for k in 1..=9 {
            s.extend_from_slice(format!("\x1b[2A\x1b[Ja {k}\nb {k}\n").as_bytes());
        }
        assert_eq!(r(&s), ("a 9\nb 9\n".into(), 18));
        // Up from the middle of a line keeps that column (the final newline then
        // only moves the cursor back down to `xy`).
        assert_eq!(r(b"abcdef\nxy\x1b[1AZ\n").0, "abZdef\nxy");
    }

    /// A status line redrawn from a saved position: restored as often as asked, to the
    /// saved column (not to the end of what was written since).
    #[test]
    fn save_and_restore_redraw_a_status_line() {
        for (save, restore) in [("\x1b7", "\x1b8"), ("\x1b[s", "\x1b[u")] {
            let mut s = format!("start\n{save}");
            for k in 0..=100 {
                s.push_str(&format!("{restore}\x1b[Kstatus {k}"));
            }
            s.push_str("\nend\n");
            assert_eq!(
                r(s.as_bytes()),
                ("start\nstatus 100\nend\n".into(), 100),
                "{save}"
            );
        }
        // Saved again around each frame.
        let mut s = String::from("start\n");
        for k in 0..=20 {
            s.push_str(&format!("\x1b7\x1b[Kstatus {k}\x1b8"));
        }
        s.push_str("\nend\n");
        assert_eq!(r(s.as_bytes()).0, "start\nstatus 20\nend\n");
    }

    #[test]
    fn spinner_with_cha_and_erase() {
        let (out, n) =
            r("⠙\x1b[1G\x1b[0K⠹\x1b[1G\x1b[0K⠸\x1b[1G\x1b[0Kadded 3 packages\r\n".as_bytes());
        assert_eq!(out, "added 3 packages\r\n");
        assert_eq!(n, 3);
    }

    /// Cursor moves along the row inside a frame (`ESC[nC`, `ESC[nD`, `ESC[nG` past
    /// the first column) are part of the frame: the frames collapse to the last one.
    /// (Each move ended the frame, so every redraw was kept as a line of its own.)
    #[test]
    fn moves_along_the_row_stay_inside_the_frame() {
        let (out, n) = r(&[&b"a\x1b[5Cb\r"[..]; 2000].concat());
        assert_eq!((out.as_str(), n), ("a     b", 1999));
        let (out, n) = r(b"get 10%\x1b[3D11\rget 20%\x1b[3D21\rget 30%\x1b[8Gz\n");
        assert_eq!((out.as_str(), n), ("get 30%z\n", 2));
        let (out, n) = r(b"get 10%\x1b[3D11\rget 20%\x1b[3D21\n");
        assert_eq!((out.as_str(), n), ("get 21%\n", 1));
    }

    /// Blank and empty frames that erase nothing are skipped and counted (a spinner
    /// clearing its line with bare `\r`s was left whole, 100 KB of `\r` elided as
    /// text); the first `\r` of a line is no redraw (`\ronly one frame` stays).
    #[test]
    fn blank_redraws_are_removed_frames() {
        let cases: &[(&[u8], &str, u64)] = &[
            (&[b'\r'; 1000], "", 999),
            (&b"  \r".repeat(500), "", 499),
            (&[&[b'\r'; 500][..], b"done\n"].concat(), "done\n", 499),
            (b"get 10%\r\rget 20%\r  \rget 30%\n", "get 30%\n", 4),
            (b"\ronly one frame\n", "\ronly one frame\n", 0),
        ];
        for (input, want, frames) in cases {
            assert_eq!(r(input), (want.to_string(), *frames), "{input:?}");
            // The emulator counts the same (a colour escape sends the input to it).
            let mut coloured = b"\x1b[0m\n".to_vec();
            coloured.extend_from_slice(input);
            let t = render_term(&coloured, 0).map_or(0, |x| x.frames_removed);
            assert_eq!(t, *frames, "{input:?}");
        }
    }

    #[test]
    fn backspace_overwrites() {
        let (out, _) = r(b"abc\x08\x08X\n");
        assert_eq!(out, "aXc\n");
    }

    #[test]
    fn wide_chars_overwrite_by_cells() {
        let (out, _) = r("日本語\x1b[3GX\n".as_bytes());
        assert_eq!(out, "日X語\n");
    }
}
