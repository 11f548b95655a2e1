//! Test support for snip: the **accounting checker**.
//!
//! The promise it checks (docs/contract.md, "Accounting"): for every output of
//! [`snip_core::compress`] with a store, the kept bytes (at their offsets) and the
//! markers' ranges tile the original exactly, with no gap and no overlap, and every
//! marker's restore call returns exactly its range.
//!
//! [`check_accounting`] walks an output, parses every marker with
//! [`snip_core::marker::parse`] and every restore call with
//! [`snip_store::RestoreRequest::from_call`], and answers the restores from the real
//! store. It is used by this crate's property tests and fixture sweep, and by the fuzz
//! targets under `fuzz/`.
//!
//! What is checked depends on the shape of the output:
//! - **Text** (not JSON): the output's lines are walked in order against a cursor in
//!   the original. A marker line's range (its `bytes` field, else its `lines` field)
//!   must start at the cursor and moves it to its end; any other line must be the
//!   original's bytes at the cursor (a line cut by `head-tail-elide` ends where the
//!   next marker's range starts, so its line ending is the output's own). At the end
//!   the cursor must be at the end of the original. When a lossless footer says the
//!   text was rendered (`terminal-render`, `ansi-strip`), kept lines are no longer the
//!   original's bytes, so only the markers are checked: ranges in order, disjoint, in
//!   bounds. Which rendered rows a marker stands for is not checked: the renderer's
//!   attribution of rows to original lines (`Line::src_first`/`src_last`) is internal
//!   to snip-core and no public call returns it.
//! - **JSON** (the output, or each of its lines, parses as JSON): markers sit inside
//!   string values; their ranges must be disjoint and in bounds. The output is walked
//!   in order against a cursor in the original: between markers it must be the
//!   original's bytes at the cursor; each marker (an array's marker element
//!   `"[snip: …]"`, an object's marker member `"…snip": "[snip: …]"`, a
//!   `…[snip: …]…` piece inside a string, a JSON Lines marker line) must start at the
//!   cursor and moves it to the end of its range (a string marker's `field` range is
//!   decoded offsets, walked through the original's escapes). An output without
//!   markers that is the original minified (whitespace between tokens removed, the
//!   lossless whole change) is checked as such. When a string was rewritten by the
//!   lossless text rules (its footer says `terminal-render`, `ansi-strip` or
//!   `repeat-collapse`), only the markers are checked.
//! - **Always**: the counts a marker states are those of its ranges (`N lines` the
//!   lines of its `lines` range, `B bytes` the length of its `bytes` range), so a
//!   marker cannot say it hides less than it names, on rendered text too; and every
//!   marker that quotes a restore call restores, page by page,
//!   exactly the bytes it says it stands for: its byte range of the original, its line
//!   range, or (with `field`) its range of the decoded JSON string at that pointer.
//!
//! ```
//! use snip_testkit::{compress_and_check, TempStore};
//!
//! // 2,000 lines of one shape under a 2 KiB budget: folded and cut, each marker's
//! // range restored from the real store and compared with the original.
//! let store = TempStore::new();
//! let config = snip_core::Config {
//!     max_bytes: 2048,
//!     ..snip_core::Config::default()
//! };
//! let input: String = (0..2000).map(|i| format!("line {i}\n")).collect();
//! let (output, checked) = compress_and_check(input.as_bytes(), &config, &store.handle).unwrap();
//! assert!(output.len() < input.len());
//! assert!(checked.markers >= 1 && checked.restores >= 1);
//! ```
#![forbid(unsafe_code)]

use snip_core::marker::{self, ParsedMarker};
use snip_store::{RestoreMode, RestoreRequest, RestoreStatus, StoreHandle, StoreOptions};

/// What [`check_accounting`] looked at, for tests that want to assert coverage.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Markers found in the output.
    pub markers: usize,
    /// Restore calls answered and compared.
    pub restores: usize,
    /// Whether the byte-exact tiling walk ran (text output, not rendered).
    pub tiled: bool,
}

/// A small deterministic generator (xorshift64*) for tests that build inputs from a
/// seed: the same seed gives the same inputs on every machine.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A temporary store for tests: the handle and the directory that holds it.
pub struct TempStore {
    /// The open store.
    pub handle: StoreHandle,
    /// Kept alive so the directory outlives the handle.
    pub dir: tempfile::TempDir,
}

