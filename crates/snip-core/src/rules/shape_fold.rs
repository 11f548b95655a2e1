//! `shape-fold` — over the budget, a run of lines of one shape keeps its first and
//! last line (or block) and a count.
//!
//! **What it does.** Reads each line's *fold shape*: its text with every number (digits
//! with `.`, `,`, `:` between them and a unit glued on or after one space: `12ms`,
//! `39.08MB/s`, `0:00:02`, `1,234`, `4.2 MB`) read as `0`, every hex id (a word of 7 or
//! more hex digits with a digit in it) as `h`, every path-like word (one holding a `/`,
//! or a file name `name.ext`) as `P`, and every run of spaces and tabs as one space.
//! A *run* is a stretch of consecutive lines whose shapes all belong to a set of 1 to
//! [`MAX_PERIOD`] shapes (the first distinct shapes from its start), at least
//! [`MIN_BLOCKS`] lines per shape: one line ×1,400, a file-name line and its stats line
//! ×692 with a directory line now and then, a two-line warning ×1,665. It keeps its
//! first block (up to the first line of its last new shape) and its last block (back
//! from its end to a line of each shape); the lines between become one marker with
//! their count, original line numbers (1-based, inclusive), byte offsets (0-based,
//! half-open) and a restore call for exactly those lines. A line of
//! the run whose unmasked text differs (a `FAILED` among `ok`s) has another shape, so
//! it ends the run and stays. A salient line inside a run (an error word of priority 2
//! or above) is never folded: it stays as a line, for `head-tail-elide` to show as an
//! island or count in its gap marker with its line number. A run that is a
//! traceback's frames (right after `Traceback (most recent call last):` or next to a
//! `traceback-keep` marker) is left whole.
//!
//! **Why.** Test runners, copy tools, loggers and recursion tracebacks repeat one
//! line shape thousands of times with only numbers, ids or names changed. Head and
//! tail elision fills the budget with those copies; one copy and a count say the same,
//! and the distinct lines around them get the room.
//!
//! **Example.** `test case_0001 ... ok` … `test case_1400 ... ok` → the first line,
//! `[snip: 1398 similar lines (30736 bytes) elided · shape-fold · lines 2-1399 · …]`,
//! the last line.
//!
//! **Options.** None of its own. Lossy: only above the budget and with a retained original (or the store turned
//! off), before `head-tail-elide`; a run is folded only where its marker is shorter
//! than the lines it stands for. On the reduced path (`sparse`, ≥ 4 MiB) it folds
//! within the pieces kept; the stream path (> 16 MiB) does not fold.

use crate::doc::{Doc, Line, RawIndex, SIZING_ID};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::{Elide, RuleId};
use crate::salience::salience;
use crate::Config;
use crate::RuleReport;

/// Most shapes a run may hold.
pub(crate) const MAX_PERIOD: usize = 4;

/// Fewest lines per shape a run must have to fold.
pub(crate) const MIN_BLOCKS: usize = 3;

/// Salience a line needs to stay inside a run (warnings fold; errors stay).
const KEPT_PRIORITY: u8 = 2;

/// Units read with the number they follow after one space (`4.2 MB`, `3 ms`).
const UNITS: &[&[u8]] = &[
    b"B",
    b"kB",
    b"KB",
    b"MB",
    b"GB",
    b"TB",
    b"KiB",
    b"MiB",
    b"GiB",
    b"TiB",
    b"bytes",
    b"ns",
    b"us",
    b"\xc2\xb5s",
    b"ms",
    b"s",
    b"sec",
    b"secs",
    b"min",
    b"m",
    b"h",
    b"%",
];

/// What one fold did, for the receipt.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Folded {
    /// Markers added.
    pub folds: u64,
    /// Original lines the markers stand for.
    pub lines: u64,
    /// Original bytes the markers stand for.
    pub bytes: u64,
}

