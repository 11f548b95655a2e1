//! The one-line summary that replaces an older tool result, and its parser.
//!
//! Grammar (a variant of the marker grammar in `docs/markers.md`; see
//! `docs/context.md`):
//!
//! ```text
//! summary = "[snip: " tool " → " outcome " · " size " bytes" [ " · " facts ]
//!           [ " · first: " quoted ] [ " · error: " quoted ] [ " · last: " quoted ]
//!           " · id=" id " · restore: snip_restore(id=\"" id "\")]"
//! tool    = name [ " `" argument "`" ]   ; the tool call's name and main argument
//! outcome = "exit " integer / "error" / "HTTP " status / N " error line" ["s"]
//!           / "ok" / "?"
//! facts   = what the kind of tool makes worth saying, without " · ": "lines 121–360",
//!           "14 matches", "+3 −1", "412 lines, truncated by the host"
//! size    = the original's length in bytes, digits grouped by "," (48,213)
//! quoted  = "\"" text "\""               ; `\` and `"` escaped with `\`
//! id      = "sn_" lowercase hex
//! ```
//!
//! A summary is one line: the tool, argument and quoted lines hold no control
//! characters. It is byte-identical for the same original, tool call and store id.

use crate::digest::{cut, cut_middle, Digest};

/// The longest tool name shown, in chars.
pub const MAX_NAME_CHARS: usize = 40;
/// The longest tool argument shown, in chars (cut in the middle).
pub const MAX_ARG_CHARS: usize = 80;

/// One summary, before rendering or after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The tool, e.g. ``terminal `cargo test` `` (name and main argument).
    pub tool: String,
    /// The outcome, e.g. `exit 101`.
    pub outcome: String,
    /// Size of the original text in bytes.
    pub bytes: usize,
    /// Facts of the kind of tool (see [`crate::digest::Kind`]).
    pub facts: Option<String>,
    /// The first meaningful line.
    pub first: Option<String>,
    /// The first error line, when it is neither first nor last.
    pub error: Option<String>,
    /// The last meaningful line.
    pub last: Option<String>,
    /// The store id of the original (`sn_` + hex).
    pub id: String,
}

impl Summary {
    /// A summary of an original of `bytes` bytes from its [`Digest`], the tool label
    /// (see [`tool_label`]) and the store id.
    pub fn new(tool: String, bytes: usize, d: &Digest, id: &str) -> Self {
        Summary {
            tool,
            outcome: d.outcome.render(),
            bytes,
            facts: d.facts.as_ref().map(|f| f.replace(" · ", " - ")),
            first: d.first.clone(),
            error: d.error.clone(),
            last: d.last.clone(),
            id: id.to_string(),
        }
    }

    /// Renders the summary as one line (no line ending).
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(128 + self.tool.len());
        s.push_str("[snip: ");
        s.push_str(&self.tool);
        s.push_str(" → ");
        s.push_str(&self.outcome);
        s.push_str(" · ");
        s.push_str(&group_digits(self.bytes));
        s.push_str(" bytes");
        if let Some(f) = &self.facts {
            s.push_str(" · ");
            s.push_str(f);
        }
        for (key, v) in [
            ("first", &self.first),
            ("error", &self.error),
            ("last", &self.last),
        ] {
            if let Some(v) = v {
                s.push_str(" · ");
                s.push_str(key);
                s.push_str(": ");
                quote_into(&mut s, v);
            }
        }
        s.push_str(" · id=");
        s.push_str(&self.id);
        s.push_str(" · restore: snip_restore(id=\"");
        s.push_str(&self.id);
        s.push_str("\")]");
        s
    }
}

/// The label of a tool: its name, and its main argument in backticks when it has one.
/// `args` is the call's arguments (a JSON object, or a string when they did not
/// parse). The main argument is the first string (or list of strings, joined with
/// spaces) among `command`, `cmd`, `file_path`, `path`, `pattern`, `query`, `url` (for
/// a search tool: `pattern`, `query`, `regex`, `path`), else the first string-valued
/// argument.
pub fn tool_label(name: Option<&str>, args: Option<&serde_json::Value>) -> String {
    let name = name
        .map(|n| one_line(n).replace('→', "->"))
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "tool".to_string());
    let mut label = cut(name.trim(), MAX_NAME_CHARS);
    let search = crate::digest::Call::new(Some(&name), None).kind() == crate::digest::Kind::Search;
    let keys: &[&str] = if search {
        &["pattern", "query", "regex", "path"]
    } else {
        &[
            "command",
            "cmd",
            "file_path",
            "path",
            "pattern",
            "query",
            "url",
        ]
    };
    // A string, or an argv list of strings (Codex's `shell`: `["bash", "-lc", "…"]`)
    // joined with spaces.
    let text = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) if !a.is_empty() => a
                .iter()
                .map(|x| x.as_str())
                .collect::<Option<Vec<&str>>>()
                .map(|v| v.join(" ")),
            _ => None,
        }
    };
    let arg = match args {
        Some(serde_json::Value::Object(map)) => keys
            .iter()
            .find_map(|k| map.get(*k).and_then(text))
            .or_else(|| map.values().find_map(|v| v.as_str().map(str::to_string))),
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    if let Some(arg) = arg {
        let arg = one_line(&arg).replace('→', "->");
        let arg = arg.trim();
        if !arg.is_empty() {
            label.push_str(" `");
            label.push_str(&cut_middle(arg, MAX_ARG_CHARS));
            label.push('`');
        }
    }
    label
}

/// Collapses runs of whitespace (newlines included) to one space and drops escapes and
/// control characters.
fn one_line(s: &str) -> String {
    crate::digest::plain_text(&s.replace(['\n', '\r'], " "))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `48213` → `48,213`.
pub fn group_digits(n: usize) -> String {
    snip_core::util::group_digits(n as u64)
}

fn quote_into(s: &mut String, v: &str) {
    s.push('"');
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            c if c.is_control() => s.push(' '),
            c => s.push(c),
        }
    }
    s.push('"');
}

