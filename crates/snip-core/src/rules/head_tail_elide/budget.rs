//! `head-tail-elide` within the budget: the rule retried with smaller head, tail and
//! island room until its markers and the footer fit, and its lossy pass.

use super::{apply_from, report};
use crate::doc::{Doc, RawIndex};
use crate::rule::Elide;
use crate::{Config, RuleReport};

/// The lossy pass: over the budget, elides the middle of the working document within
/// it. Returns the receipt row counted from the document's `head-tail-elide` markers
/// (also those a reduced input already holds).
pub(crate) fn pass(e: &mut Elide<'_, '_>) -> Option<RuleReport> {
    if e.size > e.config.max_bytes {
        if let Some(s) = within_budget(e.doc, e.config, e.raw, e.raw_offsets, true) {
            e.size = s;
        }
    }
    report(e.doc)
}

/// Runs `head-tail-elide`, shrinking head and tail when markers and the footer push
/// the result over the budget (so that a second pass finds nothing to elide).
/// Returns the document's new size ([`Doc::size`]), or `None` when nothing was elided.
pub(crate) fn within_budget(
    doc: &mut Doc<'_>,
    config: &Config,
    raw: &RawIndex,
    raw_offsets: bool,
    cut_lines: bool,
) -> Option<usize> {
    let mut cfg = config.clone();
    for attempt in 0..8 {
        if attempt == 7 {
            // Markers alone fill a tiny budget: keep only them.
            cfg.head_bytes = 0;
            cfg.tail_bytes = 0;
            cfg.salient_bytes = 0;
        }
        // The rule changes lines and markers, never the buffer: trials share it, and
        // read the same lines (each trial's result is a new, shorter list).
        let mut trial = Doc {
            buf: std::borrow::Cow::Borrowed(&doc.buf),
            lines: Vec::new(),
            markers: doc.markers.clone(),
            footer: doc.footer.clone(),
        };
        if !apply_from(&mut trial, &doc.lines, &cfg, raw, raw_offsets, cut_lines) {
            continue;
        }
        let size = trial.size();
        if size <= config.max_bytes || attempt == 7 {
            doc.lines = trial.lines;
            doc.markers = trial.markers;
            return Some(size);
        }
        let over = size - config.max_bytes + 16;
        cfg.head_bytes = cfg.head_bytes.saturating_sub(over / 2 + 1);
        cfg.tail_bytes = cfg.tail_bytes.saturating_sub(over / 2 + 1);
        cfg.salient_bytes = cfg.salient_bytes.saturating_sub(over);
    }
    None
}
