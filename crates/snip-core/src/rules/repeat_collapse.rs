//! `repeat-collapse` — a run of identical lines keeps its first line and a count.
//!
//! **What it does.** Finds runs of at least `repeat_min` byte-identical lines and
//! replaces all but the first with one marker giving the count and the original line
//! numbers of the removed copies.
//!
//! **Why.** Health-check logs, retry loops and spinners that print lines repeat the same
//! line thousands of times; one copy and a count say the same.
//!
//! **Example.** `GET /healthz 200` × 1342 → the line, then
//! `[snip: previous line repeated 1341 more times · repeat-collapse · lines 12-1352 · …]`.
//!
//! **Options.** `SNIP_REPEAT_MIN` (default 3). A run is collapsed only when the marker
//! is shorter than what it replaces. Lossless in meaning; applies at any size.

use crate::doc::{Doc, Line};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::{RuleId, Text, TextCounts};
use crate::Config;

/// Collapses runs in `doc`. Returns `(runs, lines_removed)`.
pub(crate) fn apply(doc: &mut Doc<'_>, config: &Config) -> (u64, u64) {
    let n = doc.lines.len();
    let min = config.repeat_min.max(2);
    // Cheap scan first: is there any run at all?
    let mut any = false;
    let mut run = 1;
    for k in 1..n {
        let (a, b) = (&doc.lines[k - 1], &doc.lines[k]);
        if same(doc, a, b) {
            run += 1;
            if run >= min {
                any = true;
                break;
            }
        } else {
            run = 1;
        }
    }
    if !any {
        return (0, 0);
    }
    let mut out: Vec<Line> = Vec::with_capacity(n);
    let (mut runs, mut removed) = (0u64, 0u64);
    // The first original line no marker before names: on rendered text a row's line
    // range covers every frame that wrote it, so neighbouring rows' ranges interleave
    // and a run's range is cut to start past the previous marker's.
    let mut floor = 0u32;
    let mut k = 0;
    while k < n {
        let first = doc.lines[k];
        let mut j = k + 1;
        while j < n && same(doc, &first, &doc.lines[j]) {
            j += 1;
        }
        let count = j - k;
        let removed_bytes: usize = doc.lines[k + 1..j].iter().map(|l| doc.line_size(l)).sum();
        out.push(first);
        let last = doc.lines[j - 1];
        let second = doc.lines[(k + 1).min(j - 1)];
        let (a, b) = (second.src_first.max(floor), last.src_last);
        if count >= min && a <= b {
            let (start, end) = (a as u64 + 1, b as u64 + 1);
            let m = Marker {
                what: format!("previous line repeated {} more times", count - 1),
                rule: RuleId::RepeatCollapse,
                lines: Some((start, end)),
                bytes: None,
                recovery: Recovery::Lossless(RestoreCall::Lines { start, end }),
            };
            let size = m.sizing_len() + last.eol.bytes().len();
            if size < removed_bytes {
                floor = b.saturating_add(1);
                let line = doc.marker_line(m, last.eol, a, b);
                out.push(line);
                runs += 1;
                removed += (count - 1) as u64;
            } else {
                out.extend_from_slice(&doc.lines[k + 1..j]);
            }
        } else {
            out.extend_from_slice(&doc.lines[k + 1..j]);
        }
        k = j;
    }
    doc.lines = out;
    (runs, removed)
}

#[inline]
fn same(doc: &Doc<'_>, a: &Line, b: &Line) -> bool {
    a.marker.is_none() && b.marker.is_none() && doc.text(a) == doc.text(b)
}

/// The lossless pass: collapses the runs of the working text, unless the whole input
/// is a rendering snip made ([`Text::lossless_ran`]): this pass ran on it then, and a
/// run it left there stays. On rendered text a run whose removed rows were written by
/// lines an earlier marker already names is left whole (see [`apply`]); read again,
/// the rendering no longer says which lines wrote which row, so the run would collapse
/// and a second pass would change the output.
pub(crate) fn pass(t: &mut Text<'_>, config: &Config) {
    if t.lossless_ran {
        return;
    }
    let (runs, repeated) = apply(t.doc(), config);
    t.counts.runs += runs;
    t.counts.repeated += repeated;
}

/// The receipt row: `runs` collapsed and `lines_removed`; `None` when there was none.
pub(crate) fn report(c: &TextCounts) -> Option<crate::RuleReport> {
    (c.runs > 0).then(|| crate::RuleReport {
        id: RuleId::RepeatCollapse,
        counts: vec![("runs", c.runs), ("lines_removed", c.repeated)],
    })
}
