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
    /// `shape-fold`: over the budget, a run of lines of one shape kept at its ends with a count.
    ShapeFold,
    /// `head-tail-elide`: over the budget, head, tail and salient islands kept.
    HeadTailElide,
}

impl RuleId {
    /// Every id, in execution order (the order of [`crate::rules::REGISTRY`]).
    pub const ALL: [RuleId; 8] = [
        RuleId::DiffProtect,
        RuleId::JsonFields,
        RuleId::TerminalRender,
        RuleId::AnsiStrip,
        RuleId::RepeatCollapse,
        RuleId::TracebackKeep,
        RuleId::ShapeFold,
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
            RuleId::ShapeFold => "shape-fold",
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

/// The engine a text goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// The whole input in memory ([`crate::compress`], and its reduced path).
    Memory,
    /// Bounded windows of a stream ([`crate::stream`]).
    Stream,
}

/// How a rule takes part in the streaming engine ([`crate::stream`]), which cannot hold
/// the whole input: the documented differences from the in-memory pipeline, per rule.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Streamed {
    /// A gate: a stream whose first window this predicate accepts is passed through
    /// byte for byte (eliding lines would change a diff or break a JSON document).
    PassThrough(fn(&[u8]) -> bool),
    /// Runs on each window as in memory (a lossless text rule).
    PerWindow,
    /// Done by the stream's own bounded selector, across windows (`repeat-collapse`
    /// over the whole stream, `head-tail-elide` with a ring for the tail).
    AcrossWindows,
    /// Does not run on a stream.
    Skipped,
}

/// What a rule does in the in-memory pipeline ([`crate::compress`]): one function per
/// stage, called by the pipeline in table order.
#[derive(Clone, Copy)]
pub(crate) enum Pass {
    /// Looks at the whole input first; [`Gated::Continue`] lets the next rule look.
    Gate(fn(&mut GateRun<'_>) -> Gated),
    /// Rewrites the working text without removing information; `report` builds the
    /// rule's receipt row from what the pass counted.
    Lossless {
        /// Runs on the text (reads it into a document first when needed).
        apply: fn(&mut Text<'_>, &crate::Config),
        /// The receipt row from what the stage counted, `None` when the rule
        /// changed nothing.
        report: fn(&TextCounts) -> Option<crate::RuleReport>,
    },
    /// Removes information from the working document above the budget; returns the
    /// rule's receipt row when it removed something.
    Lossy(fn(&mut Elide<'_, '_>) -> Option<crate::RuleReport>),
}

impl fmt::Debug for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pass::Gate(_) => "Gate",
            Pass::Lossless { .. } => "Lossless",
            Pass::Lossy(_) => "Lossy",
        })
    }
}

/// A gate's view of one call: the input, the configuration and the store, asked at
/// most once ([`GateRun::retain_if_over`], [`GateRun::retain`]).
pub(crate) struct GateRun<'a> {
    pub input: &'a [u8],
    pub config: &'a crate::Config,
    pub store: &'a mut dyn crate::Retain,
    /// What the store said, once asked.
    pub retention: Option<crate::Retention>,
}

impl GateRun<'_> {
    /// The input is over the budget (`max_bytes`).
    ///
    /// snip's own marker lines (an output compressed again) do not count against the
    /// budget, up to [`marker_credit`] bytes: a first pass may end over it by the lines
    /// it must keep (a traceback's end and the markers around it, at a tiny budget),
    /// and a second pass must change nothing. Past that bound, marker-shaped lines
    /// count like any other text (a flood of them is no first pass's output).
    pub fn over(&self) -> bool {
        let credit = marker_credit(self.config.max_bytes);
        self.input.len() > self.config.max_bytes
            && self.input.len() - own_marker_bytes(self.input).min(credit) > self.config.max_bytes
    }

    /// Offers the original to the store when the input is over the budget (lossy
    /// markers need its id), once.
    pub fn retain_if_over(&mut self) {
        if self.retention.is_none() && self.over() {
            self.retain();
        }
    }

    /// Offers the original to the store, once.
    pub fn retain(&mut self) -> &crate::Retention {
        if self.retention.is_none() {
            self.retention = Some(self.store.retain(self.input));
        }
        self.retention.as_ref().expect("set above")
    }

    /// Over the budget with a retained original (or the store off): lossy rules may run.
    pub fn lossy_allowed(&self) -> bool {
        self.over() && !matches!(self.retention, Some(crate::Retention::Failed { .. }))
    }

    /// The retained id, when the original is in the store.
    pub fn retained_id(&self) -> Option<&str> {
        match &self.retention {
            Some(crate::Retention::Retained { id }) => Some(id),
            _ => None,
        }
    }

    /// The input unchanged, with what the store said (when it was asked).
    pub fn unchanged(&mut self) -> crate::Outcome {
        let mut o = crate::Outcome::unchanged(self.input);
        o.retention = self.retention.take();
        o
    }
}

