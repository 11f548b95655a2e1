//! Inputs many times the budget: run the rules only on the pieces the output can show.
//!
//! An output of `max_bytes` shows at most the head, the tail and a few salient islands
//! of a long input. Rendering, stripping and collapsing all of a 100 MB log only to
//! elide it costs time and memory in proportion to the input, so for an input of at
//! least [`min_bytes`] (and more than one line) the pipeline instead reduces it to:
//!
//! - a *head window*: the first whole lines, 8× `head_bytes` to start with, grown until
//!   the lossless rules leave at least twice `head_bytes` of text;
//! - the same *tail window* at the end;
//! - *islands*: the lines around salient words found by one literal scan of the whole
//!   middle (the words and priorities of `head-tail-elide`, one line of each shape
//!   first, then the copies), each with `salient_context` lines on each side, within
//!   three times `salient_bytes`; and every other error line (priority 2 or above)
//!   alone, so that `head-tail-elide` shows it or counts it with its line number in
//!   its gap marker, as on the whole document (more than 65,536 of them, or more than
//!   a quarter of the input: the full pipeline runs);
//! - between them, one gap marker per stretch, in `head-tail-elide`'s format with
//!   original line numbers (1-based, inclusive) and byte offsets (0-based, half-open).
//!
//! Every piece goes through the lossless rules with its original line numbers; then
//! `traceback-keep` and `head-tail-elide` run on the reduced document as they would on
//! the whole one. The output keeps the same guarantees (within the budget, every
//! elision marked with a restore call, deterministic, a second pass changes nothing).
//! What can differ from the full pipeline, all on the elided side: a redraw in a window
//! cannot reach rows above the window; and the lossless footer counts frames and
//! escapes of the pieces only.
//!
//! When the windows would cover more than half the input (e.g. a single enormous line,
//! or a head that renders to almost nothing), [`reduce`] answers `None` and the full
//! pipeline runs.

use crate::doc::{Doc, Eol, Line, RawIndex};
use crate::marker::{Marker, RestoreCall};
use crate::pipeline::{lossless, Lossless};
use crate::rule::{RuleId, TextCounts};
use crate::salience::{self, shape, ISLAND_LINE_MAX};
use crate::Config;
use std::collections::HashSet;

/// Inputs at least this long (bytes) take the reduced path: 64 times the budget, and
/// at least 4 MiB.
pub(crate) fn min_bytes(config: &Config) -> usize {
    config.max_bytes.saturating_mul(64).max(4 << 20)
}

/// The reduced document and the index that maps its line numbers to original bytes.
pub(crate) struct Reduced<'a> {
    /// The pieces after the lossless rules, joined by gap markers.
    pub text: Lossless<'static>,
    /// Original line starts, anchored at each piece.
    pub raw: RawIndex<'a>,
}

/// Bytes of the middle scanned per salient-word search (cut at a line end).
const SCAN_CHUNK: usize = 1 << 20;

/// Reduces `input` (see the module docs), or `None` when the full pipeline should run.
pub(crate) fn reduce<'a>(input: &'a [u8], config: &Config) -> Option<Reduced<'a>> {
    let n = input.len();
    // Decided once on the whole input, for every piece.
    let ran = crate::rule::lossless_rules_ran(input);
    // Head window: whole lines, grown until they render to enough text.
    let mut want = config.head_bytes.max(1024).saturating_mul(8);
    let (head_end, head) = loop {
        let end = line_end_at_or_after(input, want)?;
        if end > n / 4 {
            return None;
        }
        let l = lossless(&input[..end], 0, config, ran);
        if l.doc.size() >= config.head_bytes.saturating_mul(2) {
            break (end, l);
        }
        want = want.saturating_mul(4);
    };
    // Tail window, the same way from the end (numbered from 0 until its first line's
    // number is known).
    let mut want = config.tail_bytes.max(1024).saturating_mul(8);
    let (tail_start, mut tail) = loop {
        let start = line_start_at_or_before(input, n.saturating_sub(want))?;
        if start < n - n / 4 || start <= head_end {
            return None;
        }
        let l = lossless(&input[start..], 0, config, ran);
        if l.doc.size() >= config.tail_bytes.saturating_mul(2) {
            break (start, l);
        }
        want = want.saturating_mul(4);
    };

    let head_lines = count_lines(&input[..head_end]);
    let eol = head.doc.dominant_eol();
    let mut out = Joined::new(head, eol);
    let mut anchors = vec![(head_lines, head_end)];
    // Islands, then the tail; each after a gap marker for the lines before it.
    let (mut at, mut line) = (head_end, head_lines);
    let islands = islands(input, head_end, tail_start, config)?;
    for (s, e) in islands.into_iter().chain([(tail_start, n)]) {
        let first = line.saturating_add(count_lines(&input[at..s]));
        if s > at {
            let b = first.saturating_sub(1).max(line);
            let m = Marker::gap(
                RuleId::HeadTailElide,
                line,
                b,
                (at as u64, s as u64),
                RestoreCall::Lines {
                    start: line as u64 + 1,
                    end: b as u64 + 1,
                },
            );
            out.gap(m, line, b);
        }
        anchors.push((first, s));
        let piece = &input[s..e];
        if s == tail_start {
            tail.doc.shift_lines(first);
            out.append(tail);
            break;
        }
        out.append(lossless(piece, first, config, ran));
        line = first.saturating_add(count_lines(piece));
        at = e;
        anchors.push((line, e));
    }
    Some(Reduced {
        text: out.finish(),
        raw: RawIndex::anchored(input, anchors),
    })
}

