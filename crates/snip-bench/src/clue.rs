//! Clue checks: is the clue visible in the output, or else can one restore call get it
//! back?
//!
//! *Visible* means the clue is a substring of the output once ANSI escape sequences
//! are removed (the manifest's clues are written against the stripped text).
//! *Recovered* means: some marker in the output (parsed with
//! [`snip_core::marker::parse`], on output lines and, for JSON output, inside decoded
//! string values) quotes a restore call which, executed verbatim against the store,
//! returns text containing the clue. When no marker's call does, one `search` call
//! for the clue on a marker's id is tried; the report says which of the two worked.

use memchr::memmem;
use snip_core::marker::{self, CallValue, ParsedMarker};

/// Removes ANSI escape sequences: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or
/// `ESC \`), DCS/SOS/PM/APC (… `ESC \`), `ESC` + intermediates + final (e.g. `ESC ( B`)
/// and two-byte escapes (e.g. `ESC 7`). Every other byte is kept, `\r` included.
///
/// Written independently of snip-core's escape lexer on purpose: the benchmark
/// measures snip's output with its own stick (`scripts/check-layout.sh` exempts it).
pub fn strip_ansi(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] != 0x1b {
            out.push(input[i]);
            i += 1;
            continue;
        }
        let Some(&next) = input.get(i + 1) else {
            break;
        };
        i = match next {
            b'[' => {
                let mut j = i + 2;
                while j < input.len() && (0x20..=0x3f).contains(&input[j]) {
                    j += 1;
                }
                if j < input.len() && (0x40..=0x7e).contains(&input[j]) {
                    j += 1;
                }
                j
            }
            b']' | b'P' | b'X' | b'^' | b'_' => {
                let mut j = i + 2;
                while j < input.len() {
                    if input[j] == 0x07 && next == b']' {
                        j += 1;
                        break;
                    }
                    if input[j] == 0x1b && input.get(j + 1) == Some(&b'\\') {
                        j += 2;
                        break;
                    }
                    j += 1;
                }
                j
            }
            0x20..=0x2f => {
                let mut j = i + 1;
                while j < input.len() && (0x20..=0x2f).contains(&input[j]) {
                    j += 1;
                }
                (j + 1).min(input.len())
            }
            _ => i + 2,
        };
    }
    out
}

/// Whether `clue` occurs in `output` after ANSI stripping.
pub fn visible(output: &[u8], clue: &str) -> bool {
    memmem::find(&strip_ansi(output), clue.as_bytes()).is_some()
}

/// Every marker in `output` that quotes a restore call, in order of appearance, each
/// call once. Markers are looked for on the lines of the ANSI-stripped output and, when
/// the output is one JSON document, on the lines of every decoded string value (where
/// the call's quotes are no longer escaped). A marker may sit inside a line.
pub fn markers(output: &[u8]) -> Vec<ParsedMarker> {
    let mut found: Vec<ParsedMarker> = Vec::new();
    let mut push = |m: ParsedMarker| {
        if m.call.is_some() && !found.iter().any(|f| f.call == m.call) {
            found.push(m);
        }
    };
    let stripped = strip_ansi(output);
    for m in markers_in_text(&String::from_utf8_lossy(&stripped)) {
        push(m);
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(output) {
        let mut strings = Vec::new();
        collect_strings(&value, &mut strings);
        for s in strings {
            for m in markers_in_text(s) {
                push(m);
            }
        }
    }
    found
}

fn collect_strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// Markers in one text: every `[snip: ` on a line, closed by the first `]` after it that
/// makes the span parse.
fn markers_in_text(text: &str) -> Vec<ParsedMarker> {
    let mut out = Vec::new();
    if !text.contains("[snip: ") {
        return out;
    }
    for line in text.lines() {
        let mut from = 0;
        while let Some(k) = line[from..].find("[snip: ").map(|k| k + from) {
            let mut next = k + 1;
            for (e, _) in line[k..].match_indices(']') {
                if let Some(m) = marker::parse(&line[k..=k + e]) {
                    out.push(m);
                    next = k + e + 1;
                    break;
                }
            }
            from = next;
        }
    }
    out
}

/// The arguments of one `snip_restore(...)` call, as quoted in a marker.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallArgs {
    /// `id`: the store id (`sn_` + hex).
    pub id: String,
    /// `mode`: `bytes`, `lines`, `search` or `full`.
    pub mode: String,
    /// `start`: first byte (0-based) or line (1-based), when given.
    pub start: Option<u64>,
    /// `end`: end byte (exclusive) or last line (inclusive), when given.
    pub end: Option<u64>,
    /// `field`: a JSON pointer scoping the call to one string field, when given.
    pub field: Option<String>,
    /// `query`: the literal a `search` call looks for, when given.
    pub query: Option<String>,
}