/// Folds every run of one shape in `doc` (see the module docs). `raw` maps original
/// line numbers to byte offsets for the markers.
pub(crate) fn apply(doc: &mut Doc<'_>, _config: &Config, raw: &RawIndex) -> Folded {
    let n = doc.lines.len();
    let mut done = Folded::default();
    if n < MIN_BLOCKS {
        return done;
    }
    let mut scratch = Vec::new();
    let keys: Vec<u64> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(k, l)| match l.marker {
            // A marker line never matches anything: it ends a run.
            Some(_) => !(k as u64),
            None => fold_shape_in(doc.text(l), &mut scratch),
        })
        .collect();
    let eol = doc.dominant_eol();
    let src = std::mem::take(&mut doc.lines);
    let mut out: Vec<Line> = Vec::with_capacity(n);
    // The first original line no marker so far names: on rendered text a redrawn row
    // holds writes from many original lines, so rows' line ranges interleave, and a
    // fold names only lines past the markers before it.
    let mut floor = 0u32;
    // The first original line a marker line from each line on names (the least, as
    // rows' ranges interleave): a fold names only lines short of the markers after it
    // (a traceback-keep marker after rows redrawn once the traceback was printed).
    let mut ceiling = vec![u32::MAX; n + 1];
    for k in (0..n).rev() {
        ceiling[k] = match src[k].marker {
            Some(_) => ceiling[k + 1].min(src[k].src_first),
            None => ceiling[k + 1],
        };
    }
    let mut i = 0;
    while i < n {
        let Some(run) = best_run(&keys, i) else {
            if src[i].marker.is_some() {
                floor = floor.max(src[i].src_last.saturating_add(1));
            }
            out.push(src[i]);
            i += 1;
            continue;
        };
        let end = run.end;
        if in_traceback(doc, &src, i, end) {
            out.extend_from_slice(&src[i..end]);
        } else {
            fold_run(
                doc,
                &src[i..end],
                &keys[i..end],
                run,
                eol,
                raw,
                (&mut floor, &ceiling[i..=end]),
                &mut out,
                &mut done,
            );
        }
        i = end;
    }
    doc.lines = out;
    done
}

/// A run of lines whose shapes all belong to a small set (the shapes of its first
/// lines): lines `start..end`, `shapes` distinct shapes, the first block (lines up to
/// the one that shows the last new shape) and the last block (from the end back to a
/// line of each shape), in lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    end: usize,
    shapes: usize,
    first: usize,
    last: usize,
}

/// The run starting at line `i`: of the sets of the first 1 to [`MAX_PERIOD`] distinct
/// shapes from `i`, the one whose run (consecutive lines all of a shape in the set,
/// at least [`MIN_BLOCKS`] lines per shape) folds the most lines between its first
/// and last block (the smallest set on a tie); `None` when none folds a line.
fn best_run(keys: &[u64], i: usize) -> Option<Run> {
    let n = keys.len();
    let mut set: Vec<u64> = Vec::with_capacity(MAX_PERIOD);
    let mut best: Option<Run> = None;
    let mut j = i;
    for s in 1..=MAX_PERIOD {
        // The s-th distinct shape from `i` joins the set (lines up to it are in it).
        while j < n && set.contains(&keys[j]) {
            j += 1;
        }
        if j >= n {
            break;
        }
        set.push(keys[j]);
        let first = j + 1 - i;
        let mut end = j + 1;
        while end < n && set.contains(&keys[end]) {
            end += 1;
        }
        if end - i >= MIN_BLOCKS * s {
            // The last block: back from the end until every shape is seen.
            let mut seen: Vec<u64> = Vec::with_capacity(s);
            let mut k = end;
            while seen.len() < s {
                k -= 1;
                if !seen.contains(&keys[k]) {
                    seen.push(keys[k]);
                }
            }
            let last = end - k;
            let folded = |r: &Run| (r.end - i).saturating_sub(r.first + r.last);
            let run = Run {
                end,
                shapes: s,
                first,
                last,
            };
            if folded(&run) > 0 && best.is_none_or(|b| folded(&run) > folded(&b)) {
                best = Some(run);
            }
        }
        // The line past the run's end is of a new shape: the next set takes it.
        j = end;
    }
    best
}

/// Whether lines `a..b` of `lines` are a traceback's frames: right after its header,
/// or next to a `traceback-keep` marker (which keeps a traceback's first and last
/// frames; folding them would hide what it kept).
fn in_traceback(doc: &Doc<'_>, lines: &[Line], a: usize, b: usize) -> bool {
    let tb_marker = |l: &Line| {
        l.marker
            .is_some_and(|m| doc.markers[m as usize].rule == RuleId::TracebackKeep)
    };
    let before = a.checked_sub(1).map(|k| &lines[k]);
    before.is_some_and(|l| {
        tb_marker(l) || doc.text(l).ends_with(b"Traceback (most recent call last):")
    }) || lines.get(b).is_some_and(tb_marker)
}