/// Newlines in `b`, as a line count that saturates.
fn count_lines(b: &[u8]) -> u32 {
    u32::try_from(memchr::memchr_iter(b'\n', b).count()).unwrap_or(u32::MAX)
}

/// The offset just past the first `\n` at or after `at - 1` (so a window of `at` bytes
/// ending on a line end keeps its size), or `None` when there is none.
fn line_end_at_or_after(input: &[u8], at: usize) -> Option<usize> {
    let from = at.saturating_sub(1).min(input.len());
    memchr::memchr(b'\n', &input[from..]).map(|k| from + k + 1)
}

/// The start of the line holding offset `at` (just past the `\n` before it), or `None`
/// when that is the first line.
fn line_start_at_or_before(input: &[u8], at: usize) -> Option<usize> {
    memchr::memrchr(b'\n', &input[..at.min(input.len())]).map(|k| k + 1)
}

/// The longest salient line an island takes (bytes): `head-tail-elide` shows a window
/// of a line longer than [`ISLAND_LINE_MAX`], so the piece need not be the whole
/// window's worth; past this the line is left in the gap.
const LONG_LINE_MAX: usize = 256 * 1024;

/// What the line `s..e` is counted as in the island budget (bytes): its raw size
/// (escapes make raw text larger than what is shown), up to twice the longest line an
/// island shows whole (a longer one shows a window of at most that).
fn island_size(s: usize, e: usize) -> usize {
    (e - s).min(2 * ISLAND_LINE_MAX)
}

/// Salient lines of this priority or above are never left in a gap the pieces hide:
/// each is a piece, so `head-tail-elide` shows it or counts it, with its line number,
/// in its own gap marker (as it does for the lines of the whole document).
const COUNTED_PRIORITY: u8 = 2;

/// The most salient lines the pieces may hold, and the most bytes of the input they
/// may cover (a quarter of it): past either, the full pipeline runs instead.
const COUNTED_MAX: usize = 1 << 16;

