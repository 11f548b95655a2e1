//! Reading a tool result for its summary: how it ended and its meaningful lines.
//!
//! Everything here quotes the result itself: the outcome comes from an exit-code field
//! of a JSON result, the host's error flag, an `exit code N` line, or error lines; the
//! quoted lines are lines of the result with ANSI escapes removed and carriage-return
//! redraws rendered to their last frame.

use serde_json::Value;

/// The longest quoted line, in `char`s (longer lines are cut on a char boundary and end
/// with `…`).
pub const MAX_QUOTE_CHARS: usize = 100;

/// How a tool result ended, as far as the result itself says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An exit status: from an exit-code field of a JSON result, or an `exit code N`
    /// line.
    Exit(i64),
    /// The host flagged the result as an error (`is_error`, a non-empty `error` field).
    Error,
    /// An HTTP status of 400 or more in a `status` / `status_code` field.
    Status(i64),
    /// No status was given, but this many lines look like errors.
    ErrorLines(usize),
    /// The result says it succeeded: `is_error: false` from the host, `success: true`,
    /// an HTTP 2xx/3xx status, or a file read showing numbered lines.
    Ok,
    /// Nothing tells how it ended (shown as `?`, never as `ok`).
    Unknown,
}

impl Outcome {
    /// The outcome as shown after the `→` of a summary: `exit 101`, `error`,
    /// `HTTP 404`, `3 error lines`, `ok`, `?`.
    pub fn render(&self) -> String {
        match self {
            Outcome::Exit(n) => format!("exit {n}"),
            Outcome::Error => "error".to_string(),
            Outcome::Status(n) => format!("HTTP {n}"),
            Outcome::ErrorLines(1) => "1 error line".to_string(),
            Outcome::ErrorLines(n) => format!("{n} error lines"),
            Outcome::Ok => "ok".to_string(),
            Outcome::Unknown => "?".to_string(),
        }
    }
}

/// What a summary quotes from one tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// How it ended.
    pub outcome: Outcome,
    /// The first meaningful line, cleaned and cut to [`MAX_QUOTE_CHARS`].
    pub first: Option<String>,
    /// The first line that looks like an error, when it is neither the first nor the
    /// last meaningful line.
    pub error: Option<String>,
    /// The last meaningful line, when it is not the first.
    pub last: Option<String>,
    /// What the kind of tool makes worth saying (see [`Kind`]): `lines 121–360 of
    /// 2,000`, `14 matches`, `+3 −1`, `412 lines, truncated by the host`.
    pub facts: Option<String>,
}

/// The tool call a result answers: its name and arguments (a JSON object, or a string
/// when they did not parse).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub name: Option<String>,
    /// The call's arguments.
    pub args: Option<Value>,
}

/// What kind of tool a call is, from its name (case-insensitive): Hermes
/// (`terminal`, `read_file`, `search_files`, `patch`, `write_file`), Claude Code
/// (`Bash`, `Read`, `Grep`, `Glob`, `Edit`, `MultiEdit`, `Write`) and common
/// OpenAI-style names (`shell`, `exec_command`, `apply_patch`, `edit_file`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Runs a command: the summary counts lines and notes a host's truncation.
    Terminal,
    /// Reads a file: the summary names the line window.
    Read,
    /// Searches files: the summary counts matches.
    Search,
    /// Changes a file: the summary counts added and removed lines.
    Patch,
    /// Anything else: a generic summary.
    Other,
}

impl Call {
    /// A call from its name and arguments as a request holds them.
    pub fn new(name: Option<&str>, args: Option<&Value>) -> Self {
        Call {
            name: name.map(str::to_string),
            args: args.cloned(),
        }
    }

    /// The kind of tool, from the name.
    pub fn kind(&self) -> Kind {
        let Some(name) = &self.name else {
            return Kind::Other;
        };
        match name.to_ascii_lowercase().as_str() {
            "terminal" | "bash" | "shell" | "shell_command" | "exec_command" | "run_command"
            | "execute_command" | "local_shell" | "run_terminal_cmd" | "run_shell_command"
            | "execute" => Kind::Terminal,
            "read_file" | "read" | "view" | "view_file" | "open_file" | "cat" => Kind::Read,
            "search_files" | "search" | "grep" | "glob" | "find_files" | "file_search"
            | "grep_search" | "codebase_search" | "ripgrep" => Kind::Search,
            "patch" | "edit" | "multiedit" | "write" | "write_file" | "apply_patch"
            | "edit_file" | "str_replace" | "str_replace_editor" | "create_file" | "replace" => {
                Kind::Patch
            }
            _ => Kind::Other,
        }
    }