impl TempStore {
    /// A fresh private store in a new temporary directory, with caps large enough
    /// for any test input.
    pub fn new() -> TempStore {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut opts = StoreOptions::in_dir(dir.path().join("store"));
        opts.max_bytes = 1 << 40;
        opts.max_entries = 1 << 20;
        opts.max_entry_bytes = 1 << 34;
        let handle = StoreHandle::open(&opts);
        assert!(handle.store().is_some(), "temporary store: {handle:?}");
        TempStore { handle, dir }
    }
}

impl Default for TempStore {
    fn default() -> Self {
        TempStore::new()
    }
}

/// Compresses `input` with `config` into `store` and checks the accounting of the
/// output. Returns the output and what was checked.
///
/// # Errors
/// One line per violation found (see [`check_accounting`]).
pub fn compress_and_check(
    input: &[u8],
    config: &snip_core::Config,
    store: &StoreHandle,
) -> Result<(Vec<u8>, Checked), String> {
    let outcome = snip_store::compress_recorded(input, config, store, "testkit");
    if let Some(why) = &outcome.failed_open {
        return Err(format!("compression failed open: {why}"));
    }
    let checked = check_accounting(input, &outcome.output, store)?;
    Ok((outcome.output, checked))
}

/// Compresses `input` at each of `budgets` (bytes, [`snip_core::Config::with_budget`])
/// and checks what every fixture, property and fuzz finding is held to: the output is
/// accounted for ([`check_accounting`], restores answered by a fresh real store), the
/// same input gives the same bytes again, and compressing the output again (without a
/// store, as the `compress` fuzz target does) changes nothing. Returns the outputs, one
/// per budget, in order.
///
/// # Errors
/// The first budget that fails, with what failed (the accounting violations, or both
/// passes' outputs).
pub fn accounted_and_idempotent(
    input: &[u8],
    budgets: impl IntoIterator<Item = usize>,
) -> Result<Vec<Vec<u8>>, String> {
    let store = TempStore::new();
    let mut outputs = Vec::new();
    for budget in budgets {
        let cfg = snip_core::Config::with_budget(budget);
        let (once, _) = compress_and_check(input, &cfg, &store.handle)
            .map_err(|e| format!("budget {budget}: {e}"))?;
        let again = snip_store::compress_recorded(input, &cfg, &store.handle, "testkit");
        if again.output != once {
            return Err(format!("budget {budget}: not deterministic"));
        }
        let twice = snip_core::compress(&once, &cfg, &mut snip_core::NoStore);
        if twice.output != once {
            return Err(format!(
                "budget {budget}: not idempotent ({} bytes, then {}; rules {:?})\n--- once\n{}\n--- twice\n{}",
                once.len(),
                twice.output.len(),
                twice.rules.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(),
                String::from_utf8_lossy(&once),
                String::from_utf8_lossy(&twice.output)
            ));
        }
        outputs.push(once);
    }
    Ok(outputs)
}

/// The fuzz targets' input forms (`fuzz/fuzz_targets/`), shared with the tests that
/// replay their findings (`tests/fuzz_found.rs`), so that a finding is replayed at the
/// budget it was found at.
pub mod fuzz_input {
    use snip_core::Config;

    /// The `compress` target's budget for its first byte `b`: `MIN_MAX_BYTES + b * 64`
    /// bytes (1,024 to 17,344), the settable range.
    pub fn compress_budget(b: u8) -> usize {
        snip_core::config::MIN_MAX_BYTES + usize::from(b) * 64
    }

    /// A `compress` target input (a budget byte, then the tool output) as the budget's
    /// config and the tool output; `None` when empty.
    pub fn compress(data: &[u8]) -> Option<(Config, &[u8])> {
        let (&b, input) = data.split_first()?;
        Some((Config::with_budget(compress_budget(b)), input))
    }

    /// The `stream` target's budget for its first byte `b`: `128 + b * 64` bytes (128
    /// to 16,448; the stream engine takes budgets under the settable minimum).
    pub fn stream_budget(b: u8) -> usize {
        128 + usize::from(b) * 64
    }

    /// A `stream` target input (a budget byte, a chunking seed byte, then the stream)
    /// as the budget's config, the seed and the stream; `None` when under two bytes.
    pub fn stream(data: &[u8]) -> Option<(Config, u8, &[u8])> {
        let [b, seed, input @ ..] = data else {
            return None;
        };
        Some((Config::with_budget(stream_budget(*b)), *seed, input))
    }
}

/// One marker found in an output: where its line starts in the output (text) and
/// what it says.
struct Found {
    marker: ParsedMarker,
}

