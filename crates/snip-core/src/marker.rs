//! Markers: the one-line notes that say what was removed and how to get it back.
//!
//! Grammar (see `docs/markers.md`; every variant the code emits is parsed in tests):
//!
//! ```text
//! marker  = "[snip: " what " · " rule *( " · " field ) " · " retained "]"
//! field   = "lines " A "-" B        ; original line numbers, 1-based, inclusive
//!         / "bytes " S "-" E        ; original byte offsets, 0-based, half-open
//! retained= "restore: " call        ; the original is in the store
//!         / "original not retained (" hint ")"
//! call    = name "(id=\"sn_…\", mode=\"lines\"|\"bytes\", start=N, end=N)"
//! name    = "snip_restore"              ; the tool as the MCP server names it
//!         / prefix "snip_restore"       ; as a host shows it to the model:
//!                                       ; "mcp__snip__snip_restore" (Claude Code),
//!                                       ; "snip_snip_restore" (OpenCode)
//! prefix  = 1*( ALPHA / DIGIT / "_" / "-" ) ending in "_"
//! ```
//!
//! Numbers are plain decimal integers (no separators). A marker is always one line.
//!
//! This module owns both directions of the grammar: rendering ([`Marker::render`],
//! [`RestoreCall::render`]) and parsing ([`parse`], [`parse_restore_call`]).

use crate::rule::RuleId;
use std::fmt::Write as _;

/// The restore call a marker quotes, which a model can copy verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreCall {
    /// `mode="lines"`: original lines `start..=end`, 1-based, inclusive.
    Lines {
        /// First line, 1-based.
        start: u64,
        /// Last line, inclusive.
        end: u64,
    },
    /// `mode="bytes"`: original bytes `start..end`, 0-based, half-open.
    Bytes {
        /// First byte offset, 0-based.
        start: u64,
        /// End offset, exclusive.
        end: u64,
    },
    /// `mode="bytes"` scoped to one JSON string field (a JSON pointer); offsets are
    /// into the field's decoded value, 0-based, half-open.
    FieldBytes {
        /// JSON pointer (RFC 6901) of the string field.
        field: String,
        /// First byte offset of the decoded string, 0-based.
        start: u64,
        /// End offset, exclusive.
        end: u64,
    },
}

/// How what a marker stands for can be had back: what its last part says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// Information was removed: with a store id the marker quotes this call, without
    /// one it says the original is not retained ([`NOT_RETAINED`]).
    Elided(RestoreCall),
    /// Only the form changed (meaning kept): with a store id the marker quotes this
    /// call, without one it says `lossless`.
    Lossless(RestoreCall),
    /// Only the form changed and there is nothing to quote: the marker says `lossless`.
    None,
}

impl Recovery {
    /// The restore call, if there is one.
    pub fn call(&self) -> Option<&RestoreCall> {
        match self {
            Recovery::Elided(c) | Recovery::Lossless(c) => Some(c),
            Recovery::None => None,
        }
    }
}

/// One marker, before it is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// What was removed and how much, e.g. `7740 lines elided`.
    pub what: String,
    /// The rule that removed it.
    pub rule: RuleId,
    /// Original line range, 1-based, inclusive.
    pub lines: Option<(u64, u64)>,
    /// Original byte range, 0-based, half-open.
    pub bytes: Option<(u64, u64)>,
    /// How to get it back.
    pub recovery: Recovery,
}

/// The hint given when the original is not retained.
pub const NOT_RETAINED: &str =
    "original not retained (re-run the command with narrower output to see the rest)";

