//! `head-tail-elide` — over the budget, keep the head, the tail and the salient
//! lines of the middle.
//!
//! **What it does.** Keeps whole lines from the start up to `head_bytes` and from the
//! end up to `tail_bytes` (a single line longer than that is cut on a UTF-8 boundary).
//! In the middle it keeps *islands*: lines that name an error, failure, panic,
//! exception or fatal condition (and, with lower priority, warnings), each with
//! `salient_context` lines around it, within `salient_bytes` in all. Every gap becomes
//! one marker with the original line numbers (1-based, inclusive), byte offsets
//! (0-based, half-open) and a restore call.
//!
//! **Why.** The one failing test in 2,000, the error in an 8,000-line build log, sits
//! in the middle that naive truncation drops.
//!
//! **Example.** A 300 KB log with `error[E0308]: mismatched types` at line 4,000 →
//! head, `[snip: 3998 lines (150230 bytes) elided · head-tail-elide · lines 201-4198 · …]`,
//! the error line with one line of context, another marker, the tail.
//!
//! **Options.** `SNIP_HEAD_BYTES`, `SNIP_TAIL_BYTES`, `SNIP_SALIENT_BYTES`,
//! `SNIP_SALIENT_CONTEXT`. Lossy: only above the budget and with a retained original
//! (or the store turned off). The result is at most `max_bytes` long.

use crate::doc::{Doc, Eol, Form, Line, RawIndex, SECTION_LINES, SIZING_ID};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::RuleId;
use crate::salience::{each_salient, salient_matches, shape, ISLAND_LINE_MAX};
use crate::Config;
use crate::RuleReport;

mod budget;
pub(crate) use budget::{pass, within_budget};

/// Island priority of a traceback's last line, above every salient word's.
const EXCEPTION_PRIORITY: u8 = 4;

/// The exception name `t` starts with, when it reads as a traceback's last line:
/// `ValueError: …` or `pkg.mod.SomeException` (a name ending in `Error`, `Exception`,
/// `Interrupt` or `Exit`, then `:` or nothing).
fn exception_name(t: &[u8]) -> Option<&[u8]> {
    let name = &t[..t.iter().position(|&c| c == b':').unwrap_or(t.len())];
    let named = name.first().is_some_and(u8::is_ascii_alphabetic)
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        && [&b"Error"[..], b"Exception", b"Interrupt", b"Exit"]
            .iter()
            .any(|e| name.ends_with(e));
    named.then_some(name)
}

/// Whether `t` ends a traceback: an exception line (see [`exception_name`]) right
/// after an indented line (a frame or its code).
fn ends_traceback(t: &[u8], prev: Option<&[u8]>) -> bool {
    prev.is_some_and(|p| matches!(p.first(), Some(b' ' | b'\t'))) && exception_name(t).is_some()
}

/// Whether `t` heads a trace whose frames follow it (JVM, Node: `pkg.SomeException:
/// …` or `Caused by: pkg.SomeException: …`, then indented `at …` frames): the
/// exception line of a header-first trace, which names the cause as a traceback's
/// last line does in Python. `next` holds the lines after `t` (markers excluded, at
/// most [`HEAD_FRAME_WITHIN`] read): a frame (`at `) must come before any line that is
/// not indented (indented lines such as PostgreSQL's `  Detail: …` may come first).
fn heads_trace<'a>(t: &[u8], next: impl Iterator<Item = &'a [u8]>) -> bool {
    let t = t.strip_prefix(b"Caused by: ").unwrap_or(t);
    if exception_name(t).is_none() {
        return false;
    }
    for n in next.take(HEAD_FRAME_WITHIN) {
        let indent = n.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
        if indent == 0 {
            return false;
        }
        if n[indent..].starts_with(b"at ") {
            return true;
        }
    }
    false
}

/// Lines read after an exception line for its first frame ([`heads_trace`]).
const HEAD_FRAME_WITHIN: usize = 4;

/// Whether the exception line `t`, shown on `row`, was printed right after an indented
/// line, whatever the rendering left on the row above it: a cursor move, a `\r` redraw
/// or a restored cursor position may have written other text over the frame's row.
/// The row shows writes of original lines `src_first..=src_last`; the last few of
/// them are searched for the one that printed the exception's name, and the line
/// printed before that one is read as the tool wrote it (escapes removed): indented
/// in any of its `\r` frames.
fn printed_after_frame(t: &[u8], row: &Line, raw: &RawIndex) -> bool {
    let Some(name) = exception_name(t) else {
        return false;
    };
    let printed = |k: u32| crate::escape::strip(raw.line(k));
    let lo = row.src_first.max(row.src_last.saturating_sub(8));
    let Some(k) = (lo..=row.src_last)
        .rev()
        .find(|&k| memchr::memmem::find(&printed(k), name).is_some())
    else {
        return false;
    };
    k > 0
        && printed(k - 1)
            .split(|&c| c == b'\r')
            .any(|f| matches!(f.first(), Some(b' ' | b'\t')) && !f.trim_ascii().is_empty())
}

/// A gap whose lines take fewer bytes than this (ends included) is shown, not elided:
/// a gap marker with its restore call takes 160 bytes or more (`[snip: 2 lines (9
/// bytes) elided · head-tail-elide · lines 2-3 · bytes 2-11 · restore: …]` is 167).
const SMALL_GAP: usize = 120;

/// Elides the middle of `doc`; `false` when there is no middle to elide. What was
/// elided is in the markers it adds (their `lines` and `bytes`).
pub(crate) fn apply(doc: &mut Doc<'_>, config: &Config, raw: &RawIndex, raw_offsets: bool) -> bool {
    let src = std::mem::take(&mut doc.lines);
    let done = apply_from(doc, &src, config, raw, raw_offsets, true);
    if !done {
        doc.lines = src;
    }
    done
}

