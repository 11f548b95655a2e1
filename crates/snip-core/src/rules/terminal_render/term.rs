//! The emulator: a window of rows, a cursor, and the escapes that move or erase.

use super::stem::{erases, is_blank, same_bar};
use super::Rendered;
use crate::doc::{Doc, Eol, Line};
use std::collections::{BTreeMap, VecDeque};
use unicode_width::UnicodeWidthChar;

/// The largest cursor parameter honoured (columns, rows, counts): wider than any
/// real terminal.
const MAX_PARAM: usize = 1000;

/// Rows above the cursor that cursor-up can still reach; older rows are committed.
const WINDOW: usize = 512;

/// [`render_at`](super::render_at) by the full emulator ([`Term`]), whatever the input holds.
#[cfg(test)]
pub(super) fn render_term(input: &[u8], first_line: u32) -> Option<Rendered<'static>> {
    render_term_in(
        input,
        first_line,
        None,
        crate::escape::Controls::scan(input),
    )
}

/// [`render_term`], writing the rendered text and lines into `scratch`'s buffers (emptied)
/// when given; `c`: the input's controls, found already.
pub(super) fn render_term_in(
    input: &[u8],
    first_line: u32,
    scratch: Option<crate::doc::Scratch>,
    c: crate::escape::Controls,
) -> Option<Rendered<'static>> {
    render_term_as(
        input,
        first_line,
        !reaches_back(input),
        scratch,
        c.backspace,
    )
}

