//! The ordered rules. [`REGISTRY`] is the execution order: the pipeline runs the gates,
//! then the lossless text rules, then the lossy ones, in the order listed here; each
//! entry also knows how to run its rule alone ([`apply_one`]).
//!
//! Each rule lives in its own module under `rules/` and imports only the floor
//! (`doc`, `marker`, `text`, `escape`, `salience`, `json`), never another rule; it
//! builds its own receipt row (a `report` function next to its `apply`).

pub(crate) mod ansi_strip;
pub(crate) mod diff_protect;
pub(crate) mod head_tail_elide;
pub mod json_fields;
pub(crate) mod repeat_collapse;
pub(crate) mod shape_fold;
pub(crate) mod terminal_render;
pub(crate) mod traceback_keep;

use crate::doc::{Doc, RawIndex};
use crate::marker::Marker;
use crate::rule::{Pass, RuleId, Stage, Streamed};
use crate::Config;

/// One rule: its identity, stage, documentation summary, and how to run it alone.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    /// Stable id, used in markers and receipts.
    pub id: RuleId,
    /// When it runs: gates first, then lossless rules at any size, then lossy rules
    /// above the budget.
    pub stage: Stage,
    /// Whether the rule can remove information (needs a retained original).
    pub lossy: bool,
    /// One line: what it does.
    pub summary: &'static str,
    /// What it does in the pipeline, at its stage.
    pub(crate) pass: Pass,
    /// Whether and how it runs on a stream ([`crate::stream`]).
    pub(crate) stream: Streamed,
    /// The rule alone on a whole input (see [`apply_one`]).
    solo: fn(&[u8], &Config) -> Option<Vec<u8>>,
}

impl PartialEq for RuleInfo {
    fn eq(&self, other: &RuleInfo) -> bool {
        self.id == other.id
    }
}

impl Eq for RuleInfo {}

/// Every rule, in execution order.
pub const REGISTRY: &[RuleInfo] = &[
    RuleInfo {
        id: RuleId::DiffProtect,
        stage: Stage::Gate,
        lossy: false,
        summary: "diffs and patches are returned byte-identical",
        pass: Pass::Gate(diff_protect::gate),
        stream: Streamed::PassThrough(diff_protect::is_diff),
        solo: |input, _| diff_protect::is_diff(input).then(|| input.to_vec()),
    },
    RuleInfo {
        id: RuleId::JsonFields,
        stage: Stage::Gate,
        lossy: true,
        summary: "one JSON document: elide inside long strings and the middle of long arrays, keeping it valid",
        pass: Pass::Gate(|g| json_fields::gate(g, &lossless_text)),
        stream: Streamed::PassThrough(json_fields::opens_multiline_document),
        solo: |input, config| {
            json_fields::apply(input, config, None, true, &lossless_text).map(|j| j.output)
        },
    },
    RuleInfo {
        id: RuleId::TerminalRender,
        stage: Stage::Lossless,
        lossy: false,
        summary: "collapse carriage-return and cursor redraws to the frame a terminal shows",
        pass: Pass::Lossless {
            apply: |t, _| terminal_render::pass(t),
            report: terminal_render::report,
        },
        stream: Streamed::PerWindow,
        solo: |input, _| {
            let mut r = terminal_render::render(input)?;
            r.doc.footer.extend(Marker::lossless_footer(
                r.frames_removed,
                r.backspaces_removed,
                0,
                None,
            ));
            Some(r.doc.render(None))
        },
    },
    RuleInfo {
        id: RuleId::AnsiStrip,
        stage: Stage::Lossless,
        lossy: false,
        summary: "remove remaining SGR/CSI/OSC escapes",
        pass: Pass::Lossless {
            apply: |t, _| ansi_strip::pass(t),
            report: ansi_strip::report,
        },
        stream: Streamed::PerWindow,
        solo: |input, _| on_doc(input, |doc, _| ansi_strip::apply(doc) > 0),
    },
    RuleInfo {
        id: RuleId::RepeatCollapse,
        stage: Stage::Lossless,
        lossy: false,
        summary: "a run of identical lines keeps its first line and a count",
        pass: Pass::Lossless {
            apply: repeat_collapse::pass,
            report: repeat_collapse::report,
        },
        stream: Streamed::AcrossWindows,
        solo: |input, config| on_doc(input, |doc, _| repeat_collapse::apply(doc, config).0 > 0),
    },
    RuleInfo {
        id: RuleId::TracebackKeep,
        stage: Stage::Lossy,
        lossy: true,
        summary: "keep a traceback's header, first and last frames and exception lines",
        pass: Pass::Lossy(traceback_keep::pass),
        stream: Streamed::Skipped,
        solo: |input, config| {
            on_doc(input, |doc, raw| traceback_keep::apply(doc, config, raw).0 > 0)
        },
    },
    RuleInfo {
        id: RuleId::ShapeFold,
        stage: Stage::Lossy,
        lossy: true,
        summary: "over the budget a run of lines of one shape (numbers, ids, paths masked) keeps its first and last line and a count",
        pass: Pass::Lossy(shape_fold::pass),
        stream: Streamed::Skipped,
        solo: |input, config| {
            on_doc(input, |doc, raw| {
                doc.size() > config.max_bytes && shape_fold::apply(doc, config, raw).folds > 0
            })
        },
    },
    RuleInfo {
        id: RuleId::HeadTailElide,
        stage: Stage::Lossy,
        lossy: true,
        summary: "over the budget keep head, tail and salient islands of the middle",
        pass: Pass::Lossy(head_tail_elide::pass),
        stream: Streamed::AcrossWindows,
        solo: |input, config| {
            on_doc(input, |doc, raw| {
                doc.size() > config.max_bytes && head_tail_elide::apply(doc, config, raw, true)
            })
        },
    },
];