impl Marker {
    /// The length of this marker as a rule's net-win test counts it: rendered with a
    /// store id, and with its line and byte ranges (and its restore call's) at fixed
    /// five- and seven-digit numbers. A second pass numbers the same run lower; sized
    /// this way it decides the same, so a rule that left a run whole leaves it whole
    /// again (idempotence).
    pub(crate) fn sizing_len(&self) -> usize {
        const LINE: u64 = 99_999;
        const BYTE: u64 = 9_999_999;
        let call = |c: &RestoreCall| match c {
            RestoreCall::Lines { .. } => RestoreCall::Lines {
                start: LINE,
                end: LINE,
            },
            RestoreCall::Bytes { .. } => RestoreCall::Bytes {
                start: BYTE,
                end: BYTE,
            },
            RestoreCall::FieldBytes { field, .. } => RestoreCall::FieldBytes {
                field: field.clone(),
                start: BYTE,
                end: BYTE,
            },
        };
        let sized = Marker {
            what: self.what.clone(),
            rule: self.rule,
            lines: self.lines.map(|_| (LINE, LINE)),
            bytes: self.bytes.map(|_| (BYTE, BYTE)),
            recovery: match &self.recovery {
                Recovery::Elided(c) => Recovery::Elided(call(c)),
                Recovery::Lossless(c) => Recovery::Lossless(call(c)),
                Recovery::None => Recovery::None,
            },
        };
        sized.render(Some(crate::doc::SIZING_ID)).len()
    }

    /// The footer for lossless removals: `removed N redrawn progress frames and B
    /// backspaces and M ANSI escape sequences` (the parts that are not 0); `None` when
    /// all are 0. Backspaces count the backspace controls rendered away (text written
    /// over, as a terminal shows it).
    /// `restore` points at the whole original when it is retained.
    pub fn lossless_footer(
        frames: u64,
        backspaces: u64,
        escapes: u64,
        restore: Option<RestoreCall>,
    ) -> Option<Marker> {
        let mut parts = Vec::new();
        if frames > 0 {
            parts.push(format!("{frames} redrawn progress frames"));
        }
        if backspaces > 0 {
            parts.push(format!("{backspaces} backspaces"));
        }
        if escapes > 0 {
            parts.push(format!("{escapes} ANSI escape sequences"));
        }
        (!parts.is_empty()).then(|| Marker {
            what: format!("removed {}", parts.join(" and ")),
            rule: if frames > 0 || backspaces > 0 {
                RuleId::TerminalRender
            } else {
                RuleId::AnsiStrip
            },
            lines: None,
            bytes: None,
            recovery: restore.map_or(Recovery::None, Recovery::Lossless),
        })
    }

    /// The gap marker of an elision: original lines `a..=b` (0-based) at original
    /// bytes `bytes` (0-based, half-open) elided by `rule`, e.g. `[snip: 3998 lines
    /// (150230 bytes) elided · head-tail-elide · lines 201-4198 · bytes … · restore: …]`.
    pub fn gap(rule: RuleId, a: u32, b: u32, bytes: (u64, u64), restore: RestoreCall) -> Marker {
        Marker {
            what: format!(
                "{} ({} bytes) elided",
                lines_word(b as u64 - a as u64 + 1),
                bytes.1 - bytes.0
            ),
            rule,
            lines: Some((a as u64 + 1, b as u64 + 1)),
            bytes: Some(bytes),
            recovery: Recovery::Elided(restore),
        }
    }

    /// Renders the marker as one line (no line ending). `id` is the store id when the
    /// original is retained; without it the marker says so.
    pub fn render(&self, id: Option<&str>) -> String {
        let mut s = String::with_capacity(160);
        self.render_into(id, &mut s);
        s
    }

    /// [`Marker::render`] appended to `s` (no allocation when `s` has room).
    pub fn render_into(&self, id: Option<&str>, s: &mut String) {
        s.push_str("[snip: ");
        push_sanitized(s, &self.what);
        s.push_str(" · ");
        s.push_str(self.rule.as_str());
        if let Some((a, b)) = self.lines {
            let _ = write!(s, " · lines {a}-{b}");
        }
        if let Some((a, b)) = self.bytes {
            let _ = write!(s, " · bytes {a}-{b}");
        }
        match (id, &self.recovery) {
            (Some(id), Recovery::Elided(call) | Recovery::Lossless(call)) => {
                s.push_str(" · restore: ");
                call.render_into(id, s);
            }
            (None, Recovery::Elided(_)) => {
                s.push_str(" · ");
                s.push_str(NOT_RETAINED);
            }
            (_, Recovery::Lossless(_) | Recovery::None) => s.push_str(" · lossless"),
        }
        s.push(']');
    }
}

/// `1 line`, `2 lines`.
pub(crate) fn lines_word(n: u64) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{n} lines")
    }
}