/// Whether `output` is `original` rendered as a terminal shows it, without the
/// lossless footer: what snip returns for a short run of `\r` frames whose footer
/// would outweigh the saving (docs/contract.md, guarantee 3).
fn footerless_rendering(original: &[u8], output: &[u8]) -> bool {
    let cfg = snip_core::Config::default();
    let Some(r) = snip_core::rules::apply_one(snip_core::RuleId::TerminalRender, original, &cfg)
    else {
        return false;
    };
    rendered_as(without_footer(&r), output)
}

/// `r` without its lossless footer line (the last line; the only line when every
/// frame was erased).
fn without_footer(r: &[u8]) -> &[u8] {
    let last = r.strip_suffix(b"\n").unwrap_or(r);
    let last_start = last.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if last[last_start..].starts_with(b"[snip: ") {
        &r[..last_start]
    } else {
        r
    }
}

/// Whether `output` is the rendering `body`. The footer goes on a line of its own,
/// after the text's dominant line ending (`\r\n` in a CRLF text): without it, the
/// last row shown may have no line ending (an original with no final newline, or a
/// last row the cursor left before the end).
fn rendered_as(body: &[u8], output: &[u8]) -> bool {
    body == output
        || body.strip_suffix(b"\r\n") == Some(output)
        || body.strip_suffix(b"\n") == Some(output)
}

/// Checks that `output` accounts for `original` exactly (see the crate docs).
///
/// # Errors
/// Every violation found, one per line, each naming the marker or offset concerned.
pub fn check_accounting(
    original: &[u8],
    output: &[u8],
    store: &StoreHandle,
) -> Result<Checked, String> {
    let mut errors = Vec::new();
    let mut checked = Checked::default();
    if output == original {
        return Ok(checked);
    }
    let lines = LineIndex::new(original);
    // Only a JSON original gives a JSON output: text can render to something that
    // parses as JSON (`\r5138` → `5138`) and is then checked as text.
    let json = is_json(output) && is_json(original);
    let found = if json {
        json_markers(output)
    } else {
        text_markers(output)
    };
    checked.markers = found.len();
    let rendered = found
        .iter()
        .any(|f| matches!(f.marker.rule.as_str(), "terminal-render" | "ansi-strip"))
        || (found.is_empty() && footerless_rendering(original, output));

    // Ranges: in bounds, and (outside JSON string fields) in order and disjoint.
    let mut last_end = 0u64;
    for f in &found {
        let m = &f.marker;
        if let Some((a, b)) = m.lines {
            if a == 0 || a > b || b > lines.count() {
                errors.push(format!(
                    "marker {:?}: lines {a}-{b} not within the original's {} lines",
                    m.what,
                    lines.count()
                ));
            }
        }
        if let (Some((la, lb)), Some((ba, bb))) = (m.lines, m.bytes) {
            // A line cut by head-tail-elide gives lines a-b with bytes starting inside
            // line a and ending inside line b (its rest, and any whole lines after).
            let cut = match (lines.bytes_of(la, la), lines.bytes_of(lb, lb)) {
                (Some((sa, ea)), Some((sb, eb))) => {
                    sa <= ba && ba < ea.max(sa + 1) && sb < bb.max(sb + 1) && bb <= eb
                }
                _ => false,
            };
            if !cut && lines.bytes_of(la, lb) != Some((ba, bb)) {
                errors.push(format!(
                    "marker {:?}: lines {la}-{lb} are bytes {:?} of the original, the marker says bytes {ba}-{bb}",
                    m.what,
                    lines.bytes_of(la, lb)
                ));
            }
        }
        if let Err(e) = counts_match_range(m, rendered) {
            errors.push(format!("marker {:?}: {e}", m.what));
        }
        if let Some(r) = marker_range(m, &lines) {
            if r.0 > r.1 || r.1 > original.len() as u64 {
                errors.push(format!(
                    "marker {:?}: byte range {}-{} not within the original's {} bytes",
                    m.what,
                    r.0,
                    r.1,
                    original.len()
                ));
            } else if r.0 < last_end {
                errors.push(format!(
                    "marker {:?}: byte range {}-{} overlaps the previous marker's (ending at {last_end})",
                    m.what, r.0, r.1
                ));
            }
            last_end = last_end.max(r.1);
        }
    }

    if !json && !rendered {
        checked.tiled = true;
        tile(original, output, &lines, &mut errors);
    }
    let json_rendered = found.iter().any(|f| {
        matches!(
            f.marker.rule.as_str(),
            "terminal-render" | "ansi-strip" | "repeat-collapse"
        )
    });
    // A footerless rendering is text whatever its last frame reads as (`5138022`, a
    // number, is JSON): `rendered` has checked it whole.
    if json && !json_rendered && !rendered {
        if found.is_empty() && minified(original) == minified(output) {
            // Minified whole: lossless, nothing to tile.
        } else {
            checked.tiled = true;
            tile_json(original, output, &lines, &mut errors);
        }
    }

    for f in &found {
        if let Some(call) = &f.marker.call {
            checked.restores += 1;
            if let Err(e) = check_restore(original, &lines, &f.marker, call, store) {
                errors.push(e);
            }
        }
    }
    if errors.is_empty() {
        Ok(checked)
    } else {
        Err(errors.join("\n"))
    }
}