    fn arg(&self, keys: &[&str]) -> Option<&Value> {
        let map = self.args.as_ref()?.as_object()?;
        keys.iter().find_map(|k| map.get(*k))
    }

    fn arg_usize(&self, keys: &[&str]) -> Option<usize> {
        match self.arg(keys)? {
            Value::Number(n) => n.as_u64().map(|n| n as usize),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// `+N −M` from an edit's arguments: `old_string`/`new_string` (Claude Code Edit,
    /// Hermes patch), `edits` (MultiEdit), `content` (Write), or a patch text.
    fn edit_counts(&self) -> Option<String> {
        let lines = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map_or(0, |s| if s.is_empty() { 0 } else { s.lines().count() })
        };
        if let Some(Value::String(patch)) = self.arg(&["patch", "input", "diff"]) {
            let l: Vec<&str> = patch.split('\n').collect();
            if let Some(c) = diff_counts(&l) {
                return Some(c);
            }
        }
        if let Some(Value::Array(edits)) = self.arg(&["edits"]) {
            let (mut add, mut del) = (0, 0);
            for e in edits {
                add += lines(e.get("new_string"));
                del += lines(e.get("old_string"));
            }
            return Some(format!("+{add} −{del}"));
        }
        if self.arg(&["old_string", "new_string"]).is_some() {
            return Some(format!(
                "+{} −{}",
                lines(self.arg(&["new_string"])),
                lines(self.arg(&["old_string"]))
            ));
        }
        self.arg(&["content", "file_text"])
            .map(|c| format!("+{} −0", lines(Some(c))))
    }
}

fn group(n: usize) -> String {
    crate::summary::group_digits(n)
}

/// The text after a line-number gutter (`   12\tx`, `12|x`, `12→x`, `12:x`), when
/// `line` has one.
fn strip_gutter(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &t[digits..];
    ['\t', '|', '→', ':']
        .iter()
        .find_map(|c| rest.strip_prefix(*c))
}

/// The number of a gutter line.
fn gutter_number(line: &str) -> Option<usize> {
    strip_gutter(line)?;
    let t = line.trim_start();
    t[..t.bytes().take_while(u8::is_ascii_digit).count()]
        .parse()
        .ok()
}

/// Facts a JSON result states itself: a file's total lines, a search's match count,
/// a patch's diff.
fn json_facts_of(kind: Kind, map: &serde_json::Map<String, Value>) -> Option<String> {
    let num = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| map.get(*k).and_then(Value::as_u64))
    };
    match kind {
        Kind::Read => num(&["total_lines", "totalLines", "line_count", "lines"])
            .map(|n| format!("of {}", group(n as usize))),
        Kind::Search => {
            let n = num(&[
                "total_count",
                "total_matches",
                "count",
                "match_count",
                "numMatches",
            ])
            .or_else(|| {
                ["matches", "results", "files", "filenames"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_array))
                    .map(|a| a.len() as u64)
            })?;
            Some(format!(
                "{} {}",
                group(n as usize),
                if n == 1 { "match" } else { "matches" }
            ))
        }
        Kind::Patch => ["diff", "patch"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .and_then(|d| diff_counts(&d.split('\n').collect::<Vec<_>>())),
        _ => None,
    }
}

/// `lines A–B` (1-based, inclusive) from the gutter, else from the call's
/// `offset`/`limit`; with `of N` when the result states the file's length.
fn read_facts(call: &Call, lines: &[&str], gutter: bool, total: Option<String>) -> Option<String> {
    let numbered: Vec<usize> = if gutter {
        lines.iter().filter_map(|l| gutter_number(l)).collect()
    } else {
        Vec::new()
    };
    let window = match (numbered.first(), numbered.last()) {
        (Some(a), Some(b)) => Some(format!("lines {a}–{b}")),
        _ => {
            let offset = call.arg_usize(&["offset", "start_line", "line", "from"]);
            let limit = call.arg_usize(&["limit", "max_lines", "count"]);
            match (offset, limit) {
                (None, None) => None,
                (o, Some(l)) => {
                    let a = o.unwrap_or(1).max(1);
                    Some(format!("lines {a}–{}", a + l.max(1) - 1))
                }
                (Some(o), None) => Some(format!("lines {o}–")),
            }
        }
    };
    match (window, total) {
        (Some(w), Some(t)) => Some(format!("{w} {t}")),
        (w, t) => w.or(t.map(|t| format!("lines {t}"))),
    }
}