impl RestoreCall {
    /// Renders the call, e.g. `snip_restore(id="sn_ab", mode="lines", start=3, end=9)`.
    pub fn render(&self, id: &str) -> String {
        let mut s = String::with_capacity(96);
        self.render_into(id, &mut s);
        s
    }

    /// [`RestoreCall::render`] appended to `s`. The call's name is the restore tool of
    /// the [`crate::compress`] call in progress on this thread
    /// ([`crate::Config::restore_tool`]), `snip_restore` outside one, so the sizes the
    /// rules measure while they fit a budget are those of the markers as printed.
    pub fn render_into(&self, id: &str, s: &mut String) {
        TOOL.with(|t| s.push_str(t.borrow().as_deref().unwrap_or(RESTORE_TOOL)));
        let _ = match self {
            RestoreCall::Lines { start, end } => {
                write!(s, "(id=\"{id}\", mode=\"lines\", start={start}, end={end})")
            }
            RestoreCall::Bytes { start, end } => {
                write!(s, "(id=\"{id}\", mode=\"bytes\", start={start}, end={end})")
            }
            RestoreCall::FieldBytes { field, start, end } => write!(
                s,
                "(id=\"{id}\", mode=\"bytes\", field=\"{}\", start={start}, end={end})",
                field.replace('\\', "\\\\").replace('"', "\\\"")
            ),
        };
    }
}

thread_local! {
    /// The restore tool's name for calls rendered on this thread (`None`: the default).
    static TOOL: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with restore calls rendered under the name `tool` on this thread, then
/// puts the previous name back (also when `f` panics).
pub(crate) fn with_restore_tool<R>(tool: &str, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<String>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let prev = self.0.take();
            TOOL.with(|t| *t.borrow_mut() = prev);
        }
    }
    let name = (tool != RESTORE_TOOL).then(|| tool.to_string());
    let _reset = Reset(TOOL.with(|t| std::mem::replace(&mut *t.borrow_mut(), name)));
    f()
}

/// The tool name every restore call ends with.
pub const RESTORE_TOOL: &str = "snip_restore";

/// The text after `NAME(` of a restore call, where NAME is `snip_restore` or a host's
/// name for it (any prefix of letters, digits, `_` and `-` ending in `_`, e.g.
/// `mcp__snip__snip_restore`). `None` when `call` does not start with such a name.
pub fn strip_call_name(call: &str) -> Option<&str> {
    let (name, rest) = call.split_once('(')?;
    is_restore_tool_name(name).then_some(rest)
}

/// True when `name` is `snip_restore` or a host's name for it: a prefix of ASCII
/// letters, digits, `_` and `-` ending in `_`, then `snip_restore`.
pub fn is_restore_tool_name(name: &str) -> bool {
    let Some(prefix) = name.strip_suffix(RESTORE_TOOL) else {
        return false;
    };
    prefix.is_empty()
        || (prefix.ends_with('_')
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
}

/// Appends `t` kept on one line: control characters become spaces.
fn push_sanitized(s: &mut String, t: &str) {
    if t.chars().any(char::is_control) {
        s.extend(t.chars().map(|c| if c.is_control() { ' ' } else { c }));
    } else {
        s.push_str(t);
    }
}

/// A marker parsed back from its rendered line (used by tests and tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedMarker {
    /// The `what` part.
    pub what: String,
    /// The rule id.
    pub rule: String,
    /// Original line range, if given.
    pub lines: Option<(u64, u64)>,
    /// Original byte range, if given.
    pub bytes: Option<(u64, u64)>,
    /// The store id, when a restore call is quoted.
    pub id: Option<String>,
    /// The restore call's text, verbatim.
    pub call: Option<String>,
    /// True when the marker says the original is not retained.
    pub not_retained: bool,
}