impl CallArgs {
    /// Renders the call the way markers quote it (for `search`, with `query`).
    pub fn render(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut s = format!("snip_restore(id={}, mode={}", q(&self.id), q(&self.mode));
        if let Some(f) = &self.field {
            s.push_str(&format!(", field={}", q(f)));
        }
        if let Some(v) = self.start {
            s.push_str(&format!(", start={v}"));
        }
        if let Some(v) = self.end {
            s.push_str(&format!(", end={v}"));
        }
        if let Some(v) = &self.query {
            s.push_str(&format!(", query={}", q(v)));
        }
        s.push(')');
        s
    }
}

/// Parses a quoted call such as
/// `snip_restore(id="sn_ab", mode="lines", start=3, end=9)`: `key=value` pairs, values
/// are double-quoted strings (with `\"` and `\\` escapes) or decimal integers.
///
/// # Errors
/// A message naming what does not parse (an unknown key, a bad value, no `id`).
pub fn parse_call(call: &str) -> Result<CallArgs, String> {
    let mut args = CallArgs::default();
    marker::parse_restore_call(call, |key, value| {
        match (key, value) {
            ("id", CallValue::Str(v)) => args.id = v,
            ("mode", CallValue::Str(v)) => args.mode = v,
            ("field", CallValue::Str(v)) => args.field = Some(v),
            ("query", CallValue::Str(v)) => args.query = Some(v),
            ("start", CallValue::Num(v)) => args.start = Some(v),
            ("end", CallValue::Num(v)) => args.end = Some(v),
            (k, _) => return Err(format!("unexpected argument `{k}`")),
        }
        Ok(())
    })
    .map_err(|e| format!("{e} in {call}"))?;
    if args.id.is_empty() {
        return Err(format!("no id in {call}"));
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use snip_core::marker::{Marker, RestoreCall};

    #[test]
    fn strips_sgr_csi_osc_and_short_escapes() {
        let raw = b"\x1b[1;31merror\x1b[0m: \x1b]8;;file:///x\x07link\x1b]8;;\x1b\\ \x1b7\x1b(Bok\x1b[2K\r";
        assert_eq!(strip_ansi(raw), b"error: link ok\r");
        assert_eq!(strip_ansi(b"plain\ttext\n"), b"plain\ttext\n");
        assert_eq!(strip_ansi(b"cut\x1b"), b"cut");
    }

    #[test]
    fn clue_visible_only_after_stripping() {
        let out = b"FAILED \x1b[1mtest_x\x1b[0m - boom";
        assert!(visible(out, "FAILED test_x - boom"));
        assert!(!visible(out, "test_y"));
    }

    fn marker_line(call: RestoreCall) -> String {
        Marker {
            what: "12 lines elided".into(),
            rule: snip_core::RuleId::HeadTailElide,
            lines: Some((3, 14)),
            bytes: None,
            recovery: snip_core::marker::Recovery::Elided(call),
        }
        .render(Some("sn_00ff"))
    }

    #[test]
    fn finds_markers_on_lines_and_inside_json_strings() {
        let line = marker_line(RestoreCall::Lines { start: 3, end: 14 });
        let text = format!("head\n{line}\ntail\n");
        let found = markers(text.as_bytes());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id.as_deref(), Some("sn_00ff"));

        let field = marker_line(RestoreCall::FieldBytes {
            field: "/stdout".into(),
            start: 10,
            end: 90,
        });
        let json = serde_json::json!({ "stdout": format!("a\n{field}\nb"), "items": [1, line] });
        let found = markers(&serde_json::to_vec(&json).unwrap());
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found
            .iter()
            .any(|m| m.call.as_deref().unwrap().contains("field=")));
        assert!(markers(b"no markers [snip: here").is_empty());
    }

    #[test]
    fn parses_every_call_form_markers_quote() {
        for (call, id) in [
            (RestoreCall::Lines { start: 3, end: 9 }, "sn_1"),
            (RestoreCall::Bytes { start: 0, end: 10 }, "sn_2"),
            (
                RestoreCall::FieldBytes {
                    field: "/a/\"q\"/0".into(),
                    start: 5,
                    end: 50,
                },
                "sn_3",
            ),
        ] {
            let text = call.render(id);
            let args = parse_call(&text).unwrap();
            assert_eq!(args.id, id);
            assert_eq!(args.render(), text);
            match call {
                RestoreCall::Lines { start, end } | RestoreCall::Bytes { start, end } => {
                    assert_eq!((args.start, args.end), (Some(start), Some(end)));
                }
                RestoreCall::FieldBytes { field, .. } => assert_eq!(args.field, Some(field)),
            }
        }
        let full = parse_call("snip_restore(id=\"sn_9\", mode=\"full\")").unwrap();
        assert_eq!(full.mode, "full");
        assert!(parse_call("snip_restore(mode=\"full\")").is_err());
        assert!(parse_call("snip_restore(id=\"sn_9\", start=x)").is_err());
        assert!(parse_call("restore(id=\"sn_9\")").is_err());
    }
}
