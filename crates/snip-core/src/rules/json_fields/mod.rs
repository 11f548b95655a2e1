//! `json-fields`: shorten one JSON document (or JSON Lines) and keep it valid JSON.
//!
//! # What it does
//! Parses the payload with its own span-keeping scanner (iterative: an explicit stack,
//! so JSON nested 100,000 deep cannot overflow the call stack) and writes a smaller JSON
//! text. Every value it does not touch is copied as its original bytes, so numbers,
//! escapes and key order stay exact. In order:
//!
//! 1. **Lossless, any size.** A string value of at least 64 raw bytes that holds `\r`,
//!    an ESC (`\u001b`) or several line feeds is decoded, run through the lossless text
//!    rules (terminal-render, ansi-strip, repeat-collapse) and re-encoded, when that is
//!    smaller, their footer included (it counts the frames, backspaces and ANSI
//!    escapes removed, so no changed byte goes unmarked).
//! 2. **Lossless, over the budget.** If minifying (removing whitespace between tokens,
//!    reported as `minified`) alone brings the document under [`Config::max_bytes`], or
//!    nothing lossy may happen, that is the whole change. Small pretty JSON stays as it
//!    is, and a document holding a `json-fields` marker is never minified.
//! 3. **Lossy, over the budget** (only when the caller allows it). Markers are spliced
//!    into the original's own bytes (whitespace and escapes kept as printed). While the
//!    document is over the budget, the piece whose elision saves the most bytes goes
//!    first:
//!    - inside a long string: the first and last [`Config::json_string_keep`] bytes of
//!      the decoded value stay (cut on code-point boundaries, never inside an escape
//!      sequence) and the middle becomes a marker *inside the string*:
//!      `<head>…[snip: N bytes elided from this string · json-fields · restore: …]…<tail>`
//!      (the separator is U+2026 `…`, see [`SEPARATOR`]);
//!    - the middle of a long array: the first and last [`Config::json_array_keep`] items
//!      stay, and so does every item that reports a failure (`plan::reports_failure`)
//!      while they are few (at most a quarter of the items and 32, each at most 600
//!      bytes); each run of elided items becomes ONE marker string element, which
//!      counts the items that report a failure among them;
//!    - the middle of a large object: the first and last members stay, and so does every
//!      salient member (error words in its key or short scalar value, or a short scalar
//!      named like `status`, `version`, `latest`…); each run of elided members becomes
//!      one marker member `"…snip": "[snip: N members elided from this object · …]"`
//!      (see [`MARKER_KEY`]).
//!
//!    The steps come in levels, each run only while the budget is not met: (a) strings
//!    and arrays of scalars at the configured keeps; (b) the same at tight keeps
//!    (strings `json_string_keep / 16` bytes, arrays 1 item); (c) objects' members
//!    (salient ones kept), so that a list of records (packages, rows) keeps every
//!    record; only if that cannot meet the budget is the document redone from (a) with
//!    arrays of objects/arrays at the configured keep, then everything at the tight
//!    keeps, then objects down to their first and last members alone, then arrays
//!    without their items that report a failure. Within a level
//!    the step that reaches the budget is the smallest piece that is enough on its own.
//!    Then room is given back: while the result is more than a tenth of the budget
//!    under it, elided arrays and objects keep more children at each end.
//!
//!    When the string was flagged in step 1, its kept ends and the marker go through the
//!    lossless text rules together (if that is shorter and the marker survives intact).
//!
//! # Markers and restore calls
//! - String: `restore` is `mode="bytes", field="<RFC 6901 pointer>", start, end` with
//!   offsets into the field's **decoded** original value (0-based, half-open).
//! - Array middle and object run: `bytes S-E` and `mode="bytes", start=S, end=E`, raw
//!   byte offsets of the original input (0-based, half-open) spanning the elided items
//!   (members) and the commas between them, so the slice is exactly the comma-separated
//!   elided items (members).
//! - JSON Lines: a string's marker gives the raw byte range (in the whole input) of its
//!   JSON-escaped middle instead of a pointer, since no pointer addresses one line. So
//!   does a string whose pointer is longer than `MAX_POINTER_BYTES` (deep nesting:
//!   the pointer alone would outgrow the budget), every string of a document in which
//!   an object repeats a key or has a key with an escape (a pointer would name the last
//!   of equal keys), every string of a document after a byte-order mark (the store
//!   parses the document to follow a pointer), and a string holding a surrogate escape
//!   (`\uD800`-`\uDFFF`, possibly lone: no decoded text to slice).
//!
//! # Why
//! A 500 KB `cargo metadata` line or a `pip inspect` with 136 KB descriptions is useless
//! to a model if cut at a byte offset (invalid JSON) and too large to carry whole.
//!
//! # Idempotence
//! A string that already holds a `json-fields` marker is neither elided nor rewritten
//! again, an array or object that holds a marker element or member is never elided
//! again, a document holding a marker is never minified, and elision needs
//! at least 64 decoded bytes removed, so compressing the output again changes nothing.
//! Output under the budget gets no lossy step at all on a second pass.
//!
//! # Cost
//! One pass over the input for the scan (strings eight bytes at a time, no allocation per
//! value: only long strings and arrays long enough to elide are recorded), one pass to
//! write the output; the planning works on the recorded candidates only.
//!
//! # Example
//! `{"log": "<a 40 KB build log>"}` over a 4 KB budget → the same one-key object whose
//! string keeps its head and tail around `[snip: N bytes elided from this string ·
//! json-fields · restore: snip_restore(id=\"sn_…\", mode=\"bytes\", field=\"/log\",
//! start=S, end=E)]`: still valid JSON, every other value byte-identical.
//!
//! # Options
//! [`Config::max_bytes`], [`Config::json_string_keep`], [`Config::json_array_keep`]; JSON
//! Lines lines are elided to `max_bytes / 4` each, only when the whole input is over the
//! budget (whole lines are then the head-tail rule's job).