/// [`apply`] with the document's lines given apart (`doc.lines` is ignored and, when
/// the rule applies, replaced): callers that try several budgets keep one copy of
/// the lines instead of cloning them for each trial. Without `cut_lines` the head and
/// tail end on whole lines (JSON Lines, where a cut line is no document).
pub(crate) fn apply_from(
    doc: &mut Doc<'_>,
    src: &[Line],
    config: &Config,
    raw: &RawIndex,
    raw_offsets: bool,
    cut_lines: bool,
) -> bool {
    if src.is_empty() {
        return false;
    }
    let eol = crate::doc::dominant_eol(src);
    let markers_before = doc.markers.len();
    let mut cfg = config.clone();
    loop {
        let head = head(doc, src, &cfg, eol, cut_lines);
        let tail = tail(doc, src, &cfg, eol, cut_lines, &head);
        let Some(mid) = middle(src, &head, &tail) else {
            return false;
        };
        let (middle, cut, cands) = candidates(doc, mid, &head, &tail, cut_lines, eol, raw);
        let (mut keep, used, forced) = islands(doc, &middle, &cut, &cands, &cfg);
        exception_frames(doc, &middle, &cut, &cands, &mut keep, used, &cfg);
        let parts = Parts {
            src,
            head: &head,
            tail: &tail,
            middle: &middle,
            cut: &cut,
            cands: &cands,
            forced,
            eol,
        };
        let Some(excess) = build_and_shrink(doc, &parts, keep, &cfg, raw, raw_offsets) else {
            return true;
        };
        // Over the budget with only the last traceback end kept in the middle: it
        // stays, and the head and tail give up the room it takes.
        if cfg.head_bytes == 0 && cfg.tail_bytes == 0 {
            return true;
        }
        let less = excess.div_ceil(2) + 64;
        cfg.head_bytes = cfg.head_bytes.saturating_sub(less);
        cfg.tail_bytes = cfg.tail_bytes.saturating_sub(less);
        doc.markers.truncate(markers_before);
    }
}

/// The head: whole lines `src[..h]`, then possibly a cut line (`cut`) whose rest
/// (`rest`) starts the middle.
struct Head {
    h: usize,
    cut: Option<Line>,
    rest: Option<Line>,
}

/// The tail: possibly a cut line (`cut`) whose start (`rest`) ends the middle, then
/// whole lines `src[t..]`.
struct Tail {
    t: usize,
    cut: Option<Line>,
    rest: Option<Line>,
}

/// What the build needs of the other phases.
struct Parts<'a> {
    src: &'a [Line],
    head: &'a Head,
    tail: &'a Tail,
    middle: &'a [Line],
    cut: &'a [bool],
    cands: &'a [Cand],
    forced: Option<usize>,
    eol: Eol,
}

/// Phase 1: whole lines from the start up to `head_bytes`, then possibly a cut line.
fn head(doc: &Doc<'_>, src: &[Line], config: &Config, eol: Eol, cut_lines: bool) -> Head {
    let n = src.len();
    let eol_len = eol.bytes().len();
    let mut acc = 0;
    let mut h = 0;
    while h < n {
        let s = doc.line_size(&src[h]);
        if acc + s > config.head_bytes {
            break;
        }
        acc += s;
        h += 1;
    }
    let mut head_cut: Option<Line> = None;
    let mut mid_first: Option<Line> = None;
    if cut_lines && h < n && src[h].marker.is_none() && config.head_bytes.saturating_sub(acc) > 256
    {
        let l = src[h];
        let want = config.head_bytes - acc - eol_len;
        let cut = l.start + crate::text::floor_char_boundary(&doc.buf[l.start..l.end], want);
        if cut > l.start && cut < l.end {
            head_cut = Some(Line { end: cut, eol, ..l });
            mid_first = Some(Line { start: cut, ..l });
        }
    }
    if head_cut.is_none() && lone_header(doc, src, h) {
        h -= 1;
    }
    Head {
        h,
        cut: head_cut,
        rest: mid_first,
    }
}

/// Whether a head of lines `src[..h]` ends on a section's header alone (after a blank
/// line, its indented body elided): that header is left to the middle, so the head
/// does not show a file name with nothing under it.
fn lone_header(doc: &Doc<'_>, src: &[Line], h: usize) -> bool {
    let form = |k: usize| doc.form(&src[k]);
    h >= 2
        && h < src.len()
        && form(h - 1) == Some(Form::Header)
        && form(h - 2) == Some(Form::Blank)
        && form(h) == Some(Form::Indented)
}

/// The header of the section whose indented body holds line `a` of `middle`: the
/// header line above `a` with only indented lines between them, at most
/// [`SECTION_LINES`] lines up; `None` when `a` is not indented or there is none.
fn island_header(doc: &Doc<'_>, middle: &[Line], a: usize) -> Option<usize> {
    if doc.form(&middle[a]) != Some(Form::Indented) {
        return None;
    }
    for k in (a.saturating_sub(SECTION_LINES)..a).rev() {
        match doc.form(&middle[k]) {
            Some(Form::Indented) => {}
            Some(Form::Header) => return Some(k),
            _ => return None,
        }
    }
    None
}

/// Where a tail starting at line `t` of `src` starts instead when `t` is inside a
/// section's indented body whose header is elided (a linter's warnings whose file name
/// is in the middle): at the next section's header (after a blank line, at most
/// [`SECTION_LINES`] lines on), the body's last lines going to the middle, so no
/// line of the tail reads as belonging to the header shown before the gap. `t` when
/// there is no such header, or when the line before `t` is blank or a marker.
fn section_tail(doc: &Doc<'_>, src: &[Line], t: usize) -> usize {
    let n = src.len();
    let form = |k: usize| doc.form(&src[k]);
    let inside = |k: usize| matches!(form(k), Some(Form::Indented | Form::Header));
    if t == 0 || t >= n || form(t) != Some(Form::Indented) || !inside(t - 1) {
        return t;
    }
    let mut j = t;
    while j < n.min(t + SECTION_LINES) && form(j) == Some(Form::Indented) {
        j += 1;
    }
    if j + 1 < n && form(j) == Some(Form::Blank) && form(j + 1) == Some(Form::Header) {
        j + 1
    } else {
        t
    }
}

/// Phase 2: possibly a cut line, then whole lines from the end up to `tail_bytes`,
/// not crossing the head.
fn tail(
    doc: &Doc<'_>,
    src: &[Line],
    config: &Config,
    eol: Eol,
    cut_lines: bool,
    head: &Head,
) -> Tail {
    let n = src.len();
    let eol_len = eol.bytes().len();
    let h = head.h;
    let lo = h + usize::from(head.rest.is_some());
    let mut tail_cut: Option<Line> = None;
    let mut acc = 0;
    let mut t = n;
    while t > lo {
        let s = doc.line_size(&src[t - 1]);
        if acc + s > config.tail_bytes {
            break;
        }
        acc += s;
        t -= 1;
    }
    let mut mid_last: Option<Line> = None;
    let room = config.tail_bytes.saturating_sub(acc);
    if cut_lines && t > h && src[t - 1].marker.is_none() && room > 256 {
        let l = match (t - 1 == h, head.rest) {
            (true, Some(m)) => m,
            _ => src[t - 1],
        };
        let want = room - eol_len;
        let len = l.end - l.start;
        if len > want {
            let cut =
                l.start + crate::text::ceil_char_boundary(&doc.buf[l.start..l.end], len - want);
            if cut > l.start && cut < l.end {
                tail_cut = Some(Line { start: cut, ..l });
                mid_last = Some(Line {
                    end: cut,
                    eol: Eol::None,
                    ..l
                });
            }
        }
    }
    if tail_cut.is_none() {
        t = section_tail(doc, src, t);
    }
    Tail {
        t,
        cut: tail_cut,
        rest: mid_last,
    }
}