/// Parses a rendered summary (with or without a trailing line ending). `None` when
/// `line` is not a summary of this grammar.
pub fn parse(line: &str) -> Option<Summary> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.contains('\n') {
        return None;
    }
    let body = line.strip_prefix("[snip: ")?.strip_suffix("\")]")?;
    let (tool, rest) = body.split_once(" → ")?;
    let (outcome, rest) = rest.split_once(" · ")?;
    let (size, mut rest) = rest.split_once(" bytes")?;
    let bytes = parse_grouped(size)?;
    let mut facts = None;
    if let Some(r) = rest.strip_prefix(" · ") {
        let known = ["first: \"", "error: \"", "last: \"", "id="];
        if !known.iter().any(|k| r.starts_with(k)) {
            let (f, r) = r.split_once(" · ")?;
            facts = Some(f.to_string());
            rest = &rest[rest.len() - r.len() - " · ".len()..];
        }
    }
    let mut s = Summary {
        tool: tool.to_string(),
        outcome: outcome.to_string(),
        bytes,
        facts,
        first: None,
        error: None,
        last: None,
        id: String::new(),
    };
    for key in ["first", "error", "last"] {
        let prefix = format!(" · {key}: \"");
        if let Some(r) = rest.strip_prefix(prefix.as_str()) {
            let (v, r) = unquote(r)?;
            match key {
                "first" => s.first = Some(v),
                "error" => s.error = Some(v),
                _ => s.last = Some(v),
            }
            rest = r;
        }
    }
    let rest = rest.strip_prefix(" · id=")?;
    let (id, call_id) = rest.split_once(" · restore: snip_restore(id=\"")?;
    if id != call_id
        || id.len() <= 3
        || !id.starts_with("sn_")
        || !id[3..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    s.id = id.to_string();
    Some(s)
}

/// True when `text` is already a summary (the pass leaves it as it is).
pub fn is_summary(text: &str) -> bool {
    text.len() < 4096 && text.starts_with("[snip: ") && parse(text).is_some()
}

fn parse_grouped(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return None;
    }
    s.replace(',', "").parse().ok()
}

/// Reads a quoted string's body up to its closing quote; returns it unescaped and the
/// text after the quote.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut it = s.char_indices();
    while let Some((i, c)) = it.next() {
        match c {
            '\\' => out.push(it.next()?.1),
            '"' => return Some((out, &s[i + 1..])),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::{Digest, Outcome};
    use serde_json::json;

    #[test]
    fn renders_the_documented_shape_and_parses_back() {
        let d = Digest {
            outcome: Outcome::Exit(101),
            first: Some("running 1400 tests".into()),
            error: Some("test a ... \"FAILED\" · x\\y".into()),
            last: Some("error: 1 target failed".into()),
            facts: None,
        };
        let s = Summary::new("terminal `cargo test`".into(), 48_213, &d, "sn_0a1b");
        let line = s.render();
        assert_eq!(
            line,
            "[snip: terminal `cargo test` → exit 101 · 48,213 bytes · first: \"running 1400 tests\" \
             · error: \"test a ... \\\"FAILED\\\" · x\\\\y\" · last: \"error: 1 target failed\" \
             · id=sn_0a1b · restore: snip_restore(id=\"sn_0a1b\")]"
        );
        assert_eq!(parse(&line), Some(s));
        assert!(is_summary(&line));
    }

    #[test]
    fn parses_without_optional_fields() {
        let d = Digest {
            outcome: Outcome::Ok,
            first: None,
            error: None,
            last: None,
            facts: Some("lines 3–9".into()),
        };
        let s = Summary::new("read_file".into(), 7, &d, "sn_ff");
        assert_eq!(
            s.render(),
            "[snip: read_file → ok · 7 bytes · lines 3–9 · id=sn_ff · restore: snip_restore(id=\"sn_ff\")]"
        );
        assert_eq!(parse(&s.render()), Some(s));
    }

    #[test]
    fn rejects_non_summaries() {
        assert!(parse("[snip: 3 lines elided · head-tail-elide · lossless]").is_none());
        assert!(parse("plain text").is_none());
        assert!(
            parse("[snip: t → ok · 1 bytes · id=sn_aa · restore: snip_restore(id=\"sn_bb\")]")
                .is_none()
        );
        assert!(!is_summary(
            "[snip: t → ok · 1 bytes · id=sn_aa · restore: snip_restore(id=\"sn_aa\")]\nmore"
        ));
    }

    #[test]
    fn labels_name_the_tool_and_its_main_argument() {
        assert_eq!(
            tool_label(
                Some("terminal"),
                Some(&json!({"timeout": 5, "command": "cargo\n test"}))
            ),
            "terminal `cargo test`"
        );
        assert_eq!(
            tool_label(
                Some("read_file"),
                Some(&json!({"limit": 3, "file_path": "/a/b.rs"}))
            ),
            "read_file `/a/b.rs`"
        );
        assert_eq!(
            tool_label(Some("x"), Some(&json!({"n": 1, "q": "hi"}))),
            "x `hi`"
        );
        assert_eq!(tool_label(None, None), "tool");
        assert_eq!(tool_label(Some("a→b"), None), "a->b");
        let long = tool_label(Some("t"), Some(&json!({"command": "x".repeat(500)})));
        assert_eq!(long.chars().count(), "t ``".len() + MAX_ARG_CHARS);
    }

    #[test]
    fn groups_digits() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(48_213), "48,213");
        assert_eq!(group_digits(1_234_567), "1,234,567");
    }
}