use std::cell::{OnceCell, RefCell};
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::rc::Rc;

use memchr::{memchr, memmem};

use crate::json::string::{decode, encode, push_quoted, CutIndex, STR_SPECIAL};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::{GateRun, Gated, RuleId};
use crate::Config;

mod detect;
mod plan;
mod scan;

pub(crate) use detect::holds_first_line;
pub use detect::{
    is_json, is_json_lines, is_json_scalar, looks_like_json, opens_multiline_document,
};
pub use plan::MARKER_KEY;
use plan::*;
use scan::*;

/// Separates the kept head, the marker and the kept tail inside an elided string:
/// `<head>…[snip: …]…<tail>` (U+2026 HORIZONTAL ELLIPSIS, 3 bytes of UTF-8).
pub const SEPARATOR: &str = "\u{2026}";

/// A string is elided only when at least this many decoded bytes go.
const MIN_ELIDED: usize = 64;
/// Longest RFC 6901 pointer a marker quotes, in bytes; a string nested deeper is
/// restored by its raw byte range in the document instead.
pub(crate) const MAX_POINTER_BYTES: usize = 512;
/// Shortest string (raw bytes between the quotes) the lossless text rules are tried on.
const LOSSLESS_MIN: usize = 64;
/// Tight string keep = `json_string_keep / TIGHT_DIVISOR`.
const TIGHT_DIVISOR: usize = 16;
/// JSON Lines: each line's budget is `max_bytes / LINE_BUDGET_DIVISOR`.
const LINE_BUDGET_DIVISOR: usize = 4;

/// What the rule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonElision {
    /// The new JSON text (one document, or JSON Lines with the original line endings).
    pub output: Vec<u8>,
    /// Strings elided in the middle (each carries one marker).
    pub strings_elided: u64,
    /// Array items replaced by markers, summed over all elided arrays.
    pub items_elided: u64,
    /// Object members replaced by marker members, summed over all elided objects.
    pub members_elided: u64,
    /// Bytes of the original JSON text covered by elisions: the raw (escaped) bytes of
    /// string middles plus the raw bytes of elided array middles.
    pub bytes_elided: u64,
    /// Whether whitespace between tokens was removed.
    pub minified: bool,
    /// Strings rewritten whole by the lossless text rules (and not elided afterwards).
    pub strings_rendered: u64,
    /// Whether the input was JSON Lines (several documents, one a line) rather than one
    /// document. Only JSON Lines may be cut between lines afterwards: one document keeps
    /// its leading and trailing whitespace (blank lines included) as it is, and is never
    /// a candidate for line elision however many lines that whitespace holds.
    pub json_lines: bool,
}