/// Phase 3: the middle, as lines (with the cut pieces); `None` when it is empty.
fn middle(src: &[Line], head: &Head, tail: &Tail) -> Option<Vec<Line>> {
    let (mid_first, mid_last, t) = (head.rest, tail.rest, tail.t);
    let whole_from = head.h + usize::from(mid_first.is_some());
    let whole_to = if mid_last.is_some() { t - 1 } else { t };
    let mut middle: Vec<Line> = Vec::with_capacity(whole_to.saturating_sub(whole_from) + 2);
    if let Some(m) = mid_first {
        if let (Some(ml), true) = (mid_last, whole_to < whole_from) {
            // One line cut at both ends: the tail's cut ends it, inside the line
            // (no line ending of its own).
            middle.push(Line {
                end: ml.end,
                eol: ml.eol,
                ..m
            });
        } else {
            middle.push(m);
        }
    }
    if whole_to > whole_from {
        middle.extend_from_slice(&src[whole_from..whole_to]);
    }
    if let Some(ml) = mid_last {
        if !(mid_first.is_some() && whole_to < whole_from) {
            middle.push(ml);
        }
    }
    (!middle.is_empty()).then_some(middle)
}

/// Phase 4: the salient candidates of the middle, best first, with the middle's long
/// candidate lines split around the window an island shows of them, and which lines
/// of the middle are pieces of a line (`cut`).
fn candidates(
    doc: &Doc<'_>,
    mut middle: Vec<Line>,
    head: &Head,
    tail: &Tail,
    cut_lines: bool,
    eol: Eol,
    raw: &RawIndex,
) -> (Vec<Line>, Vec<bool>, Vec<Cand>) {
    // Salient candidates in the middle, as (priority, line, offset of the first word
    // of that priority): one scan over the middle's bytes (lines are in buffer order),
    // matches mapped back to lines.
    let mut cands: Vec<Cand> = Vec::new();
    let mut text_lines: Vec<usize> = Vec::with_capacity(middle.len());
    text_lines.extend(
        (0..middle.len())
            .filter(|&i| middle[i].marker.is_none() && middle[i].end > middle[i].start),
    );
    let ordered = text_lines
        .windows(2)
        .all(|w| middle[w[0]].end <= middle[w[1]].start);
    if ordered && !text_lines.is_empty() {
        let lo = middle[text_lines[0]].start;
        let hi = middle[*text_lines.last().expect("non-empty")].end;
        let mut k = 0usize;
        let mut best: Option<Cand> = None;
        for (at, s) in salient_matches(&doc.buf[lo..hi]) {
            let at = lo + at;
            while k < text_lines.len() && middle[text_lines[k]].end <= at {
                k += 1;
            }
            let Some(&i) = text_lines.get(k) else { break };
            if at < middle[i].start {
                continue; // in a gap between lines (a line ending)
            }
            match best {
                Some((bs, bi, _)) if bi == i => {
                    if s > bs {
                        best = Some((s, i, at));
                    }
                }
                Some(b) => {
                    cands.push(b);
                    best = Some((s, i, at));
                }
                None => best = Some((s, i, at)),
            }
        }
        cands.extend(best);
    } else {
        for (i, l) in middle.iter().enumerate() {
            if l.marker.is_some() {
                continue;
            }
            let mut best: Option<Cand> = None;
            each_salient(&doc.buf[l.start..l.end], |at, s| {
                if best.is_none_or(|b| s > b.0) {
                    best = Some((s, i, l.start + at));
                }
            });
            cands.extend(best);
        }
    }
    // Rare rows of a status column (a `CrashLoopBackOff` among `Running` rows): as
    // salient as an error word, unless a word already made them candidates.
    let rare = crate::rare_rows::rare_rows(&doc.buf, &middle);
    if !rare.is_empty() {
        let mut have: Vec<usize> = cands.iter().map(|c| c.1).collect();
        have.sort_unstable();
        for k in rare {
            if have.binary_search(&k).is_err() {
                cands.push((crate::rare_rows::RARE_PRIORITY, k, middle[k].start));
            }
        }
    }
    // Pieces of lines (`cut`): the rest of a line the head or tail cut, and the parts
    // of a long salient line around the window an island shows of it. A piece is
    // never kept as context: shown on a line of its own it would split its line.
    let mut cut = vec![false; middle.len()];
    if head.rest.is_some() {
        cut[0] = true;
    }
    if tail.rest.is_some() {
        cut[middle.len() - 1] = true;
    }
    if !cut_lines {
        cands.retain(|&(_, i, _)| middle[i].end - middle[i].start <= ISLAND_LINE_MAX);
    } else if cands
        .iter()
        .any(|&(_, i, _)| middle[i].end - middle[i].start > ISLAND_LINE_MAX)
    {
        (middle, cut, cands) = split_long_lines(&doc.buf, &middle, &cut, &cands, eol);
    }
    // The line that names a traceback's exception goes first: with a small island
    // budget, keeping a traceback's frames and losing its cause is the worst choice.
    // It is one when it follows an indented row, or (rendered text, where a redraw may
    // have written over the rows above it) when the tool printed it after one; in a
    // header-first trace (JVM, Node), when its frames follow it (`Caused by: …`).
    for c in &mut cands {
        let l = &middle[c.1];
        let t = &doc.buf[l.start..l.end];
        let prev =
            c.1.checked_sub(1)
                .map(|k| &middle[k])
                .filter(|p| p.marker.is_none())
                .map(|p| &doc.buf[p.start..p.end]);
        let next = middle[c.1 + 1..]
            .iter()
            .take_while(|n| n.marker.is_none())
            .map(|n| &doc.buf[n.start..n.end]);
        if ends_traceback(t, prev) || heads_trace(t, next) || printed_after_frame(t, l, raw) {
            c.0 = EXCEPTION_PRIORITY;
        }
    }
    cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    (middle, cut, cands)
}

/// Whether line `k` of the middle may be shown as an island's context.
fn keepable(middle: &[Line], cut: &[bool], k: usize) -> bool {
    let l = &middle[k];
    l.marker.is_none() && l.end - l.start <= ISLAND_LINE_MAX && !cut[k]
}