/// The islands of the middle `lo..hi` (whole lines, in order, not overlapping): the
/// lines around the salient lines `head-tail-elide` could keep, and every other line
/// of priority [`COUNTED_PRIORITY`] or above alone (it counts them); `None` when
/// those are too many for the reduced path to be worth it.
fn islands(input: &[u8], lo: usize, hi: usize, config: &Config) -> Option<Vec<(usize, usize)>> {
    let ctx = config.salient_context;
    // Salient lines as (start, end without the newline, priority), in order: the whole
    // middle is scanned, as `head-tail-elide` scans the whole document (an early stop
    // once islands were full once left later error lines neither shown nor counted).
    let mut lines: Vec<(usize, usize, u8)> = Vec::new();
    let mut at = lo;
    while at < hi {
        let end = line_end_at_or_after(&input[..hi], at + SCAN_CHUNK).unwrap_or(hi);
        for (k, prio) in salience::salient_matches(&input[at..end]) {
            let pos = at + k;
            let s = memchr::memrchr(b'\n', &input[lo..pos]).map_or(lo, |j| lo + j + 1);
            let e = memchr::memchr(b'\n', &input[pos..hi]).map_or(hi, |j| pos + j);
            match lines.last_mut() {
                Some(last) if last.0 == s => last.2 = last.2.max(prio),
                _ => lines.push((s, e, prio)),
            }
        }
        at = end;
    }
    // The candidates `head-tail-elide` would try first, within three times the island
    // budget by their raw size (escapes make raw text larger than what is shown): one
    // line of each shape, best first, then the copies, as it places them.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| lines[b].2.cmp(&lines[a].2).then(a.cmp(&b)));
    let mut seen: HashSet<u64> = HashSet::new();
    let mut chosen = vec![false; lines.len()];
    let mut copies: Vec<usize> = Vec::new();
    let mut cost = 0usize;
    let cap = config.salient_bytes.saturating_mul(3);
    // Saturating: `SNIP_SALIENT_CONTEXT` may be as large as `usize::MAX`.
    let line_cost = |(s, e, _): (usize, usize, u8)| {
        (island_size(s, e) + 1)
            .saturating_mul(ctx.saturating_mul(2).saturating_add(1))
            .saturating_add(200)
    };
    // Chooses line `k` if its cost still fits under `cap`.
    let mut choose = |k: usize| {
        if let Some(sum) = cost
            .checked_add(line_cost(lines[k]))
            .filter(|&sum| sum <= cap)
        {
            cost = sum;
            chosen[k] = true;
        }
    };
    if config.salient_bytes > 0 {
        for k in order {
            let (s, e, _) = lines[k];
            if e - s > LONG_LINE_MAX {
                continue;
            }
            if !seen.insert(shape(&input[s..e])) {
                copies.push(k);
                continue;
            }
            choose(k);
        }
        for k in copies {
            choose(k);
        }
    }
    // Each chosen line with `ctx` lines around it, every other counted line alone,
    // merged when they touch.
    let mut out: Vec<(usize, usize)> = Vec::new();
    let (mut counted, mut counted_bytes) = (0usize, 0usize);
    for (k, &(line_s, line_end, prio)) in lines.iter().enumerate() {
        let line_e = (line_end + 1).min(hi);
        let (mut s, mut e) = (line_s, line_e);
        if chosen[k] {
            for _ in 0..ctx {
                if s <= lo {
                    break;
                }
                s = memchr::memrchr(b'\n', &input[lo..s - 1]).map_or(lo, |j| lo + j + 1);
            }
            for _ in 0..ctx {
                if e >= hi {
                    break;
                }
                e = memchr::memchr(b'\n', &input[e..hi]).map_or(hi, |j| e + j + 1);
            }
            if e - s > 16 * ISLAND_LINE_MAX {
                // Long neighbours would only be elided again: the line alone.
                (s, e) = (line_s, line_e);
            }
        } else if prio >= COUNTED_PRIORITY {
            counted += 1;
            counted_bytes += line_e - line_s;
            if counted > COUNTED_MAX || counted_bytes > input.len() / 4 {
                return None;
            }
        } else {
            continue;
        }
        // A chosen line's context may reach back past the lines counted before it.
        while let Some(&(ls, le)) = out.last() {
            if s > le {
                break;
            }
            out.pop();
            (s, e) = (s.min(ls), e.max(le));
        }
        out.push((s, e));
    }
    Some(out)
}

/// Pieces joined into one document.
struct Joined {
    text: Lossless<'static>,
    eol: Eol,
}

impl Joined {
    fn new(head: Lossless<'_>, eol: Eol) -> Joined {
        let text = Lossless {
            doc: Doc::owned(head.doc.buf.len() * 2),
            raw_offsets: false,
            counts: TextCounts::default(),
            line_starts: None,
            newlines: None,
        };
        let mut j = Joined { text, eol };
        j.append(head);
        j
    }

    /// Appends a piece's lines, markers and counts.
    fn append(&mut self, piece: Lossless<'_>) {
        let t = &mut self.text;
        t.counts.merge(&piece.counts);
        let buf = t.doc.buf.to_mut();
        let off = buf.len();
        buf.extend_from_slice(&piece.doc.buf);
        let marker_off = t.doc.markers.len() as u32;
        t.doc.lines.extend(piece.doc.lines.iter().map(|l| Line {
            start: l.start + off,
            end: l.end + off,
            marker: l.marker.map(|i| i + marker_off),
            ..*l
        }));
        t.doc.markers.extend(piece.doc.markers);
    }

    /// Adds a gap marker line for original lines `a..=b` (0-based).
    fn gap(&mut self, m: crate::marker::Marker, a: u32, b: u32) {
        // A piece that ended without a line ending gets one before the marker.
        if let Some(l) = self.text.doc.lines.last_mut() {
            if l.eol == Eol::None {
                l.eol = self.eol;
            }
        }
        let line = self.text.doc.marker_line(m, self.eol, a, b);
        self.text.doc.lines.push(line);
    }