/// Parses `input` as one JSON document (or JSON Lines) keeping byte spans, and returns a
/// smaller, still-valid JSON text, or `None` when it is not valid JSON (including invalid
/// UTF-8 or a truncated document) or nothing can be saved.
///
/// `id` is the store id quoted in restore calls (`None`: markers say the original is not
/// retained). With `lossy_allowed == false` only the lossless steps run (lossless text
/// rules on string values, whitespace minification over the budget).
pub fn apply(
    input: &[u8],
    config: &Config,
    id: Option<&str>,
    lossy_allowed: bool,
    text_rule: TextRule<'_>,
) -> Option<JsonElision> {
    apply_with(input, config, id, lossy_allowed, text_rule)
}

/// The gate: one JSON document (or JSON Lines) goes through this rule instead of the
/// text rules, which would break it. `text_rule` is what runs on long string values
/// (the lossless text rules, passed in by the registry). JSON Lines still over the
/// budget after per-line elision go on to whole-line elision
/// ([`Gated::ElideLines`]: line numbers are unchanged by it); one document (with any
/// whitespace, blank lines included, around it) stays whole.
pub(crate) fn gate(g: &mut GateRun<'_>, text_rule: TextRule<'_>) -> Gated {
    let (input, config) = (g.input, g.config);
    if !looks_like_json(input) {
        // One scalar is a JSON document too: left to this rule (the text rules would
        // render `\r` frames around it away, `0\r ` to an empty output, or cut a
        // long string). A string over the budget is elided inside, as a document's
        // long strings are; any other scalar is left as it is.
        if is_json_scalar(input) {
            let string = input.iter().find(|b| !is_ws(**b)) == Some(&b'"');
            if !(string && input.len() > config.max_bytes) {
                return Gated::Done(g.unchanged());
            }
        } else {
            return Gated::Continue;
        }
    }
    g.retain_if_over();
    let lossy_allowed = g.lossy_allowed();
    match apply(input, config, g.retained_id(), lossy_allowed, text_rule) {
        Some(j) if j.output.len() < input.len() => {
            let lossy = j.strings_elided + j.items_elided + j.members_elided > 0;
            let report = report(&j);
            if lossy_allowed && j.output.len() > config.max_bytes && j.json_lines {
                return Gated::ElideLines {
                    text: j.output,
                    report: Some(report),
                    or_unchanged: false,
                };
            }
            g.retain();
            Gated::Done(crate::Outcome {
                changed: true,
                original_bytes: input.len(),
                output: j.output,
                rules: vec![report],
                retention: g.retention.take(),
                lossy,
                failed_open: None,
            })
        }
        _ if is_json(input) => {
            if lossy_allowed && input.len() > config.max_bytes && is_json_lines(input) {
                return Gated::ElideLines {
                    text: input.to_vec(),
                    report: None,
                    or_unchanged: true,
                };
            }
            Gated::Done(g.unchanged())
        }
        _ => Gated::Continue,
    }
}

/// The receipt row of an elision: strings and items elided, bytes elided, strings
/// rendered by the lossless text rules, and `minified` (1) when whitespace was removed.
pub(crate) fn report(j: &JsonElision) -> crate::RuleReport {
    let mut counts = vec![
        ("strings_elided", j.strings_elided),
        ("items_elided", j.items_elided),
        ("members_elided", j.members_elided),
        ("bytes_elided", j.bytes_elided),
        ("strings_rendered", j.strings_rendered),
    ];
    if j.minified {
        counts.push(("minified", 1));
    }
    crate::RuleReport {
        id: RuleId::JsonFields,
        counts,
    }
}

/// The lossless text rules run on long string values (the pipeline passes
/// [`crate::rules::lossless_text`]; tests can stand in for them): the rewritten text,
/// or `None` when nothing changes.
pub type TextRule<'a> = &'a dyn Fn(&[u8], &Config) -> Option<Vec<u8>>;