/// Folds the lines `lines` of `run` (`keys`: their shapes) into `out`: its first and
/// last block, the salient lines between, and a marker for each stretch of the rest
/// (or the lines themselves where a marker would be longer). A marker names original
/// lines from `floor` on, short of `ceiling[k]` for a stretch ending before line `k`
/// of `lines` (`ceiling`: one entry a line and one past the end).
#[allow(clippy::too_many_arguments)]
fn fold_run(
    doc: &mut Doc<'_>,
    lines: &[Line],
    keys: &[u64],
    run: Run,
    eol: crate::doc::Eol,
    raw: &RawIndex,
    (floor, ceiling): (&mut u32, &[u32]),
    out: &mut Vec<Line>,
    done: &mut Folded,
) {
    let n = lines.len();
    out.extend_from_slice(&lines[..run.first]);
    let (lo, hi) = (run.first, n - run.last);
    let mid = &lines[lo..hi];
    let keep: Vec<bool> = mid
        .iter()
        .map(|l| salience(doc.text(l)) >= KEPT_PRIORITY)
        .collect();
    let mut k = 0;
    while k < mid.len() {
        if keep[k] {
            out.push(mid[k]);
            k += 1;
            continue;
        }
        let mut j = k;
        while j < mid.len() && !keep[j] {
            j += 1;
        }
        let stretch = &mid[k..j];
        let shape = Shape::of(&keys[lo + k..lo + j], run.shapes);
        let room = (*floor, ceiling[lo + j].saturating_sub(1));
        match marker(doc, stretch, shape, eol, raw, room) {
            Some((line, (a, b), (s, e))) => {
                *floor = line.src_last.saturating_add(1);
                done.folds += 1;
                done.lines += b + 1 - a;
                done.bytes += e - s;
                out.push(line);
            }
            None => out.extend_from_slice(stretch),
        }
        k = j;
    }
    out.extend_from_slice(&lines[hi..]);
}

/// How a marker describes the lines it folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Lines of one shape.
    One,
    /// Whole blocks of this many lines, the same shapes in the same order.
    Blocks(usize),
    /// Lines of this many shapes, in no fixed order.
    Mixed(usize),
}

impl Shape {
    /// The description of lines whose shapes are `keys` in a run of `shapes` shapes.
    fn of(keys: &[u64], shapes: usize) -> Shape {
        if shapes == 1 {
            return Shape::One;
        }
        let periodic = keys.len().is_multiple_of(shapes)
            && (shapes..keys.len()).all(|k| keys[k] == keys[k - shapes])
            && (1..shapes).all(|k| !keys[..k].contains(&keys[k]));
        if periodic {
            Shape::Blocks(shapes)
        } else {
            Shape::Mixed(shapes)
        }
    }
}

/// The marker line for `stretch` (lines of a run, described as `shape`), added to
/// `doc`'s markers, with its line range (1-based, inclusive) and byte range, within
/// original lines `room` (0-based, inclusive: past the markers before it, short of
/// those after it); `None` when showing the lines is no longer or no line of `room`
/// is left.
fn marker(
    doc: &mut Doc<'_>,
    stretch: &[Line],
    shape: Shape,
    eol: crate::doc::Eol,
    raw: &RawIndex,
    room: (u32, u32),
) -> Option<MarkerLine> {
    let (first, last) = (stretch[0], stretch[stretch.len() - 1]);
    let (a, b) = (
        first.src_first.max(room.0),
        last.src_last.max(first.src_first).min(room.1),
    );
    if a > b {
        // Every original line these rows show is named by a marker around them.
        return None;
    }
    let bytes = raw.bytes(a, b);
    let count = stretch.len();
    let size = bytes.1 - bytes.0;
    let what = match shape {
        Shape::One => format!(
            "{count} similar {} ({size} bytes) elided",
            if count == 1 { "line" } else { "lines" }
        ),
        Shape::Blocks(p) => format!(
            "{} similar blocks of {p} lines ({count} lines, {size} bytes) elided",
            count / p
        ),
        Shape::Mixed(s) => format!("{count} similar lines of {s} shapes ({size} bytes) elided"),
    };
    let lines = (u64::from(a) + 1, u64::from(b) + 1);
    let m = Marker {
        what,
        rule: RuleId::ShapeFold,
        lines: Some(lines),
        bytes: Some(bytes),
        recovery: Recovery::Elided(RestoreCall::Lines {
            start: lines.0,
            end: lines.1,
        }),
    };
    let cost = m.render(Some(SIZING_ID)).len() + eol.bytes().len();
    let shown: usize = stretch.iter().map(|l| doc.line_size(l)).sum();
    if cost >= shown {
        return None;
    }
    Some((doc.marker_line(m, eol, a, b), lines, bytes))
}

