//! The rules' identities: a typed [`RuleId`] (its text form is what markers and
//! receipts print) and the [`Stage`] each rule runs in. The ordered table of rules
//! itself is [`crate::rules::REGISTRY`].

use std::fmt;

/// A rule's stable id. [`RuleId::as_str`] is the id printed in markers, receipts and
/// docs (lowercase words joined by `-`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleId {
    /// `diff-protect`: diffs and patches are returned byte-identical.
    DiffProtect,
    /// `json-fields`: one JSON document, elided inside and kept valid.
    JsonFields,
    /// `terminal-render`: carriage-return and cursor redraws collapsed to the frame shown.
    TerminalRender,
    /// `ansi-strip`: remaining escape sequences removed.
    AnsiStrip,
    /// `repeat-collapse`: a run of identical lines kept once with a count.
    RepeatCollapse,
    /// `traceback-keep`: a traceback's header, first and last frames and exception kept.
    TracebackKeep,
    /// `head-tail-elide`: over the budget, head, tail and salient islands kept.
    HeadTailElide,
}

impl RuleId {
    /// Every id, in execution order (the order of [`crate::rules::REGISTRY`]).
    pub const ALL: [RuleId; 7] = [
        RuleId::DiffProtect,
        RuleId::JsonFields,
        RuleId::TerminalRender,
        RuleId::AnsiStrip,
        RuleId::RepeatCollapse,
        RuleId::TracebackKeep,
        RuleId::HeadTailElide,
    ];

    /// The id as markers and receipts print it, e.g. `head-tail-elide`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RuleId::DiffProtect => "diff-protect",
            RuleId::JsonFields => "json-fields",
            RuleId::TerminalRender => "terminal-render",
            RuleId::AnsiStrip => "ansi-strip",
            RuleId::RepeatCollapse => "repeat-collapse",
            RuleId::TracebackKeep => "traceback-keep",
            RuleId::HeadTailElide => "head-tail-elide",
        }
    }

    /// The id whose text form is `s` (exact, case-sensitive); `None` for any other text.
    pub fn parse(s: &str) -> Option<RuleId> {
        RuleId::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RuleId {
    type Err = UnknownRule;

    fn from_str(s: &str) -> Result<RuleId, UnknownRule> {
        RuleId::parse(s).ok_or_else(|| UnknownRule(s.to_string()))
    }
}

/// The error of parsing a text that names no rule (it holds the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRule(pub String);

impl fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown rule id {:?}", self.0)
    }
}

impl std::error::Error for UnknownRule {}

/// When a rule runs, and what it may do to the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Decides the path first: a diff goes back untouched, a JSON document goes
    /// through its own rule instead of the text rules.
    Gate,
    /// Changes form, never meaning; runs at any size.
    Lossless,
    /// Removes information; runs only above the budget and with a retained original
    /// (or the store turned off).
    Lossy,
}