/// `+N −M` of a unified diff's body lines (headers `+++`/`---` not counted).
fn diff_counts(lines: &[&str]) -> Option<String> {
    if !lines
        .iter()
        .any(|l| l.starts_with("@@") || l.starts_with("--- "))
    {
        return None;
    }
    let add = lines
        .iter()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .count();
    let del = lines
        .iter()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .count();
    Some(format!("+{add} −{del}"))
}

/// `N lines`, and `truncated by the host` when the host's truncation notice is in it
/// (Hermes: `... [N characters truncated] ...`; others: `[output truncated …]`,
/// `Output truncated`).
fn terminal_facts(lines: &[&str]) -> String {
    let n = lines.len() - usize::from(lines.last().is_some_and(|l| l.is_empty()));
    let truncated = lines.iter().any(|l| {
        let t = l.trim();
        t.len() < 200 && {
            let lower = t.to_ascii_lowercase();
            lower.contains("truncated")
                && (t.starts_with("...")
                    || t.starts_with('[')
                    || t.starts_with('(')
                    || lower.starts_with("output truncated"))
        }
    });
    let lines = format!("{} {}", group(n), if n == 1 { "line" } else { "lines" });
    if truncated {
        format!("{lines}, truncated by the host")
    } else {
        lines
    }
}

/// Fields of a JSON result whose string value is the tool's output, in order of
/// preference (`stderr` is read after the chosen one).
const OUTPUT_FIELDS: &[&str] = &["output", "stdout", "content", "result", "text"];
/// Fields of a JSON result holding an exit status.
const EXIT_FIELDS: &[&str] = &[
    "exit_code",
    "exitCode",
    "returncode",
    "return_code",
    "exit_status",
];

/// Reads `text` (the result's whole text) with the host's error flag `is_error`, for a
/// call that is not known (a generic summary).
pub fn digest(text: &str, is_error: Option<bool>) -> Digest {
    digest_call(text, is_error, &Call::default())
}