/// A fold's marker line, its line range (1-based, inclusive) and byte range.
type MarkerLine = (Line, (u64, u64), (u64, u64));

/// Whether `w` (a whitespace-delimited word) reads as a path or file name: it holds a
/// `/` next to a letter or digit, or it is `name.ext` (a name, a dot, 1 to 8 letters
/// and digits with a letter among them).
fn path_like(w: &[u8]) -> bool {
    let word = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    if w.windows(2).any(|p| {
        (p[0] == b'/' && p[1].is_ascii_alphanumeric())
            || (p[1] == b'/' && p[0].is_ascii_alphanumeric())
    }) {
        return true;
    }
    let Some(dot) = w.iter().rposition(|&c| c == b'.') else {
        return false;
    };
    let (name, ext) = (&w[..dot], &w[dot + 1..]);
    !name.is_empty()
        && (name[0].is_ascii_alphabetic() || name[0] == b'_')
        && name.iter().all(word)
        && (1..=8).contains(&ext.len())
        && ext.iter().all(u8::is_ascii_alphanumeric)
        && ext.iter().any(u8::is_ascii_alphabetic)
}

/// Whether `w` (letters and digits) is a hex id: 7 or more hex digits, a digit among them.
fn hex_id(w: &[u8]) -> bool {
    w.len() >= 7 && w.iter().all(u8::is_ascii_hexdigit) && w.iter().any(u8::is_ascii_digit)
}

/// A line's fold shape (see the module docs), as a hash.
#[cfg(test)]
pub(crate) fn fold_shape(t: &[u8]) -> u64 {
    fold_shape_in(t, &mut Vec::new())
}

/// [`fold_shape`] with `buf` as scratch (cleared first; reused across lines so that
/// no line allocates). The masked text is written into `buf` a slice at a time and
/// hashed once, not a byte at a time.
pub(crate) fn fold_shape_in(t: &[u8], buf: &mut Vec<u8>) -> u64 {
    use std::hash::BuildHasher as _;
    buf.clear();
    let n = t.len();
    let mut i = 0;
    while i < n {
        let c = t[i];
        if c == b' ' || c == b'\t' {
            while i < n && (t[i] == b' ' || t[i] == b'\t') {
                i += 1;
            }
            buf.push(b' ');
            continue;
        }
        // The whitespace-delimited word starting here, when it starts one.
        if i == 0 || t[i - 1] == b' ' || t[i - 1] == b'\t' {
            let e = t[i..]
                .iter()
                .position(|&c| c == b' ' || c == b'\t')
                .map_or(n, |k| i + k);
            if path_like(&t[i..e]) {
                buf.push(b'P');
                i = e;
                continue;
            }
        }
        if c.is_ascii_digit() {
            // A number: digits, with `.`, `,`, `:` between digits, and letters glued on.
            let mut j = i;
            while j < n {
                let glued = t[j].is_ascii_alphanumeric()
                    || (matches!(t[j], b'.' | b',' | b':')
                        && t.get(j + 1).is_some_and(u8::is_ascii_digit));
                if !glued {
                    break;
                }
                j += 1;
            }
            // A unit after one space.
            if t.get(j) == Some(&b' ') {
                let e = t[j + 1..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphabetic() || *c >= 0x80 || *c == b'%'))
                    .map_or(n, |k| j + 1 + k);
                if UNITS.contains(&&t[j + 1..e]) {
                    j = e;
                }
            }
            buf.push(b'0');
            i = j;
            continue;
        }
        if c.is_ascii_alphabetic() {
            let e = t[i..]
                .iter()
                .position(|c| !c.is_ascii_alphanumeric())
                .map_or(n, |k| i + k);
            let w = &t[i..e];
            if !w.iter().any(u8::is_ascii_digit) {
                // No digit: neither a hex id nor a number inside; the word as it is.
                buf.extend_from_slice(w);
            } else if hex_id(w) {
                buf.push(b'h');
            } else {
                let mut digits = false;
                for &c in w {
                    if c.is_ascii_digit() {
                        if !digits {
                            buf.push(b'0');
                        }
                        digits = true;
                    } else {
                        digits = false;
                        buf.push(c);
                    }
                }
            }
            i = e;
            continue;
        }
        buf.push(c);
        i += 1;
    }
    foldhash::fast::FixedState::with_seed(SHAPE_SEED).hash_one(buf.as_slice())
}

