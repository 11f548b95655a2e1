//! The ordered rules. [`REGISTRY`] is the execution order.

pub(crate) mod ansi_strip;
pub(crate) mod diff_protect;
pub(crate) mod head_tail_elide;
pub mod json_fields;
pub(crate) mod repeat_collapse;
pub(crate) mod terminal_render;
pub(crate) mod traceback_keep;

/// One rule's identity and documentation summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// Stable id, used in markers and receipts.
    pub id: &'static str,
    /// Pipeline order (rules with the same order are alternatives: gates).
    pub order: u8,
    /// Whether the rule can remove information (needs a retained original).
    pub lossy: bool,
    /// One line: what it does.
    pub summary: &'static str,
}

/// Every rule, in execution order.
pub const REGISTRY: &[RuleInfo] = &[
    RuleInfo { id: "diff-protect", order: 0, lossy: false, summary: "diffs and patches are returned byte-identical" },
    RuleInfo { id: "json-fields", order: 0, lossy: true, summary: "one JSON document: elide inside long strings and the middle of long arrays, keeping it valid" },
    RuleInfo { id: "terminal-render", order: 1, lossy: false, summary: "collapse carriage-return and cursor redraws to the frame a terminal shows" },
    RuleInfo { id: "ansi-strip", order: 2, lossy: false, summary: "remove remaining SGR/CSI/OSC escapes" },
    RuleInfo { id: "repeat-collapse", order: 3, lossy: false, summary: "a run of identical lines keeps its first line and a count" },
    RuleInfo { id: "traceback-keep", order: 4, lossy: true, summary: "keep a traceback's header, first and last frames and exception lines" },
    RuleInfo { id: "head-tail-elide", order: 5, lossy: true, summary: "over the budget keep head, tail and salient islands of the middle" },
];

/// Whether rule `id` is lossless in meaning (its markers need no retained original).
pub fn is_lossless(id: &str) -> bool {
    REGISTRY.iter().any(|r| r.id == id && !r.lossy)
}

/// Runs one rule alone on `input` (for benchmarks and tests): the rule's own effect,
/// rendered without a store id. `None` when the rule changes nothing or `id` is unknown.
/// Lossy rules run as if the input were over the budget.
pub fn apply_one(id: &str, input: &[u8], config: &crate::Config) -> Option<Vec<u8>> {
    crate::pipeline::apply_one(id, input, config)
}