/// Phase 5: the islands, each with its context while `salient_bytes` lasts: which
/// lines of the middle are kept, the bytes used, and the line kept whatever the
/// budget (the middle's last traceback end, when there is one).
///
/// The last traceback end comes first, kept even past `salient_bytes`: it is the one
/// line that must always show. Then one line of each shape (digits folded), best
/// first, so distinct lines get room before copies; then the copies, one by one,
/// while the budget lasts. Salient lines that get no room are counted in the gap
/// marker that covers them (see [`gap`]).
fn islands(
    doc: &Doc<'_>,
    middle: &[Line],
    cut: &[bool],
    cands: &[Cand],
    config: &Config,
) -> (Vec<bool>, usize, Option<usize>) {
    let marker_cost = 200 + SIZING_ID.len();
    let ctx = config.salient_context;
    let mut keep = vec![false; middle.len()];
    let mut used = 0usize;
    // Keeps the island of line `i` (with context if that fits, else alone) if it fits
    // in `salient_bytes` or `force`; whether it was kept.
    let mut place = |keep: &mut [bool], i: usize, force: bool| -> bool {
        let shown = |k: usize| k == i || keepable(middle, cut, k);
        let cost_of = |keep: &[bool], a: usize, b: usize| -> usize {
            (a..=b)
                .filter(|&k| !keep[k] && shown(k))
                .map(|k| doc.line_size(&middle[k]))
                .sum::<usize>()
                + marker_cost
        };
        let (mut a, mut b) = (
            i.saturating_sub(ctx),
            i.saturating_add(ctx).min(middle.len() - 1),
        );
        let mut cost = cost_of(keep, a, b);
        if used + cost > config.salient_bytes {
            // No room for its context: the line alone, if that fits.
            (a, b) = (i, i);
            cost = cost_of(keep, i, i);
            if used + cost > config.salient_bytes && !force {
                return false;
            }
        }
        for (k, slot) in keep.iter_mut().enumerate().take(b + 1).skip(a) {
            *slot |= shown(k);
        }
        used += cost;
        true
    };
    let forced = cands
        .iter()
        .filter(|c| c.0 == EXCEPTION_PRIORITY)
        .map(|c| c.1)
        .max();
    let mut seen: Vec<u64> = Vec::new();
    if let Some(f) = forced {
        place(&mut keep, f, true);
        seen.push(shape(&doc.buf[middle[f].start..middle[f].end]));
    }
    let mut copies: Vec<usize> = Vec::new();
    for &(_, i, _) in cands {
        if keep[i] {
            continue;
        }
        let key = shape(&doc.buf[middle[i].start..middle[i].end]);
        if seen.contains(&key) {
            copies.push(i);
            continue;
        }
        if place(&mut keep, i, false) && seen.len() < 256 {
            seen.push(key);
        }
    }
    for i in copies {
        if !keep[i] {
            place(&mut keep, i, false);
        }
    }
    // With room left once every island that fits is placed, an island inside a
    // section's indented body shows the section's header too (a linter's file name
    // over the warning), best island first, so it is not read as part of the section
    // shown before it.
    for &(_, i, _) in cands {
        if !keep[i] {
            continue;
        }
        let mut a = i;
        while a > 0 && keep[a - 1] {
            a -= 1;
        }
        let Some(h) = island_header(doc, middle, a) else {
            continue;
        };
        let cost = doc.line_size(&middle[h]) + if h + 1 < a { marker_cost } else { 0 };
        if !keep[h] && keepable(middle, cut, h) && used + cost <= config.salient_bytes {
            keep[h] = true;
            used += cost;
        }
    }
    (keep, used, forced)
}

/// Phase 6: with island bytes left, a kept exception line takes the frames above it
/// (the indented lines `traceback-keep` left at the traceback's end), nearest first:
/// the cause is in the last frames, which a line of context does not show. The
/// exception line of a header-first trace ([`heads_trace`]) takes the frames below it.
fn exception_frames(
    doc: &Doc<'_>,
    middle: &[Line],
    cut: &[bool],
    cands: &[Cand],
    keep: &mut [bool],
    mut used: usize,
    config: &Config,
) {
    let frames_max = config.traceback_tail_frames.saturating_mul(3);
    for &(prio, i, _) in cands {
        if prio != EXCEPTION_PRIORITY || !keep[i] {
            continue;
        }
        let text = |k: usize| &doc.buf[middle[k].start..middle[k].end];
        let next = middle[i + 1..]
            .iter()
            .take_while(|n| n.marker.is_none())
            .map(|n| &doc.buf[n.start..n.end]);
        // A header-first trace's frames are below its exception line, the others'
        // above it; either way from the edge of the island, nearest first.
        let below = heads_trace(text(i), next);
        let mut k = i;
        let step = |k: usize| if below { k + 1 } else { k.wrapping_sub(1) };
        while step(k) < middle.len() && keep[step(k)] {
            k = step(k);
        }
        let mut taken = 0;
        while step(k) < middle.len() && taken < frames_max {
            let n = step(k);
            let indented = matches!(text(n).first(), Some(b' ' | b'\t'));
            let cost = doc.line_size(&middle[n]);
            if keep[n]
                || !keepable(middle, cut, n)
                || !indented
                || used + cost > config.salient_bytes
            {
                break;
            }
            keep[n] = true;
            used += cost;
            taken += 1;
            k = n;
        }
    }
}