/// The counts a marker's `what` states, against its own ranges: the lines it says it
/// elides (`N lines (B bytes) elided`, `N similar lines`, `(N lines, B bytes)`,
/// `F traceback frames (N lines)`, `previous line repeated N more times`) are the
/// lines of its `lines` range, and the bytes (`(B bytes)`, `(N lines, B bytes)`) are
/// the length of its `bytes` range. Checked on rendered text too, where kept rows are
/// not the original's bytes: a marker cannot say it hides fewer lines than its range
/// names. A repeat count (`repeated N more times`) counts repeated rows: on rendered
/// text their range also holds the lines of the frames drawn over them, so it is held
/// to its range on plain text only. (Which rendered rows a marker stands for is not
/// checked: the renderer's row-to-line attribution is internal to snip-core, see the
/// crate docs.)
fn counts_match_range(m: &ParsedMarker, rendered: bool) -> Result<(), String> {
    let what = m.what.split(", ").next().unwrap_or("");
    let num = |s: &str| s.replace(',', "").parse::<u64>().ok();
    // `N lines`/`N line`/`N similar lines` before the parenthesis, or `(N lines, B bytes)`.
    let (mut stated_lines, mut stated_bytes) = (None, None);
    if let Some(rest) = what.strip_prefix("previous line repeated ") {
        if !rendered {
            stated_lines = rest.split(' ').next().and_then(num);
        }
    } else if let Some(open) = what.find(" (") {
        let head = &what[..open];
        let inner = what[open + 2..].split(')').next().unwrap_or("");
        let words: Vec<&str> = head.split(' ').collect();
        let inner_words: Vec<&str> = inner.split([' ', ',']).filter(|w| !w.is_empty()).collect();
        match (words.as_slice(), inner_words.as_slice()) {
            // `F traceback frames (N lines)`
            (&[_, "traceback", "frames" | "frame"], &[n, "lines" | "line"]) => {
                stated_lines = num(n);
            }
            // `K similar blocks of P lines (N lines, B bytes)`
            (&[_, "similar", "blocks" | "block", "of", _, "lines"], &[n, _, b, "bytes"]) => {
                stated_lines = num(n);
                stated_bytes = num(b);
            }
            // `N lines (B bytes)`, `N similar lines (B bytes)`, `N similar lines of S
            // shapes (B bytes)`
            (&[n, "lines" | "line", ..] | &[n, "similar", "lines" | "line", ..], &[b, "bytes"]) => {
                stated_lines = num(n);
                stated_bytes = num(b);
            }
            _ => {}
        }
    }
    if let (Some(n), Some((a, b))) = (stated_lines, m.lines) {
        if b >= a && n != b - a + 1 {
            return Err(format!(
                "says {n} lines, its range is lines {a}-{b} ({})",
                b - a + 1
            ));
        }
    }
    if let (Some(n), Some((a, b))) = (stated_bytes, m.bytes) {
        if b >= a && n != b - a {
            return Err(format!(
                "says {n} bytes, its range is bytes {a}-{b} ({})",
                b - a
            ));
        }
    }
    Ok(())
}

/// Byte offsets of the original's line starts (1-based lines, `\n`-terminated).
struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    fn new(b: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        for (i, c) in b.iter().enumerate() {
            if *c == b'\n' && i + 1 < b.len() {
                starts.push(i + 1);
            }
        }
        if b.is_empty() {
            starts.clear();
        }
        LineIndex {
            starts,
            len: b.len(),
        }
    }

    fn count(&self) -> u64 {
        self.starts.len() as u64
    }

    /// Byte range of lines `a..=b` (1-based, inclusive); `None` out of range.
    fn bytes_of(&self, a: u64, b: u64) -> Option<(u64, u64)> {
        if a == 0 || a > b || b > self.count() {
            return None;
        }
        let s = self.starts[(a - 1) as usize];
        let e = self.starts.get(b as usize).copied().unwrap_or(self.len);
        Some((s as u64, e as u64))
    }
}