/// Parses one marker line (with or without a trailing line ending). `None` when the
/// line is not a marker of this grammar.
pub fn parse(line: &str) -> Option<ParsedMarker> {
    let line = line.trim_end_matches(['\r', '\n']);
    let body = line.strip_prefix("[snip: ")?.strip_suffix(']')?;
    let mut parts = body.split(" · ");
    let what = parts.next()?.to_string();
    let rule = parts.next()?.to_string();
    if rule.is_empty() || !rule.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
        return None;
    }
    let mut m = ParsedMarker {
        what,
        rule,
        lines: None,
        bytes: None,
        id: None,
        call: None,
        not_retained: false,
    };
    let mut ended = false;
    for p in parts {
        if ended {
            return None;
        }
        if let Some(r) = p.strip_prefix("lines ") {
            m.lines = Some(parse_range(r)?);
        } else if let Some(r) = p.strip_prefix("bytes ") {
            m.bytes = Some(parse_range(r)?);
        } else if let Some(call) = p.strip_prefix("restore: ") {
            let rest = strip_call_name(call)?.strip_prefix("id=\"")?;
            let id: String = rest.chars().take_while(|c| *c != '"').collect();
            if !id.starts_with("sn_") || !call.ends_with(')') {
                return None;
            }
            m.id = Some(id);
            m.call = Some(call.to_string());
            ended = true;
        } else if p == NOT_RETAINED {
            m.not_retained = true;
            ended = true;
        } else if p == "lossless" {
            ended = true;
        } else {
            return None;
        }
    }
    ended.then_some(m)
}

fn parse_range(r: &str) -> Option<(u64, u64)> {
    let (a, b) = r.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// One argument value of a restore call: a double-quoted string (escapes removed) or
/// a whole decimal number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallValue {
    /// `key="…"`: the text between the quotes, with `\"` and `\\` unescaped.
    Str(String),
    /// `key=N`: a whole decimal number (no sign, no separators).
    Num(u64),
}

/// Parses a restore call as markers quote it ([`RestoreCall::render`]), e.g.
/// `snip_restore(id="sn_…", mode="lines", start=201, end=7940)` (or a host's name for
/// the tool, see [`strip_call_name`]), calling
/// `arg(key, value)` for each `key=value` argument in order. String values use `\"`
/// and `\\` escapes; whitespace around arguments is ignored. Which keys exist and
/// what they mean is the caller's (the store's request, a benchmark's check).
///
/// # Errors
/// One line saying what is malformed (not `snip_restore(…)`, no `=`, an unterminated
/// string, a value that is neither a string nor a whole number, no `,` between
/// arguments, a key given twice, as the JSON form refuses a duplicate key), or the
/// first error `arg` returns.
pub fn parse_restore_call(
    call: &str,
    mut arg: impl FnMut(&str, CallValue) -> Result<(), String>,
) -> Result<(), String> {
    let mut seen: Vec<String> = Vec::new();
    let body = strip_call_name(call.trim())
        .and_then(|b| b.strip_suffix(')'))
        .ok_or(
            "a restore call looks like snip_restore(id=\"sn_…\", mode=\"bytes\", start=0, end=100)",
        )?;
    let mut rest = body.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').ok_or_else(|| {
            format!(
                "expected key=value in the restore call at {:?}",
                first_chars(rest)
            )
        })?;
        let key = key.trim();
        let after = after.trim_start();
        let (value, tail) = if let Some(q) = after.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = q.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some((_, e)) => out.push(e),
                        None => break,
                    },
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    c => out.push(c),
                }
            }
            let end =
                end.ok_or_else(|| format!("unterminated string for {key} in the restore call"))?;
            (CallValue::Str(out), &q[end..])
        } else {
            let n_end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            let digits = &after[..n_end];
            let n: u64 = digits.parse().map_err(|_| {
                if digits.is_empty() {
                    let value = after.split([',', ')']).next().unwrap_or("").trim_end();
                    format!(
                        "{key}={} is neither a quoted string nor a whole number (0 or more)",
                        first_chars(value)
                    )
                } else {
                    format!("{key}={digits} is too large (at most {})", u64::MAX)
                }
            })?;
            (CallValue::Num(n), &after[n_end..])
        };
        if seen.iter().any(|k| k == key) {
            return Err(format!("{key} is given twice in the restore call"));
        }
        seen.push(key.to_string());
        arg(key, value)?;
        rest = tail.trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return Err(format!(
                "expected ',' in the restore call at {:?}",
                first_chars(rest)
            ));
        }
    }
    Ok(())
}

