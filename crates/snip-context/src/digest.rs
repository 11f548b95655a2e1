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
    /// No status was given, but this many lines look like errors.
    ErrorLines(usize),
    /// No status was given and no line looks like an error.
    Ok,
}

impl Outcome {
    /// The outcome as shown after the `→` of a summary: `exit 101`, `error`,
    /// `3 error lines`, `ok`.
    pub fn render(&self) -> String {
        match self {
            Outcome::Exit(n) => format!("exit {n}"),
            Outcome::Error => "error".to_string(),
            Outcome::ErrorLines(1) => "1 error line".to_string(),
            Outcome::ErrorLines(n) => format!("{n} error lines"),
            Outcome::Ok => "ok".to_string(),
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

/// Reads `text` (the result's whole text) with the host's error flag `is_error`.
pub fn digest(text: &str, is_error: Option<bool>) -> Digest {
    let mut outcome = None;
    let mut body: std::borrow::Cow<'_, str> = text.into();
    let mut error_field = None;
    // A JSON envelope such as `{"output": "...", "exit_code": 1, "error": null}`.
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) {
            if let Some(code) = EXIT_FIELDS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_i64))
            {
                outcome = Some(Outcome::Exit(code));
            }
            if let Some(Value::String(e)) = map.get("error") {
                if !e.trim().is_empty() {
                    error_field = Some(e.clone());
                }
            }
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
    let first_i = lines.iter().position(|l| meaningful(l).is_some());
    let last_i = lines.iter().rposition(|l| meaningful(l).is_some());
    if outcome.is_none() {
        // `Exit code 1` / `exit status 2` / `Process exited with code 3`, near either end.
        let ends = first_i.into_iter().chain(last_i);
        outcome = ends
            .filter_map(|i| meaningful(lines[i]).and_then(|l| exit_line(&l)))
            .next()
            .map(Outcome::Exit);
    }
    let mut error_lines = 0usize;
    let mut first_error = None;
    for (i, l) in lines.iter().enumerate() {
        if !maybe_error(l) {
            continue;
        }
        if let Some(m) = meaningful(l) {
            if looks_like_error(&m) {
                error_lines += 1;
                if first_error.is_none() {
                    first_error = Some((i, m));
                }
            }
        }
    }
    let outcome = match outcome {
        Some(o) => o,
        None if is_error == Some(true) || error_field.is_some() => Outcome::Error,
        None if error_lines > 0 => Outcome::ErrorLines(error_lines),
        None => Outcome::Ok,
    };
    let first = first_i.and_then(|i| meaningful(lines[i]));
    let last = match (first_i, last_i) {
        (Some(a), Some(b)) if b != a => meaningful(lines[b]),
        _ => None,
    };
    let error = first_error
        .filter(|(i, _)| Some(*i) != first_i && Some(*i) != last_i)
        .map(|(_, m)| m);
    Digest {
        outcome,
        first: first.map(|l| cut(&l, MAX_QUOTE_CHARS)),
        error: error.map(|l| cut(&l, MAX_QUOTE_CHARS)),
        last: last.map(|l| cut(&l, MAX_QUOTE_CHARS)),
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
        .map(strip_escapes)
        .find(|f| !f.trim().is_empty())?;
    let t = frame.trim();
    if !t.chars().any(char::is_alphanumeric) || t.starts_with("[snip: ") {
        return None;
    }
    Some(t.to_string())
}

/// Removes ANSI escape sequences (CSI, OSC, two-byte escapes) and other control
/// characters; a tab becomes a space.
pub fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\u{1b}' => match it.next() {
                // CSI: parameters and intermediates, then one final byte @..~.
                Some('[') => {
                    for n in it.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC (and DCS/PM/APC strings): up to BEL or ESC \.
                Some(']' | 'P' | '^' | '_') => {
                    while let Some(n) = it.next() {
                        if n == '\u{7}' {
                            break;
                        }
                        if n == '\u{1b}' {
                            if it.peek() == Some(&'\\') {
                                it.next();
                            }
                            break;
                        }
                    }
                }
                // Charset selection takes one more character (`ESC ( B`).
                Some('(' | ')' | '*' | '+') => {
                    it.next();
                }
                _ => {}
            },
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

/// A cheap pre-check: whether `line` holds a substring every [`looks_like_error`]
/// pattern contains.
fn maybe_error(line: &str) -> bool {
    [
        "rror",
        "ERR",
        "FAIL",
        "fatal",
        "Traceback",
        "E: ",
        "panic",
        "Exception",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// A line that reports an error or a failure (compiler, test runner, shell, Python,
/// Rust, npm, apt). Case matters: `error:` and `ERROR` count, a word like `errors`
/// inside a sentence does not.
pub fn looks_like_error(line: &str) -> bool {
    let starts = [
        "error:",
        "error[",
        "Error:",
        "ERROR",
        "FAILED",
        "FAIL ",
        "fatal:",
        "fatal error",
        "Traceback (most recent call last)",
        "npm error",
        "npm ERR!",
        "E: ",
        "panic:",
    ];
    if starts.iter().any(|p| line.starts_with(p)) {
        return true;
    }
    let contains = [
        "... FAILED",
        " panicked at ",
        "Error: ",
        "Exception: ",
        ": error:",
        " error: ",
        ": fatal error:",
        "rsync error:",
    ];
    contains.iter().any(|p| line.contains(p))
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