/// The original byte range a marker stands for: its `bytes` field, else its `lines`.
fn marker_range(m: &ParsedMarker, lines: &LineIndex) -> Option<(u64, u64)> {
    m.bytes
        .or_else(|| m.lines.and_then(|(a, b)| lines.bytes_of(a, b)))
}

/// `output` as the JSON parser reads it: a leading byte-order mark dropped (RFC 8259
/// §8.1 lets a parser ignore it) and each surrogate escape (`\uD800`-`\uDFFF`, which
/// may be lone and then not parse) replaced by `\uFFFD`, so the markers of JSON that
/// holds them are checked too. Marker text never holds either.
fn json_view(output: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let output = output.strip_prefix(b"\xef\xbb\xbf").unwrap_or(output);
    let surrogate = |w: &[u8]| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    };
    if !output.windows(4).any(surrogate) {
        return std::borrow::Cow::Borrowed(output);
    }
    let mut v = output.to_vec();
    let mut i = 0;
    while i + 6 <= v.len() {
        if v[i] == b'\\' && surrogate(&v[i..i + 4]) {
            v[i + 2..i + 6].copy_from_slice(b"fffd");
            i += 6;
        } else if v[i] == b'\\' {
            i += 2;
        } else {
            i += 1;
        }
    }
    std::borrow::Cow::Owned(v)
}

fn is_json(output: &[u8]) -> bool {
    let output = &*json_view(output);
    if serde_json::from_slice::<serde_json::Value>(output).is_ok() {
        return true;
    }
    let mut any = false;
    for l in output.split(|c| *c == b'\n') {
        if l.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if serde_json::from_slice::<serde_json::Value>(l).is_err() {
            return false;
        }
        any = true;
    }
    any
}