/// The most bytes of snip's own marker lines [`GateRun::over`] leaves out of the
/// budget: half the budget, and at least [`MIN_MARKER_CREDIT`]. A first pass ends
/// within the budget plus one marker (docs/contract.md), or, at a tiny budget, plus
/// the markers around a kept traceback end; the most any bundled capture or fixture
/// ends over its budget is 279 bytes (at 1,024).
pub(crate) fn marker_credit(max_bytes: usize) -> usize {
    (max_bytes / 2).max(MIN_MARKER_CREDIT)
}

/// The smallest marker credit, in bytes: a few marker lines.
pub(crate) const MIN_MARKER_CREDIT: usize = 2048;

/// Bytes of `input` in whole lines that are snip markers (a previous pass's output),
/// line endings included.
fn own_marker_bytes(input: &[u8]) -> usize {
    let mut n = 0;
    for at in memchr::memmem::find_iter(input, b"[snip: ") {
        if at > 0 && input[at - 1] != b'\n' {
            continue;
        }
        let end = memchr::memchr(b'\n', &input[at..]).map_or(input.len(), |k| at + k + 1);
        let line = &input[at..end];
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if std::str::from_utf8(text).is_ok_and(|t| crate::marker::parse(t).is_some()) {
            n += line.len();
        }
    }
    n
}

/// What a gate decided.
pub(crate) enum Gated {
    /// Not this rule's input: the next rule looks.
    Continue,
    /// The call's result.
    Done(crate::Outcome),
    /// JSON Lines still over the budget: the pipeline elides whole lines of `text`
    /// (what the gate made of the input, with its receipt row when it changed it).
    /// With `or_unchanged`, an output that is not smaller gives the input unchanged.
    ElideLines {
        text: Vec<u8>,
        report: Option<crate::RuleReport>,
        or_unchanged: bool,
    },
}

/// The working text of the lossless stage: a piece of an original (its first line is
/// original line `first_line`, 0-based) read into a document by the first rule that
/// needs one, and what each rule counted.
pub(crate) struct Text<'a> {
    pub input: &'a [u8],
    pub first_line: u32,
    /// The terminal controls the input holds, found once.
    pub controls: crate::escape::Controls,
    /// Collect the input's line starts while reading it (for lossy markers).
    pub want_starts: bool,
    pub doc: Option<crate::doc::Doc<'a>>,
    /// Line contents still sit at their original byte offsets (nothing rendered or
    /// stripped), so elision markers can quote byte ranges directly.
    pub raw_offsets: bool,
    /// Every escape is already stripped (the text was read without them).
    pub escapes_stripped: bool,
    /// Escapes may be stripped from the whole text in one pass when none moves the
    /// cursor (the in-memory engine). Off on the stream, whose windows are stripped
    /// line by line, so a window's last line keeps its shape.
    pub strip_whole: bool,
    /// What the rules counted.
    pub counts: TextCounts,
    /// Every line start of the input, when collected (see
    /// [`crate::doc::RawIndex::from_starts`]).
    pub line_starts: Option<Vec<usize>>,
    /// The whole input this text is a piece of is a rendering snip made: the lossless
    /// rules already ran on it (see [`lossless_rules_ran`]), decided once by the
    /// engine that holds the input's end.
    pub lossless_ran: bool,
    /// Emptied buffers (rendered text, line table) a renderer may write into instead
    /// of allocating: the stream hands each window the last window's, so its memory
    /// is not given back and faulted in again window after window.
    pub scratch: Option<crate::doc::Scratch>,
    /// The input's line feeds, once a rule or [`Text::doc`] has read its lines (each
    /// line feed ends one line: no escape holds one).
    pub newlines: Option<u32>,
}

/// Whether `input` is a rendering snip made: its last line (its line ending aside) is
/// the lossless footer of `terminal-render` or `ansi-strip` (`[snip: removed … ·
/// terminal-render · …]`). The lossless rules ran on it then, `repeat-collapse`
/// included, and a run that pass left whole (see `repeat_collapse::apply`) must stay
/// whole: read again, the rendering no longer says which original lines wrote which
/// row. Every engine decides this once, on the whole input: the pipeline and the
/// reduced path before the lossless rules, the stream at its end (see
/// `crate::stream`).
pub(crate) fn lossless_rules_ran(input: &[u8]) -> bool {
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    let last = memchr::memrchr(b'\n', body).map_or(body, |k| &body[k + 1..]);
    if !last.starts_with(b"[snip: removed ") {
        return false;
    }
    std::str::from_utf8(last)
        .ok()
        .and_then(crate::marker::parse)
        .is_some_and(|m| {
            m.rule == RuleId::TerminalRender.as_str() || m.rule == RuleId::AnsiStrip.as_str()
        })
}

