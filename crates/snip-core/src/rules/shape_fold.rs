//! `shape-fold` — over the budget, a run of lines of one shape keeps its first and
//! last line (or block) and a count.
//!
//! **What it does.** Reads each line's *fold shape*: its text with every number (digits
//! with `.`, `,`, `:` between them, `-`, `+` or `~` before a letter or digit, and a unit
//! glued on or after one space: `12ms`, `39.08MB/s`, `0:00:02`, `1,234`, `4.2 MB`, a
//! package version `1.2.0-14+deb12u1`) read as `0`, every hex id (a word of 7 or
//! more hex digits with a digit in it) as `h`, every path-like word (one holding a `/`,
//! or a file name `name.ext`) as `P`, and every run of spaces and tabs as one space.
//! A line of a *name column* (a listing: `ls -l`, `Setting up NAME (1.2-3) ...`) reads
//! as its shape with that column's word masked: the line's masked words equal those
//! of at least two lines among the [`NAME_WINDOW`] before and after it but one word,
//! the same word for both, whose values differ from each other too (distinct names;
//! a status word such as `ok` repeats, so a `FAILED` line keeps its own shape).
//! A *run* is a stretch of consecutive lines whose shapes all belong to a set of 1 to
//! [`MAX_PERIOD`] shapes (the first distinct shapes from its start), at least
//! [`MIN_BLOCKS`] lines per shape: one line ×1,400, a file-name line and its stats line
//! ×692 with a directory line now and then, a two-line warning ×1,665. It keeps its
//! first block (up to the first line of its last new shape) and its last block (back
//! from its end to a line of each shape, and further back to its section's header: a
//! line that starts with no space right after a blank line, at most [`SECTION_LINES`]
//! lines back, so a file's warnings are not shown under the file before it); the
//! lines between become one marker with
//! their count, original line numbers (1-based, inclusive), byte offsets (0-based,
//! half-open) and a restore call for exactly those lines. A line of
//! the run whose unmasked text differs (a `FAILED` among `ok`s) has another shape, so
//! it ends the run and stays. A salient line inside a run (an error word of priority 2
//! or above) stays as a line, for `head-tail-elide` to show as an island or count in
//! its gap marker with its line number; when the document is still over the budget
//! with every one of them kept, and folding them brings it within the budget, a
//! salient line whose shape is already shown in its run (the first block or a salient
//! line kept before it) is kept only while such copies take at most `salient_bytes`
//! in all; past that it folds, and the marker
//! counts such lines and names the first [`COUNTED_LINES`] of their line numbers
//! (`…, 198 salient lines among them at 811, 813, 815, 817, …`). A run that is a
//! traceback's frames (right after `Traceback (most recent call last):` or next to a
//! `traceback-keep` marker) is left whole.
//!
//! A *repeated block* is a block of more than [`MAX_PERIOD`] shapes (at most
//! [`MAX_BLOCK`] lines: a compiler's diagnostic with its location, gutter, source and
//! caret lines) followed right away by whole copies of itself: the same shapes in the
//! same order, each line the same text but for its numbers' digits and the width of
//! its spacing, each salient line the same but for its spacing's width. The block
//! stays (folded within itself like any text) and its copies become one marker
//! (`8 similar blocks of 89 lines (712 lines, … bytes) elided, 56 salient lines among
//! them at …`) that counts the salient lines it stands for and names the first of
//! them. A copy whose words differ (distinct data) or whose salient line differs in
//! more than spacing (a distinct error) ends the copies, and that line stays. Finding blocks costs at most
//! [`BLOCK_WORK`] line comparisons per line of the document.
//!
//! Folds of *distinct data* (a run of one shape whose masked paths or names differ:
//! a `du` or `find` listing, one item a line) get room back: when the folded document ends
//! under 90% of the budget, each such fold shows the same share of its lines from its
//! two ends, the share that brings the document to about 90% of the budget (never
//! over it). Folds of lines that differ only in numbers and ids, and folds of blocks
//! of several shapes (a file name and its stats line: the per-item lines would take
//! the room), stay whole: the result may end far below the budget.
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

use crate::doc::{Doc, Form, Line, RawIndex, SECTION_LINES};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::{Elide, RuleId};
use crate::salience::salience;
use crate::Config;
use crate::RuleReport;

/// Most shapes a run may hold.
pub(crate) const MAX_PERIOD: usize = 4;

/// Fewest lines per shape a run must have to fold.
pub(crate) const MIN_BLOCKS: usize = 3;

/// Line numbers a marker names for the salient lines it counts.
const COUNTED_LINES: usize = 4;

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
    /// Bytes (as shown) of the folded lines that are distinct data: lines of one
    /// shape whose paths or names differ.
    pub distinct: u64,
}

/// Folds every run of one shape in `doc` (see the module docs). `raw` maps original
/// line numbers to byte offsets for the markers.
pub(crate) fn apply(doc: &mut Doc<'_>, config: &Config, raw: &RawIndex) -> Folded {
    if doc.lines.len() < MIN_BLOCKS {
        return Folded::default();
    }
    let (keys, lits, as_prev) = run_keys(doc);
    let salient = salient_lines(doc, &doc.lines, &as_prev);
    // The lines every pass folds, moved out (not copied: a 50 KB log's table is ~14
    // fresh pages, a measurable share of a hook process): each pass writes its
    // folded lines into `doc.lines`.
    let lines = std::mem::take(&mut doc.lines);
    let markers = doc.markers.len();
    // Every pass folds the same lines (`lines`): what it reads of them is read once.
    // Loose keys serve repeated blocks alone: where no line can start one (a log of
    // few shapes), they are not read (see [`may_repeat`]).
    let wide = wide_from(&keys);
    let loose = if may_repeat(&wide) {
        loose_keys(doc, &lines, &salient, &as_prev)
    } else {
        Vec::new()
    };
    let next = next_same(&loose);
    let mut how = How {
        lits: &lits,
        loose: &loose,
        salient: &salient,
        next: &next,
        wide: &wide,
        copies: None,
        share: None,
    };
    let mut done = fold(doc, &lines, &keys, raw, &mut how);
    // The folded text's size (a sum over every line: read once per fold).
    let mut size = doc.size();
    if size > config.max_bytes {
        // Still over the budget with every salient line kept: copies of a salient
        // line's shape fold too, counted in their marker, when that brings the text
        // within the budget (else `head-tail-elide` would elide the markers that
        // count them, and it places or counts every salient line itself).
        let kept = std::mem::take(&mut doc.lines);
        let kept_markers = doc.markers.split_off(markers);
        how.copies = Some(config.salient_bytes);
        let folded = fold(doc, &lines, &keys, raw, &mut how);
        size = doc.size();
        if size > config.max_bytes {
            doc.lines = kept;
            doc.markers.truncate(markers);
            doc.markers.extend(kept_markers);
            return done;
        }
        done = folded;
    }
    // Room left under the budget goes back to distinct data: each fold of distinct
    // lines shows the same share of them, from its two ends.
    let target = config.max_bytes / 10 * 9;
    if size >= target || done.distinct == 0 {
        return done;
    }
    let share = (target - size) as f64 / done.distinct as f64;
    let folded = std::mem::take(&mut doc.lines);
    let folded_markers = doc.markers.split_off(markers);
    how.share = Some(share);
    if let Some(c) = how.copies.as_mut() {
        *c = config.salient_bytes;
    }
    let given = fold(doc, &lines, &keys, raw, &mut how);
    if doc.size() <= config.max_bytes {
        return given;
    }
    // Never over the budget for it: the folds as they were.
    doc.lines = folded;
    doc.markers.truncate(markers);
    doc.markers.extend(folded_markers);
    done
}

/// How one folding pass treats what it may keep.
struct How<'a> {
    /// Each line's literal key: its shape with the paths and the name it masks.
    lits: &'a [u64],
    /// Each line's loose key (see [`loose_keys`]; empty when no line can start a
    /// repeated block, see [`may_repeat`]).
    loose: &'a [u64],
    /// Whether each line is salient (see [`salient_lines`]).
    salient: &'a [bool],
    /// Each line's next line of the same loose key (see [`next_same`]; empty with
    /// `loose`).
    next: &'a [usize],
    /// Each line's fewest lines holding more than [`MAX_PERIOD`] shapes (see
    /// [`wide_from`]).
    wide: &'a [usize],
    /// Bytes left for salient lines of a shape already shown in their run (`None`:
    /// every salient line stays).
    copies: Option<usize>,
    /// The share (0 to 1) of each fold of distinct lines shown from its two ends.
    share: Option<f64>,
}