fn apply_with(
    input: &[u8],
    config: &Config,
    id: Option<&str>,
    lossy_allowed: bool,
    text_rule: TextRule<'_>,
) -> Option<JsonElision> {
    std::str::from_utf8(input).ok()?;
    let params = ScanParams::new(config);
    if let Some(scan) = scan(input, 0, input.len(), &params, true) {
        let mut doc = Plan::new(input, scan, config, id, text_rule, false);
        // The whitespace around the value is kept as it is, and counts in the budget.
        let around = input.len() - (doc.scan.root.1 - doc.scan.root.0);
        let budget = config.max_bytes.saturating_sub(around);
        // Minifying is the whole change or none of it: when it alone meets the budget
        // (or nothing lossy may happen); otherwise the lossy steps splice markers into
        // the original's own bytes, whitespace and all.
        if doc.size() > budget && doc.scan.ws > 0 && !doc.scan.marked {
            doc.minify = true;
            doc.minify = !lossy_allowed || doc.size() <= budget;
        }
        if lossy_allowed && doc.size() > budget {
            doc.elide(budget);
            // Nothing could be elided (deep nesting of one-member objects): minifying is
            // then the whole change.
            if !doc.has_lossy() && doc.size() > budget && doc.scan.ws > 0 && !doc.scan.marked {
                doc.minify = true;
            }
        }
        if doc.size() >= doc.scan.root.1 - doc.scan.root.0 {
            return None; // nothing saved: skip writing a copy
        }
        let mut out = Vec::with_capacity(doc.size());
        out.extend_from_slice(&input[..doc.scan.root.0]);
        let mut stats = Stats::default();
        doc.render(&mut out, &mut stats);
        out.extend_from_slice(&input[doc.scan.root.1..]);
        return finish(input, out, stats, doc.minify, false);
    }
    json_lines(input, config, id, lossy_allowed, text_rule, &params)
}

/// JSON Lines: every non-blank line (split on `\n`) is one JSON value.
fn json_lines(
    input: &[u8],
    config: &Config,
    id: Option<&str>,
    lossy_allowed: bool,
    text_rule: TextRule<'_>,
    params: &ScanParams,
) -> Option<JsonElision> {
    let mut docs = Vec::new();
    let mut start = 0;
    while start < input.len() {
        let end = memchr(b'\n', &input[start..]).map_or(input.len(), |p| start + p);
        if input[start..end].iter().any(|b| !is_ws(*b)) {
            let scan = scan(input, start, end, params, false)?;
            docs.push(Plan::new(input, scan, config, id, text_rule, true));
        }
        start = end + 1;
    }
    if docs.len() < 2 {
        return None;
    }
    let total = |docs: &[Plan]| -> usize {
        let inside: usize = docs.iter().map(|d| d.scan.root.1 - d.scan.root.0).sum();
        let now: usize = docs.iter().map(Plan::size).sum();
        input.len() - inside + now
    };
    let over = total(&docs) > config.max_bytes;
    for d in &mut docs {
        d.minify = over && d.scan.ws > 0 && !d.scan.marked;
    }
    // As for one document: minified only when that alone meets the budget.
    if lossy_allowed && total(&docs) > config.max_bytes {
        for d in &mut docs {
            d.minify = false;
        }
    }
    if lossy_allowed && total(&docs) > config.max_bytes {
        let line_budget = config.max_bytes / LINE_BUDGET_DIVISOR;
        for d in &mut docs {
            if d.size() > line_budget {
                d.elide(line_budget);
            }
        }
    }
    if total(&docs) >= input.len() {
        return None;
    }
    let mut out = Vec::with_capacity(total(&docs));
    let mut stats = Stats::default();
    let mut pos = 0;
    let mut minified = false;
    for d in &docs {
        out.extend_from_slice(&input[pos..d.scan.root.0]);
        d.render(&mut out, &mut stats);
        pos = d.scan.root.1;
        minified |= d.minify;
    }
    out.extend_from_slice(&input[pos..]);
    finish(input, out, stats, minified, true)
}

fn finish(
    input: &[u8],
    output: Vec<u8>,
    s: Stats,
    minified: bool,
    json_lines: bool,
) -> Option<JsonElision> {
    (output.len() < input.len()).then_some(JsonElision {
        output,
        strings_elided: s.strings_elided,
        items_elided: s.items_elided,
        members_elided: s.members_elided,
        bytes_elided: s.bytes_elided,
        minified,
        strings_rendered: s.strings_rendered,
        json_lines,
    })
}