/// Reads `text` (the result's whole text) with the host's error flag `is_error`, for the
/// tool call `call` it answers.
pub fn digest_call(text: &str, is_error: Option<bool>, call: &Call) -> Digest {
    let kind = call.kind();
    let mut outcome = None;
    let mut json_ok = false;
    let mut json_facts: Option<String> = None;
    let mut body: std::borrow::Cow<'_, str> = text.into();
    let mut error_field = None;
    // A JSON envelope such as `{"output": "...", "exit_code": 1, "error": null}`.
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) {
            // Top level, or under `metadata` (Codex's shell tool:
            // `{"output": "...", "metadata": {"exit_code": 1, ...}}`).
            let metadata = map.get("metadata").and_then(Value::as_object);
            if let Some(code) = EXIT_FIELDS.iter().find_map(|k| {
                map.get(*k)
                    .or_else(|| metadata.and_then(|m| m.get(*k)))
                    .and_then(Value::as_i64)
            }) {
                outcome = Some(Outcome::Exit(code));
            }
            match map.get("error") {
                Some(Value::String(e)) if !e.trim().is_empty() => error_field = Some(e.clone()),
                Some(Value::Object(o)) => {
                    let msg = o
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| Value::Object(o.clone()).to_string());
                    error_field = Some(msg);
                }
                _ => {}
            }
            for k in ["success", "ok"] {
                match map.get(k).and_then(Value::as_bool) {
                    Some(false) if error_field.is_none() => {
                        error_field = Some(format!("{k}: false"));
                    }
                    Some(true) => json_ok = true,
                    _ => {}
                }
            }
            if outcome.is_none() {
                if let Some(code) = ["status", "status_code", "statusCode", "http_status"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(Value::as_i64))
                    .filter(|c| (100..600).contains(c))
                {
                    if code >= 400 {
                        outcome = Some(Outcome::Status(code));
                    } else {
                        json_ok = true;
                    }
                }
            }
            json_facts = json_facts_of(kind, &map);
            if let Some(out) = OUTPUT_FIELDS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
            {
                let mut s = out.to_string();
                if let Some(err) = map.get("stderr").and_then(Value::as_str) {
                    if !err.trim().is_empty() {
                        s.push('\n');
                        s.push_str(err);
                    }
                }
                if let Some(e) = &error_field {
                    s.push('\n');
                    s.push_str(e);
                }
                body = s.into();
            }
        }
    }
    let lines: Vec<&str> = body.split('\n').collect();
    if outcome.is_none() {
        // `Exit code 1` / `exit status 2` / `Process exited with code 3`, near either end.
        let first_i = lines.iter().position(|l| meaningful(l).is_some());
        let last_i = lines.iter().rposition(|l| meaningful(l).is_some());
        let ends = first_i.into_iter().chain(last_i);
        outcome = ends
            .filter_map(|i| meaningful(lines[i]).and_then(|l| exit_line(&l)))
            .next()
            .map(Outcome::Exit);
    }
    // A file's lines may be numbered (`  12\tfn main`, `12|`, `12→`): quote the text.
    let gutter = kind == Kind::Read && lines.iter().any(|l| strip_gutter(l).is_some());
    let meaningful_at = |i: usize| -> Option<String> {
        let l = lines[i];
        let l = if gutter {
            strip_gutter(l).unwrap_or(l)
        } else {
            l
        };
        meaningful(l)
    };
    let first_i = (0..lines.len()).find(|&i| meaningful_at(i).is_some());
    let last_i = (0..lines.len()).rev().find(|&i| meaningful_at(i).is_some());
    let mut error_lines = 0usize;
    let mut first_error = None;
    for (i, l) in lines.iter().enumerate() {
        if !snip_core::salience::may_report_error(l) {
            continue;
        }
        if let Some(m) = meaningful(l) {
            if snip_core::salience::reports_error(&m) {
                error_lines += 1;
                if first_error.is_none() {
                    first_error = Some((i, m));
                }
            }
        }
    }
    let failed = is_error == Some(true) || error_field.is_some();
    let outcome = match outcome {
        // A zero status next to a failure flag is not a success.
        Some(Outcome::Exit(0)) if failed => Outcome::Error,
        Some(o) => o,
        None if failed => Outcome::Error,
        // A file's own text is not the tool's error.
        None if error_lines > 0 && kind != Kind::Read => Outcome::ErrorLines(error_lines),
        None if is_error == Some(false) || json_ok || gutter => Outcome::Ok,
        None => Outcome::Unknown,
    };
    let first = first_i.and_then(meaningful_at);
    let last = match (first_i, last_i) {
        (Some(a), Some(b)) if b != a => meaningful_at(b),
        _ => None,
    };
    let facts = match kind {
        Kind::Read => read_facts(call, &lines, gutter, json_facts),
        Kind::Search => json_facts.or_else(|| {
            let n = lines.iter().filter(|l| meaningful(l).is_some()).count();
            Some(format!(
                "{} {}",
                group(n),
                if n == 1 { "match" } else { "matches" }
            ))
        }),
        Kind::Patch => json_facts
            .or_else(|| diff_counts(&lines))
            .or_else(|| call.edit_counts()),
        Kind::Terminal => Some(terminal_facts(&lines)),
        Kind::Other => None,
    };
    let error = first_error
        .filter(|(i, _)| Some(*i) != first_i && Some(*i) != last_i)
        .map(|(_, m)| m);
    Digest {
        outcome,
        first: first.map(|l| cut(&l, MAX_QUOTE_CHARS)),
        error: error.map(|l| cut(&l, MAX_QUOTE_CHARS)),
        last: last.map(|l| cut(&l, MAX_QUOTE_CHARS)),
        facts,
    }
}

/// The cleaned line when it is meaningful: its last carriage-return frame, without ANSI
/// escapes or control characters, trimmed, holding at least one letter or digit, and
/// not itself a `[snip: …]` marker.
pub fn meaningful(line: &str) -> Option<String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    // A redrawn line shows its last non-blank frame.
    let frame = line
        .rsplit('\r')
        .map(plain_text)
        .find(|f| !f.trim().is_empty())?;
    let t = frame.trim();
    if !t.chars().any(char::is_alphanumeric) || t.starts_with("[snip: ") {
        return None;
    }
    Some(t.to_string())
}