/// Each line's run key (its fold shape, or its name-column key, see
/// [`name_column_keys`]; a marker line's never equals another line's), literal key
/// (the run key with the masked paths and name put back), and whether it is
/// [`digits_apart`] from the line before it (masked as that line was: see
/// [`loose_keys`], which reads the same of both).
fn run_keys(doc: &Doc<'_>) -> (Vec<u64>, Vec<u64>, Vec<bool>) {
    use std::hash::BuildHasher as _;
    let mut paths = Vec::new();
    let mut masked = Masked::for_lines(doc.lines.len(), doc.buf.len());
    let mut lits = Vec::with_capacity(doc.lines.len());
    let mut as_prev = vec![false; doc.lines.len()];
    let hasher = foldhash::fast::FixedState::with_seed(SHAPE_SEED);
    // The last line masked with no path-like word: its text, its line and its keys.
    // A line that differs from it only in some digits has its masked text and keys
    // (see [`digits_apart`]): a log's lines often differ in a counter or a time alone.
    let mut last: Option<(&[u8], usize, u64, u64)> = None;
    let keys: Vec<u64> = doc
        .lines
        .iter()
        .enumerate()
        .map(|(k, l)| match l.marker {
            // A marker line never matches anything: it ends a run.
            Some(_) => {
                masked.end_line();
                lits.push(!(k as u64));
                last = None;
                !(k as u64)
            }
            None => {
                let t = doc.text(l);
                if let Some((prev, j, key, lit)) = last {
                    if digits_apart(prev, t) {
                        // Line `j` or a copy of it is the line before (a line that is
                        // not a copy sets or clears `last`).
                        masked.push_copy(j);
                        lits.push(lit);
                        as_prev[k] = true;
                        return key;
                    }
                }
                paths.clear();
                let key = masked.push(t, &mut paths);
                let lit = hasher.hash_one((key, paths.as_slice()));
                lits.push(lit);
                last = paths.is_empty().then_some((t, k, key, lit));
                key
            }
        })
        .collect();
    let keys = name_column_keys(&keys, &masked, &mut lits);
    (keys, lits, as_prev)
}

/// What one folding pass reads and writes as it steps along the lines (see
/// [`step`]): the lines it folds, where their markers point, and what it has built.
struct Cx<'s> {
    /// The lines being folded.
    src: &'s [Line],
    /// Original line numbers to byte offsets, for the markers.
    raw: &'s RawIndex<'s>,
    eol: crate::doc::Eol,
    /// The first original line no marker so far names: on rendered text a redrawn row
    /// holds writes from many original lines, so rows' line ranges interleave, and a
    /// fold names only lines past the markers before it.
    floor: u32,
    /// The first original line a marker line from each line on names (the least, as
    /// rows' ranges interleave): a fold names only lines short of the markers after it
    /// (a traceback-keep marker after rows redrawn once the traceback was printed).
    ceiling: Vec<u32>,
    /// The lines kept and the markers added so far.
    out: Vec<Line>,
    done: Folded,
}

/// One folding pass over the lines `src` (`keys`: their run keys), as `how` says: the
/// folded lines go to `doc.lines`.
fn fold(
    doc: &mut Doc<'_>,
    src: &[Line],
    keys: &[u64],
    raw: &RawIndex,
    how: &mut How<'_>,
) -> Folded {
    let n = src.len();
    let eol = crate::doc::dominant_eol(src);
    let mut ceiling = vec![u32::MAX; n + 1];
    for k in (0..n).rev() {
        ceiling[k] = match src[k].marker {
            Some(_) => ceiling[k + 1].min(src[k].src_first),
            None => ceiling[k + 1],
        };
    }
    let mut cx = Cx {
        src,
        raw,
        eol,
        floor: 0,
        ceiling,
        out: Vec::with_capacity(n),
        done: Folded::default(),
    };
    // For repeated blocks: each line's loose text (see `loose_keys`), where it comes
    // next, how far a block from each line must reach, and the work left for finding
    // them (a bound on the comparisons whatever the input).
    let (loose, salient) = (how.loose, how.salient);
    let (next, wide) = (how.next, how.wide);
    let mut work = n.saturating_mul(BLOCK_WORK).saturating_add(1024);
    let mut i = 0;
    while i < n {
        if let Some((p, reps)) =
            repeated_block(doc, src, (keys, loose, salient), (next, wide), i, &mut work)
        {
            let (start, end) = (i + p, i + p + reps * p);
            if !in_traceback(doc, src, i, end) {
                // The first block, folded within itself as usual.
                let mut k = i;
                while k < start {
                    k = step(doc, &keys[..start], how, &mut cx, k);
                }
                // Its copies: one marker, with the salient lines among them (each a
                // copy of one in the first block) counted.
                let copies = &src[start..end];
                let salient: Vec<u64> = (start..end)
                    .filter(|&k| is_salient(doc, &src[k], salient[k]))
                    .map(|k| u64::from(src[k].src_first) + 1)
                    .collect();
                let room = (cx.floor, cx.ceiling[end].saturating_sub(1));
                match marker(doc, copies, Shape::Blocks(p), &salient, cx.eol, raw, room) {
                    Some((line, (fa, fb), (s, e))) => {
                        cx.floor = line.src_last.saturating_add(1);
                        cx.done.folds += 1;
                        cx.done.lines += fb + 1 - fa;
                        cx.done.bytes += e - s;
                        cx.out.push(line);
                    }
                    None => cx.out.extend_from_slice(copies),
                }
                i = end;
                continue;
            }
        }
        i = step(doc, keys, how, &mut cx, i);
    }
    let done = cx.done;
    doc.lines = cx.out;
    done
}

/// One step of [`fold`] at line `i` of `cx.src` (`keys`: the shapes of the lines it
/// may look at): the run starting there folded, or the line kept. Returns the next
/// line.
fn step(doc: &mut Doc<'_>, keys: &[u64], how: &mut How<'_>, cx: &mut Cx<'_>, i: usize) -> usize {
    let src = cx.src;
    let Some(mut run) = best_run(keys, i) else {
        if src[i].marker.is_some() {
            cx.floor = cx.floor.max(src[i].src_last.saturating_add(1));
        }
        cx.out.push(src[i]);
        return i + 1;
    };
    let end = run.end;
    run.last = end - section_start(doc, src, i + run.first, end - run.last);
    if in_traceback(doc, src, i, end) {
        cx.out.extend_from_slice(&src[i..end]);
    } else {
        let (lits, salient) = (how.lits, how.salient);
        fold_run(
            doc,
            &src[i..end],
            (&keys[i..end], &lits[i..end], &salient[i..end]),
            run,
            how,
            cx.eol,
            cx.raw,
            (&mut cx.floor, &cx.ceiling[i..=end]),
            &mut cx.out,
            &mut cx.done,
        );
    }
    end
}

/// Where a run's last block starts (`k` as [`best_run`] found it: a line of each
/// shape): at the start of the section that holds line `k`, a header (see [`Form`])
/// right after the nearest blank line at most [`SECTION_LINES`] lines before `k` and
/// not inside the first block (which ends before line `lo`; a blank line at `lo`
/// leaves nothing to fold but itself), so the lines shown after the marker are not cut
/// from the header they belong to (a linter's file name over its warnings, a directory
/// of `ls -lR`, a commit of `git log`); `k` itself when there is no such section start.
fn section_start(doc: &Doc<'_>, src: &[Line], lo: usize, k: usize) -> usize {
    let from = k.saturating_sub(SECTION_LINES).max(lo);
    match (from..k)
        .rev()
        .find(|&j| doc.form(&src[j]) == Some(Form::Blank))
    {
        Some(j) if doc.form(&src[j + 1]) == Some(Form::Header) => j + 1,
        _ => k,
    }
}

/// Longest block, in lines, whose repeats fold as one (see [`repeated_block`]).
const MAX_BLOCK: usize = 256;

/// Line comparisons allowed per line of the document for finding repeated blocks.
const BLOCK_WORK: usize = 32;

/// Whether `a` and `b` are the same text but for the width of their spacing (each run
/// of spaces and tabs read as one unit: a gutter one column wider when line numbers
/// reach 100) and, when `digits`, for the digits of their numbers (each run of ASCII
/// digits read as one unit).
fn same_but_digits(a: &[u8], b: &[u8], digits: bool) -> bool {
    // 1: a digit (when `digits`), 2: a space or tab, 0: any other byte.
    let class = |c: u8| match c {
        b'0'..=b'9' if digits => 1u8,
        b' ' | b'\t' => 2,
        _ => 0,
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (k, l) = (class(a[i]), class(b[j]));
        if k != l || (k == 0 && a[i] != b[j]) {
            return false;
        }
        if k == 0 {
            i += 1;
            j += 1;
            continue;
        }
        while i < a.len() && class(a[i]) == k {
            i += 1;
        }
        while j < b.len() && class(b[j]) == k {
            j += 1;
        }
    }
    i == a.len() && j == b.len()
}

/// Whether each line of `lines` is salient enough to stay in a run (an error word of
/// [`KEPT_PRIORITY`] or above, or a rare row of a status column, see
/// [`crate::rare_rows`]; a marker line: no, see [`is_salient`]). `as_prev`: whether
/// each line is [`digits_apart`] from the line before (from [`run_keys`]; empty: not
/// known).
fn salient_lines(doc: &Doc<'_>, lines: &[Line], as_prev: &[bool]) -> Vec<bool> {
    // One scan of the whole text rules out most lines without scanning each.
    let starts = crate::salience::match_starts(&doc.buf);
    let mut out: Vec<bool> = lines
        .iter()
        .map(|l| {
            if l.marker.is_some() {
                return false;
            }
            let after_newline = l.start == 0 || doc.buf.get(l.start - 1) == Some(&b'\n');
            let from = starts.partition_point(|&s| s < l.start);
            let ruled_out = after_newline && starts.get(from).is_none_or(|&s| s >= l.end);
            !ruled_out && salience(doc.text(l)) >= KEPT_PRIORITY
        })
        .collect();
    for k in crate::rare_rows::rare_rows_apart(&doc.buf, lines, as_prev) {
        out[k] = true;
    }
    out
}

/// Whether a repeated block may start at some line, given `wide` (from
/// [`wide_from`]): one needs more than [`MAX_PERIOD`] shapes within [`MAX_BLOCK`]
/// lines and a whole copy of them after (see [`repeated_block`]).
fn may_repeat(wide: &[usize]) -> bool {
    (0..wide.len()).any(|i| block_fits(wide, i))
}