/// Markers that take a whole output line.
fn text_markers(output: &[u8]) -> Vec<Found> {
    output
        .split(|c| *c == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .filter_map(marker::parse)
        .map(|marker| Found { marker })
        .collect()
}

/// Markers inside the JSON string values of a JSON or JSON Lines output.
fn json_markers(output: &[u8]) -> Vec<Found> {
    let output = &*json_view(output);
    let mut out = Vec::new();
    let values: Vec<serde_json::Value> = match serde_json::from_slice(output) {
        Ok(v) => vec![v],
        Err(_) => output
            .split(|c| *c == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect(),
    };
    for v in &values {
        walk_strings(v, &mut |s| {
            let mut from = 0;
            while let Some(i) = s[from..].find("[snip: ") {
                let start = from + i;
                let rest = &s[start..];
                let mut hit = None;
                for (j, _) in rest.match_indices(']') {
                    if rest[..j].contains('\n') {
                        break;
                    }
                    if let Some(m) = marker::parse(&rest[..=j]) {
                        hit = Some((m, j));
                        break;
                    }
                }
                match hit {
                    Some((marker, j)) => {
                        out.push(Found { marker });
                        from = start + j + 1;
                    }
                    None => from = start + 1,
                }
            }
        });
    }
    out
}

fn walk_strings(v: &serde_json::Value, f: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => f(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        serde_json::Value::Object(o) => o.values().for_each(|x| walk_strings(x, f)),
        _ => {}
    }
}

/// The tiling walk for text outputs (see the crate docs).
fn tile(original: &[u8], output: &[u8], lines: &LineIndex, errors: &mut Vec<String>) {
    let out_lines: Vec<&[u8]> = output.split_inclusive(|c| *c == b'\n').collect();
    let mut cursor = 0usize;
    let mut out_off = 0usize;
    for (k, l) in out_lines.iter().enumerate() {
        // A line shaped like a marker with no range that is the original's next bytes
        // is a kept line of the original (an input holding snip's own markers).
        let parsed = std::str::from_utf8(l)
            .ok()
            .and_then(marker::parse)
            .filter(|m| {
                marker_range(m, lines).is_some()
                    || !original.get(cursor..).is_some_and(|r| r.starts_with(l))
            });
        if let Some(m) = parsed {
            match marker_range(&m, lines) {
                Some((a, b)) => {
                    if a as usize != cursor {
                        let what = if (a as usize) > cursor {
                            "leaves a gap"
                        } else {
                            "overlaps kept bytes"
                        };
                        errors.push(format!(
                            "marker {:?} at output byte {out_off}: range {a}-{b} {what}: the original is accounted for up to byte {cursor}",
                            m.what
                        ));
                    }
                    cursor = b as usize;
                }
                None => {
                    if !m.rule.is_empty() && m.call.is_some() {
                        errors.push(format!(
                            "marker {:?} at output byte {out_off}: a restore call but no range",
                            m.what
                        ));
                    }
                }
            }
        } else {
            let rest = original.get(cursor..).unwrap_or(&[]);
            let next_is_marker = out_lines
                .get(k + 1)
                .and_then(|n| std::str::from_utf8(n).ok())
                .and_then(marker::parse)
                .and_then(|m| marker_range(&m, lines));
            let body = l.strip_suffix(b"\n").unwrap_or(l);
            // A cut line is ended with the text's dominant line ending (`\r\n` in a
            // CRLF text), whatever its own is.
            let cut_body = [Some(body), l.strip_suffix(b"\r\n")]
                .into_iter()
                .flatten()
                .find(|b| {
                    rest.starts_with(b)
                        && next_is_marker.map(|r| r.0) == Some((cursor + b.len()) as u64)
                });
            if rest.starts_with(l) {
                cursor += l.len();
            } else if let Some(cut) = cut_body.filter(|_| l.ends_with(b"\n")) {
                // A line cut by head-tail-elide: the output ends it, the marker resumes.
                cursor += cut.len();
            } else if k + 1 == out_lines.len() && rest.starts_with(body) {
                // Output's last line: the original may end without the output's newline.
                cursor += body.len();
            } else {
                errors.push(format!(
                    "kept line at output byte {out_off} ({:?}) is not the original's bytes at {cursor} ({:?})",
                    preview(l),
                    preview(&rest[..rest.len().min(l.len())])
                ));
                return;
            }
        }
        out_off += l.len();
    }
    if cursor != original.len() {
        errors.push(format!(
            "original bytes {cursor}-{} are accounted for by no kept byte and no marker",
            original.len()
        ));
    }
}

/// `b` without the whitespace between JSON tokens.
fn minified(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut in_str = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' {
                if let Some(&n) = b.get(i + 1) {
                    out.push(n);
                }
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
        i += 1;
    }
    out
}

const ELLIPSIS: &[u8] = "\u{2026}".as_bytes();

/// One marker in a JSON output: its extent in the output and what it says.
struct JsonMarker {
    start: usize,
    end: usize,
    marker: ParsedMarker,
    /// Inside a string (`…[snip: …]…`): a `field` range is decoded offsets.
    in_string: bool,
}

/// The markers of a JSON output, in order, with their extents.
fn json_marker_extents(output: &[u8]) -> Vec<JsonMarker> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(p) = memfind(&output[from..], b"[snip: ").map(|k| from + k) {
        from = p + 1;
        let quoted = p > 0 && output[p - 1] == b'"';
        let in_string = p >= ELLIPSIS.len() && &output[p - ELLIPSIS.len()..p] == ELLIPSIS;
        if !quoted && !in_string {
            continue;
        }
        // Decode the JSON string text from `p` until a `]` closes a marker.
        let mut text = Vec::new();
        let mut q = p;
        let mut hit = None;
        while q < output.len() && output[q] != b'"' {
            let c = output[q];
            if c == b'\\' && q + 1 < output.len() {
                let (bytes, len) = decode_escape(&output[q..]);
                text.extend_from_slice(&bytes);
                q += len;
            } else {
                text.push(c);
                q += 1;
            }
            if c == b']' {
                if let Some(m) = std::str::from_utf8(&text).ok().and_then(marker::parse) {
                    hit = Some(m);
                    break;
                }
            }
        }
        let Some(m) = hit else { continue };
        let (start, end) = if in_string {
            if !output[q..].starts_with(ELLIPSIS) {
                continue;
            }
            (p - ELLIPSIS.len(), q + ELLIPSIS.len())
        } else {
            if output.get(q) != Some(&b'"') {
                continue;
            }
            let mut start = p - 1;
            // A marker member: `"…snip": ` (or `"…snip N": `) before the value.
            let before = &output[..p - 1];
            let trimmed = before.trim_ascii_end();
            if let Some(t) = trimmed.strip_suffix(b":") {
                let t = t.trim_ascii_end();
                let key = [b"\"", ELLIPSIS, b"snip"].concat();
                if let Some(k) = memrfind(t, &key) {
                    start = k;
                }
            }
            (start, q + 1)
        };
        from = end;
        found.push(JsonMarker {
            start,
            end,
            marker: m,
            in_string,
        });
    }
    found
}