/// `s` as plain text: without escape sequences (removed by snip-core's escape lexer,
/// [`snip_core::text::strip_ansi`]) or other control characters; a tab becomes a space.
pub fn plain_text(s: &str) -> String {
    let stripped = snip_core::text::strip_ansi(s.as_bytes());
    let mut out = String::with_capacity(stripped.len());
    for c in String::from_utf8_lossy(&stripped).chars() {
        match c {
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Cuts `s` to at most `max` chars, ending with `…` when cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Cuts `s` to at most `max` chars by removing its middle (`head…tail`), for labels
/// whose end matters as much as their start (a command after `cd dir &&`).
pub fn cut_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let head = (max.saturating_sub(1)) * 2 / 5;
    let tail = max.saturating_sub(1) - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

/// `Exit code 1`, `exit status: 2`, `Process exited with code 3`, `[exit 4]`.
fn exit_line(line: &str) -> Option<i64> {
    let lower = line.to_ascii_lowercase();
    for key in [
        "exit code",
        "exit status",
        "exited with code",
        "exit_code",
        "[exit",
    ] {
        if let Some(at) = lower.find(key) {
            // Only a short line that is about the exit: the key near its start.
            if at > 24 {
                continue;
            }
            let rest = lower[at + key.len()..].trim_start_matches([' ', ':', '=']);
            let digits: String = rest
                .chars()
                .enumerate()
                .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
                .map(|(_, c)| c)
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meaningful_skips_blank_and_punctuation_and_renders_frames() {
        assert_eq!(meaningful("   "), None);
        assert_eq!(meaningful("-----"), None);
        assert_eq!(meaningful("}],"), None);
        assert_eq!(
            meaningful("\u{1b}[31merror\u{1b}[0m: boom\r"),
            Some("error: boom".into())
        );
        assert_eq!(
            meaningful(" 10%\r 50%\r100% done\r   "),
            Some("100% done".into())
        );
        assert_eq!(meaningful("[snip: 3 lines elided · x · lossless]"), None);
        assert_eq!(
            meaningful("\u{1b}]8;;file:///x\u{7}link\u{1b}]8;;\u{7} ok"),
            Some("link ok".into())
        );
    }

    #[test]
    fn cuts_on_char_boundaries() {
        let s = "é".repeat(150);
        let c = cut(&s, 100);
        assert_eq!(c.chars().count(), 100);
        assert!(c.ends_with('…'));
        let m = cut_middle(&"ab".repeat(60), 21);
        assert_eq!(m.chars().count(), 21);
        assert_eq!(cut("short", 100), "short");
    }

    #[test]
    fn outcome_from_json_exit_field_and_output() {
        let text = r#"{"output": "running 3 tests\ntest a ... FAILED\n\nerror: 1 target failed", "exit_code": 101, "error": null}"#;
        let d = digest(text, None);
        assert_eq!(d.outcome, Outcome::Exit(101));
        assert_eq!(d.first.as_deref(), Some("running 3 tests"));
        assert_eq!(d.error.as_deref(), Some("test a ... FAILED"));
        assert_eq!(d.last.as_deref(), Some("error: 1 target failed"));
    }

    #[test]
    fn outcome_from_flag_lines_and_exit_line() {
        assert_eq!(digest("a\nb", Some(true)).outcome, Outcome::Error);
        assert_eq!(
            digest("a\nerror: x\nb", None).outcome,
            Outcome::ErrorLines(1)
        );
        assert_eq!(digest("all good\nfine", Some(false)).outcome, Outcome::Ok);
        assert_eq!(
            digest("Exit code 2\nboom", Some(true)).outcome,
            Outcome::Exit(2)
        );
        assert_eq!(
            digest("x\nProcess exited with code -15", None).outcome,
            Outcome::Exit(-15)
        );
        assert_eq!(
            digest(
                "% Total\ncurl: (22) The requested URL returned error: 404",
                None
            )
            .outcome,
            Outcome::ErrorLines(1)
        );
    }

    #[test]
    fn single_meaningful_line_has_no_last() {
        let d = digest("\n\n  only line  \n\n", None);
        assert_eq!(d.first.as_deref(), Some("only line"));
        assert_eq!(d.last, None);
        let d = digest("", None);
        assert_eq!((d.first, d.last), (None, None));
    }
}