/// [`render_term`], told whether the input can take the cursor back to a row it left
/// (`forward`: it cannot, see [`reaches_back`]). With `forward`, a row is final once
/// the cursor leaves it: it is committed at once, and a line with no control the
/// emulator acts on (`\r`, ESC, backspace) is copied through as it is, never emulated.
/// The output is the same either way (tested).
fn render_term_as(
    input: &[u8],
    first_line: u32,
    forward: bool,
    scratch: Option<crate::doc::Scratch>,
    backspace: bool,
) -> Option<Rendered<'static>> {
    let mut t = Term::new(input.len(), first_line, scratch);
    t.forward = forward;
    t.run(input, backspace);
    let dirty = t.dirty || t.frames_removed > 0;
    if !dirty || t.gave_up {
        return None;
    }
    let frames_removed = t.frames_removed;
    let backspaces_removed = t.backspaces;
    let escapes_removed = t.escapes;
    let newlines = t.line_no - first_line;
    Some(Rendered {
        doc: t.finish(),
        frames_removed,
        backspaces_removed,
        escapes_removed,
        line_starts: None,
        newlines,
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
    /// An older frame kept on a line of its own by [`Term::resolve`]: shown in the
    /// output, but not a row of the screen (the terminal drew the newer frame over
    /// it), so cursor moves up and down and line feeds step over it.
    aside: bool,
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

pub(super) struct Term {
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
    /// The topmost row (absolute) the cursor can move up to: rows above an absolute
    /// positioning with no saved position ([`Term::move_to_row`]) are out of reach.
    floor: usize,
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
    /// Blank cells written so far to reach a column past a row's end (`ESC[nC`,
    /// `ESC[nG`, `ESC[r;cH`): a few bytes of input each, up to [`MAX_PARAM`] bytes of
    /// row. Past [`Term::pad_limit`] the emulator gives up (the input goes on as it
    /// was), so memory stays bounded per input byte.
    padded: u64,
    pad_limit: u64,
    /// No escape of the input can take the cursor back to a row it left (see
    /// [`reaches_back`]): rows above the cursor are committed at once, and plain lines
    /// skip the emulator ([`Term::plain_lines`]).
    forward: bool,
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

/// Blank bytes that cursor moves may add to rows, per input byte (see
/// [`Term::padded`]): the rendered rows then hold at most this many bytes of padding
/// per input byte, whatever the escapes ask for.
const PAD_PER_BYTE: u64 = 4;
/// Padding allowed whatever the input's size, bytes.
const PAD_MIN: u64 = 1 << 20;

impl Term {
    fn new(cap: usize, first_line: u32, scratch: Option<crate::doc::Scratch>) -> Term {
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
            floor: 0,
            line_no: first_line,
            frames_removed: 0,
            backspaces: 0,
            escapes: 0,
            dirty: false,
            // Reserved for what plain text renders to (about the input, lines of 32
            // bytes or more): a table that outgrows its reservation is copied whole
            // into new pages; pages reserved and never written cost nothing.
            out: {
                let mut out = match scratch {
                    Some((mut buf, mut lines)) => {
                        buf.clear();
                        buf.reserve(cap);
                        lines.clear();
                        Doc {
                            buf: std::borrow::Cow::Owned(buf),
                            lines,
                            markers: Vec::new(),
                            footer: Vec::new(),
                        }
                    }
                    None => Doc::owned(cap),
                };
                out.lines.reserve(cap / 32 + 1);
                out
            },
            pool: Vec::new(),
            spare: Vec::new(),
            work: 0,
            work_limit: (cap as u64).saturating_mul(WORK_PER_BYTE).max(WORK_MIN),
            gave_up: false,
            padded: 0,
            pad_limit: (cap as u64).saturating_mul(PAD_PER_BYTE).max(PAD_MIN),
            forward: false,
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

    /// Renders `input` (`has_bs`: it holds a backspace, which ends a run of text as
    /// `\r`, `\n` and ESC do).
    fn run(&mut self, input: &[u8], has_bs: bool) {
        let n = input.len();
        debug_assert_eq!(has_bs, memchr::memchr(0x08, input).is_some());
        let mut i = self.plain_lines(input, 0);
        while i < n && !self.gave_up {
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
                    i = self.plain_lines(input, i + 1);
                }
                b'\r' => {
                    if rest.get(1) == Some(&b'\n') {
                        self.newline(Eol::CrLf);
                        self.cr_in_line = false;
                        i = self.plain_lines(input, i + 2);
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

    /// From `i`, the start of a line, passes every whole line that holds no control the
    /// emulator acts on (`\r` but in a `\r\n` ending, ESC, backspace) straight to the
    /// output, as [`Term::run`] would render it: found by one `memchr3` for the next
    /// control and the `\n`s before it, no emulation. Only in [`Term::forward`] mode
    /// and when the emulator is at rest (the cursor on a fresh row: nothing pending,
    /// no column, no row above it held back), where such a line's row is final as soon
    /// as it ends. Returns where the emulator goes on: the start of the first line
    /// with a control (or without a line ending).
    fn plain_lines(&mut self, input: &[u8], mut i: usize) -> usize {
        if !self.forward
            || self.pending.is_some()
            || self.on_status.is_some()
            || self.col.is_some()
            || self.rows.len() != 1
            || !self.rows[0].text.is_empty()
            || self.rows[0].erased
        {
            return i;
        }
        let n = input.len();
        let line_no = self.line_no;
        loop {
            let c = memchr::memchr3(b'\r', 0x1b, 0x08, &input[i..]).map_or(n, |k| i + k);
            // The lines before `c` go to the output in one copy of the bytes up to
            // the last `\n` before it (their line endings in between, unused).
            let Some(last) = memchr::memrchr(b'\n', &input[i..c]) else {
                if input.get(c) == Some(&b'\r') && input.get(c + 1) == Some(&b'\n') {
                    self.plain_copy(input, i, c, c + 2, Eol::CrLf);
                    i = c + 2;
                    continue;
                }
                break;
            };
            let end = i + last + 1;
            let buf = self.out.buf.to_mut();
            let at = buf.len();
            buf.extend_from_slice(&input[i..end]);
            let mut start = i;
            // A mask of each 32-byte block, bit by bit: a search call per line costs
            // more on lines a few dozen bytes long.
            for p in crate::text::Newlines::new(&input[i..end]) {
                let p = i + p;
                self.out.lines.push(Line {
                    start: at + (start - i),
                    end: at + (p - i),
                    eol: Eol::Lf,
                    src_first: self.line_no,
                    src_last: self.line_no,
                    marker: None,
                });
                self.line_no = self.line_no.saturating_add(1);
                start = p + 1;
            }
            i = end;
            if input.get(c) == Some(&b'\r') && input.get(c + 1) == Some(&b'\n') {
                self.plain_copy(input, i, c, c + 2, Eol::CrLf);
                i = c + 2;
                continue;
            }
            break;
        }
        // The lines passed: the cursor's fresh row is the next line's.
        let passed = (self.line_no - line_no) as usize;
        self.cur += passed;
        self.base += passed;
        let row = &mut self.rows[0];
        row.src_first = self.line_no;
        row.src_last = self.line_no;
        i
    }

    /// One line of [`Term::plain_lines`], `input[a..b]` ending at `next` with `eol`.
    fn plain_copy(&mut self, input: &[u8], a: usize, b: usize, _next: usize, eol: Eol) {
        let buf = self.out.buf.to_mut();
        let start = buf.len();
        buf.extend_from_slice(&input[a..b]);
        self.out.lines.push(Line {
            start,
            end: buf.len(),
            eol,
            src_first: self.line_no,
            src_last: self.line_no,
            marker: None,
        });
        self.line_no = self.line_no.saturating_add(1);
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
                    let pad = c - w;
                    self.padded = self.padded.saturating_add(pad as u64);
                    if self.padded > self.pad_limit {
                        self.gave_up = true;
                        return;
                    }
                    let row = self.row();
                    row.text.extend(std::iter::repeat_n(b' ', pad));
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
            if erases(&row.text, &p.prev) {
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
                aside: true,
            };
            row.src_first = src;
            let at = self.cur - self.base;
            self.rows.insert(at, kept);
            // Absolute rows at or below the insertion move down with their text.
            let cur = self.cur;
            self.cur += 1;
            if self.floor >= cur {
                self.floor += 1;
            }
            if let Some((r, _)) = self.saved.as_mut().filter(|(r, _)| *r >= cur) {
                *r += 1;
            }
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
        self.cur = self.screen_down(1).0;
        if self.cur - self.base == self.rows.len() {
            self.push_row();
        }
        self.col = if self.rows[self.cur - self.base].text.is_empty() {
            None
        } else {
            self.frame_origin = true;
            Some(0)
        };
        // Rows above the cursor that it can still reach are held back.
        let reach = if self.forward { 0 } else { WINDOW };
        while self.cur - self.base > reach {
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
        // The row after a final newline is a phantom unless something was written to
        // it, and so are empty rows a cursor move down added after it.
        let mut rows = std::mem::take(&mut self.rows);
        let phantom = |r: &Row| r.text.is_empty() && r.eol.is_none() && !r.aside;
        while rows.len() > 1 && rows.iter().rev().take(2).all(phantom) {
            rows.pop_back();
        }
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
        // ESC [ params intermediates final, measured by the one escape lexer: a
        // sequence without its final byte (unterminated, or malformed) is dropped as
        // far as it was read, and the next byte is text.
        let len = crate::escape::escape_len(s);
        let fin = s[len - 1];
        if len <= 2 || !crate::escape::is_csi_final(fin) {
            return len;
        }
        let params = &s[2..len - 1];
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
                self.cur = self.screen_up(n);
                self.col = Some(col);
                self.frame_origin = fin == b'F';
                self.dirty = true;
            }
            b'B' | b'E' => {
                self.resolve();
                let n = p(0, 1);
                let col = if fin == b'E' { 0 } else { self.cur_col() };
                self.leave_status();
                self.move_down(n);
                if self.gave_up {
                    return len;
                }
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
                self.move_to_row(p(0, 1) as u32);
                self.col = Some(p(1, 1) - 1);
                self.frame_origin = false;
                self.dirty = true;
            }
            b'd' => {
                self.resolve();
                self.move_to_row(p(0, 1) as u32);
                self.dirty = true;
            }
            b'K' => {
                let mode = if params.is_empty() {
                    0
                } else {
                    p(0, 0).min(2) as u8
                };
                self.drop_erased_frame(mode);
                self.resolve();
                self.erase_line(mode);
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

    /// Adds an empty row after the last one (its buffer from the pool), for the
    /// source line being read.
    fn push_row(&mut self) {
        let mut row = Row::new(self.line_no);
        row.text = self
            .pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(ROW_CAPACITY));
        self.rows.push_back(row);
    }

    /// The row `n` screen rows above the cursor (absolute), not above the window's
    /// first row or [`Term::floor`]; rows kept aside are not screen rows.
    fn screen_up(&self, n: usize) -> usize {
        let top = self.base.max(self.floor);
        let mut r = self.cur;
        let mut left = n;
        while left > 0 && r > top {
            r -= 1;
            if !self.rows[r - self.base].aside {
                left -= 1;
            }
        }
        // Stopped at the top on a row kept aside: the screen row is the next one.
        while self.rows[r - self.base].aside && r < self.cur {
            r += 1;
        }
        r
    }

    /// The row `n` screen rows below the cursor (absolute), stepping over rows kept
    /// aside, and how many of the `n` are left past the last row: then the row is
    /// one past the last (a row to push).
    fn screen_down(&self, n: usize) -> (usize, usize) {
        let end = self.base + self.rows.len();
        let mut r = self.cur;
        let mut left = n;
        while left > 0 && r < end {
            r += 1;
            while r < end && self.rows[r - self.base].aside {
                r += 1;
            }
            left -= 1;
        }
        (r, left)
    }

    /// `ESC[nB` / `ESC[nE`: `n` screen rows down. Past the last row written the
    /// terminal has blank rows: as many empty rows are added (counted as padding, so
    /// the rows added stay bounded per input byte), and text written there does not
    /// go over the last row.
    fn move_down(&mut self, n: usize) {
        let (r, left) = self.screen_down(n);
        let end = self.base + self.rows.len();
        if r >= end {
            let add = r - end + 1 + left;
            self.padded = self.padded.saturating_add(add as u64);
            if self.padded > self.pad_limit {
                self.gave_up = true;
                return;
            }
            for _ in 0..add {
                self.push_row();
            }
        }
        self.cur = (r + left).min(self.base + self.rows.len() - 1);
    }

    fn leave_status(&mut self) {
        self.on_status = None;
    }

    /// Absolute positioning to screen row `r` (1-based; `ESC[r;cH`, `ESC[rd`). With a
    /// saved position to come back to (`ESC 7` … `ESC[r;cf` … `ESC 8`, as apt draws its
    /// `Progress:` line), row `r` is a status row, shown at the end while it is still on
    /// screen. Without one (`clear`'s `ESC[H`, a program placing its text), the screen's
    /// size and what is on it are unknown: what follows is written on a row of its own
    /// after all the text written so far, and cursor moves up stop at that row, so
    /// every piece of text stays, in the order it was written.
    fn move_to_row(&mut self, r: u32) {
        if self.saved.is_some() {
            self.on_status = Some(r);
            return;
        }
        self.leave_status();
        // After everything written so far (not after the cursor's row: the cursor may
        // have gone up), on the last row if it is empty, else on a new one.
        self.cur = self.base + self.rows.len() - 1;
        if !self.rows[self.cur - self.base].text.is_empty() {
            self.push_row();
            self.cur += 1;
        }
        // Where the rows above now are on the screen is unknown: a cursor move up
        // stops here instead of erasing or overwriting them.
        self.floor = self.cur;
    }

    /// Before `ESC[K` (`mode` 0) or `ESC[2K` (2): a frame drawn over an older one that
    /// this erase wipes off the row (to the end from within the new frame's text, or
    /// the whole row) leaves nothing of the older frame on a terminal, so the older
    /// frame is removed instead of kept on a line of its own.
    fn drop_erased_frame(&mut self, mode: u8) {
        if self.pending.is_none() {
            return;
        }
        let w = width(&self.rows[self.cur - self.base].text);
        if mode == 2 || (mode == 0 && self.col.is_none_or(|c| c <= w)) {
            if let Some(p) = self.pending.take() {
                if !is_blank(&p.prev) {
                    self.frames_removed += 1;
                }
                self.recycle(p.prev);
            }
        }
    }

    /// `ESC[K` (mode 0: to the end), `ESC[1K` (to the start), `ESC[2K` (whole row).
    fn erase_line(&mut self, mode: u8) {
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
                // The cursor stays in its column: at the end of the text, that is the
                // text's width (what is written next starts there, after blanks).
                let at_end = col.is_none().then(|| width(&row.text));
                row.text.clear();
                row.erased = true;
                dirty = true;
                if let Some(w) = at_end.filter(|&w| w > 0) {
                    self.col = Some(w);
                }
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
        self.erase_line(0);
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

/// Whether an escape of `input` can take the cursor back to a row it left: cursor up
/// (`ESC[nA`, `ESC[nF`), absolute positioning (`ESC[r;cH`, `ESC[r;cf`, `ESC[rd`: status
/// rows) or restoring a saved position (`ESC 8`, `ESC[u`). Looks at every ESC byte (a
/// superset of the escapes [`Term::run`] reads), by its final byte whatever its
/// parameters: when in doubt, yes.
fn reaches_back(input: &[u8]) -> bool {
    memchr::memchr_iter(0x1b, input).any(|i| {
        let s = &input[i..];
        match s.get(1) {
            Some(b'8') => true,
            // A CSI's length is its parameter bytes (no ESC among them): each byte of
            // the input is read by one escape at most.
            Some(b'[') => {
                let n = crate::escape::escape_len(s);
                n > 2 && matches!(s[n - 1], b'A' | b'F' | b'H' | b'f' | b'd' | b'u')
            }
            _ => false,
        }
    })
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
pub(super) fn width(b: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The emulator's `forward` mode (rows committed as the cursor leaves them, plain
    /// lines copied through) renders exactly what the full emulator renders, on every
    /// input that cannot take the cursor back: random mixes of text, line endings,
    /// `\r` frames, backspaces and the escapes that stay on the row (colours, erases,
    /// moves along the row, saving the cursor), with runs of plain lines longer than
    /// the rows the full emulator holds back, and the corpus captures.
    #[test]
    fn forward_mode_renders_as_the_full_emulator() {
        fn same(input: &[u8]) -> bool {
            if reaches_back(input) {
                return false;
            }
            let bs = memchr::memchr(0x08, input).is_some();
            let fast = render_term_as(input, 3, true, None, bs);
            let full = render_term_as(input, 3, false, Some((b"stale".to_vec(), Vec::new())), bs);
            let show = |r: &Option<Rendered<'static>>| {
                r.as_ref().map(|r| {
                    let lines: Vec<_> = r
                        .doc
                        .lines
                        .iter()
                        .map(|l| (r.doc.text(l).to_vec(), l.eol, l.src_first, l.src_last))
                        .collect();
                    let counts = (r.frames_removed, r.backspaces_removed, r.escapes_removed);
                    (lines, counts)
                })
            };
            assert_eq!(
                show(&fast),
                show(&full),
                "{:?}",
                String::from_utf8_lossy(input)
            );
            true
        }
        let alphabet: [&[u8]; 24] = [
            b"word",
            b" ",
            b"  ",
            b"5%",
            b"get 1",
            b"\n",
            b"\n",
            b"\n",
            b"\r\n",
            b"\r",
            b"\r",
            b"\x08",
            b"\x1b[1;31m",
            b"\x1b[0m",
            b"\x1b[K",
            b"\x1b[2K",
            b"\x1b[1K",
            b"\x1b[1G",
            b"\x1b[3C",
            b"\x1b[2D",
            b"\x1b7",
            b"\x1b[J",
            b"\x1b[B",
            "日".as_bytes(),
        ];
        let mut next = crate::text::splitmix(0x0005_eed7);
        let mut compared = 0;
        for _ in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(next() % 40) {
                if next().is_multiple_of(50) {
                    // Plain lines past the rows the full emulator holds back.
                    for k in 0..(WINDOW as u64 + next() % 64) {
                        input.extend_from_slice(format!("plain {k}\n").as_bytes());
                    }
                } else {
                    input.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
            }
            compared += u64::from(same(&input));
        }
        assert!(compared > 19_000, "{compared}");
        let captures = crate::text::corpus_captures();
        let forward = captures.iter().filter(|c| same(c)).count();
        assert!(forward >= 5, "{forward}");
    }

    /// What takes the cursor back to a row it left, and what does not.
    #[test]
    fn reaching_back() {
        for yes in [
            &b"a\n\x1b[1Ab"[..],
            b"\x1b[F",
            b"\x1b[2;1H",
            b"\x1b[5f",
            b"\x1b[3d",
            b"\x1b8",
            b"\x1b[u",
        ] {
            assert!(reaches_back(yes), "{yes:?}");
        }
        for no in [
            &b"plain\n"[..],
            b"\x1b[1;31mred\x1b[0m",
            b"\x1b[2K\r",
            b"\x1b[10G",
            b"\x1b[3C\x1b[2D",
            b"\x1b7",
            b"\x1b[s",
            b"\x1b[J",
            b"\x1b]8;;http://x\x1b\\",
        ] {
            assert!(!reaches_back(no), "{no:?}");
        }
    }
}