    fn finish(self) -> Lossless<'static> {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compress, NoStore};

    /// `i` spelled in letters (`305` → `dae`): error lines that differ in shape, not
    /// only in a number.
    fn name(i: usize) -> String {
        i.to_string()
            .bytes()
            .map(|d| (d - b'0' + b'a') as char)
            .collect()
    }

    /// A log of `lines` numbered lines (no two of one shape) with an error line every
    /// `every` lines.
    fn log(lines: usize, every: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..lines {
            if every > 0 && i % every == every / 2 {
                v.extend_from_slice(
                    format!("error: disk {} failed to spin up\n", name(i)).as_bytes(),
                );
            } else {
                // Distinct words in two columns of each line (`name`): no two lines
                // share a shape, nor all words but a name column, so `shape-fold`
                // leaves the log alone.
                let n = name(i);
                v.extend_from_slice(
                    format!("line {i:07} {n} \x1b[32mok\x1b[0m pkg-{n}\n").as_bytes(),
                );
            }
        }
        v
    }

    #[test]
    fn inputs_under_the_threshold_take_the_full_pipeline() {
        let cfg = Config::default();
        // Just under 4 MiB, errors in the middle: the same bytes as the unreduced run
        // (the reduced path would count escapes of the shown pieces only).
        let mut input = log(110_000, 30_000);
        while input.len() >= min_bytes(&cfg) {
            input.truncate(input.len() - 1);
        }
        let cut = input.iter().rposition(|&b| b == b'\n').expect("lines") + 1;
        input.truncate(cut);
        assert!(input.len() > 3 << 20, "{}", input.len());
        let o = compress(&input, &cfg, &mut NoStore);
        assert!(o.changed);
        assert_eq!(
            o.output,
            crate::pipeline::compress_unreduced(&input, &cfg).output
        );
        // And at the threshold, the reduced path is taken.
        let big = log(150_000, 30_000);
        assert!(big.len() >= min_bytes(&cfg));
        assert!(reduce(&big, &cfg).is_some());
    }

    #[test]
    fn markers_quote_exact_original_ranges() {
        let cfg = Config::default();
        let input = log(200_000, 50_000);
        let r = reduce(&input, &cfg).expect("reduced");
        let doc = &r.text.doc;
        // Every line and gap marker names original lines whose bytes are where the
        // index says; the pieces cover the input in order, without overlap.
        let full = RawIndex::new(&input);
        let mut next = 0u32;
        for l in &doc.lines {
            assert_eq!(l.src_first, next, "lines are contiguous: {l:?}");
            next = l.src_last + 1;
            assert_eq!(
                r.raw.bytes(l.src_first, l.src_last),
                full.bytes(l.src_first, l.src_last)
            );
            if let Some(i) = l.marker {
                let m = &doc.markers[i as usize];
                let (a, b) = m.lines.expect("gap markers name lines");
                assert_eq!((a - 1, b - 1), (l.src_first as u64, l.src_last as u64));
                assert_eq!(
                    m.bytes,
                    Some(full.bytes(l.src_first, l.src_last)),
                    "{}",
                    m.render(None)
                );
            }
        }
        assert_eq!(next as usize, 200_000);
        // The islands hold the error lines.
        let text = String::from_utf8_lossy(&doc.buf);
        for i in [25_000, 75_000, 125_000, 175_000] {
            assert!(
                text.contains(&format!("error: disk {} failed", name(i))),
                "{i}"
            );
        }
    }

    #[test]
    fn reduced_output_matches_the_full_pipeline_at_the_ends() {
        let cfg = Config::default();
        let input = log(200_000, 50_000);
        let fast = compress(&input, &cfg, &mut NoStore).output;
        let slow = crate::pipeline::compress_unreduced(&input, &cfg).output;
        assert!(fast.len() <= cfg.max_bytes, "{}", fast.len());
        let lines =
            |b: &[u8]| -> Vec<Vec<u8>> { b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect() };
        let (f, s) = (lines(&fast), lines(&slow));
        // The same head and tail (the footer's escape count covers the pieces only).
        let head = |v: &[Vec<u8>]| -> Vec<Vec<u8>> {
            v.iter()
                .take_while(|l| !l.starts_with(b"[snip: "))
                .cloned()
                .collect()
        };
        let tail = |v: &[Vec<u8>]| -> Vec<Vec<u8>> {
            let mut t: Vec<Vec<u8>> = v
                .iter()
                .rev()
                .skip_while(|l| l.is_empty() || l.starts_with(b"[snip: "))
                .take_while(|l| !l.starts_with(b"[snip: "))
                .cloned()
                .collect();
            t.reverse();
            t
        };
        assert!(head(&f).len() > 100 && tail(&f).len() > 100);
        assert_eq!(head(&f), head(&s));
        assert_eq!(tail(&f), tail(&s));
        let fast = &fast;
        // A second pass changes nothing.
        let again = compress(fast, &cfg, &mut NoStore);
        assert!(!again.changed);
    }