/// Whether a repeated block fits at line `i`: it holds more than [`MAX_PERIOD`]
/// shapes, so at least `wide[i]` lines, at most [`MAX_BLOCK`], and a whole copy of it
/// follows before the last line.
fn block_fits(wide: &[usize], i: usize) -> bool {
    wide[i] <= MAX_BLOCK && wide[i] <= (wide.len() - i) / 2
}

/// Each line's *loose key*, a hash of its text with every run of spaces and tabs read
/// as one space and, unless the line is salient (`salient`, from [`salient_lines`]),
/// every run of digits as one `0` (a marker line's never equals another line's):
/// lines that may be copies of each other in a repeated block have equal loose keys.
/// A line [`digits_apart`] from the line before it (`as_prev`, from [`run_keys`]), when
/// neither is salient, has that line's key unread: their digits sit at the same
/// places, so with each run of digits read as one `0` their loose texts are the same.
fn loose_keys(doc: &Doc<'_>, lines: &[Line], salient: &[bool], as_prev: &[bool]) -> Vec<u64> {
    use std::hash::BuildHasher as _;
    let state = foldhash::fast::FixedState::with_seed(SHAPE_SEED ^ LOOSE_SEED);
    // Each line's loose text, written here and hashed once (no line allocates).
    let mut buf: Vec<u8> = Vec::new();
    let mut keys: Vec<u64> = Vec::with_capacity(lines.len());
    for (k, (l, &keep_digits)) in lines.iter().zip(salient).enumerate() {
        let key = if l.marker.is_some() {
            !(k as u64)
        } else if as_prev[k] && !keep_digits && !salient[k - 1] {
            keys[k - 1]
        } else {
            let t = doc.text(l);
            // Written into a slice sized for the whole line (no push, no capacity
            // check a byte; the table grows for a line longer than all before it, not
            // filled again for each): each byte mapped by a table and kept unless it
            // repeats the run it is in (spacing, or digits read as `0`).
            if buf.len() <= t.len() {
                buf.resize(t.len() + 1, 0);
            }
            let out = &mut buf[..=t.len()];
            out[0] = u8::from(keep_digits);
            let map = if keep_digits {
                &LOOSE_KEEP
            } else {
                &LOOSE_MASK
            };
            let mut w = 1;
            let mut last = 0u8;
            for &c in t {
                let c = map[usize::from(c)];
                out[w] = c;
                w += usize::from(!((c == b' ' || c == b'0') && c == last));
                last = c;
            }
            state.hash_one(&out[..w])
        };
        keys.push(key);
    }
    keys
}

/// A byte as a loose key reads it: spaces and tabs as a space, the rest as is.
const LOOSE_KEEP: [u8; 256] = loose_map(false);

/// [`LOOSE_KEEP`] with every digit read as `0`.
const LOOSE_MASK: [u8; 256] = loose_map(true);

/// The byte map of a loose key, digits read as `0` when `digits`.
const fn loose_map(digits: bool) -> [u8; 256] {
    let mut m = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        m[c] = match c as u8 {
            b' ' | b'\t' => b' ',
            b'0'..=b'9' if digits => b'0',
            b => b,
        };
        c += 1;
    }
    m
}

/// Whether line `l` is salient enough to stay in a run, given `read` (its entry from
/// [`salient_lines`], computed once per line): a marker line's text is scanned here.
fn is_salient(doc: &Doc<'_>, l: &Line, read: bool) -> bool {
    match l.marker {
        Some(_) => salience(doc.text(l)) >= KEPT_PRIORITY,
        None => read,
    }
}

/// A hash map keyed by shapes (already hashes: a fast hasher is enough).
type ShapeMap<V> = std::collections::HashMap<u64, V, foldhash::fast::FixedState>;

/// Mixed into the seed of loose keys.
const LOOSE_SEED: u64 = 0x0001_005e;

/// For each line `i`, the fewest lines from it (`i` included) that hold more than
/// [`MAX_PERIOD`] distinct shapes (`usize::MAX`: the lines to the end hold fewer).
fn wide_from(keys: &[u64]) -> Vec<usize> {
    let n = keys.len();
    let mut wide = vec![usize::MAX; n];
    // The shapes of lines `i..r` and their counts: never more than MAX_PERIOD + 1, so
    // a short list read in full beats a hash map.
    let mut counts: Vec<(u64, usize)> = Vec::with_capacity(MAX_PERIOD + 1);
    let mut r = 0;
    for (i, w) in wide.iter_mut().enumerate() {
        while r < n && counts.len() <= MAX_PERIOD {
            match counts.iter_mut().find(|(k, _)| *k == keys[r]) {
                Some((_, c)) => *c += 1,
                None => counts.push((keys[r], 1)),
            }
            r += 1;
        }
        if counts.len() > MAX_PERIOD {
            *w = r - i;
        }
        if let Some(at) = counts.iter().position(|(k, _)| *k == keys[i]) {
            counts[at].1 -= 1;
            if counts[at].1 == 0 {
                counts.swap_remove(at);
            }
        }
    }
    wide
}

/// For each line, the index of the next line of the same shape (`usize::MAX`: none).
fn next_same(keys: &[u64]) -> Vec<usize> {
    let mut next = vec![usize::MAX; keys.len()];
    let mut seen: ShapeMap<usize> =
        ShapeMap::with_capacity_and_hasher(keys.len(), Default::default());
    for (k, &key) in keys.iter().enumerate().rev() {
        if let Some(j) = seen.insert(key, k) {
            next[k] = j;
        }
    }
    next
}