/// Phase 7: build head, gaps and islands, tail into `doc`; over the budget (many
/// small islands), drop the last island and build again. The island of the forced
/// line is never dropped: `Some(excess)` when the result is still over the budget
/// by `excess` bytes with only that island left (the result is in `doc` all the
/// same).
fn build_and_shrink(
    doc: &mut Doc<'_>,
    parts: &Parts<'_>,
    mut keep: Vec<bool>,
    config: &Config,
    raw: &RawIndex,
    raw_offsets: bool,
) -> Option<usize> {
    let Parts {
        src,
        head,
        tail,
        middle,
        cut,
        cands,
        forced,
        eol,
    } = *parts;
    let h = head.h;
    let tail_lines = &src[tail.t..];
    // Salient lines worth a count when no island shows them (warnings are not).
    let mut counted: Vec<usize> = cands
        .iter()
        .filter(|c| c.0 >= COUNTED_PRIORITY)
        .map(|c| c.1)
        .collect();
    counted.sort_unstable();
    counted.dedup();
    // The first original line of the next marker line from each middle line on (and
    // of the tail's first marker line): where a gap's marker must stop.
    let is_marker = |l: &Line| l.marker.is_some();
    let tail_next = tail_lines
        .iter()
        .find(|l| is_marker(l))
        .map_or(u32::MAX, |l| l.src_first);
    let mut next_marker = vec![tail_next; middle.len() + 1];
    for k in (0..middle.len()).rev() {
        next_marker[k] = if is_marker(&middle[k]) {
            middle[k].src_first
        } else {
            next_marker[k + 1]
        };
    }
    // One past the last original line a marker line in `lines` names.
    let past_markers = |lines: &[Line], from: u32| {
        lines
            .iter()
            .filter(|l| is_marker(l))
            .fold(from, |f, l| f.max(l.src_last.saturating_add(1)))
    };
    loop {
        // Each kept line, and a marker at most before each and after the last.
        let kept = keep.iter().filter(|&&k| k).count();
        let mut out: Vec<Line> = Vec::with_capacity(h + tail_lines.len() + 2 * kept + 3);
        out.extend_from_slice(&src[..h]);
        out.extend(head.cut);
        let mut floor = past_markers(&out, 0);
        let cap = if raw_offsets {
            Vec::new()
        } else {
            gap_caps(middle, &keep, floor, &next_marker, &past_markers)
        };
        // Where in `out` the rows of gaps no marker could name are (no line was left
        // to name: every line their rows show is named by a marker around them).
        let mut unnamed_rows: Vec<(usize, usize)> = Vec::new();
        let mut gaps = 0usize;
        let mut i = 0;
        while i < middle.len() {
            if keep[i] {
                floor = past_markers(&middle[i..=i], floor);
                join_or_push(&mut out, middle[i]);
                i += 1;
                continue;
            }
            let mut j = i;
            while j < middle.len() && !keep[j] {
                j += 1;
            }
            let lo = counted.partition_point(|&k| k < i);
            let hi = counted.partition_point(|&k| k < j);
            let g = Gap {
                i,
                j,
                salient: &counted[lo..hi],
                room: (
                    floor,
                    next_marker[j]
                        .saturating_sub(1)
                        .min(cap.get(i).copied().unwrap_or(u32::MAX)),
                ),
            };
            if let Some(line) = gap(doc, middle, cut, &g, eol, raw, raw_offsets) {
                floor = floor.max(line.src_last.saturating_add(1));
                let (a, b) = (line.src_first, line.src_last);
                out.push(line);
                gaps += 1;
                if !raw_offsets {
                    // Rows showing a write of a line outside the marker's range (a
                    // line far below rewrote the row, and its range was left to the
                    // gaps after): they follow the marker, and go only if another
                    // marker names those lines (see [`drop_named_rows`]). An earlier
                    // rule's marker line is not shown again: the gap names its range
                    // (see [`gap_caps`]). Nor is a piece of a line (`cut`): an island
                    // or the head or tail shows the rest of that line, and the gap
                    // the piece's line falls to names it whole.
                    let s = out.len();
                    out.extend((i..j).filter(|&k| !cut[k]).map(|k| middle[k]).filter(|l| {
                        l.marker.is_none() && (l.src_first < a || l.src_last.max(l.src_first) > b)
                    }));
                    if out.len() > s {
                        unnamed_rows.push((s, out.len()));
                    }
                }
            } else {
                if !raw_offsets {
                    let (lo, hi) = crate::doc::rows_lines(&middle[i..j]);
                    if lo.max(g.room.0) > hi.min(g.room.1) {
                        unnamed_rows.push((out.len(), out.len() + (j - i)));
                    }
                }
                floor = past_markers(&middle[i..j], floor);
                out.extend_from_slice(&middle[i..j]);
            }
            i = j;
        }
        if let Some(l) = tail.cut {
            join_or_push(&mut out, l);
        }
        out.extend_from_slice(tail_lines);
        if !raw_offsets && !unnamed_rows.is_empty() {
            gaps += elide_head_rows(doc, &mut out, h, &mut unnamed_rows, eol, raw);
        }
        // Whether rows no marker can name are still shown.
        let unnamed = drop_named_rows(doc, &mut out, &unnamed_rows);
        let footer: usize = doc
            .footer
            .iter()
            .map(|m| m.render(Some(SIZING_ID)).len() + 2)
            .sum();
        let size: usize = out.iter().map(|l| doc.line_size(l)).sum::<usize>() + footer;
        // The last island not holding the forced line.
        let mut droppable = None;
        let mut p = keep.len();
        while let Some(e) = keep[..p].iter().rposition(|&k| k) {
            let mut q = e;
            while q > 0 && keep[q - 1] {
                q -= 1;
            }
            if forced.is_some_and(|f| (q..=e).contains(&f)) {
                p = q;
                continue;
            }
            droppable = Some((q, e));
            break;
        }
        let fits = size <= config.max_bytes;
        if !fits
            && droppable.is_none()
            && unnamed
            && config.head_bytes == 0
            && config.tail_bytes == 0
        {
            // Rendered rows no marker can name are shown (they show a line no marker
            // names and no plain head row shows: see [`drop_named_rows`] and
            // [`elide_head_rows`]), and with nothing else left to give up they hold
            // the result over the budget (a second pass would elide them): the forced
            // island goes too, and its rows join the gaps around it, which one marker
            // then names.
            droppable = forced.filter(|&f| keep[f]).map(|f| {
                let (mut q, mut e) = (f, f);
                while q > 0 && keep[q - 1] {
                    q -= 1;
                }
                while e + 1 < keep.len() && keep[e + 1] {
                    e += 1;
                }
                (q, e)
            });
        }
        if fits || droppable.is_none() {
            doc.lines = out;
            return (!fits && forced.is_some_and(|f| keep[f])).then(|| size - config.max_bytes);
        }
        // Over the budget (many small islands): drop the last island and retry.
        if let Some((q, e)) = droppable {
            for slot in keep.iter_mut().take(e + 1).skip(q) {
                *slot = false;
            }
        }
        doc.markers.truncate(doc.markers.len() - gaps);
    }
}

/// On rendered text, the last original line each gap of the middle may name (indexed
/// by the gap's first line; `u32::MAX` for the last gap and for lines that start no
/// gap). A redrawn row holds writes from many original lines, so the
/// rows of a gap may show lines far past those of the gaps after it: a gap naming all
/// of them would leave the later gaps nothing to name, and their rows would be shown
/// past the budget. Each gap, in order, takes the first line it can (past the lines
/// the gaps and marker lines before it take, within its rows' lines, short of the
/// marker lines after it); a gap then names lines only up to the one the next gap
/// takes.
fn gap_caps(
    middle: &[Line],
    keep: &[bool],
    mut floor: u32,
    next_marker: &[u32],
    past_markers: &dyn Fn(&[Line], u32) -> u32,
) -> Vec<u32> {
    let mut firsts: Vec<(usize, u32)> = Vec::new();
    let mut i = 0;
    while i < middle.len() {
        if keep[i] {
            floor = past_markers(&middle[i..=i], floor);
            i += 1;
            continue;
        }
        let mut j = i;
        while j < middle.len() && !keep[j] {
            j += 1;
        }
        let (lo, hi) = crate::doc::rows_lines(&middle[i..j]);
        let a = lo.max(floor);
        if a <= hi.min(next_marker[j].saturating_sub(1)) {
            firsts.push((i, a));
            // The gap names at least every line an earlier rule's marker line among
            // its rows names (that marker line goes with the gap).
            floor = past_markers(&middle[i..j], a.saturating_add(1));
        } else {
            floor = past_markers(&middle[i..j], floor);
        }
        i = j;
    }
    let mut cap = vec![u32::MAX; middle.len()];
    for w in firsts.windows(2) {
        cap[w[0].0] = w[1].1 - 1;
    }
    cap
}