/// Seed of the shape hash (fixed: shapes are the same on every run and machine).
const SHAPE_SEED: u64 = 0x5ea9_e0f0_1d5a_a9e5;

/// The lossy pass: folds the working document's runs when it is over the budget.
/// Returns the receipt row when a run was folded.
pub(crate) fn pass(e: &mut Elide<'_, '_>) -> Option<RuleReport> {
    if e.size <= e.config.max_bytes {
        return None;
    }
    let report = report(apply(e.doc, e.config, e.raw))?;
    e.size = e.doc.size();
    Some(report)
}

/// The receipt row, when something was folded.
pub(crate) fn report(f: Folded) -> Option<RuleReport> {
    (f.folds > 0).then(|| RuleReport {
        id: RuleId::ShapeFold,
        counts: vec![
            ("folds", f.folds),
            ("lines_elided", f.lines),
            ("bytes_elided", f.bytes),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_mask_numbers_ids_paths_and_spacing() {
        let same = |a: &str, b: &str| fold_shape(a.as_bytes()) == fold_shape(b.as_bytes());
        assert!(same("test case_0001 ... ok", "test case_1400 ... ok"));
        assert!(!same("test case_0001 ... ok", "test case_0002 ... FAILED"));
        assert!(same("took 12ms", "took 1.5s"));
        assert!(same("size 4.2 MB done", "size 310 kB done"));
        assert!(same(
            "   7 100%    0.06kB/s    0:00:00",
            "  9,484 100%   84.20kB/s    0:00:00"
        ));
        assert!(same("commit 3fa85f64c2", "commit 0b1e9d2a77"));
        assert!(same("assets/model.onnx", "regex-automata/Cargo.toml"));
        assert!(same("wrote notes.txt", "wrote main.rs"));
        assert!(same("wrote __init__.cpython-311.pyc", "wrote _util.py"));
        assert!(!same("ERROR acct-01234: bad", "WARN acct-01234: bad"));
        assert!(same("ERROR acct-01234: bad", "ERROR acct-05678: bad"));
        assert!(!same("ok.", "done."));
    }

    #[test]
    fn the_set_of_shapes_that_covers_most_wins() {
        let run = |keys: &[u64]| best_run(keys, 0).map(|r| (r.end, r.shapes, r.first, r.last));
        // a b a b a b a b: two shapes, eight lines, first block "a b", last "a b".
        assert_eq!(run(&[1, 2, 1, 2, 1, 2, 1, 2]), Some((8, 2, 2, 2)));
        // a a a a: one shape (a tie with more shapes goes to the fewer).
        assert_eq!(run(&[1, 1, 1, 1, 9]), Some((4, 1, 1, 1)));
        // a b a b a a b a b b a b: two shapes in no fixed order.
        assert_eq!(
            run(&[1, 2, 1, 2, 1, 1, 2, 1, 2, 2, 1, 2, 7]),
            Some((12, 2, 2, 2))
        );
        // A third shape once in the middle: its first and last blocks meet.
        assert_eq!(run(&[1, 2, 1, 2, 3, 1, 2, 1, 2]), None);
        assert_eq!(run(&[1, 2, 3, 1, 2, 4]), None);
        assert_eq!(Shape::of(&[1, 2, 1, 2], 2), Shape::Blocks(2));
        assert_eq!(Shape::of(&[1, 2, 2, 1], 2), Shape::Mixed(2));
    }
}