/// The registry entry of `id`.
pub fn info(id: RuleId) -> &'static RuleInfo {
    REGISTRY
        .iter()
        .find(|r| r.id == id)
        .expect("every RuleId is in the registry (tested)")
}

/// The rules of one stage, in execution order.
pub fn in_stage(stage: Stage) -> impl Iterator<Item = &'static RuleInfo> {
    REGISTRY.iter().filter(move |r| r.stage == stage)
}

/// Whether rule `id` is lossless in meaning (its markers need no retained original).
pub fn is_lossless(id: RuleId) -> bool {
    !info(id).lossy
}

/// `f` on `input` read as a working document, rendered without a store id when `f`
/// says it changed something.
fn on_doc(input: &[u8], f: impl FnOnce(&mut Doc<'_>, &RawIndex) -> bool) -> Option<Vec<u8>> {
    let mut doc = Doc::from_raw(input);
    let raw = RawIndex::new(input);
    f(&mut doc, &raw).then(|| doc.render(None))
}

/// Runs one rule alone on `input` (for benchmarks and tests): the rule's own effect,
/// rendered without a store id. `None` when the rule changes nothing (`diff-protect`:
/// the input itself when it is a diff). Lossy rules run as if the input were over the
/// budget (`head-tail-elide` only when it is over `config.max_bytes`).
pub fn apply_one(id: RuleId, input: &[u8], config: &Config) -> Option<Vec<u8>> {
    (info(id).solo)(input, config)
}

/// The lossless text rules (`terminal-render`, `ansi-strip`, `repeat-collapse`) on one
/// text, as `json-fields` runs them on a long string value: the rewritten text (its
/// footer says `lossless`), or `None` when nothing changes or nothing is saved.
pub fn lossless_text(input: &[u8], config: &Config) -> Option<Vec<u8>> {
    crate::pipeline::lossless_text(input, config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table and the id list agree: every id once, in the same order, and the
    /// stages come in order (gates, then lossless, then lossy).
    #[test]
    fn registry_lists_every_id_once_in_stage_order() {
        let ids: Vec<RuleId> = REGISTRY.iter().map(|r| r.id).collect();
        assert_eq!(ids, RuleId::ALL);
        let rank = |s: Stage| match s {
            Stage::Gate => 0,
            Stage::Lossless => 1,
            Stage::Lossy => 2,
        };
        assert!(REGISTRY
            .windows(2)
            .all(|w| rank(w[0].stage) <= rank(w[1].stage)));
        for r in REGISTRY {
            assert_eq!(RuleId::parse(r.id.as_str()), Some(r.id));
            assert_eq!(
                r.lossy,
                r.stage == Stage::Lossy || r.id == RuleId::JsonFields
            );
        }
    }
}