/// The original lines (0-based, inclusive) the markers of `lines` name, merged, in
/// order.
fn named_lines(doc: &Doc<'_>, lines: &[Line]) -> Vec<(u32, u32)> {
    let mut named: Vec<(u32, u32)> = lines
        .iter()
        .filter_map(|l| doc.markers.get(l.marker? as usize)?.lines)
        .map(|(a, b)| (a.saturating_sub(1) as u32, b.saturating_sub(1) as u32))
        .collect();
    named.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(named.len());
    for (a, b) in named {
        match merged.last_mut() {
            Some(m) if a <= m.1.saturating_add(1) => m.1 = m.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Whether every original line row `l` shows writes of is within `named` (merged
/// ranges, see [`named_lines`]).
fn covered(named: &[(u32, u32)], l: &Line) -> bool {
    let (f, e) = (l.src_first, l.src_last.max(l.src_first));
    let k = named.partition_point(|m| m.0 <= f);
    k > 0 && named[k - 1].1 >= e
}

/// When rows of `unnamed` (ranges of `out`, past the head `out[..h]`) show lines no
/// marker names, and the head shows those lines (an early line that draws rows far
/// below also leaves a row of its own at the top), the head rows that show them give
/// way to a marker naming their lines, at their place: the rows below then show
/// only named lines and are dropped with them ([`drop_named_rows`]), and the rest of
/// the head stays. A row with a salient word or an exception name stays. Done only when every marker of `out` still names lines past the
/// one before it; `unnamed` is moved with the rows after the head. Returns the
/// markers added (to `doc` and `out`).
fn elide_head_rows(
    doc: &mut Doc<'_>,
    out: &mut Vec<Line>,
    h: usize,
    unnamed: &mut [(usize, usize)],
    eol: Eol,
    raw: &RawIndex,
) -> usize {
    let named = named_lines(doc, out);
    let mut needed: Vec<(u32, u32)> = Vec::new();
    for &(s, e) in unnamed.iter() {
        for l in &out[s..e] {
            if l.marker.is_none() && !covered(&named, l) {
                needed.push((l.src_first, l.src_last.max(l.src_first)));
            }
        }
    }
    if needed.is_empty() {
        return 0;
    }
    // A head row that names an error or an exception stays, whatever it shows.
    let plain = |l: &Line| {
        let t = &doc.buf[l.start..l.end];
        crate::salience::salience(t) == 0 && exception_name(t).is_none()
    };
    let hits = |l: &Line| {
        l.marker.is_none()
            && plain(l)
            && needed
                .iter()
                .any(|&(a, b)| l.src_first <= b && a <= l.src_last.max(l.src_first))
    };
    // Runs of head rows that show a needed line, and the lines each would name; a
    // run showing only lines an earlier run names stays shown (rows the early line
    // drew into the head, say).
    let mut runs: Vec<(usize, usize, u32, u32)> = Vec::new();
    let mut k = 0;
    while k < h {
        if !hits(&out[k]) {
            k += 1;
            continue;
        }
        let mut e = k;
        while e < h && hits(&out[e]) {
            e += 1;
        }
        let (a, b) = crate::doc::rows_lines(&out[k..e]);
        if runs.last().is_none_or(|r| a > r.3) {
            runs.push((k, e, a, b));
        }
        k = e;
    }
    if runs.is_empty() {
        return 0;
    }
    // Every marker, the new ones at their place, must name lines past the one before.
    let mut last: Option<u32> = None;
    let mut r = 0;
    let mut k = 0;
    while k < out.len() {
        let range = if runs.get(r).is_some_and(|run| run.0 == k) {
            let (_, e, a, b) = runs[r];
            r += 1;
            k = e;
            Some((a, b))
        } else {
            let l = &out[k];
            k += 1;
            l.marker
                .and_then(|m| doc.markers.get(m as usize)?.lines)
                .map(|(a, b)| (a.saturating_sub(1) as u32, b.saturating_sub(1) as u32))
        };
        if let Some((a, b)) = range {
            if last.is_some_and(|p| a <= p) {
                return 0;
            }
            last = Some(b);
        }
    }
    let mut head: Vec<Line> = Vec::with_capacity(h);
    let mut k = 0;
    for &(s, e, a, b) in &runs {
        head.extend_from_slice(&out[k..s]);
        let m = Marker::gap(
            RuleId::HeadTailElide,
            a,
            b,
            raw.bytes(a, b),
            RestoreCall::Lines {
                start: a as u64 + 1,
                end: b as u64 + 1,
            },
        );
        head.push(doc.marker_line(m, eol, a, b));
        k = e;
    }
    head.extend_from_slice(&out[k..h]);
    let shift = h - head.len();
    out.splice(..h, head);
    for seg in unnamed.iter_mut() {
        *seg = (seg.0 - shift, seg.1 - shift);
    }
    runs.len()
}

/// Drops from `out` the rows of `unnamed` (ranges of `out`: rows of gaps no marker
/// could name) that show writes only of original lines the markers of `out` name:
/// those writes are in the markers' restores, with the lines that wrote them (an
/// early line that draws rows far below is elided at its own place, and the rows it
/// drew go with it). Returns whether any such row is still shown (it shows a line no
/// marker names, such as one an island or the head shows).
fn drop_named_rows(doc: &Doc<'_>, out: &mut Vec<Line>, unnamed: &[(usize, usize)]) -> bool {
    if unnamed.is_empty() {
        return false;
    }
    let named = named_lines(doc, out);
    let mut shown = false;
    let mut drop = vec![false; out.len()];
    for &(s, e) in unnamed {
        for (k, l) in out.iter().enumerate().take(e).skip(s) {
            if l.marker.is_some() {
                continue;
            }
            if covered(&named, l) {
                drop[k] = true;
            } else {
                shown = true;
            }
        }
    }
    let mut k = 0;
    out.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
    shown
}

/// Salient lines of this priority or above that no island shows are counted, with
/// their line numbers, in the marker of the gap that holds them (warnings are not).
const COUNTED_PRIORITY: u8 = 2;

/// Line numbers a gap marker names of the salient lines it holds; the rest are
/// counted only.
pub(crate) const COUNTED_LINES: usize = 4;

/// What a gap marker adds for the `n` salient lines it holds, `at` the first of their
/// line numbers (1-based; only the first [`COUNTED_LINES`] are named):
/// `, 3 salient lines among them at 12, 40, 97`.
pub(crate) fn salient_note(n: u64, at: &[u64]) -> String {
    let named: Vec<String> = at.iter().take(COUNTED_LINES).map(u64::to_string).collect();
    let more = if n > named.len() as u64 { ", …" } else { "" };
    let word = if n == 1 { "line" } else { "lines" };
    format!(
        ", {n} salient {word} among them at {}{more}",
        named.join(", ")
    )
}

/// One gap of the middle: lines `i..j`, and the salient lines among them
/// (indices in the middle, ascending).
struct Gap<'a> {
    i: usize,
    j: usize,
    salient: &'a [usize],
    /// Original lines (0-based, inclusive) the gap's marker may name: past the
    /// markers before it, short of the markers after it. On rendered text a redrawn
    /// row holds writes from many original lines, so neighbouring rows' line ranges
    /// interleave; two gaps taking their rows' whole ranges would overlap, and one
    /// could leave the next none (the end is short of the line the next gap takes,
    /// see [`gap_caps`]).
    room: (u32, u32),
}

/// Pushes `l` onto `out`, or, when it continues the last line of `out` (a piece of
/// the same original line that ends where `l` starts, such as the head's cut piece
/// and an island window after it), extends that line: pieces of one line with no
/// marker between them print as one line.
fn join_or_push(out: &mut Vec<Line>, l: Line) {
    if let Some(p) = out.last_mut() {
        let same_line = p.src_first == l.src_first && p.src_last == l.src_last;
        if same_line && p.marker.is_none() && l.marker.is_none() && p.end == l.start {
            p.end = l.end;
            p.eol = l.eol;
            return;
        }
    }
    out.push(l);
}

/// The marker line for the gap `middle[i..j]` (added to `doc`'s markers), or `None`
/// when the gap is a few short whole lines, cheaper shown than marked.
/// On rendered text, the original byte range (0-based, half-open) of a gap over the
/// lines `lines` whose first and last may be pieces of a line (`cut`: a head's or an
/// island's rest, which runs to its line's end; a tail's or an island's start, which
/// starts at its line's start), given `whole`, the range of their whole lines. A
/// piece's place in its original line is read from the line's bytes when they are the
/// piece's line as shown (one original line, no escape, carriage return or backspace
/// in it, so the lossless rules left it as it was): a gap's first piece ends its line,
/// its last piece starts its line, and a lone piece is one or the other when its bytes
/// say which. Elsewhere the whole line stays in the range (a restore of it then
/// returns bytes also shown, never fewer than elided).
fn cut_offsets(
    doc: &Doc<'_>,
    raw: &RawIndex,
    lines: &[Line],
    (first_cut, last_cut): (bool, bool),
    whole: (u64, u64),
) -> (u64, u64) {
    let (mut s, mut e) = whole;
    // The piece's text, its original line's bytes and where that line starts, when
    // the line is as shown.
    let verbatim = |l: &Line| {
        let k = l.src_first;
        let orig = raw.line(k);
        let plain = l.marker.is_none()
            && l.src_last == k
            && !orig.iter().any(|&c| matches!(c, 0x1b | b'\r' | 0x08));
        plain.then(|| (&doc.buf[l.start..l.end], orig, raw.bytes(k, k).0))
    };
    let (first, last) = (&lines[0], &lines[lines.len() - 1]);
    if lines.len() == 1 && first_cut {
        if let Some((piece, orig, at)) = verbatim(first) {
            let prefix = orig.starts_with(piece);
            let suffix = orig.ends_with(piece);
            if prefix && !suffix {
                e = at + piece.len() as u64;
            } else if suffix && !prefix {
                s = at + (orig.len() - piece.len()) as u64;
            }
        }
        return (s, e.max(s));
    }
    if first_cut {
        if let Some((piece, orig, at)) = verbatim(first).filter(|(p, o, _)| o.ends_with(p)) {
            s = at + (orig.len() - piece.len()) as u64;
        }
    }
    if last_cut {
        if let Some((piece, _, at)) = verbatim(last).filter(|(p, o, _)| o.starts_with(p)) {
            e = at + piece.len() as u64;
        }
    }
    (s, e.max(s))
}

fn gap(
    doc: &mut Doc<'_>,
    middle: &[Line],
    cut: &[bool],
    g: &Gap<'_>,
    eol: Eol,
    raw: &RawIndex,
    raw_offsets: bool,
) -> Option<Line> {
    let (i, j) = (g.i, g.j);
    let first = middle[i];
    let last = middle[j - 1];
    let (mut a, mut b) = (first.src_first, last.src_last.max(first.src_first));
    if !raw_offsets {
        // Rendered rows: a row redrawn late holds writes from many original lines, so
        // the gap's first and last rows need not hold its lowest and highest lines:
        // the gap spans every line its rows show.
        (a, b) = crate::doc::rows_lines(&middle[i..j]);
        // Name only original lines no other marker names, and none a gap after it
        // needs (see [`gap_caps`]). When none is left (every write the rows show is
        // named by a marker around them), the rows are shown.
        a = a.max(g.room.0);
        b = b.min(g.room.1);
        if a > b {
            return None;
        }
    }
    // The gap starts or ends inside a line.
    let partial = cut[i] || cut[j - 1];
    // A gap of a few short lines costs less shown than as a marker (summed only
    // until it is too long to show).
    let mut shown = 0;
    if !partial
        && middle[i..j].iter().all(|l| {
            shown += doc.line_size(l);
            l.marker.is_none() && shown < SMALL_GAP
        })
    {
        return None;
    }
    let whole_lines = (j - i) as u64;
    let (bytes, restore) = if raw_offsets {
        // A marker line (a `traceback-keep` marker at the gap's edge) sits at no
        // offset of its own: its original lines' range stands for it.
        let s = if first.marker.is_some() {
            raw.bytes(a, a).0
        } else {
            first.start as u64
        };
        let e = if last.marker.is_some() {
            raw.bytes(last.src_last, last.src_last).1
        } else {
            (last.end + last.eol.bytes().len()) as u64
        };
        let r = if partial {
            RestoreCall::Bytes { start: s, end: e }
        } else {
            RestoreCall::Lines {
                start: a as u64 + 1,
                end: b as u64 + 1,
            }
        };
        ((s, e), r)
    } else {
        // Rendered text: offsets inside an original line are known only where its
        // bytes are its text (see [`cut_offsets`]); elsewhere a gap that starts or
        // ends inside one names its whole lines. By bytes when partial: one such
        // line can be longer than a restore page, and a `lines` call cannot continue
        // inside a line.
        let bytes = if partial {
            cut_offsets(
                doc,
                raw,
                &middle[i..j],
                (cut[i], cut[j - 1]),
                raw.bytes(a, b),
            )
        } else {
            raw.bytes(a, b)
        };
        let r = if partial {
            RestoreCall::Bytes {
                start: bytes.0,
                end: bytes.1,
            }
        } else {
            RestoreCall::Lines {
                start: a as u64 + 1,
                end: b as u64 + 1,
            }
        };
        (bytes, r)
    };
    let m = if partial && whole_lines <= 2 && a == b {
        // Rendered text (frames or escapes removed) does not map back to byte
        // ranges inside a line: count the bytes elided as shown; `bytes` and the
        // restore call give the whole original line.
        let elided = if raw_offsets {
            bytes.1 - bytes.0
        } else {
            middle[i..j].iter().map(|l| (l.end - l.start) as u64).sum()
        };
        Marker {
            what: format!("{elided} bytes elided from line {}", a + 1),
            rule: RuleId::HeadTailElide,
            lines: Some((a as u64 + 1, b as u64 + 1)),
            bytes: Some(bytes),
            recovery: Recovery::Elided(restore),
        }
    } else {
        Marker::gap(RuleId::HeadTailElide, a, b, bytes, restore)
    };
    let mut m = m;
    // Salient lines no island shows: a count and where they are (1-based lines),
    // those within the marker's range (on rendered text a salient row can hold a line
    // another marker names, or one shown after this marker).
    let mut at: Vec<u64> = g
        .salient
        .iter()
        .map(|&k| middle[k].src_first)
        .filter(|&l| (a..=b).contains(&l))
        .map(|l| u64::from(l) + 1)
        .collect();
    at.dedup();
    if !at.is_empty() {
        m.what.push_str(&salient_note(at.len() as u64, &at));
    }
    // A marker never takes more room than the whole lines it would stand for: those
    // are shown instead (summed only until they are longer than the marker).
    if !partial {
        let room = m.render(Some(SIZING_ID)).len() + eol.bytes().len();
        let mut shown = 0;
        if middle[i..j].iter().all(|l| {
            shown += doc.line_size(l);
            l.marker.is_none() && shown <= room
        }) {
            return None;
        }
    }
    Some(doc.marker_line(m, eol, a, b))
}

/// Bytes of a long salient line an island shows (a window around its word); a piece
/// of the line shorter than [`SHORT_PIECE`] left on either side joins the window.
const WINDOW: usize = 512;

/// Bytes before the salient word a window starts at (when it does not start the line).
const WINDOW_BEFORE: usize = 128;

/// A piece of a long line shorter than this is shown with its window: its marker
/// would be longer.
const SHORT_PIECE: usize = 256;

/// The window an island shows of the long line `l` whose salient word is at `at`
/// (offsets in `buf`): `[s, e)`, on UTF-8 boundaries.
fn window(buf: &[u8], l: &Line, at: usize) -> (usize, usize) {
    let text = &buf[l.start..l.end];
    let mut s = (at - l.start).saturating_sub(WINDOW_BEFORE);
    if s < SHORT_PIECE {
        s = 0;
    }
    let mut e = s + WINDOW;
    if e + SHORT_PIECE > text.len() {
        e = text.len();
    }
    let s = crate::text::floor_char_boundary(text, s);
    let e = crate::text::ceil_char_boundary(text, e);
    (l.start + s, l.start + e)
}

/// A salient candidate: (priority, index of its line in the middle, offset in the
/// buffer of its first word of that priority).
type Cand = (u8, usize, usize);

/// The middle with every candidate line longer than [`ISLAND_LINE_MAX`] split into the
/// window an island shows and the pieces around it (each marked in `cut`), and the
/// candidates (in line order, as they are collected) renumbered. The window ends with
/// `eol` when a piece follows it.
fn split_long_lines(
    buf: &[u8],
    middle: &[Line],
    cut: &[bool],
    cands: &[Cand],
    eol: Eol,
) -> (Vec<Line>, Vec<bool>, Vec<Cand>) {
    debug_assert!(cands.windows(2).all(|w| w[0].1 < w[1].1));
    let mut lines = Vec::with_capacity(middle.len() + 8);
    let mut pieces = Vec::with_capacity(middle.len() + 8);
    let mut out = Vec::with_capacity(cands.len());
    let mut next = cands.iter().peekable();
    for (k, l) in middle.iter().enumerate() {
        let Some(&(prio, _, at)) = next.next_if(|c| c.1 == k) else {
            lines.push(*l);
            pieces.push(cut[k]);
            continue;
        };
        if l.end - l.start <= ISLAND_LINE_MAX {
            out.push((prio, lines.len(), at));
            lines.push(*l);
            pieces.push(cut[k]);
            continue;
        }
        let (s, e) = window(buf, l, at);
        if s > l.start {
            lines.push(Line {
                end: s,
                eol: Eol::None,
                ..*l
            });
            pieces.push(true);
        }
        out.push((prio, lines.len(), at));
        lines.push(Line {
            start: s,
            end: e,
            eol: if e < l.end { eol } else { l.eol },
            ..*l
        });
        pieces.push(true);
        if e < l.end {
            lines.push(Line { start: e, ..*l });
            pieces.push(true);
        }
    }
    (lines, pieces, out)
}

/// The `head-tail-elide` receipt row, counted from its markers among `doc`'s lines
/// (gaps, original lines and bytes elided); `None` when there is none.
pub(crate) fn report(doc: &Doc<'_>) -> Option<RuleReport> {
    let (mut gaps, mut lines, mut bytes) = (0, 0, 0);
    for l in &doc.lines {
        let Some(i) = l.marker else { continue };
        let m = &doc.markers[i as usize];
        if m.rule != RuleId::HeadTailElide {
            continue;
        }
        gaps += 1;
        if let Some((a, b)) = m.lines {
            lines += b + 1 - a;
        }
        if let Some((s, e)) = m.bytes {
            bytes += e - s;
        }
    }
    (gaps > 0).then(|| RuleReport {
        id: RuleId::HeadTailElide,
        counts: vec![
            ("gaps", gaps),
            ("lines_elided", lines),
            ("bytes_elided", bytes),
        ],
    })
}