/// A block of lines starting at line `i` that repeats right after itself: its length
/// `p` (the smallest that repeats, more than [`MAX_PERIOD`] shapes in it, at most
/// [`MAX_BLOCK`] lines) and how many whole copies of it follow (1 or more). A copy has
/// the same shapes in the same order, and each line in it is the same text as the
/// block's line at its place but for its spacing's width and, unless salient, its
/// numbers' digits (a line whose words differ is distinct data, a salient line that
/// differs in its digits is a distinct error: either ends the copies). `None` when no
/// such block starts at `i` or when `work` (line comparisons left) runs out; `wide`
/// (from [`wide_from`]) skips the lengths too short to hold that many shapes without
/// a comparison.
fn repeated_block(
    doc: &Doc<'_>,
    src: &[Line],
    (keys, loose, salient): (&[u64], &[u64], &[bool]),
    (next, wide): (&[usize], &[usize]),
    i: usize,
    work: &mut usize,
) -> Option<(usize, usize)> {
    let n = keys.len();
    // None fits here (and `loose`, `next` may be empty then).
    if !block_fits(wide, i) {
        return None;
    }
    // A line that is not salient is the same as another but for its spacing's width
    // and its digits exactly when their loose keys are equal (the loose text is that
    // reading's canonical form; the key, its 64-bit hash), so the key alone compares
    // them. A salient line's loose text reads a run of `0`s as one: its bytes are
    // compared.
    let same = |j: usize, p: usize| {
        loose[j] == loose[j - p]
            && keys[j] == keys[j - p]
            && salient[j] == salient[j - p]
            && (!salient[j] || same_but_digits(doc.text(&src[j]), doc.text(&src[j - p]), false))
    };
    // A block holds more than MAX_PERIOD shapes: it is at least `wide[i]` lines long.
    let mut at = next[i];
    while at != usize::MAX && at - i <= MAX_BLOCK && at - i < wide[i] {
        at = next[at];
    }
    while at != usize::MAX && at - i <= MAX_BLOCK && i + 2 * (at - i) <= n {
        let p = at - i;
        let mut k = 0;
        while k < p {
            if *work == 0 {
                return None;
            }
            *work -= 1;
            if !same(i + p + k, p) {
                break;
            }
            k += 1;
        }
        if k == p {
            let mut len = 2 * p;
            while i + len < n && same(i + len, p) {
                len += 1;
            }
            return Some((p, len / p - 1));
        }
        at = next[at];
    }
    None
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
    // The set's shapes, and the last line of each read so far.
    let mut set: Vec<u64> = Vec::with_capacity(MAX_PERIOD);
    let mut last_at: Vec<usize> = Vec::with_capacity(MAX_PERIOD);
    // Reads line `k`: whether its shape is in the set (its last line is then `k`).
    let in_set = |set: &[u64], last_at: &mut [usize], k: usize| {
        let at = set.iter().position(|&s| s == keys[k]);
        if let Some(at) = at {
            last_at[at] = k;
        }
        at.is_some()
    };
    let mut best: Option<Run> = None;
    let mut j = i;
    for s in 1..=MAX_PERIOD {
        // The s-th distinct shape from `i` joins the set (lines up to it are in it).
        while j < n && in_set(&set, &mut last_at, j) {
            j += 1;
        }
        if j >= n {
            break;
        }
        set.push(keys[j]);
        last_at.push(j);
        let first = j + 1 - i;
        let mut end = j + 1;
        while end < n && in_set(&set, &mut last_at, end) {
            end += 1;
        }
        if end - i >= MIN_BLOCKS * s {
            // The last block: back from the end until every shape is seen, so from
            // the earliest of the shapes' last lines (read as the run was, not again
            // backwards: a run of one shape after a line of another read back to it).
            let k = last_at.iter().copied().min().unwrap_or(end);
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

/// Folds the lines `lines` of `run` (`keys`: their shapes, `lits`: their literal
/// keys, `salient`: whether each is salient as [`loose_keys`] read it) into `out`: its first and
/// last block, the salient lines between, and a marker for each stretch of the rest
/// (or the lines themselves where a marker would be longer). A marker names original
/// lines from `floor` on, short of `ceiling[k]` for a stretch ending before line `k`
/// of `lines` (`ceiling`: one entry a line and one past the end).
#[allow(clippy::too_many_arguments)]
fn fold_run(
    doc: &mut Doc<'_>,
    lines: &[Line],
    (keys, lits, salient): (&[u64], &[u64], &[bool]),
    run: Run,
    how: &mut How<'_>,
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
    // A salient line stays unless a line of its shape is already shown (in the
    // first block or kept before it): copies of one error shape are counted in the
    // marker with their line numbers instead.
    let mut seen: Vec<u64> = keys[..run.first].to_vec();
    let mut counted = vec![false; mid.len()];
    let keep: Vec<bool> = mid
        .iter()
        .enumerate()
        .map(|(k, l)| {
            if !is_salient(doc, l, salient[lo + k]) {
                return false;
            }
            let key = keys[lo + k];
            if let Some(left) = how.copies.as_mut().filter(|_| seen.contains(&key)) {
                // A copy: kept while the room for copies lasts.
                let size = doc.line_size(l);
                if size <= *left {
                    *left -= size;
                    return true;
                }
                counted[k] = true;
                return false;
            }
            seen.push(key);
            true
        })
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
        // Distinct data: one item a line (a run of one shape, a block's per-item
        // stats lines would take the room) whose paths or names differ.
        let distinct = run.shapes == 1 && is_distinct(&keys[lo + k..lo + j], &lits[lo + k..lo + j]);
        // With room to give back, a fold of distinct lines shows its share of them
        // from its two ends.
        let (mut a, mut b) = (k, j);
        if let Some(share) = how.share.filter(|_| distinct) {
            let sizes = |r: &mut dyn Iterator<Item = usize>, room: f64| {
                let mut used = 0.0;
                r.take_while(|&x| {
                    used += doc.line_size(&mid[x]) as f64;
                    used <= room
                })
                .count()
            };
            let total: usize = mid[k..j].iter().map(|l| doc.line_size(l)).sum();
            let room = share * total as f64 / 2.0;
            a += sizes(&mut (k..j), room);
            b -= sizes(&mut (a..j).rev(), room);
            out.extend_from_slice(&mid[k..a]);
        }
        if a < b {
            let stretch = &mid[a..b];
            let shape = Shape::of(&keys[lo + a..lo + b], run.shapes);
            let salient: Vec<u64> = (a..b)
                .filter(|&x| counted[x])
                .map(|x| u64::from(mid[x].src_first) + 1)
                .collect();
            let room = (*floor, ceiling[lo + b].saturating_sub(1));
            match marker(doc, stretch, shape, &salient, eol, raw, room) {
                Some((line, (fa, fb), (s, e))) => {
                    *floor = line.src_last.saturating_add(1);
                    done.folds += 1;
                    done.lines += fb + 1 - fa;
                    done.bytes += e - s;
                    if distinct {
                        done.distinct +=
                            stretch.iter().map(|l| doc.line_size(l) as u64).sum::<u64>();
                    }
                    out.push(line);
                }
                None => out.extend_from_slice(stretch),
            }
        }
        out.extend_from_slice(&mid[b..j]);
        k = j;
    }
    out.extend_from_slice(&lines[hi..]);
}

/// Whether lines of run keys `keys` and literal keys `lits` are distinct data: two of
/// them share a run key but not their paths or names.
fn is_distinct(keys: &[u64], lits: &[u64]) -> bool {
    let mut first: Vec<(u64, u64)> = Vec::with_capacity(MAX_PERIOD);
    for (&k, &l) in keys.iter().zip(lits) {
        match first.iter().find(|(fk, _)| *fk == k) {
            Some(&(_, fl)) if fl != l => return true,
            Some(_) => {}
            None => first.push((k, l)),
        }
    }
    false
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

/// The marker line for `stretch` (lines of a run, described as `shape`; `salient`:
/// the 1-based line numbers of the salient lines among them), added to `doc`'s
/// markers, with its line range (1-based, inclusive) and byte range, within original
/// lines `room` (0-based, inclusive: past the markers before it, short of those after
/// it); `None` when showing the lines is no longer or no line of `room` is left.
fn marker(
    doc: &mut Doc<'_>,
    stretch: &[Line],
    shape: Shape,
    salient: &[u64],
    eol: crate::doc::Eol,
    raw: &RawIndex,
    room: (u32, u32),
) -> Option<MarkerLine> {
    // Every original line the rows show writes of: on rendered text a row between the
    // first and the last may hold a write from a line past the last row's (a line
    // that moved the cursor up and rewrote it), and naming only the first row's to
    // the last row's lines left that write in no marker.
    let (lo, hi) = crate::doc::rows_lines(stretch);
    let (a, b) = (lo.max(room.0), hi.min(room.1));
    if a > b {
        // Every original line these rows show is named by a marker around them.
        return None;
    }
    let bytes = raw.bytes(a, b);
    // The count is of the original lines the range names (what the restore call
    // returns), as a gap marker's: on rendered text a row may show the writes of many
    // lines (redraws), and counting rows understated what the marker stands for. The
    // blocks are counted as shown.
    let rows = stretch.len();
    let count = (b - a + 1) as usize;
    let size = bytes.1 - bytes.0;
    let mut what = match shape {
        Shape::One => format!(
            "{count} similar {} ({size} bytes) elided",
            if count == 1 { "line" } else { "lines" }
        ),
        Shape::Blocks(p) => format!(
            "{} similar {} of {p} lines ({count} lines, {size} bytes) elided",
            rows / p,
            if rows / p == 1 { "block" } else { "blocks" }
        ),
        Shape::Mixed(s) => format!("{count} similar lines of {s} shapes ({size} bytes) elided"),
    };
    if !salient.is_empty() {
        // Salient lines of a shape shown above: a count and where they are.
        let n = salient.len();
        let named: Vec<String> = salient
            .iter()
            .take(COUNTED_LINES)
            .map(u64::to_string)
            .collect();
        let more = if n > COUNTED_LINES { ", …" } else { "" };
        let word = if n == 1 { "line" } else { "lines" };
        what.push_str(&format!(
            ", {n} salient {word} among them at {}{more}",
            named.join(", ")
        ));
    }
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
    let cost = m.sizing_len() + eol.bytes().len();
    let shown: usize = stretch.iter().map(|l| doc.line_size(l)).sum();
    if cost >= shown {
        return None;
    }
    Some((doc.marker_line(m, eol, a, b), lines, bytes))
}

/// A fold's marker line, its line range (1-based, inclusive) and byte range.
type MarkerLine = (Line, (u64, u64), (u64, u64));

/// Most words a line may have for its name column to be looked for.
const MAX_WORDS: usize = 32;

/// Lines before and after a line compared with it to find its name column.
const NAME_WINDOW: usize = 8;

/// The masked text of every line (see [`shape_and_paths`]): line `k`'s is
/// `text[spans[k].0..spans[k].1]` (a half-open byte range). A marker line's is empty,
/// and a line masked as an earlier one was ([`Masked::push_copy`]) shares that line's
/// bytes, so a log of lines a counter apart holds one masked line, not thousands.
#[derive(Debug, Default)]
struct Masked {
    text: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Masked {
    /// Empty, with room for `lines` lines of `bytes` bytes in all (a masked line is
    /// never longer than the line), so neither table is copied as it fills. The room
    /// is reserved, not filled: only the bytes written touch memory.
    fn for_lines(lines: usize, bytes: usize) -> Masked {
        Masked {
            text: Vec::with_capacity(bytes),
            spans: Vec::with_capacity(lines),
        }
    }

    /// Masks line text `t` after the last line's (see [`shape_and_paths`], which
    /// appends its path-like words to `paths`) and ends its line. Returns its fold
    /// shape.
    fn push(&mut self, t: &[u8], paths: &mut Vec<u8>) -> u64 {
        let at = self.text.len();
        self.text.resize(at + t.len(), 0);
        let (key, len) = shape_and_paths(t, &mut self.text[at..], paths);
        self.text.truncate(at + len);
        self.spans.push((at, at + len));
        key
    }

    /// Masks a line as line `j` was masked (a line [`digits_apart`] from it: the same
    /// masked text, shared) and ends its line.
    fn push_copy(&mut self, j: usize) {
        self.spans.push(self.spans[j]);
    }

    /// Ends a line with no masked text (a marker line).
    fn end_line(&mut self) {
        let at = self.text.len();
        self.spans.push((at, at));
    }

    /// Line `k`'s masked text.
    fn of(&self, k: usize) -> &[u8] {
        let (start, end) = self.spans[k];
        &self.text[start..end]
    }
}

/// The masked words of some lines (their hashes), for [`name_column_keys`]: line
/// `k`'s words are `hashes[offs[k]..offs[k + 1]]`; a line not read, a marker line,
/// or a line of more than [`MAX_WORDS`] words, has none.
#[derive(Debug, Default)]
struct Words {
    hashes: Vec<u64>,
    offs: Vec<usize>,
}

impl Words {
    /// The words of the lines of `masked` marked in `read`.
    fn of_lines(masked: &Masked, read: &[bool]) -> Words {
        // Room for the lines read: the offsets exactly, the hashes for a word every
        // 8 bytes and one more a line (a log's lines, e.g. `cargo test`'s, hold
        // fewer), capped by their bound (a word and the space after it take two bytes
        // or more). A table grown by doubling from empty copies itself into fresh
        // pages as it grows; past this room it still grows.
        let (lines, bytes) = read
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r)
            .fold((0usize, 0usize), |(l, b), (k, _)| {
                (l + 1, b + masked.of(k).len())
            });
        let bound = (bytes.saturating_add(lines) / 2).min(lines.saturating_mul(MAX_WORDS - 1));
        let room = (bytes / 8).saturating_add(lines).min(bound);
        let mut words = Words {
            hashes: Vec::with_capacity(room),
            offs: Vec::with_capacity(read.len() + 1),
        };
        words.offs.push(0);
        for (k, &r) in read.iter().enumerate() {
            if r {
                words.push(masked.of(k));
            } else {
                words.offs.push(words.hashes.len());
            }
        }
        words
    }

    /// Adds a line whose masked text is `masked` (words separated by one space).
    fn push(&mut self, masked: &[u8]) {
        use std::hash::BuildHasher as _;
        let start = self.hashes.len();
        let hasher = foldhash::fast::FixedState::with_seed(SHAPE_SEED);
        for w in masked.split(|&c| c == b' ').filter(|w| !w.is_empty()) {
            if self.hashes.len() - start == MAX_WORDS {
                self.hashes.truncate(start);
                break;
            }
            self.hashes.push(hasher.hash_one(w));
        }
        self.offs.push(self.hashes.len());
    }

    /// Line `k`'s word hashes.
    fn of(&self, k: usize) -> &[u64] {
        &self.hashes[self.offs[k]..self.offs[k + 1]]
    }
}

/// The lines (half-open) within [`NAME_WINDOW`] lines of line `k` of `n`, itself
/// included.
fn name_window(k: usize, n: usize) -> (usize, usize) {
    (k.saturating_sub(NAME_WINDOW), (k + NAME_WINDOW + 1).min(n))
}

/// Whether each line has a line of another run key (`keys`) within [`NAME_WINDOW`]
/// lines of it: only such a line may have a name column.
fn near_other_shapes(keys: &[u64]) -> Vec<bool> {
    let n = keys.len();
    // Where each line's stretch of lines of its key starts, then whether the stretch
    // reaches both ends of its window.
    let mut first = vec![0; n];
    for k in 1..n {
        first[k] = if keys[k] == keys[k - 1] {
            first[k - 1]
        } else {
            k
        };
    }
    let mut near = vec![false; n];
    let mut end = n;
    for k in (0..n).rev() {
        if k + 1 < n && keys[k] != keys[k + 1] {
            end = k + 1;
        }
        let (lo, hi) = name_window(k, n);
        near[k] = lo < first[k] || hi > end;
    }
    near
}

/// The run keys: each line's shape, or, for a line of a *name column*, its shape
/// with that column's word masked. Line `i` has a name column `j` when at least two
/// lines within [`NAME_WINDOW`] lines of it have as many words and differ from it in
/// word `j` alone, with values there that differ from each other too: a listing's
/// names (`ls -l`, `Setting up NAME …`) differ on every line, where a status column
/// (`ok` … `FAILED` … `ok`) repeats its usual value, so the line that differs there
/// keeps its own shape and ends the run.
fn name_column_keys(keys: &[u64], masked: &Masked, lits: &mut [u64]) -> Vec<u64> {
    use std::hash::BuildHasher as _;
    let n = keys.len();
    let mut out = keys.to_vec();
    // A line whose neighbours all share its key has no neighbour to differ from: only
    // the other lines and their neighbours have their words read.
    let near = near_other_shapes(keys);
    let mut read = vec![false; n];
    for i in (0..n).filter(|&i| near[i]) {
        let (lo, hi) = name_window(i, n);
        read[lo..hi].fill(true);
    }
    let words = Words::of_lines(masked, &read);
    // Candidates: (column, value) of each neighbour differing in one word.
    let mut diffs: Vec<(usize, u64)> = Vec::with_capacity(2 * NAME_WINDOW);
    for i in (0..n).filter(|&i| near[i]) {
        let wi = words.of(i);
        if wi.len() < 2 {
            continue;
        }
        diffs.clear();
        let (lo, hi) = name_window(i, n);
        for m in (lo..hi).filter(|&m| m != i) {
            let wm = words.of(m);
            if wm.len() != wi.len() || keys[m] == keys[i] {
                continue;
            }
            let mut at = None;
            let mut count = 0;
            for (j, (a, b)) in wi.iter().zip(wm).enumerate() {
                if a != b {
                    count += 1;
                    if count > 1 {
                        break;
                    }
                    at = Some(j);
                }
            }
            if let (1, Some(j)) = (count, at) {
                diffs.push((j, wm[j]));
            }
        }
        // A column where two neighbours differ from this line and from each other.
        let column = diffs.iter().enumerate().find_map(|(a, &(j, v))| {
            diffs[a + 1..]
                .iter()
                .any(|&(k, u)| k == j && u != v)
                .then_some(j)
        });
        if let Some(j) = column {
            let hasher = foldhash::fast::FixedState::with_seed(SHAPE_SEED ^ NAME_SEED);
            let mut masked: Vec<u64> = Vec::with_capacity(wi.len() + 1);
            masked.push(j as u64);
            masked.extend(
                wi.iter()
                    .enumerate()
                    .map(|(k, &w)| if k == j { 0 } else { w }),
            );
            out[i] = hasher.hash_one(&masked);
            lits[i] = hasher.hash_one((lits[i], wi[j]));
        }
    }
    out
}

/// Mixed into the seed of name-column keys (they never equal a plain shape's).
const NAME_SEED: u64 = 0x0a3e_c01d;

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
/// no line allocates).
#[cfg(test)]
pub(crate) fn fold_shape_in(t: &[u8], buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    buf.resize(t.len(), 0);
    let (key, len) = shape_and_paths(t, buf, &mut Vec::new());
    buf.truncate(len);
    key
}

/// [`fold_shape`] and its masked text, written at the start of `out` (as long as `t`:
/// the masked text is never longer), and its length; each path-like word it masks is
/// appended to `paths` (each followed by a NUL). The text is written by index (a
/// push a byte reads and writes the table's length through memory) and hashed once.
fn shape_and_paths(t: &[u8], out: &mut [u8], paths: &mut Vec<u8>) -> (u64, usize) {
    use std::hash::BuildHasher as _;
    let n = t.len();
    // Bytes of `out` written: never more than the bytes of `t` read (`i`), so a write
    // at `w` (or as far past it as `i` is read past) is within `out`.
    let mut w = 0;
    // The next `/` or `.` and the start of the word holding it (see [`next_mark`]):
    // only a word holding one may be path-like, so the words before it are not
    // scanned for one.
    let mut mark = next_mark(t, 0);
    // Whether `i` starts a whitespace-delimited word: at the start and after spacing
    // alone (every other step ends past a byte that is not spacing).
    let mut word_start = true;
    let mut i = 0;
    while i < n {
        let c = t[i];
        if c == b' ' || c == b'\t' {
            while i < n && (t[i] == b' ' || t[i] == b'\t') {
                i += 1;
            }
            out[w] = b' ';
            w += 1;
            word_start = true;
            continue;
        }
        // The whitespace-delimited word starting here, when it starts one.
        if std::mem::take(&mut word_start) {
            // A mark before this word was in a word already read (or skipped as a
            // unit): the next one from here.
            if mark.is_some_and(|(m, _)| m < i) {
                mark = next_mark(t, i);
            }
            // Whether it holds a `/` or a `.` (a word with neither is not path-like:
            // most words skip the check), then its end.
            if mark.is_some_and(|(_, w)| w == i) {
                let e = t[i..]
                    .iter()
                    .position(|&c| c == b' ' || c == b'\t')
                    .map_or(n, |k| i + k);
                if path_like(&t[i..e]) {
                    out[w] = b'P';
                    w += 1;
                    paths.extend_from_slice(&t[i..e]);
                    paths.push(0);
                    i = e;
                    continue;
                }
            }
        }
        let class = CLASS[usize::from(c)];
        if class & DIGIT != 0 {
            // A number: digits, with `.`, `,`, `:` between digits, letters glued on,
            // and `-`, `+`, `~` before a letter or digit (a package version:
            // `1.2.0-14+deb12u1`, `0.8+5prealpha+1-16`, `2.0~rc1`).
            let mut j = i;
            while j < n {
                let glued = CLASS[usize::from(t[j])] & ALNUM != 0
                    || (matches!(t[j], b'.' | b',' | b':')
                        && t.get(j + 1).is_some_and(u8::is_ascii_digit))
                    || (matches!(t[j], b'-' | b'+' | b'~')
                        && t.get(j + 1).is_some_and(u8::is_ascii_alphanumeric));
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
                if e > j + 1 && UNITS.contains(&&t[j + 1..e]) {
                    j = e;
                }
            }
            out[w] = b'0';
            w += 1;
            i = j;
            continue;
        }
        // Letters and other bytes that are neither spacing nor digits stand as they
        // are: copied out in one run to the next spacing or digit (a pass of this loop
        // for each word of letters and each `:` or `_` between them took a quarter of
        // the masking). Read by index into both slices, bounded by the shorter (never
        // `out`'s, see `w`), so the copy checks no bound a byte.
        let (from, to) = (&t[i..], &mut out[w..]);
        let len = from.len().min(to.len());
        let mut k = 0;
        while k < len {
            let c = from[k];
            if CLASS[usize::from(c)] & (SPACING | DIGIT) != 0 {
                break;
            }
            to[k] = c;
            k += 1;
        }
        let e = i + k;
        // A digit after the run glued to letters at its end (`case2`, a hex id): the
        // word is read again from its first letter, below. Else the run stands as it
        // is (and a digit after it starts a number).
        let word_at = if t.get(e).is_some_and(u8::is_ascii_digit) {
            t[i..e]
                .iter()
                .rposition(|&c| CLASS[usize::from(c)] & ALNUM == 0)
                .map_or(i, |k| i + k + 1)
        } else {
            e
        };
        if word_at == e {
            w += e - i;
            i = e;
            continue;
        }
        // A word of letters and digits, from its first letter: a hex id, or its
        // letters with each run of digits as one `0`.
        w += word_at - i;
        i = word_at;
        let e = t[i..]
            .iter()
            .position(|&c| CLASS[usize::from(c)] & ALNUM == 0)
            .map_or(n, |k| i + k);
        let word = &t[i..e];
        if hex_id(word) {
            out[w] = b'h';
            w += 1;
        } else {
            let mut digits = false;
            for &c in word {
                if c.is_ascii_digit() {
                    if !digits {
                        out[w] = b'0';
                        w += 1;
                    }
                    digits = true;
                } else {
                    digits = false;
                    out[w] = c;
                    w += 1;
                }
            }
        }
        i = e;
    }
    let key = foldhash::fast::FixedState::with_seed(SHAPE_SEED).hash_one(&out[..w]);
    (key, w)
}

/// The first `/` or `.` in `t` at or after `from` (a word start, or 0), and the start
/// of the whitespace-delimited word holding it.
fn next_mark(t: &[u8], from: usize) -> Option<(usize, usize)> {
    let m = from + find_mark(&t[from..])?;
    // A plain loop: a line is short, a `memchr` call costs more than it saves.
    let word = t[from..m]
        .iter()
        .rposition(|&c| c == b' ' || c == b'\t')
        .map_or(from, |k| from + k + 1);
    Some((m, word))
}

/// The first `/` or `.` in `s`, read eight bytes at a time (each line is read to its
/// first mark, often to its end: a byte at a time this was a tenth of the masking).
/// `.` and `/` differ in their low bit alone, so a byte with that bit set equals `/`
/// for either; the word's bytes that do are zero after the `^`, and the lowest zero
/// byte is the first that sets its high bit in `x - LOW & !x` (a borrow only reaches
/// the bytes above a zero one).
fn find_mark(s: &[u8]) -> Option<usize> {
    const LOW: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const SLASH: u64 = u64::from_le_bytes([b'/'; 8]);
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let x = (u64::from_le_bytes(w.try_into().expect("8 bytes")) | LOW) ^ SLASH;
        let zero = x.wrapping_sub(LOW) & !x & HIGH;
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter().position(|&c| c | 1 == b'/').map(|k| at + k)
}

/// Whether `a` and `b` are as long and differ only in bytes that are ASCII digits in
/// both. Such lines mask alike ([`shape_and_paths`] reads a digit by its class, never
/// its value, and writes no digit out) and hold path-like words at the same places;
/// only those words' text (the paths appended) may differ. Read eight bytes at a time:
/// most words of two lines of a log are equal.
fn digits_apart(a: &[u8], b: &[u8]) -> bool {
    const LOW7: u64 = u64::from_le_bytes([0x7f; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const ZERO: u64 = u64::from_le_bytes([b'0'; 8]);
    const TEN: u64 = u64::from_le_bytes([0x80 - 10; 8]);
    // The high bit of each byte of `x` that is not an ASCII digit: `c ^ b'0'` is
    // 0 to 9 for a digit alone, and adding 118 to its low seven bits (no carry out of
    // a byte) sets the high bit from 10 up.
    let not_digit = |x: u64| {
        let t = x ^ ZERO;
        (((t & LOW7) + TEN) | t) & HIGH
    };
    // The high bit of each byte where `x` and `y` differ.
    let differ = |x: u64, y: u64| {
        let d = x ^ y;
        (((d & LOW7) + LOW7) | d) & HIGH
    };
    let apart = |x: u64, y: u64| differ(x, y) & (not_digit(x) | not_digit(y)) == 0;
    if a.len() != b.len() {
        return false;
    }
    let word = |x: &[u8]| u64::from_le_bytes(x.try_into().expect("8 bytes"));
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        if !apart(word(x), word(y)) {
            return false;
        }
    }
    let at = a.len() / 8 * 8;
    if at == a.len() {
        return true;
    }
    // The last bytes: the last eight, read again in part (no copy), or when the lines
    // are shorter, zero-filled to a word (equal there).
    if at > 0 {
        return apart(word(&a[a.len() - 8..]), word(&b[b.len() - 8..]));
    }
    let (mut x, mut y) = ([0; 8], [0; 8]);
    x[..a.len() - at].copy_from_slice(&a[at..]);
    y[..b.len() - at].copy_from_slice(&b[at..]);
    apart(u64::from_le_bytes(x), u64::from_le_bytes(y))
}

/// Byte classes for [`shape_and_paths`]' scans (one table load a byte): a space or
/// tab.
const SPACING: u8 = 2;
/// An ASCII letter or digit.
const ALNUM: u8 = 4;
/// An ASCII digit.
const DIGIT: u8 = 8;

/// Each byte's classes ([`SPACING`], [`ALNUM`], [`DIGIT`]).
const CLASS: [u8; 256] = {
    let mut m = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        m[c] = match b {
            b' ' | b'\t' => SPACING,
            b'0'..=b'9' => ALNUM | DIGIT,
            _ if b.is_ascii_alphabetic() => ALNUM,
            _ => 0,
        };
        c += 1;
    }
    m
};

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
        // Package versions are numbers: a package manager's per-item lines differ in
        // their name column alone.
        assert!(same(
            "Setting up libva-drm2:amd64 (2.17.0-1) ...",
            "Setting up libva-drm2:amd64 (1:1.19.1-2+deb12u1) ..."
        ));
        assert!(same(
            "Unpacking x (0.8+5prealpha+1-16) ...",
            "Unpacking x (2.0~rc1) ..."
        ));
        assert!(same(
            "Get:7 http://h/d b/main amd64 libx amd64 1.4.2+ds-2 [198 kB]",
            "Get:12 http://h/d b/main amd64 libx amd64 7:5.1.9-0+deb12u1 [1,103 kB]"
        ));
        // A word after a number and a dash that is not glued stays a word.
        assert!(!same("3 - ok", "3 - failed"));
        assert!(!same("took 3-4 min: ok", "took 3-4 min: failed"));
    }

    /// The run keys of `lines` (see [`name_column_keys`]).
    fn keys_of(lines: &[&str]) -> Vec<u64> {
        let mut masked = Masked::default();
        let keys: Vec<u64> = lines
            .iter()
            .map(|l| masked.push(l.as_bytes(), &mut Vec::new()))
            .collect();
        name_column_keys(&keys, &masked, &mut vec![0; lines.len()])
    }

    #[test]
    fn a_column_of_distinct_names_is_masked() {
        let names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
        let lines: Vec<String> = names
            .iter()
            .map(|n| format!("drwxr-xr-x 2 root root 4096 Nov 29 23:42 {n}"))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let keys = keys_of(&refs);
        assert!(keys.iter().all(|&k| k == keys[0]), "{keys:?}");
        // Names in another column (`Setting up NAME (VERSION) ...`) too.
        let keys = keys_of(&[
            "Setting up libogg (1.3.5-3) ...",
            "Setting up libspeex (1.2.1-2) ...",
            "Setting up libshine (3.1.1-2) ...",
            "Setting up libgsm (1.0.22-1) ...",
        ]);
        assert!(keys.iter().all(|&k| k == keys[0]), "{keys:?}");
    }

    #[test]
    fn per_item_lines_with_names_and_versions_of_any_shape_share_a_key() {
        // A package manager's lines: the name and the version vary, the version in
        // any shape; the other words are the same, so one key.
        let keys = keys_of(&[
            "Setting up libgfortran5:amd64 (12.2.0-14+deb12u1) ...",
            "Setting up libvulkan1:amd64 (1.3.239.0-1) ...",
            "Setting up librubberband2:amd64 (3.1.2+dfsg0-1) ...",
            "Setting up libsphinxbase3:amd64 (0.8+5prealpha+1-16) ...",
            "Setting up libavdevice59:amd64 (7:5.1.9-0+deb12u1) ...",
            "Setting up libflite1:amd64 (2.2-5) ...",
        ]);
        assert!(keys.iter().all(|&k| k == keys[0]), "{keys:?}");
        let keys = keys_of(&[
            "Get:66 http://deb.example.org/debian bookworm/main amd64 libflac12 amd64 1.4.2+ds-2 [198 kB]",
            "Get:67 http://deb.example.org/debian bookworm/main amd64 libsndfile1 amd64 1.2.0-1+deb12u1 [197 kB]",
            "Get:68 http://deb.example.org/debian bookworm/main amd64 libpulse0 amd64 16.1+dfsg1-2+b1 [274 kB]",
            "Get:69 http://deb.example.org/debian bookworm/main amd64 libpostproc56 amd64 7:5.1.9-0+deb12u1 [1,103 kB]",
        ]);
        assert!(keys.iter().all(|&k| k == keys[0]), "{keys:?}");
        // A line whose fixed words differ keeps its own key.
        let keys = keys_of(&[
            "Setting up liba:amd64 (1.2-3) ...",
            "Setting up libb:amd64 (2.0+dfsg-1) ...",
            "Removing libc:amd64 (3.1~rc1-2) ...",
            "Setting up libd:amd64 (4:1.0-1+b1) ...",
            "Setting up libe:amd64 (0.9-7) ...",
        ]);
        assert_ne!(keys[2], keys[1]);
        assert_eq!(keys[1], keys[3]);
    }

    #[test]
    fn a_status_column_that_repeats_is_not_a_name_column() {
        // Six `ok`s around one `FAILED`: the `FAILED` line keeps its own shape, so it
        // ends the run; the `ok` lines keep theirs.
        let mut lines = vec!["test parse ... ok"; 7];
        lines[3] = "test parse ... FAILED";
        let keys = keys_of(&lines);
        let plain = fold_shape(b"test parse ... ok");
        assert_eq!(keys[3], fold_shape(b"test parse ... FAILED"));
        assert!(keys.iter().enumerate().all(|(k, &v)| k == 3 || v == plain));
        // Two different names around it change nothing: two values, each repeated.
        let keys = keys_of(&[
            "GET /a 200 ok",
            "GET /a 200 ok",
            "GET /a 200 slow",
            "GET /a 200 ok",
            "GET /a 200 ok",
        ]);
        assert_ne!(keys[2], keys[1]);
    }

    /// A loose key by the definition (each byte read one at a time, pushed unless it
    /// repeats a space or `0` run), for checking the table-driven [`loose_keys`].
    fn loose_reference(t: &[u8], keep_digits: bool) -> u64 {
        use std::hash::BuildHasher as _;
        let mut buf = vec![u8::from(keep_digits)];
        let mut last = 0u8;
        for &c in t {
            let c = match c {
                b' ' | b'\t' => b' ',
                b'0'..=b'9' if !keep_digits => b'0',
                c => c,
            };
            if (c == b' ' || c == b'0') && c == last {
                continue;
            }
            buf.push(c);
            last = c;
        }
        foldhash::fast::FixedState::with_seed(SHAPE_SEED ^ LOOSE_SEED).hash_one(buf.as_slice())
    }

    /// The loose key of a line that is not salient stands for [`same_but_digits`]
    /// (see `repeated_block`): over every pair of texts of up to 4 bytes from letters,
    /// digits, spaces and tabs, equal keys exactly when the texts are the same but for
    /// spacing and digits.
    #[test]
    fn loose_keys_equal_exactly_when_the_same_but_for_spacing_and_digits() {
        let alphabet = [b'a', b'b', b'0', b'7', b' ', b'\t'];
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        let mut from = 0;
        for _ in 0..4 {
            let to = texts.len();
            for k in from..to {
                for &c in &alphabet {
                    let mut t = texts[k].clone();
                    t.push(c);
                    texts.push(t);
                }
            }
            from = to;
        }
        let keys: Vec<u64> = texts.iter().map(|t| loose_reference(t, false)).collect();
        for (a, ka) in texts.iter().zip(&keys) {
            for (b, kb) in texts.iter().zip(&keys) {
                assert_eq!(ka == kb, same_but_digits(a, b, true), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_logs_tables_are_sized_once() {
        // A test log's lines (four words each): the room `run_keys` reserves holds
        // their masked text, and the room for words holds them, so neither table is
        // copied into a larger one as it fills.
        let text: String = (0..2000)
            .map(|k| format!("test tests::case_{k:04} ... ok\n"))
            .collect();
        let doc = Doc::from_raw(text.as_bytes());
        let mut masked = Masked::for_lines(doc.lines.len(), doc.buf.len());
        let room = (masked.text.capacity(), masked.spans.capacity());
        for l in &doc.lines {
            masked.push(doc.text(l), &mut Vec::new());
        }
        assert_eq!((masked.text.capacity(), masked.spans.capacity()), room);
        let words = Words::of_lines(&masked, &vec![true; doc.lines.len()]);
        assert_eq!(words.hashes.len(), 4 * 2000);
        assert!(words.hashes.capacity() < 2 * 4 * 2000);
        assert_eq!(words.of(7).len(), 4);
    }

    #[test]
    fn only_lines_near_another_shape_look_for_a_name_column() {
        let near = near_other_shapes(&[1; 30]);
        assert!(near.iter().all(|&x| !x));
        let mut keys = [1; 30];
        keys[12] = 2;
        let near = near_other_shapes(&keys);
        let want: Vec<bool> = (0..30).map(|k| (4..=20).contains(&k)).collect();
        assert_eq!(near, want);
        let near = near_other_shapes(&[1, 1, 2]);
        assert_eq!(near, [true, true, true]);
    }

    #[test]
    fn loose_keys_read_spacing_and_digit_runs_as_one() {
        let text = "test a_0001 ... ok\n\t x  9 \t0.05s\nerror 100 at 7\nerror 10 at 8\n\n\
                    00 \t 00\u{0}0\n\u{e9}t\u{e9} 12:34\n";
        let doc = Doc::from_raw(text.as_bytes());
        let (_, _, as_prev) = run_keys(&doc);
        let salient = salient_lines(&doc, &doc.lines, &as_prev);
        let loose = loose_keys(&doc, &doc.lines, &salient, &as_prev);
        assert_eq!(salient, [false, false, true, true, false, false, false]);
        for (k, l) in doc.lines.iter().enumerate() {
            assert_eq!(
                loose[k],
                loose_reference(doc.text(l), salient[k]),
                "line {k}"
            );
        }
        // A salient line keeps its digits, but a run of `0`s reads as one.
        assert_ne!(loose[2], loose[3]);
        let one = |t: &str, d| loose_reference(t.as_bytes(), d);
        assert_eq!(one("error 100 at 7", true), one("error 10 at 7", true));
        assert_eq!(one("a  \t1234 b", false), one("a 5 b", false));
    }

    #[test]
    fn loose_keys_carried_from_the_line_before_are_the_lines_own() {
        // Lines a counter apart from the line before: a plain line's key is carried
        // over from it, a salient line's (it keeps its digits) is read afresh, as is
        // the key of the line after a salient one.
        let text = "step 0001 done  in 5 ms\nstep 0002 done  in 7 ms\nstep 0093 done  in 7 ms\n\
                    error 0003 at 9\nerror 0004 at 9\nstep 0005 done  in 1 ms\n\
                    step 0006 done  in 2 ms\n";
        let doc = Doc::from_raw(text.as_bytes());
        let (_, _, as_prev) = run_keys(&doc);
        let salient = salient_lines(&doc, &doc.lines, &as_prev);
        assert_eq!(as_prev, [false, true, true, false, true, false, true]);
        assert_eq!(salient, [false, false, false, true, true, false, false]);
        let loose = loose_keys(&doc, &doc.lines, &salient, &as_prev);
        for (k, l) in doc.lines.iter().enumerate() {
            let want = loose_reference(doc.text(l), salient[k]);
            assert_eq!(loose[k], want, "line {k}");
        }
        assert_eq!(loose[0], loose[2]);
        assert_ne!(loose[3], loose[4]);
    }

    /// [`shape_and_paths`] as it read each byte that is not a letter or digit as a
    /// step of its own.
    fn shape_and_paths_reference(t: &[u8], out: &mut [u8], paths: &mut Vec<u8>) -> (u64, usize) {
        use std::hash::BuildHasher as _;
        let n = t.len();
        // Bytes of `out` written: never more than the bytes of `t` read (`i`), so a write
        // at `w` (or as far past it as `i` is read past) is within `out`.
        let mut w = 0;
        // The next `/` or `.` and the start of the word holding it (see [`next_mark`]):
        // only a word holding one may be path-like, so the words before it are not
        // scanned for one.
        let mut mark = next_mark(t, 0);
        // Whether `i` starts a whitespace-delimited word: at the start and after spacing
        // alone (every other step ends past a byte that is not spacing).
        let mut word_start = true;
        let mut i = 0;
        while i < n {
            let c = t[i];
            if c == b' ' || c == b'\t' {
                while i < n && (t[i] == b' ' || t[i] == b'\t') {
                    i += 1;
                }
                out[w] = b' ';
                w += 1;
                word_start = true;
                continue;
            }
            // The whitespace-delimited word starting here, when it starts one.
            if std::mem::take(&mut word_start) {
                // A mark before this word was in a word already read (or skipped as a
                // unit): the next one from here.
                if mark.is_some_and(|(m, _)| m < i) {
                    mark = next_mark(t, i);
                }
                // Whether it holds a `/` or a `.` (a word with neither is not path-like:
                // most words skip the check), then its end.
                if mark.is_some_and(|(_, w)| w == i) {
                    let e = t[i..]
                        .iter()
                        .position(|&c| c == b' ' || c == b'\t')
                        .map_or(n, |k| i + k);
                    if path_like(&t[i..e]) {
                        out[w] = b'P';
                        w += 1;
                        paths.extend_from_slice(&t[i..e]);
                        paths.push(0);
                        i = e;
                        continue;
                    }
                }
            }
            let class = CLASS[usize::from(c)];
            if class & DIGIT != 0 {
                // A number: digits, with `.`, `,`, `:` between digits, letters glued on,
                // and `-`, `+`, `~` before a letter or digit (a package version:
                // `1.2.0-14+deb12u1`, `0.8+5prealpha+1-16`, `2.0~rc1`).
                let mut j = i;
                while j < n {
                    let glued = CLASS[usize::from(t[j])] & ALNUM != 0
                        || (matches!(t[j], b'.' | b',' | b':')
                            && t.get(j + 1).is_some_and(u8::is_ascii_digit))
                        || (matches!(t[j], b'-' | b'+' | b'~')
                            && t.get(j + 1).is_some_and(u8::is_ascii_alphanumeric));
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
                    if e > j + 1 && UNITS.contains(&&t[j + 1..e]) {
                        j = e;
                    }
                }
                out[w] = b'0';
                w += 1;
                i = j;
                continue;
            }
            if class & ALNUM != 0 {
                // A letter (digits were read above): a word of letters and digits, copied
                // out as it is read (a short copy after it costs a call a word).
                let mut e = i;
                let mut o = w;
                let mut seen = 0;
                while e < n {
                    let c = t[e];
                    let k = CLASS[usize::from(c)];
                    if k & ALNUM == 0 {
                        break;
                    }
                    seen |= k;
                    out[o] = c;
                    o += 1;
                    e += 1;
                }
                let word = &t[i..e];
                if seen & DIGIT == 0 {
                    // No digit: neither a hex id nor a number inside; the word as it is.
                    w = o;
                } else if hex_id(word) {
                    out[w] = b'h';
                    w += 1;
                } else {
                    // Written again: each run of digits as one `0`.
                    let mut digits = false;
                    for &c in word {
                        if c.is_ascii_digit() {
                            if !digits {
                                out[w] = b'0';
                                w += 1;
                            }
                            digits = true;
                        } else {
                            digits = false;
                            out[w] = c;
                            w += 1;
                        }
                    }
                }
                i = e;
                continue;
            }
            out[w] = c;
            w += 1;
            i += 1;
        }
        let key = foldhash::fast::FixedState::with_seed(SHAPE_SEED).hash_one(&out[..w]);
        (key, w)
    }

    #[test]
    fn lines_digits_apart_mask_alike_and_are_the_lines_a_byte_at_a_time_finds() {
        // Random lines as in the test below, each against a copy with some of its
        // digits changed (to digits: apart) or one other byte changed (not apart).
        let parts: &[&[u8]] = &[
            b"case",
            b"3",
            b"0001",
            b"1.2",
            b"0:00",
            b"-",
            b".",
            b"/",
            b"_",
            b" ",
            b"\t",
            b"MB",
            b"ms",
            b"deadbeef1",
            b"x86",
            b"src/",
            b"lib.rs",
            b"v2.0",
            b"\xc2\xb5s",
        ];
        let apart_ref = |a: &[u8], b: &[u8]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(c, d)| c == d || (c.is_ascii_digit() && d.is_ascii_digit()))
        };
        let mut x: u32 = 7;
        let mut next = |m: usize| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as usize % m
        };
        let (mut apart, mut not_apart) = (0, 0);
        for round in 0..20_000usize {
            let mut a = Vec::new();
            for _ in 0..round % 30 {
                a.extend_from_slice(parts[next(parts.len())]);
            }
            let mut b = a.clone();
            for _ in 0..next(4) {
                if b.is_empty() {
                    break;
                }
                let k = next(b.len());
                b[k] = if b[k].is_ascii_digit() && next(3) > 0 {
                    b'0' + next(10) as u8
                } else {
                    [b'0', b'a', b' ', b'.', b'/', 0xc3][next(6)]
                };
            }
            let line = String::from_utf8_lossy(&a);
            assert_eq!(digits_apart(&a, &b), apart_ref(&a, &b), "{line}");
            if digits_apart(&a, &b) {
                apart += 1;
                let (mut out_a, mut out_b) = (vec![0; a.len()], vec![0; b.len()]);
                let (ka, la) = shape_and_paths(&a, &mut out_a, &mut Vec::new());
                let (kb, lb) = shape_and_paths(&b, &mut out_b, &mut Vec::new());
                assert_eq!((ka, &out_a[..la]), (kb, &out_b[..lb]), "{line}");
            } else {
                not_apart += 1;
            }
        }
        assert!(apart > 5_000 && not_apart > 5_000, "{apart} {not_apart}");
    }

    #[test]
    fn a_copied_line_keys_as_if_masked_again() {
        // Run keys with the copy (lines digits apart) are those of every line masked.
        let text: String = (0..300)
            .map(|i| match i % 7 {
                0 => format!("test tests::case_{i:05} ... ok\n"),
                1 => format!("GET /api/v1/items/{i} 200 {}ms\n", i % 90 + 10),
                2 => format!("src/mod{}.rs:{}:{} warning\n", i % 3, i, i % 9),
                _ => format!("[{:02}:{:02}] step {i:04} done\n", i / 60, i % 60),
            })
            .collect();
        let doc = Doc::from_raw(text.as_bytes());
        let (keys, lits, _) = run_keys(&doc);
        // Every line masked afresh, as before the copy.
        use std::hash::BuildHasher as _;
        let hasher = foldhash::fast::FixedState::with_seed(SHAPE_SEED);
        let mut masked = Masked::for_lines(doc.lines.len(), doc.buf.len());
        let (mut fresh, mut fresh_lits) = (Vec::new(), Vec::new());
        for l in &doc.lines {
            let mut paths = Vec::new();
            let key = masked.push(doc.text(l), &mut paths);
            fresh.push(key);
            fresh_lits.push(hasher.hash_one((key, paths.as_slice())));
        }
        let fresh = name_column_keys(&fresh, &masked, &mut fresh_lits);
        assert_eq!((keys, lits), (fresh, fresh_lits));
    }

    #[test]
    fn shapes_are_the_shapes_read_a_byte_at_a_time() {
        // Random lines of numbers, units, words, hex ids, paths, punctuation, spacing
        // and UTF-8, each masked as the reference masks it.
        let parts: &[&[u8]] = &[
            b"a",
            b"Z",
            b"ok",
            b"case",
            b"3",
            b"0001",
            b"1.2",
            b"1,234",
            b"0:00",
            b"-",
            b"+",
            b"~",
            b".",
            b",",
            b":",
            b"/",
            b"_",
            b"%",
            b" ",
            b"  ",
            b"\t",
            b"MB",
            b" s",
            b"ms",
            b"\xc2\xb5s",
            b"\xe2\x94\x80",
            b"deadbeef1",
            b"fa85f64c2",
            b"x86",
            b"src/",
            b".rs",
            b"lib.rs",
            b"(",
            b")",
            b"[",
            b"=",
            b"\"",
            b"..",
        ];
        let mut x: u32 = 11;
        for round in 0..20_000u32 {
            let mut t = Vec::new();
            for _ in 0..round % 24 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                t.extend_from_slice(parts[(x >> 16) as usize % parts.len()]);
            }
            let (mut out, mut paths) = (vec![0; t.len()], Vec::new());
            let (mut ref_out, mut ref_paths) = (vec![0; t.len()], Vec::new());
            let (key, len) = shape_and_paths(&t, &mut out, &mut paths);
            let (ref_key, ref_len) = shape_and_paths_reference(&t, &mut ref_out, &mut ref_paths);
            let line = String::from_utf8_lossy(&t);
            assert_eq!(&out[..len], &ref_out[..ref_len], "{line}");
            assert_eq!((key, &paths), (ref_key, &ref_paths), "{line}");
        }
    }

    #[test]
    fn marks_are_found_as_a_byte_at_a_time_finds_them() {
        let plain = |s: &[u8]| s.iter().position(|&c| c == b'/' || c == b'.');
        // Every byte at every place of a word, its tail and past it.
        for len in 0..20 {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = c;
                    assert_eq!(find_mark(&s), plain(&s), "{c:#x} at {at} of {len}");
                }
            }
        }
        // Random words of marks, bytes next to them in value and bytes whose test
        // borrows into the byte above (a mark, `\x01`, `\x80` and up).
        let bytes = b"./a\x00\x01\x2d\x30\x80\xff\xaf\xae 0";
        let mut x: u32 = 1;
        for _ in 0..20_000 {
            let s: Vec<u8> = (0..(x % 23) as usize)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    bytes[(x >> 16) as usize % bytes.len()]
                })
                .collect();
            assert_eq!(find_mark(&s), plain(&s), "{s:?}");
        }
    }

    /// [`best_run`] as first written: the last block read back from the run's end.
    fn best_run_reference(keys: &[u64], i: usize) -> Option<Run> {
        let n = keys.len();
        let mut set: Vec<u64> = Vec::new();
        let mut best: Option<Run> = None;
        let mut j = i;
        for s in 1..=MAX_PERIOD {
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
                let mut seen: Vec<u64> = Vec::new();
                let mut k = end;
                while seen.len() < s {
                    k -= 1;
                    if !seen.contains(&keys[k]) {
                        seen.push(keys[k]);
                    }
                }
                let folded = |r: &Run| (r.end - i).saturating_sub(r.first + r.last);
                let run = Run {
                    end,
                    shapes: s,
                    first,
                    last: end - k,
                };
                if folded(&run) > 0 && best.is_none_or(|b| folded(&run) > folded(&b)) {
                    best = Some(run);
                }
            }
            j = end;
        }
        best
    }

    #[test]
    fn runs_are_the_runs_read_back_from_their_end() {
        // Random lines of 1 to 6 shapes, each line's run as the reference reads it.
        let mut x: u32 = 7;
        for round in 0..3_000u32 {
            let shapes = 1 + round % 6;
            let keys: Vec<u64> = (0..1 + round % 40)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    u64::from((x >> 16) % shapes)
                })
                .collect();
            for i in 0..keys.len() {
                assert_eq!(
                    best_run(&keys, i),
                    best_run_reference(&keys, i),
                    "{keys:?} at {i}"
                );
            }
        }
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