    #[test]
    fn crlf_and_no_final_newline_survive() {
        let cfg = Config::default();
        let mut input: Vec<u8> = log(200_000, 70_000)
            .split(|&c| c == b'\n')
            .flat_map(|l| l.iter().copied().chain(*b"\r\n"))
            .collect();
        input.truncate(input.len() - 4); // "...\r\n\r\n" -> no final newline
        let fast = compress(&input, &cfg, &mut NoStore).output;
        let slow = crate::pipeline::compress_unreduced(&input, &cfg).output;
        assert!(fast.len() <= cfg.max_bytes);
        assert!(!fast.ends_with(b"\n") || slow.ends_with(b"\n"));
        assert_eq!(
            fast.windows(2).filter(|w| w == b"\r\n").count(),
            fast.iter().filter(|&&c| c == b'\n').count(),
            "every line ending stays CRLF"
        );
        assert!(
            String::from_utf8_lossy(&fast).contains(&format!("error: disk {} failed", name(35000)))
        );
    }

    #[test]
    fn a_tail_of_redraws_grows_the_window_or_falls_back() {
        let cfg = Config::default();
        let mut input = log(150_000, 0);
        for i in 0..400_000 {
            input.extend_from_slice(format!("\rfetch {}% ", i % 100).as_bytes());
        }
        input.extend_from_slice(b"\nfetch done\n");
        let fast = compress(&input, &cfg, &mut NoStore).output;
        let text = String::from_utf8_lossy(&fast);
        assert!(fast.len() <= cfg.max_bytes, "{}", fast.len());
        assert!(text.contains("fetch done"), "{text}");
        assert!(text.contains("line 0000000"), "{text}");
    }

    /// A long first and last line, which the head and the tail cut: the gap marker's
    /// bytes start where the shown start of the first line ends and end where the
    /// shown end of the last one starts, as on the unreduced document (they named
    /// both whole lines, ~19.5 KB also shown).
    #[test]
    fn a_long_line_cut_at_either_end_is_named_from_the_cut() {
        let cfg = Config::default();
        let mut input = Vec::new();
        for k in 0..43 {
            input.extend_from_slice(format!("H{k}").as_bytes());
            input.extend(std::iter::repeat_n(b'a', 100_000));
            input.extend_from_slice(b"T\n");
            for i in 0..10 {
                input.extend_from_slice(format!("mid {k} {i}\n").as_bytes());
            }
        }
        assert!(input.len() >= min_bytes(&cfg));
        assert!(reduce(&input, &cfg).is_some());
        let range = |out: &[u8]| -> (u64, u64, usize, usize) {
            let text = String::from_utf8_lossy(out);
            let at = text.find("[snip: ").expect("a marker");
            let end = at + text[at..].find(']').expect("its end") + 1;
            let m = crate::marker::parse(&text[at..end]).expect("a gap marker");
            let (s, e) = m.bytes.expect("bytes");
            (s, e, at, end)
        };
        let fast = compress(&input, &cfg, &mut NoStore).output;
        let (s, e, at, end) = range(&fast);
        // Shown: the original up to the cut (and a line ending), the marker, then the
        // original from the cut on.
        assert!(s > 0 && (e as usize) < input.len(), "{s}-{e}");
        assert_eq!(&fast[..at], [&input[..s as usize], b"\n"].concat());
        assert_eq!(&fast[end + 1..], &input[e as usize..]);
        let slow = crate::pipeline::compress_unreduced(&input, &cfg).output;
        assert_eq!(range(&slow).0..range(&slow).1, s..e);
    }

    #[test]
    fn one_enormous_line_takes_the_full_pipeline() {
        let cfg = Config::default();
        let mut input = vec![b'x'; 6 << 20];
        input.push(b'\n');
        assert!(reduce(&input, &cfg).is_none());
        let o = compress(&input, &cfg, &mut NoStore);
        assert!(o.output.len() <= cfg.max_bytes);
    }
}