/// The first 20 characters of `s` (for error messages).
fn first_chars(s: &str) -> String {
    s.chars().take(20).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_parses_every_variant() {
        let calls = [
            Some(RestoreCall::Lines { start: 3, end: 9 }),
            Some(RestoreCall::Bytes { start: 0, end: 10 }),
            Some(RestoreCall::FieldBytes {
                field: "/a/0/b".into(),
                start: 5,
                end: 50,
            }),
            None,
        ];
        for call in calls {
            for id in [Some("sn_0123abcd"), None] {
                let m = Marker {
                    what: "7 lines elided".into(),
                    rule: RuleId::HeadTailElide,
                    lines: Some((3, 9)),
                    bytes: Some((10, 90)),
                    recovery: call.clone().map_or(Recovery::None, Recovery::Elided),
                };
                let line = m.render(id);
                let p = parse(&line).unwrap_or_else(|| panic!("unparsed: {line}"));
                assert_eq!(p.what, "7 lines elided");
                assert_eq!(p.lines, Some((3, 9)));
                assert_eq!(p.bytes, Some((10, 90)));
                // Without a call (a lossless footer with nothing to quote) the
                // marker says `lossless` even when the original has an id.
                assert_eq!(p.id.as_deref(), id.filter(|_| call.is_some()));
                assert_eq!(p.not_retained, id.is_none() && call.is_some());
                assert!(!line.contains('\n'));
            }
        }
    }

    /// Every call the renderer writes parses back to its arguments.
    #[test]
    fn a_key_given_twice_is_refused() {
        let e = parse_restore_call(
            "snip_restore(id=\"sn_1\", mode=\"lines\", start=1, end=2, start=3)",
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(e.contains("start is given twice"), "{e}");
        let e = parse_restore_call(
            "snip_restore(id=\"sn_1\", mode=\"lines\", start=1, end=99999999999999999999)",
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(e.contains("end=99999999999999999999 is too large"), "{e}");
        assert!(parse_restore_call(
            "snip_restore(id=\"sn_1\", mode=\"lines\", start=1, end=2)",
            |_, _| Ok(())
        )
        .is_ok());
    }

    #[test]
    fn parses_the_calls_it_renders() {
        let call = RestoreCall::FieldBytes {
            field: "/a\\b/\"c\"".into(),
            start: 5,
            end: 50,
        }
        .render("sn_0123abcd");
        let mut args = Vec::new();
        parse_restore_call(&call, |k, v| {
            args.push((k.to_string(), v));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            args,
            [
                ("id".to_string(), CallValue::Str("sn_0123abcd".into())),
                ("mode".to_string(), CallValue::Str("bytes".into())),
                ("field".to_string(), CallValue::Str("/a\\b/\"c\"".into())),
                ("start".to_string(), CallValue::Num(5)),
                ("end".to_string(), CallValue::Num(50)),
            ]
        );
        let ok = |_: &str, _: CallValue| Ok(());
        assert!(parse_restore_call("restore(id=\"x\")", ok).is_err());
        assert!(parse_restore_call("snip_restore(id=\"x)", ok).is_err());
        assert!(parse_restore_call("snip_restore(start=x)", ok).is_err());
        assert!(parse_restore_call("snip_restore(start=1 end=2)", ok).is_err());
        let err = parse_restore_call("snip_restore(k=1)", |k, _| Err(format!("no {k}")));
        assert_eq!(err, Err("no k".to_string()));
    }

    #[test]
    fn rejects_non_markers() {
        assert!(parse("[snip: x]").is_none());
        assert!(parse("hello").is_none());
        assert!(parse("[snip: a · Rule · lossless]").is_none());
    }
}

#[cfg(test)]
mod host_tool_names {
    use super::{parse, strip_call_name};

    #[test]
    fn every_host_name_parses() {
        for name in [
            "snip_restore",
            "mcp__snip__snip_restore",
            "snip_snip_restore",
        ] {
            let line = format!(
                "[snip: 9 lines · head-tail-elide · lines 2-10 · restore: {name}(id=\"sn_ab\", mode=\"lines\", start=2, end=10)]"
            );
            let m = parse(&line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(m.id.as_deref(), Some("sn_ab"));
        }
        for bad in [
            "restore(",
            "xsnip_restore(",
            "mcp snip_restore(",
            "snip_restore",
        ] {
            assert!(strip_call_name(bad).is_none(), "{bad}");
        }
    }
}