#[derive(Default)]
struct Stats {
    strings_elided: u64,
    items_elided: u64,
    members_elided: u64,
    bytes_elided: u64,
    strings_rendered: u64,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for the lossless text rules: drops everything up to the last `\r` of
    /// each line (a crude progress-frame collapse).
    fn last_frame(text: &[u8], _: &Config) -> Option<Vec<u8>> {
        if !text.contains(&b'\r') {
            return None;
        }
        let out: Vec<u8> = text
            .split(|&b| b == b'\n')
            .map(|line| match line.iter().rposition(|&b| b == b'\r') {
                Some(p) => &line[p + 1..],
                None => line,
            })
            .collect::<Vec<_>>()
            .join(&b'\n');
        Some(out)
    }

    #[test]
    fn lossless_rule_rewrites_long_string_fields() {
        let frames: String = (0..40).map(|i| format!("{i}%\\r")).collect();
        let input = format!("{{\"log\": \"{frames}100% done\\nnext line\", \"n\": 1}}");
        let r = apply_with(
            input.as_bytes(),
            &Config::default(),
            None,
            false,
            &last_frame,
        )
        .expect("smaller");
        assert_eq!(
            String::from_utf8(r.output).unwrap(),
            "{\"log\": \"100% done\\nnext line\", \"n\": 1}"
        );
        assert_eq!(r.strings_rendered, 1);
        assert!(!r.minified);
    }

    #[test]
    fn elided_string_pieces_go_through_the_lossless_rule() {
        let frames: String = (0..400).map(|i| format!("{i:04}\\r")).collect();
        let input = format!("{{\"log\": \"{frames}end\\n{}\"}}", "x".repeat(3000));
        let config = Config::with_budget(1024);
        let r = apply_with(input.as_bytes(), &config, None, true, &last_frame).unwrap();
        let out = String::from_utf8(r.output).unwrap();
        assert!(out.len() <= 1024, "{}", out.len());
        assert_eq!(r.strings_elided, 1);
        assert!(!out.contains("0001\\r"), "head not rendered: {out}");
    }

    /// Logs that start with a bracket stream as text; JSON documents that span lines
    /// are read whole.
    #[test]
    fn bracketed_logs_are_not_documents() {
        for log in [
            &b"[INFO] Scanning for projects...\n[INFO] Building x\n"[..],
            b"[2024-01-01 12:00:00] worker.0 INFO processed\n",
            b"[1/3] Building CXX object a.o\n",
            b"[12:00:01] start\n",
            b"[ERROR] Failed to execute goal\n",
            b"{not json} at all\n",
            b"[\"unterminated\n",
            b"[1.2.3] release notes\n",
            b"[01] first item\n",
            b"[1.] item\n",
        ] {
            assert!(
                !opens_multiline_document(log),
                "{}",
                String::from_utf8_lossy(log)
            );
        }
        for doc in [
            &b"[\n  {\n    \"a\": 1\n"[..],
            b"{\n  \"packages\": [\n",
            b"[1, 2,\n 3]\n",
            b"[-1.5e-3,\n",
            b"[\"a\", \"b\",\n",
            b"[true,\n",
            b"[0, 1E+5,\n",
            b"  {\"k\": [1,\n",
        ] {
            assert!(
                opens_multiline_document(doc),
                "{}",
                String::from_utf8_lossy(doc)
            );
        }
    }

    /// The head a caller reads before asking `opens_multiline_document` holds the
    /// first line after a byte-order mark and whitespace, ended; a part of the mark,
    /// or blank lines only, are not enough.
    #[test]
    fn a_head_holds_the_first_line_after_the_mark_and_blanks() {
        for (head, want) in [
            (&b"\xEF\xBB"[..], false),
            (b"\xEF\xBB\xBF \n  {", false),
            (b"   \n\n", false),
            (b"\xEF\xBB\xBF \n  {\n", true),
            (b"\n\n[1, 2\n", true),
            (b"log line\n", true),
        ] {
            assert_eq!(holds_first_line(head), want, "{head:?}");
        }
    }
}
