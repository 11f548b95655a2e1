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
//!    smaller.
//! 2. **Lossless, over the budget.** If the document is still larger than
//!    [`Config::max_bytes`], whitespace between tokens is removed (reported as
//!    `minified`). Small pretty JSON stays as it is.
//! 3. **Lossy, over the budget** (only when the caller allows it). While the document is
//!    over the budget, the piece whose elision saves the most bytes goes first:
//!    - inside a long string: the first and last [`Config::json_string_keep`] bytes of
//!      the decoded value stay (cut on code-point boundaries, never inside an escape
//!      sequence) and the middle becomes a marker *inside the string*:
//!      `<head>…[snip: N bytes elided from this string · json-fields · restore: …]…<tail>`
//!      (the separator is U+2026 `…`, see [`SEPARATOR`]);
//!    - the middle of a long array: the first and last [`Config::json_array_keep`] items
//!      stay and the middle items become ONE marker string element.
//!
//!    Objects keep every key. The steps come in levels, each run only while the budget
//!    is not met: (a) strings and arrays of scalars at the configured keeps; (b) the same
//!    at tight keeps (strings `json_string_keep / 16` bytes, arrays 1 item), so that a
//!    list of records (packages, rows) keeps every record; only if (a)+(b) cannot meet
//!    the budget is the document redone from (a) with (c) arrays of objects/arrays at the
//!    configured keep, then (d) everything at the tight keeps. Within a level the step
//!    that reaches the budget is the smallest piece that is enough on its own, so the
//!    result does not overshoot the budget.
//!
//!    When the string was flagged in step 1, its kept ends and the marker go through the
//!    lossless text rules together (if that is shorter and the marker survives intact).
//!
//! # Markers and restore calls
//! - String: `restore` is `mode="bytes", field="<RFC 6901 pointer>", start, end` with
//!   offsets into the field's **decoded** original value (0-based, half-open).
//! - Array middle: `bytes S-E` and `mode="bytes", start=S, end=E`, raw byte offsets of
//!   the original input (0-based, half-open) spanning the elided items and the commas
//!   between them, so the slice is exactly the comma-separated elided items.
//! - JSON Lines: a string's marker gives the raw byte range (in the whole input) of its
//!   JSON-escaped middle instead of a pointer, since no pointer addresses one line. So
//!   does a string whose pointer is longer than `MAX_POINTER_BYTES` (deep nesting:
//!   the pointer alone would outgrow the budget).
//!
//! # Why
//! A 500 KB `cargo metadata` line or a `pip inspect` with 136 KB descriptions is useless
//! to a model if cut at a byte offset (invalid JSON) and too large to carry whole.
//!
//! # Idempotence
//! A string that already holds a `json-fields` marker is neither elided nor rewritten
//! again, an array that holds a marker element is never elided again, and elision needs
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

use std::cell::OnceCell;
use std::collections::BinaryHeap;
use std::fmt::Write as _;

use memchr::{memchr, memmem};

use crate::json::string::{decode, encode, push_quoted, CutIndex, STR_SPECIAL};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::RuleId;
use crate::Config;

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
    /// Bytes of the original JSON text covered by elisions: the raw (escaped) bytes of
    /// string middles plus the raw bytes of elided array middles.
    pub bytes_elided: u64,
    /// Whether whitespace between tokens was removed.
    pub minified: bool,
    /// Strings rewritten whole by the lossless text rules (and not elided afterwards).
    pub strings_rendered: u64,
}

/// Cheap check: does `input` look like one JSON document or JSON Lines of objects or
/// arrays? After optional whitespace it must start with `{` or `[`, the next token must be
/// able to follow that bracket, and the last non-whitespace byte must be `}` or `]`.
/// Looks only at the leading and trailing whitespace and a few bytes; [`apply`] does the
/// full parse.
pub fn looks_like_json(input: &[u8]) -> bool {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    let Some(first) = input.iter().position(|b| !is_ws(*b)) else {
        return false;
    };
    let Some(last) = input.iter().rposition(|b| !is_ws(*b)) else {
        return false;
    };
    let open = input[first];
    if !matches!(input[last], b'}' | b']') || !matches!(open, b'{' | b'[') || last == first {
        return false;
    }
    let Some(next) = input[first + 1..].iter().find(|b| !is_ws(**b)) else {
        return false;
    };
    match open {
        b'{' => matches!(next, b'"' | b'}'),
        _ => matches!(
            next,
            b'{' | b'[' | b']' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        ),
    }
}

/// The UTF-8 byte-order mark, which some tools write before JSON.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Whether `head` (the first bytes of an input) opens a JSON document that spans
/// lines, which cutting between lines would break: `{` or `[` after optional
/// whitespace, and a first non-blank line that is not a JSON value by itself (JSON
/// Lines are one document per line, and stay valid when cut between lines).
/// Logs whose lines start with `[` (`[INFO] …`, `[2024-01-01 12:00:00] …`,
/// `[1/3] Building`) are not: the first token after the bracket must be one JSON
/// allows there.
pub fn opens_multiline_document(head: &[u8]) -> bool {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let Some(p) = head.iter().position(|b| !is_ws(*b)) else {
        return false;
    };
    if !matches!(head[p], b'{' | b'[') || !starts_json_value(&head[p..]) {
        return false;
    }
    let end = memchr::memchr(b'\n', &head[p..]).map_or(head.len(), |k| p + k);
    !is_json(&head[p..end])
}

