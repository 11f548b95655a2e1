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
//! call    = "snip_restore(id=\"sn_…\", mode=\"lines\"|\"bytes\", start=N, end=N)"
//! ```
//!
//! Numbers are plain decimal integers (no separators). A marker is always one line.

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

/// One marker, before it is rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// What was removed and how much, e.g. `7740 lines elided`.
    pub what: String,
    /// The rule id that removed it.
    pub rule: &'static str,
    /// Original line range, 1-based, inclusive.
    pub lines: Option<(u64, u64)>,
    /// Original byte range, 0-based, half-open.
    pub bytes: Option<(u64, u64)>,
    /// How to get it back, when the original is retained.
    pub restore: Option<RestoreCall>,
}

/// The hint given when the original is not retained.
pub const NOT_RETAINED: &str =
    "original not retained (re-run the command with narrower output to see the rest)";

impl Marker {
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
                "terminal-render"
            } else {
                "ansi-strip"
            },
            lines: None,
            bytes: None,
            restore,
        })
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
        s.push_str(self.rule);
        if let Some((a, b)) = self.lines {
            let _ = write!(s, " · lines {a}-{b}");
        }
        if let Some((a, b)) = self.bytes {
            let _ = write!(s, " · bytes {a}-{b}");
        }
        match (id, &self.restore) {
            (Some(id), Some(call)) => {
                s.push_str(" · restore: ");
                call.render_into(id, s);
            }
            (Some(id), None) => {
                // Lossless removals still point at the whole original.
                let _ = write!(s, " · restore: snip_restore(id=\"{id}\", mode=\"full\")");
            }
            (None, _) if self.restore.is_some() && !crate::rules::is_lossless(self.rule) => {
                s.push_str(" · ");
                s.push_str(NOT_RETAINED);
            }
            (None, _) => s.push_str(" · lossless"),
        }
        s.push(']');
    }
}

impl RestoreCall {
    /// Renders the call, e.g. `snip_restore(id="sn_ab", mode="lines", start=3, end=9)`.
    pub fn render(&self, id: &str) -> String {
        let mut s = String::with_capacity(96);
        self.render_into(id, &mut s);
        s
    }

    /// [`RestoreCall::render`] appended to `s`.
    pub fn render_into(&self, id: &str, s: &mut String) {
        let _ = match self {
            RestoreCall::Lines { start, end } => write!(
                s,
                "snip_restore(id=\"{id}\", mode=\"lines\", start={start}, end={end})"
            ),
            RestoreCall::Bytes { start, end } => write!(
                s,
                "snip_restore(id=\"{id}\", mode=\"bytes\", start={start}, end={end})"
            ),
            RestoreCall::FieldBytes { field, start, end } => write!(
                s,
                "snip_restore(id=\"{id}\", mode=\"bytes\", field=\"{}\", start={start}, end={end})",
                field.replace('\\', "\\\\").replace('"', "\\\"")
            ),
        };
    }
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
            let rest = call.strip_prefix("snip_restore(id=\"")?;
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
                    rule: "head-tail-elide",
                    lines: Some((3, 9)),
                    bytes: Some((10, 90)),
                    restore: call.clone(),
                };
                let line = m.render(id);
                let p = parse(&line).unwrap_or_else(|| panic!("unparsed: {line}"));
                assert_eq!(p.what, "7 lines elided");
                assert_eq!(p.lines, Some((3, 9)));
                assert_eq!(p.bytes, Some((10, 90)));
                assert_eq!(p.id.as_deref(), id);
                assert_eq!(p.not_retained, id.is_none() && call.is_some());
                assert!(!line.contains('\n'));
            }
        }
    }

    #[test]
    fn rejects_non_markers() {
        assert!(parse("[snip: x]").is_none());
        assert!(parse("hello").is_none());
        assert!(parse("[snip: a · Rule · lossless]").is_none());
    }
}