impl<'a> Text<'a> {
    /// The text of `input` before any rule ran; `lossless_ran` as
    /// [`lossless_rules_ran`] said of the whole input.
    pub fn new(input: &'a [u8], first_line: u32, want_starts: bool, lossless_ran: bool) -> Self {
        Text {
            lossless_ran,
            input,
            first_line,
            controls: crate::escape::Controls::scan(input),
            want_starts,
            doc: None,
            raw_offsets: true,
            escapes_stripped: false,
            strip_whole: true,
            counts: TextCounts::default(),
            line_starts: None,
            newlines: None,
            scratch: None,
        }
    }

    /// The working document, read from the input as it is when no rule has read it yet.
    pub fn doc(&mut self) -> &mut crate::doc::Doc<'a> {
        if self.doc.is_none() {
            let doc = crate::doc::Doc::from_raw_at(self.input, self.first_line);
            self.newlines = Some(crate::doc::line_feeds(&doc.lines));
            // Nothing rendered: the lines start where the input's lines do (a last
            // start at the input's end, after a final `\n`, is implied).
            if self.want_starts {
                self.line_starts = Some(crate::doc::RawIndex::starts_of(&doc.lines));
            }
            self.doc = Some(doc);
        }
        self.doc.as_mut().expect("set above")
    }
}

/// What the lossless rules counted on one text (each rule's receipt row is built
/// from these). The engines add the counts of the pieces of one input together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TextCounts {
    /// Redrawn frames `terminal-render` removed.
    pub frames: u64,
    /// Backspace controls `terminal-render` rendered away.
    pub backspaces: u64,
    /// Escape sequences removed (by the renderer or by `ansi-strip`).
    pub escapes: u64,
    /// Runs of identical lines `repeat-collapse` collapsed, and the lines it removed.
    pub runs: u64,
    pub repeated: u64,
    /// Any other lossless rule's counts, by rule and count name (see
    /// [`TextCounts::add`]): a new rule counts here without a field of its own.
    pub more: Vec<(RuleId, &'static str, u64)>,
}

impl TextCounts {
    /// Whether any lossless rule changed the text.
    pub fn changed(&self) -> bool {
        self.frames > 0
            || self.backspaces > 0
            || self.escapes > 0
            || self.runs > 0
            || self.more.iter().any(|m| m.2 > 0)
    }

    /// Adds `n` to rule `rule`'s count `name` (kept in [`TextCounts::more`]).
    pub fn add(&mut self, rule: RuleId, name: &'static str, n: u64) {
        match self.more.iter_mut().find(|m| m.0 == rule && m.1 == name) {
            Some(m) => m.2 += n,
            None => self.more.push((rule, name, n)),
        }
    }

    /// Rule `rule`'s count `name` (0 when it never counted).
    #[cfg_attr(not(test), allow(dead_code))] // for a rule that counts in `more`
    pub fn get(&self, rule: RuleId, name: &str) -> u64 {
        self.more
            .iter()
            .find(|m| m.0 == rule && m.1 == name)
            .map_or(0, |m| m.2)
    }

    /// Adds another piece's counts to these.
    pub fn merge(&mut self, other: &TextCounts) {
        self.frames += other.frames;
        self.backspaces += other.backspaces;
        self.escapes += other.escapes;
        self.runs += other.runs;
        self.repeated += other.repeated;
        for &(rule, name, n) in &other.more {
            self.add(rule, name, n);
        }
    }
}

/// The lossy stage's view: the working document above the budget, the original's line
/// index, and the document's rendered size (kept up to date by the rules).
pub(crate) struct Elide<'d, 'a> {
    pub doc: &'d mut crate::doc::Doc<'a>,
    pub config: &'d crate::Config,
    pub raw: &'d crate::doc::RawIndex<'d>,
    /// See [`Text::raw_offsets`].
    pub raw_offsets: bool,
    /// [`crate::doc::Doc::size`] of `doc`.
    pub size: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts in `more` add up by rule and name, across pieces, and count as a change.
    #[test]
    fn more_counts_add_up_by_rule_and_name() {
        let mut a = TextCounts::default();
        assert!(!a.changed());
        a.add(RuleId::RepeatCollapse, "x", 0);
        assert!(!a.changed());
        a.add(RuleId::RepeatCollapse, "x", 2);
        a.add(RuleId::AnsiStrip, "x", 5);
        let mut b = TextCounts::default();
        b.add(RuleId::RepeatCollapse, "x", 3);
        b.frames = 1;
        a.merge(&b);
        assert!(a.changed());
        assert_eq!(a.get(RuleId::RepeatCollapse, "x"), 5);
        assert_eq!(a.get(RuleId::AnsiStrip, "x"), 5);
        assert_eq!(a.get(RuleId::AnsiStrip, "y"), 0);
        assert_eq!(a.frames, 1);
    }
}