/// Whether `b` (starting with `{` or `[`) begins as JSON does: after `{` a string key
/// and `:` or `}`; after `[` a value (a number, string or literal followed by `,`, `]`
/// or whitespace, or an object, array or `]`). What follows is not checked; running
/// out of bytes counts as a yes.
fn starts_json_value(b: &[u8]) -> bool {
    let skip = |i: usize| i + b[i..].iter().take_while(|c| is_ws(**c)).count();
    let i = skip(1);
    let Some(&c) = b.get(i) else { return true };
    // The end of a string token starting at `i` (after its closing quote).
    let string_end = |i: usize| {
        let mut k = i + 1;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 2,
                b'"' => return Some(k + 1),
                b'\n' => return None,
                _ => k += 1,
            }
        }
        Some(b.len())
    };
    let followed_by = |k: usize, ok: &[u8]| {
        let k = skip(k);
        k >= b.len() || ok.contains(&b[k])
    };
    if b[0] == b'{' {
        return match c {
            b'}' => true,
            b'"' => string_end(i).is_some_and(|k| followed_by(k, b":")),
            _ => false,
        };
    }
    match c {
        b'{' | b'[' | b']' => true,
        b'"' => string_end(i).is_some_and(|k| followed_by(k, b",]")),
        b'-' | b'0'..=b'9' => number_len(&b[i..]).is_some_and(|n| followed_by(i + n, b",]")),
        b't' | b'f' | b'n' => [&b"true"[..], b"false", b"null"]
            .iter()
            .any(|w| b[i..].starts_with(w) && followed_by(i + w.len(), b",]")),
        _ => false,
    }
}