/// The decoded bytes of the escape at the start of `b` and its raw length.
fn decode_escape(b: &[u8]) -> (Vec<u8>, usize) {
    let simple = match b.get(1) {
        Some(b'"') => Some(b'"'),
        Some(b'\\') => Some(b'\\'),
        Some(b'/') => Some(b'/'),
        Some(b'b') => Some(8),
        Some(b'f') => Some(12),
        Some(b'n') => Some(b'\n'),
        Some(b'r') => Some(b'\r'),
        Some(b't') => Some(b'\t'),
        _ => None,
    };
    if let Some(c) = simple {
        return (vec![c], 2);
    }
    let hex = |s: &[u8]| {
        std::str::from_utf8(s)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let Some(u) = b.get(2..6).and_then(hex) else {
        return (Vec::new(), 2);
    };
    if (0xd800..0xdc00).contains(&u) && b.get(6..8) == Some(b"\\u") {
        if let Some(lo) = b.get(8..12).and_then(hex) {
            if (0xdc00..0xe000).contains(&lo) {
                let c = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                let ch = char::from_u32(c).unwrap_or('\u{fffd}');
                return (ch.to_string().into_bytes(), 12);
            }
        }
    }
    let ch = char::from_u32(u).unwrap_or('\u{fffd}');
    (ch.to_string().into_bytes(), 6)
}

/// The raw offset in `original` after decoding `n` bytes of JSON string text from `at`.
fn raw_advance(original: &[u8], mut at: usize, n: usize) -> Option<usize> {
    let mut done = 0;
    while done < n {
        let c = *original.get(at)?;
        if c == b'"' {
            return None;
        }
        if c == b'\\' {
            let (bytes, len) = decode_escape(&original[at..]);
            done += bytes.len();
            at += len;
        } else {
            done += 1;
            at += 1;
        }
    }
    (done == n).then_some(at)
}

fn memfind(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn memrfind(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).rposition(|w| w == n)
}

/// The tiling walk for JSON outputs (see the crate docs).
fn tile_json(original: &[u8], output: &[u8], lines: &LineIndex, errors: &mut Vec<String>) {
    let mut cursor = 0usize;
    let mut pos = 0usize;
    let markers = json_marker_extents(output);
    let kept = |pos: usize, to: usize, cursor: &mut usize, errors: &mut Vec<String>| {
        let piece = &output[pos..to];
        if original.get(*cursor..*cursor + piece.len()) == Some(piece) {
            *cursor += piece.len();
            true
        } else {
            let rest = original.get(*cursor..).unwrap_or(&[]);
            errors.push(format!(
                "kept JSON at output byte {pos} ({:?}) is not the original's bytes at {cursor} ({:?})",
                preview(piece),
                preview(&rest[..rest.len().min(piece.len())])
            ));
            false
        }
    };
    for jm in &markers {
        if !kept(pos, jm.start, &mut cursor, errors) {
            return;
        }
        let m = &jm.marker;
        let mut end = jm.end;
        let range = match (m.bytes, jm.in_string, m.call.as_deref()) {
            (Some(r), _, _) => Some(r),
            (None, true, Some(call)) => RestoreRequest::from_call(call).ok().and_then(|req| {
                let (a, b) = (req.start?, req.end?);
                let raw_end = raw_advance(original, cursor, (b - a) as usize)?;
                Some((cursor as u64, raw_end as u64))
            }),
            _ => marker_range(m, lines),
        };
        let Some((a, b)) = range else {
            errors.push(format!(
                "marker {:?} at output byte {}: no range to tile",
                m.what, jm.start
            ));
            return;
        };
        let whole_lines = b > 0 && original.get(b as usize - 1) == Some(&b'\n');
        if m.lines.is_some() && whole_lines && output.get(end) == Some(&b'\n') {
            // A JSON Lines marker line stands for whole lines, line endings included.
            end += 1;
        }
        if a as usize != cursor {
            errors.push(format!(
                "marker {:?} at output byte {}: range {a}-{b} does not start where the original is accounted for up to ({cursor})",
                m.what, jm.start
            ));
            return;
        }
        cursor = b as usize;
        pos = end;
    }
    if !kept(pos, output.len(), &mut cursor, errors) {
        return;
    }
    if cursor != original.len() {
        errors.push(format!(
            "original bytes {cursor}-{} are accounted for by no kept byte and no marker",
            original.len()
        ));
    }
}

fn preview(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.chars().take(60).collect()
}

/// Restores `call` page by page and compares with what `m` stands for.
fn check_restore(
    original: &[u8],
    lines: &LineIndex,
    m: &ParsedMarker,
    call: &str,
    store: &StoreHandle,
) -> Result<(), String> {
    let req = RestoreRequest::from_call(call).map_err(|e| {
        format!(
            "marker {:?}: restore call {call:?} does not parse: {e}",
            m.what
        )
    })?;
    let got = restore_all(&req, store, lines)
        .map_err(|e| format!("marker {:?}: restore call {call:?}: {e}", m.what))?;
    let expected: Vec<u8> = match (&req.field, req.mode) {
        (Some(field), RestoreMode::Bytes) => {
            let s = decoded_field(original, field).ok_or_else(|| {
                format!(
                    "marker {:?}: field {field:?} is not a string of the original",
                    m.what
                )
            })?;
            let a = req.start.unwrap_or(0) as usize;
            let b = req.end.map_or(s.len(), |e| e as usize);
            s.get(a..b.min(s.len())).unwrap_or_default().to_vec()
        }
        (None, RestoreMode::Full) => original.to_vec(),
        (None, mode) => {
            // The call's own range, in its unit, must be the marker's range in that
            // unit; then the restore must return those bytes of the original.
            let (a, b) = (req.start.unwrap_or(0), req.end.unwrap_or(u64::MAX));
            let r = if mode == RestoreMode::Lines {
                if m.lines.is_some_and(|l| l != (a, b)) {
                    return Err(format!(
                        "marker {:?}: its call restores lines {a}-{b}, the marker says lines {:?}",
                        m.what, m.lines
                    ));
                }
                lines.bytes_of(a, b)
            } else {
                if m.bytes.is_some_and(|r| r != (a, b)) {
                    return Err(format!(
                        "marker {:?}: its call restores bytes {a}-{b}, the marker says bytes {:?}",
                        m.what, m.bytes
                    ));
                }
                Some((a, b))
            };
            let r = r.ok_or_else(|| format!("marker {:?}: call range out of bounds", m.what))?;
            original
                .get(r.0 as usize..r.1 as usize)
                .ok_or_else(|| format!("marker {:?}: range out of bounds", m.what))?
                .to_vec()
        }
        (Some(_), _) => return Ok(()),
    };
    if got != expected {
        return Err(format!(
            "marker {:?}: restore call {call:?} returns {} bytes ({:?}…), the marker stands for {} bytes ({:?}…)",
            m.what,
            got.len(),
            preview(&got),
            expected.len(),
            preview(&expected)
        ));
    }
    Ok(())
}

/// The whole answer to `req`, following `next` across pages.
fn restore_all(
    req: &RestoreRequest,
    store: &StoreHandle,
    lines: &LineIndex,
) -> Result<Vec<u8>, String> {
    let mut req = req.clone();
    req.max_bytes = Some(65536);
    let mut out = Vec::new();
    for _ in 0..100_000 {
        let resp = store.restore(&req);
        if resp.status != RestoreStatus::Ok {
            return Err(format!("status {:?}: {}", resp.status, resp.note));
        }
        let got = resp.content_bytes().unwrap_or_default();
        // A line longer than a page comes cut; its rest is asked for by bytes, as
        // the response's note says (docs/restore.md).
        let page = match (req.mode, req.field.is_none(), resp.start, resp.end) {
            (RestoreMode::Lines, true, Some(a), Some(b)) => lines.bytes_of(a, b),
            _ => None,
        };
        if let Some((s, e)) = page.filter(|(s, e)| (got.len() as u64) < e - s) {
            let rest = RestoreRequest::bytes(&req.id, s + got.len() as u64, Some(e));
            out.extend(&got);
            out.extend(restore_all(&rest, store, lines)?);
        } else {
            out.extend(got);
        }
        match resp.next {
            Some(n) => req.start = Some(n),
            None => return Ok(out),
        }
    }
    Err("more than 100000 pages".into())
}

/// The decoded bytes of the JSON string at `pointer` in `original` (a document, or
/// JSON Lines whose first pointer token is the 0-based line index).
fn decoded_field(original: &[u8], pointer: &str) -> Option<Vec<u8>> {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(original) {
        return v.pointer(pointer)?.as_str().map(|s| s.as_bytes().to_vec());
    }
    let rest = pointer.strip_prefix('/')?;
    let (idx, tail) = rest.split_once('/').map_or((rest, ""), |(a, b)| (a, b));
    let n: usize = idx.parse().ok()?;
    let line = original.split(|c| *c == b'\n').nth(n)?;
    let v: serde_json::Value = serde_json::from_slice(line).ok()?;
    let p = if tail.is_empty() {
        String::new()
    } else {
        format!("/{tail}")
    };
    v.pointer(&p)?.as_str().map(|s| s.as_bytes().to_vec())
}