/// The length of the JSON number at the start of `b` (RFC 8259 §6: `-`? then `0` or
/// digits not starting with `0`, then `.digits`? and `e`/`E` `+`/`-`? `digits`?), or
/// `None`. `2024-01-01` reads as `2024`, followed by `-`: not a value's end.
fn number_len(b: &[u8]) -> Option<usize> {
    let digits = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// Full check: is `input` what [`apply`] accepts, i.e. one JSON document, or JSON Lines
/// (at least two non-blank lines, each one JSON value)? One pass over the input.
///
/// [`apply`] returns `None` both for "not JSON" and for "valid JSON, nothing to save";
/// a caller that must never cut a JSON payload as text asks this to tell them apart.
pub fn is_json(input: &[u8]) -> bool {
    if std::str::from_utf8(input).is_err() {
        return false;
    }
    let params = ScanParams::new(&Config::default());
    if scan(input, 0, input.len(), &params, false).is_some() {
        return true;
    }
    let mut lines = 0;
    let mut start = 0;
    while start < input.len() {
        let end = memchr(b'\n', &input[start..]).map_or(input.len(), |p| start + p);
        if input[start..end].iter().any(|b| !is_ws(*b)) {
            if scan(input, start, end, &params, false).is_none() {
                return false;
            }
            lines += 1;
        }
        start = end + 1;
    }
    lines >= 2
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

/// The receipt row of an elision: strings and items elided, bytes elided, strings
/// rendered by the lossless text rules, and `minified` (1) when whitespace was removed.
pub(crate) fn report(j: &JsonElision) -> crate::RuleReport {
    let mut counts = vec![
        ("strings_elided", j.strings_elided),
        ("items_elided", j.items_elided),
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
        let mut doc = Doc::new(input, scan, config, id, text_rule, false);
        // The whitespace around the value is kept as it is, and counts in the budget.
        let around = input.len() - (doc.scan.root.1 - doc.scan.root.0);
        let budget = config.max_bytes.saturating_sub(around);
        doc.minify = doc.size() > budget && doc.scan.ws > 0;
        if lossy_allowed && doc.size() > budget {
            doc.elide(budget);
        }
        if doc.size() >= doc.scan.root.1 - doc.scan.root.0 {
            return None; // nothing saved: skip writing a copy
        }
        let mut out = Vec::with_capacity(doc.size());
        out.extend_from_slice(&input[..doc.scan.root.0]);
        let mut stats = Stats::default();
        doc.render(&mut out, &mut stats);
        out.extend_from_slice(&input[doc.scan.root.1..]);
        return finish(input, out, stats, doc.minify);
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
            docs.push(Doc::new(input, scan, config, id, text_rule, true));
        }
        start = end + 1;
    }
    if docs.len() < 2 {
        return None;
    }
    let total = |docs: &[Doc]| -> usize {
        let inside: usize = docs.iter().map(|d| d.scan.root.1 - d.scan.root.0).sum();
        let now: usize = docs.iter().map(Doc::size).sum();
        input.len() - inside + now
    };
    let over = total(&docs) > config.max_bytes;
    for d in &mut docs {
        d.minify = over && d.scan.ws > 0;
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
    finish(input, out, stats, minified)
}

fn finish(input: &[u8], output: Vec<u8>, s: Stats, minified: bool) -> Option<JsonElision> {
    (output.len() < input.len()).then_some(JsonElision {
        output,
        strings_elided: s.strings_elided,
        items_elided: s.items_elided,
        bytes_elided: s.bytes_elided,
        minified,
        strings_rendered: s.strings_rendered,
    })
}

#[derive(Default)]
struct Stats {
    strings_elided: u64,
    items_elided: u64,
    bytes_elided: u64,
    strings_rendered: u64,
}

/// Salient lines kept from an elided string's middle, at most.
const MAX_ISLANDS: usize = 2;
/// Longest salient line kept from a string (raw, escaped bytes).
const ISLAND_MAX: usize = 600;

/// Raw (escaped) ranges of the most salient lines in `mid`, a piece of a JSON string's
/// raw text, split on `\n` escapes; in order, at most [`MAX_ISLANDS`]. Each range
/// includes its trailing `\n` escape when there is one, and never splits an escape.
fn salient_segments(mid: &[u8]) -> Vec<(usize, usize)> {
    let mut segs: Vec<(u8, usize, usize)> = Vec::new();
    let mut start = 0usize;
    let mut from = 0usize;
    // Segment starts must follow a complete `\n` escape (an even run of backslashes
    // before the match); the first and last pieces are partial lines and are skipped.
    let mut first = true;
    while let Some(k) = memchr::memmem::find(&mid[from..], b"\\n").map(|k| from + k) {
        let backslashes = mid[..k].iter().rev().take_while(|&&b| b == b'\\').count();
        from = k + 2;
        if backslashes % 2 == 1 {
            continue;
        }
        let end = k + 2;
        if !first && end - start <= ISLAND_MAX {
            let score = crate::salience::salience(&mid[start..k]);
            if score >= 2 {
                segs.push((score, start, end));
            }
        }
        first = false;
        start = end;
    }
    segs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    segs.truncate(MAX_ISLANDS);
    let mut v: Vec<(usize, usize)> = segs.into_iter().map(|(_, s, e)| (s, e)).collect();
    v.sort();
    v
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

// ---------------------------------------------------------------------------------------
// Scanner
// ---------------------------------------------------------------------------------------

/// What the scanner records, derived from the config.
struct ScanParams {
    /// Array keeps the planner may use: `[json_array_keep, min(json_array_keep, 1)]`.
    keeps: [usize; 2],
    /// Shortest raw string content that could ever be elided.
    min_lossy: usize,
    /// Finds [`MARKER_NEEDLE`].
    marker: memmem::Finder<'static>,
}

impl ScanParams {
    fn new(config: &Config) -> Self {
        let a = config.json_array_keep;
        let tight = config.json_string_keep / TIGHT_DIVISOR;
        ScanParams {
            keeps: [a, a.min(1)],
            min_lossy: tight.saturating_mul(2).saturating_add(MIN_ELIDED),
            marker: memmem::Finder::new(MARKER_NEEDLE.as_bytes()),
        }
    }
}

/// A string value worth a second look.
#[derive(Clone)]
struct StrCand {
    /// Offset of the opening quote.
    start: usize,
    /// Offset one past the closing quote.
    end: usize,
    /// Range of its RFC 6901 pointer in [`Scan::pointers`] (document mode only).
    ptr: Option<(usize, usize)>,
    /// Holds `\r`, ESC or several line feeds: try the lossless text rules.
    lossless: bool,
    /// May be elided: long enough, addressable, and not already holding a marker.
    lossy: bool,
}

/// One way to elide an array's middle: keep `keep` items at each end.
#[derive(Clone, Copy, Default)]
struct Mid {
    keep: usize,
    /// Items elided.
    items: usize,
    /// Raw span of the elided items, from the first one's start to the last one's end.
    s: usize,
    e: usize,
    /// Whitespace count (between tokens) at `s` and at `e`.
    ws_s: usize,
    ws_e: usize,
}

#[derive(Clone)]
struct ArrCand {
    /// Offset of `[`.
    open: usize,
    /// Some item is an object or an array.
    record: bool,
    /// One or two variants (keep `json_array_keep`, keep 1) with distinct keeps, in
    /// `mid_buf[..n_mids]` (inline: no allocation per array).
    mid_buf: [Mid; 2],
    n_mids: usize,
}

impl ArrCand {
    fn mids(&self) -> &[Mid] {
        &self.mid_buf[..self.n_mids]
    }
}

/// The result of scanning one JSON value.
struct Scan {
    /// Span of the value itself (no surrounding whitespace), raw byte offsets.
    root: (usize, usize),
    /// Whitespace bytes between tokens inside the value.
    ws: usize,
    /// Candidate strings, by `start`.
    strings: Vec<StrCand>,
    /// Candidate arrays, by `open`.
    arrays: Vec<ArrCand>,
    /// The pointers of candidate strings, back to back.
    pointers: String,
}

struct Frame {
    array: bool,
    /// Children completed so far.
    count: usize,
    /// Upper bound of this container's pointer length.
    ptr_upper: usize,
    /// Object: raw content span of the current member's key.
    key: (usize, usize),
    /// Array: some item is a container.
    record: bool,
    /// Array: some item is a `json-fields` marker string.
    has_marker: bool,
    open: usize,
    /// Array: start of the items at the two keeps, as (offset, whitespace count).
    mid_start: [(usize, usize); 2],
    /// Array: where its ring of recent item ends starts in `Scanner::ring`.
    ring_base: usize,
}

struct Scanner<'a, 'p> {
    b: &'a [u8],
    end: usize,
    i: usize,
    ws: usize,
    p: &'p ScanParams,
    pointers_on: bool,
    stack: Vec<Frame>,
    /// Ends of the last `keeps[0] + 1` items of each open array, as (offset, ws count).
    ring: Vec<(usize, usize)>,
    ring_len: usize,
    out: Scan,
    scratch: Vec<u8>,
}

/// Scans exactly one JSON value in `input[from..to]`, with optional whitespace around
/// it. `None` when that is not valid JSON.
fn scan(input: &[u8], from: usize, to: usize, p: &ScanParams, pointers_on: bool) -> Option<Scan> {
    let mut s = Scanner {
        b: input,
        end: to,
        i: from,
        ws: 0,
        p,
        pointers_on,
        stack: Vec::new(),
        ring: Vec::new(),
        ring_len: p.keeps[0].saturating_add(1),
        out: Scan {
            root: (0, 0),
            ws: 0,
            strings: Vec::new(),
            arrays: Vec::new(),
            pointers: String::new(),
        },
        scratch: Vec::new(),
    };
    // A UTF-8 byte-order mark at the very start is kept before the value, like
    // leading whitespace (RFC 8259 §8.1 lets a parser ignore it).
    if from == 0 && input[..to].starts_with(BOM) {
        s.i = BOM.len();
    }
    while s.i < to && is_ws(input[s.i]) {
        s.i += 1;
    }
    let root_start = s.i;
    s.value()?;
    let root_end = s.i;
    while s.i < to && is_ws(input[s.i]) {
        s.i += 1;
    }
    if s.i != to {
        return None;
    }
    let mut out = s.out;
    out.root = (root_start, root_end);
    out.ws = s.ws;
    out.arrays.sort_by_key(|a| a.open);
    Some(out)
}

impl Scanner<'_, '_> {
    fn byte(&self) -> Option<u8> {
        (self.i < self.end).then(|| self.b[self.i])
    }

    fn skip_ws(&mut self) {
        let start = self.i;
        while self.i < self.end && is_ws(self.b[self.i]) {
            self.i += 1;
        }
        self.ws += self.i - start;
    }

    /// Upper bound of the pointer length of the value about to be parsed.
    fn child_ptr_upper(&self) -> usize {
        match self.stack.last() {
            None => 0,
            Some(f) if f.array => f.ptr_upper.saturating_add(1 + digits(f.count)),
            Some(f) => f.ptr_upper.saturating_add(1 + 2 * (f.key.1 - f.key.0)),
        }
    }

    /// Parses one complete value starting at `self.i` (whitespace allowed before it).
    fn value(&mut self) -> Option<()> {
        'value: loop {
            self.skip_ws();
            let c = self.byte()?;
            let (i, ws) = (self.i, self.ws);
            let keeps = self.p.keeps;
            if let Some(top) = self.stack.last_mut() {
                if top.array {
                    for (k, keep) in keeps.iter().enumerate() {
                        if top.count == *keep {
                            top.mid_start[k] = (i, ws);
                        }
                    }
                    top.record |= c == b'{' || c == b'[';
                }
            }
            match c {
                b'{' | b'[' => {
                    let ptr_upper = self.child_ptr_upper();
                    self.i += 1;
                    self.stack.push(Frame {
                        array: c == b'[',
                        count: 0,
                        ptr_upper,
                        key: (0, 0),
                        record: false,
                        has_marker: false,
                        open: i,
                        mid_start: [(0, 0); 2],
                        ring_base: self.ring.len(),
                    });
                    self.skip_ws();
                    let close = if c == b'[' { b']' } else { b'}' };
                    if self.byte()? == close {
                        self.i += 1;
                        self.close_container();
                    } else if c == b'[' {
                        continue 'value;
                    } else {
                        self.key()?;
                        continue 'value;
                    }
                }
                b'"' => self.string_value()?,
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return None,
            }
            // A value is complete at `self.i`: climb while containers close.
            loop {
                let (i, ws) = (self.i, self.ws);
                let ring_len = self.ring_len;
                let Some(top) = self.stack.last_mut() else {
                    return Some(());
                };
                if top.array {
                    let idx = top.count;
                    if idx < ring_len {
                        self.ring.push((i, ws));
                    } else {
                        self.ring[top.ring_base + idx % ring_len] = (i, ws);
                    }
                }
                top.count += 1;
                let array = top.array;
                self.skip_ws();
                match self.byte()? {
                    b',' => {
                        self.i += 1;
                        if !array {
                            self.skip_ws();
                            self.key()?;
                        }
                        continue 'value;
                    }
                    b']' if array => {
                        self.i += 1;
                        self.close_container();
                    }
                    b'}' if !array => {
                        self.i += 1;
                        self.close_container();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Pops the top container (its closing bracket already consumed) and records it
    /// when its middle could be elided.
    fn close_container(&mut self) {
        let Some(f) = self.stack.pop() else { return };
        if f.array && !f.has_marker {
            let n = f.count;
            let mut mid_buf = [Mid::default(); 2];
            let mut n_mids = 0;
            for (k, &keep) in self.p.keeps.iter().enumerate() {
                let seen = mid_buf[..n_mids].iter().any(|m| m.keep == keep);
                if seen || n <= keep.saturating_mul(2) {
                    continue;
                }
                let (s, ws_s) = f.mid_start[k];
                let last = n - keep - 1;
                let (e, ws_e) = self.ring[f.ring_base + last % self.ring_len];
                mid_buf[n_mids] = Mid {
                    keep,
                    items: n - 2 * keep,
                    s,
                    e,
                    ws_s,
                    ws_e,
                };
                n_mids += 1;
            }
            if n_mids > 0 {
                self.out.arrays.push(ArrCand {
                    open: f.open,
                    record: f.record,
                    mid_buf,
                    n_mids,
                });
            }
        }
        if f.array {
            self.ring.truncate(f.ring_base);
        }
    }

    /// Reads `"key"` and the `:` after it.
    fn key(&mut self) -> Option<()> {
        if self.byte()? != b'"' {
            return None;
        }
        let (s, e, _) = self.string()?;
        if let Some(top) = self.stack.last_mut() {
            top.key = (s, e);
        }
        self.skip_ws();
        if self.byte()? != b':' {
            return None;
        }
        self.i += 1;
        Some(())
    }

    /// Scans a string at `self.i` (the opening quote). Returns the content span and
    /// whether it holds `\r`, ESC or several `\n` escapes.
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        let b = self.b;
        let start = self.i + 1;
        let mut j = start;
        let (mut cr_or_esc, mut newlines) = (false, 0u32);
        loop {
            j = next_special(b, j, self.end);
            if j >= self.end {
                return None;
            }
            match b[j] {
                b'"' => break,
                b'\\' => {
                    let esc = *b.get(j + 1).filter(|_| j + 1 < self.end)?;
                    match esc {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b't' => j += 2,
                        b'n' => {
                            newlines += 1;
                            j += 2;
                        }
                        b'r' => {
                            cr_or_esc = true;
                            j += 2;
                        }
                        b'u' => {
                            if j + 6 > self.end
                                || !b[j + 2..j + 6].iter().all(u8::is_ascii_hexdigit)
                            {
                                return None;
                            }
                            cr_or_esc |= b[j + 2..j + 6].eq_ignore_ascii_case(b"001b");
                            j += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        self.i = j + 1;
        Some((start, j, cr_or_esc || newlines >= 2))
    }

    fn string_value(&mut self) -> Option<()> {
        let open = self.i;
        let (s, e, text_flags) = self.string()?;
        let content = &self.b[s..e];
        let len = e - s;
        let wanted = len >= self.p.min_lossy || (text_flags && len >= LOSSLESS_MIN);
        let element_marker = content.starts_with(b"[snip: ");
        let marked = (wanted || element_marker) && self.p.marker.find(content).is_some();
        if marked && element_marker {
            if let Some(top) = self.stack.last_mut() {
                top.has_marker |= top.array;
            }
        }
        let lossless = text_flags && len >= LOSSLESS_MIN && !marked;
        let mut lossy = !marked && len >= self.p.min_lossy;
        let mut ptr = None;
        if lossy && self.pointers_on {
            if self.child_ptr_upper() <= len {
                ptr = Some(self.build_pointer());
            } else {
                lossy = false;
            }
        }
        if lossy || lossless {
            self.out.strings.push(StrCand {
                start: open,
                end: self.i,
                ptr,
                lossless,
                lossy,
            });
        }
        Some(())
    }

    /// Appends the RFC 6901 pointer of the value about to end to `out.pointers`.
    fn build_pointer(&mut self) -> (usize, usize) {
        let pool = &mut self.out.pointers;
        let start = pool.len();
        for f in &self.stack {
            pool.push('/');
            if f.array {
                let _ = write!(pool, "{}", f.count);
            } else {
                self.scratch.clear();
                decode(&self.b[f.key.0..f.key.1], &mut self.scratch);
                for ch in String::from_utf8_lossy(&self.scratch).chars() {
                    match ch {
                        '~' => pool.push_str("~0"),
                        '/' => pool.push_str("~1"),
                        c => pool.push(c),
                    }
                }
            }
        }
        (start, pool.len())
    }

    fn number(&mut self) -> Option<()> {
        let b = self.b;
        let digits = |s: &mut Self| {
            let st = s.i;
            while s.i < s.end && b[s.i].is_ascii_digit() {
                s.i += 1;
            }
            s.i > st
        };
        if self.byte() == Some(b'-') {
            self.i += 1;
        }
        match self.byte()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.i += 1;
            if !digits(self) {
                return None;
            }
        }
        if matches!(self.byte(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.byte(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i.checked_add(word.len())?;
        if end > self.end || &self.b[self.i..end] != word {
            return None;
        }
        self.i = end;
        Some(())
    }
}

fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// What every `json-fields` marker holds (the rule between its ` · ` separators).
const MARKER_NEEDLE: &str = " \u{b7} json-fields \u{b7} ";

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The first offset in `b[j..end]` holding `"`, `\` or a control character (`end` when
/// none), eight bytes at a time.
fn next_special(b: &[u8], mut j: usize, end: usize) -> usize {
    while j + 8 <= end {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[j..j + 8]);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (LO * b'"' as u64);
        let bslash = x ^ (LO * b'\\' as u64);
        // Per byte: zero after the xor, or below 0x20. The lowest flagged byte is exact.
        let m = ((quote.wrapping_sub(LO) & !quote)
            | (bslash.wrapping_sub(LO) & !bslash)
            | (x.wrapping_sub(LO * 0x20) & !x))
            & HI;
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < end && !STR_SPECIAL[b[j] as usize] {
        j += 1;
    }
    j
}

// ---------------------------------------------------------------------------------------
// Planner
// ---------------------------------------------------------------------------------------

/// Sums of savings by position (a Fenwick tree over the sorted edit start offsets).
#[derive(Clone)]
struct Fenwick {
    t: Vec<i64>,
}

impl Fenwick {
    fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i <= self.t.len() {
            self.t[i - 1] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of entries `0..i`.
    fn prefix(&self, mut i: usize) -> i64 {
        let mut s = 0;
        while i > 0 {
            s += self.t[i - 1];
            i &= i - 1;
        }
        s
    }
}

/// A piece that can be elided: a string (index into [`Scan::strings`]) or an array
/// middle (index into [`Scan::arrays`], variant index into its `mids`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Piece {
    Str(usize),
    Arr(usize, usize),
}

/// How many times a level looks for the smallest sufficient piece before going on
/// largest first (bounds the work on adversarial input).
const FINAL_TRIES: usize = 8;

/// Which pieces a level may elide, and at which keep.
#[derive(Clone, Copy)]
struct Level {
    strings: Option<usize>,
    scalar_arrays: Option<usize>,
    record_arrays: Option<usize>,
}

/// The edits chosen so far. Every active edit's saving (original span length after
/// minification, minus its replacement's length) sits in `fen` at its start offset.
#[derive(Clone)]
struct State {
    fen: Fenwick,
    /// Per string: current length of its text in the output (quotes included).
    str_len: Vec<usize>,
    /// Per string: elided at this keep.
    str_keep: Vec<Option<usize>>,
    /// Per array: the active variant (index into `mids`).
    arr_mid: Vec<Option<usize>>,
    /// Per array: saving of the active variant.
    arr_val: Vec<i64>,
    str_covered: Vec<bool>,
    arr_covered: Vec<bool>,
}

/// One document (or one JSON Lines line) being shortened.
struct Doc<'a> {
    input: &'a [u8],
    scan: Scan,
    config: &'a Config,
    id: Option<&'a str>,
    text_rule: TextRule<'a>,
    /// JSON Lines: strings' restore calls use raw byte ranges.
    line_mode: bool,
    minify: bool,
    /// Lossless rewrite of each string, when smaller (quotes included).
    rendered: Vec<Option<Vec<u8>>>,
    /// Sorted distinct edit start offsets (the Fenwick's index).
    coords: Vec<usize>,
    /// Per string, built on first use.
    cut_index: Vec<OnceCell<CutIndex>>,
    state: State,
}

impl<'a> Doc<'a> {
    fn new(
        input: &'a [u8],
        scan: Scan,
        config: &'a Config,
        id: Option<&'a str>,
        text_rule: TextRule<'a>,
        line_mode: bool,
    ) -> Self {
        let mut coords: Vec<usize> = scan.strings.iter().map(|s| s.start).collect();
        coords.extend(
            scan.arrays
                .iter()
                .flat_map(|a| a.mids().iter().map(|m| m.s)),
        );
        coords.sort_unstable();
        coords.dedup();
        let ns = scan.strings.len();
        let na = scan.arrays.len();
        let state = State {
            fen: Fenwick {
                t: vec![0; coords.len()],
            },
            str_len: scan.strings.iter().map(|s| s.end - s.start).collect(),
            str_keep: vec![None; ns],
            arr_mid: vec![None; na],
            arr_val: vec![0; na],
            str_covered: vec![false; ns],
            arr_covered: vec![false; na],
        };
        let mut doc = Doc {
            input,
            scan,
            config,
            id,
            text_rule,
            line_mode,
            minify: false,
            rendered: vec![None; ns],
            coords,
            cut_index: (0..ns).map(|_| OnceCell::new()).collect(),
            state,
        };
        doc.render_lossless();
        doc
    }

    fn coord(&self, pos: usize) -> usize {
        self.coords.partition_point(|&c| c < pos)
    }

    /// Current size of the value's text in bytes.
    fn size(&self) -> usize {
        let (a, b) = self.scan.root;
        let base = b - a - if self.minify { self.scan.ws } else { 0 };
        let saved = self.state.fen.prefix(self.coords.len());
        (base as i64 - saved).max(0) as usize
    }

    /// Length of `s..e` in the output before edits (whitespace removed when minifying).
    fn span_len(&self, s: usize, e: usize, ws_s: usize, ws_e: usize) -> usize {
        (e - s) - if self.minify { ws_e - ws_s } else { 0 }
    }

    /// Step 1: the lossless text rules on strings flagged for them.
    fn render_lossless(&mut self) {
        let mut decoded = Vec::new();
        for i in 0..self.scan.strings.len() {
            let c = &self.scan.strings[i];
            if !c.lossless {
                continue;
            }
            let raw = &self.input[c.start + 1..c.end - 1];
            decoded.clear();
            decode(raw, &mut decoded);
            let Some(text) = (self.text_rule)(&decoded, self.config) else {
                continue;
            };
            if std::str::from_utf8(&text).is_err() {
                continue;
            }
            let mut out = Vec::with_capacity(text.len() + 16);
            out.push(b'"');
            encode(&text, &mut out);
            out.push(b'"');
            let old = c.end - c.start;
            if out.len() < old {
                let k = self.coord(c.start);
                self.state.fen.add(k, (old - out.len()) as i64);
                self.state.str_len[i] = out.len();
                self.rendered[i] = Some(out);
            }
        }
    }

    /// The lossless text rules on a whole elided string (`head`, separator, `marker`,
    /// separator, `tail`; raw JSON content), re-encoded; `None` unless that is shorter
    /// than `plain` (the same pieces as they are) and keeps the marker intact.
    fn render_elided(
        &self,
        head: &[u8],
        marker: &str,
        tail: &[u8],
        plain: usize,
    ) -> Option<Vec<u8>> {
        let mut decoded = Vec::with_capacity(head.len() + marker.len() + tail.len() + 8);
        decode(head, &mut decoded);
        decoded.extend_from_slice(SEPARATOR.as_bytes());
        decoded.extend_from_slice(marker.as_bytes());
        decoded.extend_from_slice(SEPARATOR.as_bytes());
        decode(tail, &mut decoded);
        let text = (self.text_rule)(&decoded, self.config)?;
        let needle = [
            SEPARATOR.as_bytes(),
            marker.as_bytes(),
            SEPARATOR.as_bytes(),
        ]
        .concat();
        if std::str::from_utf8(&text).is_err() || memmem::find(&text, &needle).is_none() {
            return None;
        }
        let mut out = Vec::with_capacity(text.len() + 16);
        out.push(b'"');
        encode(&text, &mut out);
        out.push(b'"');
        (out.len() < plain).then_some(out)
    }

    /// The text of string `i` elided at `keep`, quotes included, and the raw bytes it
    /// elides; `None` when fewer than [`MIN_ELIDED`] decoded bytes would go.
    fn string_elision(&self, i: usize, keep: usize) -> Option<(Vec<u8>, usize)> {
        let c = &self.scan.strings[i];
        let base = c.start + 1;
        let raw = &self.input[base..c.end - 1];
        let index = self.cut_index[i].get_or_init(|| CutIndex::new(raw));
        let (hr, hd) = index.locate(raw, keep, true);
        let (tr, td) = index.locate(raw, index.dec_len.saturating_sub(keep), false);
        if td < hd + MIN_ELIDED {
            return None;
        }
        // Islands only at the generous level: the tight level (which runs when the
        // budget is hard to meet) keeps every record rather than error lines.
        let generous = keep >= self.config.json_string_keep;
        if let Some(out) = generous
            .then(|| self.string_elision_with_islands(i, raw, (hr, hd), (tr, td)))
            .flatten()
        {
            return Some((out, tr - hr));
        }
        let (rs, re) = ((base + hr) as u64, (base + tr) as u64);
        let field = c
            .ptr
            .filter(|&(a, b)| !self.line_mode && b - a <= MAX_POINTER_BYTES);
        let restore = match field {
            Some((a, b)) => RestoreCall::FieldBytes {
                field: self.scan.pointers[a..b].to_string(),
                start: hd as u64,
                end: td as u64,
            },
            None => RestoreCall::Bytes { start: rs, end: re },
        };
        let marker = Marker {
            what: format!("{} bytes elided from this string", td - hd),
            rule: RuleId::JsonFields,
            lines: None,
            bytes: field.is_none().then_some((rs, re)),
            recovery: Recovery::Elided(restore),
        }
        .render(self.id);
        let mut out = Vec::with_capacity(hr + (raw.len() - tr) + marker.len() + 16);
        out.push(b'"');
        out.extend_from_slice(&raw[..hr]);
        out.extend_from_slice(SEPARATOR.as_bytes());
        encode(marker.as_bytes(), &mut out);
        out.extend_from_slice(SEPARATOR.as_bytes());
        out.extend_from_slice(&raw[tr..]);
        out.push(b'"');
        if c.lossless {
            if let Some(rendered) = self.render_elided(&raw[..hr], &marker, &raw[tr..], out.len()) {
                return Some((rendered, tr - hr));
            }
        }
        Some((out, tr - hr))
    }

    /// Like the plain string elision, but keeps up to [`MAX_ISLANDS`] salient lines
    /// (errors, failures; see `head-tail-elide`) of the elided middle of a multi-line
    /// string, each between two markers. `None` when the middle has none.
    fn string_elision_with_islands(
        &self,
        i: usize,
        raw: &[u8],
        (hr, hd): (usize, usize),
        (tr, td): (usize, usize),
    ) -> Option<Vec<u8>> {
        let c = &self.scan.strings[i];
        if self.line_mode || c.ptr.is_none_or(|(a, b)| b - a > MAX_POINTER_BYTES) {
            return None;
        }
        let islands = salient_segments(&raw[hr..tr]);
        if islands.is_empty() {
            return None;
        }
        let (a, b) = c.ptr.expect("checked");
        let field = &self.scan.pointers[a..b];
        let decoded_at = |x: usize| -> usize {
            let mut tmp = Vec::new();
            decode(&raw[..x], &mut tmp);
            tmp.len()
        };
        let mut out = Vec::with_capacity(hr + (raw.len() - tr) + 600 * (islands.len() + 1));
        out.push(b'"');
        out.extend_from_slice(&raw[..hr]);
        let mut gap_start = (hr, hd);
        let gap = |out: &mut Vec<u8>, from: (usize, usize), to_dec: usize| {
            let marker = Marker {
                what: format!("{} bytes elided from this string", to_dec - from.1),
                rule: RuleId::JsonFields,
                lines: None,
                bytes: None,
                recovery: Recovery::Elided(RestoreCall::FieldBytes {
                    field: field.to_string(),
                    start: from.1 as u64,
                    end: to_dec as u64,
                }),
            }
            .render(self.id);
            out.extend_from_slice(SEPARATOR.as_bytes());
            encode(marker.as_bytes(), out);
            out.extend_from_slice(SEPARATOR.as_bytes());
        };
        for (s0, e0) in islands {
            let (s, e) = (hr + s0, hr + e0);
            let sd = decoded_at(s);
            gap(&mut out, gap_start, sd);
            out.extend_from_slice(&raw[s..e]);
            gap_start = (e, decoded_at(e));
        }
        gap(&mut out, gap_start, td);
        out.extend_from_slice(&raw[tr..]);
        out.push(b'"');
        Some(out)
    }

    /// The marker element replacing an array middle, quotes included.
    fn array_marker(&self, m: &Mid) -> Vec<u8> {
        let (s, e) = (m.s as u64, m.e as u64);
        let text = Marker {
            what: format!(
                "{} {} elided from this array",
                m.items,
                if m.items == 1 { "item" } else { "items" }
            ),
            rule: RuleId::JsonFields,
            lines: None,
            bytes: Some((s, e)),
            recovery: Recovery::Elided(RestoreCall::Bytes { start: s, end: e }),
        }
        .render(self.id);
        let mut out = Vec::with_capacity(text.len() + 8);
        push_quoted(&text, &mut out);
        out
    }

    /// Bytes saved by eliding string `i` at `keep` now (0 when not worth it).
    fn string_saving(&self, i: usize, keep: usize) -> usize {
        match self.string_elision(i, keep) {
            Some((text, _)) => self.state.str_len[i].saturating_sub(text.len()),
            None => 0,
        }
    }

    /// Saving of array `j`'s variant `v` now, and the value it would hold in `fen`.
    fn array_saving(&self, j: usize, v: usize) -> (usize, i64) {
        let m = &self.scan.arrays[j].mids()[v];
        let full = self.span_len(m.s, m.e, m.ws_s, m.ws_e);
        let inside =
            self.state.fen.prefix(self.coord(m.e)) - self.state.fen.prefix(self.coord(m.s));
        let current = full as i64 - inside;
        let marker = self.array_marker(m).len() as i64;
        ((current - marker).max(0) as usize, full as i64 - marker)
    }

    fn apply_string(&mut self, i: usize, keep: usize) {
        let Some((text, _)) = self.string_elision(i, keep) else {
            return;
        };
        let c = &self.scan.strings[i];
        let k = self.coord(c.start);
        let delta = self.state.str_len[i] as i64 - text.len() as i64;
        self.state.fen.add(k, delta);
        self.state.str_len[i] = text.len();
        self.state.str_keep[i] = Some(keep);
    }

    fn apply_array(&mut self, j: usize, v: usize) {
        let (_, value) = self.array_saving(j, v);
        let m = self.scan.arrays[j].mids()[v];
        // Everything inside the middle is gone: its edits no longer count.
        let lo = self.scan.strings.partition_point(|c| c.start < m.s);
        let hi = self.scan.strings.partition_point(|c| c.start < m.e);
        for i in lo..hi {
            if !self.state.str_covered[i] {
                self.state.str_covered[i] = true;
                let c = &self.scan.strings[i];
                let saved = (c.end - c.start) as i64 - self.state.str_len[i] as i64;
                if saved != 0 {
                    let k = self.coord(c.start);
                    self.state.fen.add(k, -saved);
                }
            }
        }
        let lo = self.scan.arrays.partition_point(|a| a.open < m.s);
        let hi = self.scan.arrays.partition_point(|a| a.open < m.e);
        for a in (lo..hi).chain(std::iter::once(j)) {
            if a != j {
                if self.state.arr_covered[a] {
                    continue;
                }
                self.state.arr_covered[a] = true;
            }
            if let Some(prev) = self.state.arr_mid[a].take() {
                let k = self.coord(self.scan.arrays[a].mids()[prev].s);
                self.state.fen.add(k, -self.state.arr_val[a]);
                self.state.arr_val[a] = 0;
            }
        }
        let k = self.coord(m.s);
        self.state.fen.add(k, value);
        self.state.arr_mid[j] = Some(v);
        self.state.arr_val[j] = value;
    }

    /// Runs one level while over `budget`, the largest saving first.
    fn run_level(&mut self, level: Level, budget: usize) {
        let mut heap = BinaryHeap::new();
        if let Some(keep) = level.strings {
            for i in 0..self.scan.strings.len() {
                let eligible = self.scan.strings[i].lossy
                    && !self.state.str_covered[i]
                    && self.state.str_keep[i].is_none_or(|k| k > keep);
                if eligible {
                    let saving = self.string_saving(i, keep);
                    if saving > 0 {
                        let at = self.scan.strings[i].start;
                        heap.push((saving, std::cmp::Reverse(at), Piece::Str(i)));
                    }
                }
            }
        }
        for j in 0..self.scan.arrays.len() {
            let a = &self.scan.arrays[j];
            let keep = if a.record {
                level.record_arrays
            } else {
                level.scalar_arrays
            };
            let Some(keep) = keep else { continue };
            let Some(v) = a.mids().iter().position(|m| m.keep == keep) else {
                continue;
            };
            let done = self.state.arr_mid[j].is_some_and(|p| a.mids()[p].keep <= keep);
            if self.state.arr_covered[j] || done {
                continue;
            }
            let (saving, _) = self.array_saving(j, v);
            if saving > 0 {
                heap.push((saving, std::cmp::Reverse(a.mids()[v].s), Piece::Arr(j, v)));
            }
        }
        let keep = level.strings.unwrap_or(0);
        let mut final_tries = 0;
        while self.size() > budget {
            let excess = self.size() - budget;
            // The last step: the smallest piece that is enough on its own, rather than
            // the largest, so the budget is met without overshooting it.
            if final_tries < FINAL_TRIES && heap.peek().is_some_and(|top| top.0 >= excess) {
                final_tries += 1;
                let mut enough: Vec<_> = heap.iter().filter(|e| e.0 >= excess).collect();
                enough.sort_unstable();
                let pick = enough
                    .into_iter()
                    .map(|e| e.2)
                    .find(|&p| self.saving_now(p, keep) >= excess);
                if let Some(piece) = pick {
                    self.apply_piece(piece, keep);
                    continue;
                }
            }
            let Some((saving, at, piece)) = heap.pop() else {
                break;
            };
            let now = self.saving_now(piece, keep);
            if now < saving {
                if now > 0 {
                    heap.push((now, at, piece));
                }
                continue;
            }
            self.apply_piece(piece, keep);
        }
    }

    /// What eliding `piece` would save now (0 when it is covered or not worth it).
    fn saving_now(&self, piece: Piece, keep: usize) -> usize {
        match piece {
            Piece::Str(i) if !self.state.str_covered[i] => self.string_saving(i, keep),
            Piece::Arr(j, v) if !self.state.arr_covered[j] => self.array_saving(j, v).0,
            _ => 0,
        }
    }

    fn apply_piece(&mut self, piece: Piece, keep: usize) {
        match piece {
            Piece::Str(i) => self.apply_string(i, keep),
            Piece::Arr(j, v) => self.apply_array(j, v),
        }
    }

    /// Step 3: lossy elision until the value fits `budget` or nothing more can go.
    fn elide(&mut self, budget: usize) {
        let k = self.config.json_string_keep;
        let a = self.config.json_array_keep;
        let (tk, ta) = (k / TIGHT_DIVISOR, a.min(1));
        let gentle = Level {
            strings: Some(k),
            scalar_arrays: Some(a),
            record_arrays: None,
        };
        let tight = Level {
            strings: Some(tk),
            scalar_arrays: Some(ta),
            record_arrays: None,
        };
        let start = self.state.clone();
        // Plan A keeps every record of every array.
        for level in [gentle, tight] {
            self.run_level(level, budget);
        }
        if self.size() <= budget {
            return;
        }
        // Plan B: records may go.
        self.state = start;
        let records = Level {
            strings: None,
            scalar_arrays: None,
            record_arrays: Some(a),
        };
        let all_tight = Level {
            record_arrays: Some(ta),
            ..tight
        };
        for level in [gentle, records, all_tight] {
            self.run_level(level, budget);
        }
    }

    /// Appends the value's new text (without surrounding whitespace) to `out`.
    fn render(&self, out: &mut Vec<u8>, stats: &mut Stats) {
        // Active edits as (start, end, replacement), in input order.
        let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for (i, c) in self.scan.strings.iter().enumerate() {
            if self.state.str_covered[i] {
                continue;
            }
            if let Some(keep) = self.state.str_keep[i] {
                if let Some((text, raw)) = self.string_elision(i, keep) {
                    stats.strings_elided += 1;
                    stats.bytes_elided += raw as u64;
                    edits.push((c.start, c.end, text));
                }
            } else if let Some(text) = &self.rendered[i] {
                stats.strings_rendered += 1;
                edits.push((c.start, c.end, text.clone()));
            }
        }
        for (j, a) in self.scan.arrays.iter().enumerate() {
            if self.state.arr_covered[j] {
                continue;
            }
            if let Some(v) = self.state.arr_mid[j] {
                let m = &a.mids()[v];
                stats.items_elided += m.items as u64;
                stats.bytes_elided += (m.e - m.s) as u64;
                edits.push((m.s, m.e, self.array_marker(m)));
            }
        }
        edits.sort_unstable_by_key(|e| e.0);
        let (mut pos, end) = self.scan.root;
        for (s, e, text) in edits {
            self.copy(pos, s, out);
            out.extend_from_slice(&text);
            pos = e;
        }
        self.copy(pos, end, out);
    }

    /// Copies `input[a..b]` (which starts outside any string), dropping whitespace
    /// between tokens when minifying.
    fn copy(&self, a: usize, b: usize, out: &mut Vec<u8>) {
        let src = &self.input[a..b];
        if !self.minify {
            out.extend_from_slice(src);
            return;
        }
        let mut i = 0;
        while i < src.len() {
            let c = src[i];
            if is_ws(c) {
                i += 1;
            } else if c == b'"' {
                let mut j = i + 1;
                while j < src.len() {
                    match src[j] {
                        b'"' => break,
                        b'\\' => j += 2,
                        _ => j += 1,
                    }
                }
                let stop = (j + 1).min(src.len());
                out.extend_from_slice(&src[i..stop]);
                i = stop;
            } else {
                let run = src[i..]
                    .iter()
                    .position(|&c| is_ws(c) || c == b'"')
                    .map_or(src.len(), |p| i + p);
                out.extend_from_slice(&src[i..run]);
                i = run;
            }
        }
    }
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
}
