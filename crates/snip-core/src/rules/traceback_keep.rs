//! `traceback-keep` — keep a traceback's ends, elide its middle frames.
//!
//! **What it does.** Finds runs of stack-frame lines — Python (`  File "…", line N` and
//! its code lines, `[Previous line repeated N more times]`), JVM and Node (`at …`),
//! Rust backtraces (`  N: symbol` / `at path`), Go (`pkg.fn(…)` / `\t/path.go:N`) — and
//! when a run has more than `traceback_head_frames + traceback_tail_frames` frames,
//! replaces the middle frames with one marker. Headers (`Traceback …`, `Caused by:`,
//! `During handling …`, `goroutine …`) and exception lines are not frame lines, so they
//! are always kept, and so is every chained traceback's end.
//!
//! **Why.** Deep recursion prints 1,000 near-identical frames; the cause is in the last
//! few and the entry point in the first few.
//!
//! **Example.** A 3,000-line recursion traceback → header, 6 frames, a marker
//! `[snip: 982 traceback frames (2946 lines) elided · traceback-keep · lines 20-2965 · …]`,
//! 12 frames, `KeyError: 'rate_limit_per_tenant'`.
//!
//! When eliding to those ends leaves the text under the budget, the room goes back to
//! the frames: each run of distinct frames keeps the most extra frames (shared between
//! its head and tail in the proportion of their settings) that keep the text within
//! the budget, so a 400-frame traceback of distinct calls in a 43 KB log shows as many
//! as fit in 24 KB, not 18. A run that repeats a cycle (recursion: fewer distinct frame
//! lines than half its frames) keeps the settings' count: its copies add nothing.
//!
//! **Options.** `SNIP_TRACEBACK_HEAD` (6), `SNIP_TRACEBACK_TAIL` (12): the frames kept
//! at least (with room under the budget, more; with both 0, none). Lossy: only above
//! the budget and with a retained original (or the store turned off).

use crate::doc::{Doc, Line, RawIndex};
use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::{Elide, RuleId};
use crate::Config;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Start,
    Cont,
    Other,
}

/// Whether `t` is a Rust backtrace's numbered frame line: `  12: core::panicking::panic`.
fn rust_numbered(t: &[u8]) -> bool {
    let indent = indent(t);
    indent >= 1 && numbered(&t[indent..])
}

/// Whether `s` (a line after its indent) starts with a frame number: `12: `.
#[inline]
fn numbered(s: &[u8]) -> bool {
    let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && s[digits..].starts_with(b": ")
}

/// The kind of line `t`, after a line of kind `prev` whose text is `prev_text`, and
/// before `next` (`None`: a marker or the end).
fn classify(t: &[u8], prev: Kind, prev_text: &[u8], next: Option<&[u8]>) -> Kind {
    if prose(t.first().copied(), || next.and_then(|n| n.first().copied())) {
        return Kind::Other;
    }
    let indent = indent(t);
    let s = &t[indent..];
    // After a line that is not part of a frame, only a frame start counts (a
    // continuation there is read as `Other`), and an indented one starts with `F`
    // (`  File "`), `[`, `a` (`at `) or a digit (a Rust frame number).
    if prev == Kind::Other
        && indent >= 1
        && !matches!(s.first(), Some(b'F' | b'[' | b'a' | b'0'..=b'9'))
    {
        return Kind::Other;
    }
    if t.starts_with(b"  File \"") || s.starts_with(b"[Previous line repeated") {
        return Kind::Start;
    }
    if indent >= 1 && s.starts_with(b"at ") {
        // A JVM or Node frame; in a Rust backtrace, the path under a numbered frame.
        return if prev == Kind::Start && rust_numbered(prev_text) {
            Kind::Cont
        } else {
            Kind::Start
        };
    }
    if indent >= 1 && s.starts_with(b"... ") && s.ends_with(b" more") {
        return Kind::Cont;
    }
    if indent >= 1 && numbered(s) {
        return Kind::Start;
    }
    // Go: "\t/path/file.go:12 +0x1d" continues the function line before it.
    if t.starts_with(b"\t") && memchr::memmem::find(t, b".go:").is_some() {
        return Kind::Cont;
    }
    if let Some(n) = next {
        if indent == 0
            && n.starts_with(b"\t")
            && memchr::memmem::find(n, b".go:").is_some()
            && t.ends_with(b")")
        {
            return Kind::Start;
        }
    }
    // Python code lines under a frame, and caret lines.
    if prev != Kind::Other && indent >= 4 && !s.is_empty() {
        return Kind::Cont;
    }
    Kind::Other
}

/// The length of `t`'s leading ASCII whitespace. Indents are mostly spaces: they are
/// counted eight at a time.
fn indent(t: &[u8]) -> usize {
    let mut i = 0;
    while let Some(w) = t.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let other = w ^ 0x2020_2020_2020_2020;
        if other != 0 {
            i += (other.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    i + t[i..]
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(t.len() - i)
}

/// Whether a line starts like prose, not a frame, from its first byte and the first
/// byte of the line after it (`None`: empty, a marker or past the end): a visible
/// byte other than `[`, and no tab-indented line after it (only a Go function line,
/// whose file line follows it, starts visibly and is a frame). `next` is asked only
/// when the first byte leaves the question open.
fn prose(first: Option<u8>, next: impl FnOnce() -> Option<u8>) -> bool {
    first.is_some_and(|c| !c.is_ascii_whitespace() && c != b'[') && next() != Some(b'\t')
}

/// Whether line `k` of `doc` is plainly not part of a frame: a marker, empty, or
/// [`prose`]. [`classify`] returns `Other` for these.
fn plain(doc: &Doc<'_>, k: usize) -> bool {
    let first = |l: &Line| (l.marker.is_none() && l.end > l.start).then(|| doc.buf[l.start]);
    let l = &doc.lines[k];
    l.marker.is_some()
        || l.end == l.start
        || prose(first(l), || doc.lines.get(k + 1).and_then(first))
}

/// The most lines in a row that are not [`plain`]. A run of `n` frames spans at least
/// `n` such lines, so a document whose longest stretch is shorter has no run to
/// elide, and is not classified line by line (most outputs: a look at each line's
/// first byte instead of [`classify`]).
fn longest_unplain_stretch(doc: &Doc<'_>) -> usize {
    let (mut longest, mut stretch) = (0, 0);
    for k in 0..doc.lines.len() {
        if plain(doc, k) {
            stretch = 0;
        } else {
            stretch += 1;
            longest = longest.max(stretch);
        }
    }
    longest
}

/// Calls `f(kind)` for every line of `doc`, in order: each line classified with
/// the kind of the line before it and the text of the line after it.
fn for_each_kind(doc: &Doc<'_>, mut f: impl FnMut(Kind)) {
    let lines = &doc.lines;
    let mut prev = Kind::Other;
    let mut prev_text: &[u8] = b"";
    for (k, l) in lines.iter().enumerate() {
        let kind = if l.marker.is_some() {
            Kind::Other
        } else {
            let next = lines
                .get(k + 1)
                .filter(|x| x.marker.is_none())
                .map(|x| doc.text(x));
            classify(doc.text(l), prev, prev_text, next)
        };
        prev_text = doc.text(l);
        // A continuation needs a frame before it.
        let kind = if kind == Kind::Cont && prev == Kind::Other {
            Kind::Other
        } else {
            kind
        };
        f(kind);
        prev = kind;
    }
}

/// Elides the middle of long frame runs to the configured ends. Returns
/// `(frames_elided, lines_elided)`.
pub(crate) fn apply(doc: &mut Doc<'_>, config: &Config, raw: &RawIndex) -> (u64, u64) {
    apply_within(doc, config, raw, false)
}

/// The head and tail frames to keep (`SNIP_TRACEBACK_HEAD`, `SNIP_TRACEBACK_TAIL`),
/// each at most `lines`, the document's line count: a run holds no more frames than
/// lines, so a larger setting keeps the same, and sums of them cannot overflow.
fn frames_kept(config: &Config, lines: usize) -> (usize, usize) {
    (
        config.traceback_head_frames.min(lines),
        config.traceback_tail_frames.min(lines),
    )
}

/// [`apply`]; with `give_back`, when that leaves the document under the budget, the
/// room goes back to the kept frames of every run of distinct frames (see [`elide`]):
/// the most extra frames that keep it within the budget, shared between head and
/// tail as their settings are.
fn apply_within(doc: &mut Doc<'_>, config: &Config, raw: &RawIndex, give_back: bool) -> (u64, u64) {
    let n = doc.lines.len();
    let (keep_head, keep_tail) = frames_kept(config, n);
    // One pass classifies every line and measures the longest run of frames; most
    // documents hold no run long enough to elide, and nothing is rebuilt for them.
    let need = keep_head + keep_tail + 1;
    if longest_unplain_stretch(doc) <= need {
        return (0, 0);
    }
    let mut kinds = Vec::with_capacity(n);
    let mut longest = 0usize;
    let mut starts_in_run = 0usize;
    for_each_kind(doc, |kind| {
        match kind {
            Kind::Start => starts_in_run += 1,
            Kind::Cont => {}
            Kind::Other => starts_in_run = 0,
        }
        longest = longest.max(starts_in_run);
        kinds.push(kind);
    });
    if longest <= need {
        return (0, 0);
    }
    let src = std::mem::take(&mut doc.lines);
    let markers = doc.markers.len();
    let done = elide(doc, &src, &kinds, config, raw, 0);
    if done.0 == 0 {
        doc.lines = src;
        return done;
    }
    if !give_back || doc.size() >= config.max_bytes || keep_head + keep_tail == 0 {
        return done;
    }
    // Room under the budget: the most extra frames (at most the longest run's) that
    // keep the document within it, by bisection (the size grows with the frames
    // kept). `best` is the largest count known to fit.
    let fits = |doc: &mut Doc<'_>, extra: usize| {
        doc.markers.truncate(markers);
        let done = elide(doc, &src, &kinds, config, raw, extra);
        (doc.size() <= config.max_bytes).then_some(done)
    };
    let (mut best, mut best_done) = (0, done);
    let (mut lo, mut hi) = (1, longest);
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        match fits(doc, mid) {
            Some(d) => {
                (best, best_done) = (mid, d);
                lo = mid + 1;
            }
            None => hi = mid - 1,
        }
    }
    doc.markers.truncate(markers);
    let done = elide(doc, &src, &kinds, config, raw, best);
    debug_assert_eq!(done, best_done);
    if done.0 == 0 {
        doc.lines = src;
    }
    done
}

/// Whether the frames starting at `starts` repeat a cycle (recursion): fewer distinct
/// frame lines than half their count. Their copies tell nothing new, so they get no
/// room back.
fn cycles(doc: &Doc<'_>, src: &[Line], starts: &[usize]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(starts.len());
    let mut distinct = 0usize;
    for &k in starts {
        if seen.insert(doc.text(&src[k])) {
            distinct += 1;
        }
    }
    distinct * 2 < starts.len()
}

/// [`apply`]'s elision of `src` (classified as `kinds`) into `doc.lines`, each run of
/// distinct frames keeping `extra` more frames than the settings say (shared between
/// head and tail in their settings' proportion), a run of repeating frames (see
/// [`cycles`]) the settings' count. Returns `(frames_elided, lines_elided)`.
fn elide(
    doc: &mut Doc<'_>,
    src: &[Line],
    kinds: &[Kind],
    config: &Config,
    raw: &RawIndex,
    extra: usize,
) -> (u64, u64) {
    let n = src.len();
    let (base_head, base_tail) = frames_kept(config, n);
    let extra_head = (extra as u128 * base_head as u128)
        .checked_div(base_head as u128 + base_tail as u128)
        .map_or(0, |h| h as usize);
    let eol = crate::doc::dominant_eol(src);
    let mut out: Vec<Line> = Vec::with_capacity(n);
    let (mut frames_elided, mut lines_elided) = (0u64, 0u64);
    let mut k = 0;
    while k < n {
        if kinds[k] != Kind::Start {
            out.push(src[k]);
            k += 1;
            continue;
        }
        let mut j = k;
        let mut starts = Vec::new();
        while j < n && kinds[j] != Kind::Other {
            if kinds[j] == Kind::Start {
                starts.push(j);
            }
            j += 1;
        }
        let (keep_head, keep_tail) = if extra > 0
            && starts.len() > base_head + base_tail + 1
            && !cycles(doc, src, &starts)
        {
            (base_head + extra_head, base_tail + (extra - extra_head))
        } else {
            (base_head, base_tail)
        };
        if starts.len() > keep_head + keep_tail + 1 {
            let cut_from = starts[keep_head];
            // Exclusive; with no tail frames kept, the run's end (its last frame's
            // lines go too).
            let cut_to = starts.get(starts.len() - keep_tail).copied().unwrap_or(j);
            out.extend_from_slice(&src[k..cut_from]);
            // The original lines the elided ones cover: on rendered text (a cursor
            // moved up and redrew a row) their ranges are not in order, and the first
            // row's start can lie after the last row's end.
            let cut = &src[cut_from..cut_to];
            let a = cut.iter().map(|l| l.src_first).min().expect("a frame");
            let b = cut.iter().map(|l| l.src_last).max().expect("a frame");
            let frames = (starts.len() - keep_head - keep_tail) as u64;
            let lines = (cut_to - cut_from) as u64;
            let m = Marker {
                what: format!("{frames} traceback frames ({lines} lines) elided"),
                rule: RuleId::TracebackKeep,
                lines: Some((a as u64 + 1, b as u64 + 1)),
                bytes: Some(raw.bytes(a, b)),
                recovery: Recovery::Elided(RestoreCall::Lines {
                    start: a as u64 + 1,
                    end: b as u64 + 1,
                }),
            };
            let line = doc.marker_line(m, eol, a, b);
            out.push(line);
            out.extend_from_slice(&src[cut_to..j]);
            frames_elided += frames;
            lines_elided += lines;
        } else {
            out.extend_from_slice(&src[k..j]);
        }
        k = j;
    }
    doc.lines = out;
    (frames_elided, lines_elided)
}

/// The lossy pass: elides the middle frames of the working document's tracebacks.
/// Returns the receipt row when a frame was elided.
pub(crate) fn pass(e: &mut Elide<'_, '_>) -> Option<crate::RuleReport> {
    let (frames, lines) = apply_within(e.doc, e.config, e.raw, true);
    let report = report(frames, lines)?;
    e.size = e.doc.size();
    Some(report)
}

/// The receipt row: `frames_elided` and `lines_elided`; `None` when no frame was.
pub(crate) fn report(frames: u64, lines: u64) -> Option<crate::RuleReport> {
    (frames > 0).then(|| crate::RuleReport {
        id: RuleId::TracebackKeep,
        counts: vec![("frames_elided", frames), ("lines_elided", lines)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `frames` frames of one language's traceback, between a header and an
    /// exception line, each frame drawn by `frame(i)`.
    fn traceback(header: &str, frame: impl Fn(usize) -> String, last: &str) -> String {
        let mut s = format!("log line before\n{header}\n");
        for i in 0..60 {
            s.push_str(&frame(i));
        }
        s.push_str(last);
        s.push_str("\nlog line after\n");
        s
    }

    fn elided(input: &str) -> (u64, String) {
        let mut doc = Doc::from_raw(input.as_bytes());
        let raw = RawIndex::new(input.as_bytes());
        let (frames, _) = apply(&mut doc, &Config::default(), &raw);
        let out = doc.render(None);
        (frames, String::from_utf8(out).expect("utf-8"))
    }

    /// Every language's frames are elided to the configured ends (6 + 12 of 60), the
    /// header and the exception kept: the first-byte filter that spares plain output
    /// the line-by-line reading lets every kind of frame line through.
    #[test]
    fn every_language_s_frames_are_elided() {
        let cases = [
            traceback(
                "Traceback (most recent call last):",
                |i| format!("  File \"/app/m.py\", line {i}, in f\n    f(x)\n"),
                "KeyError: 'k'",
            ),
            traceback(
                "Exception in thread \"main\" java.lang.StackOverflowError",
                |i| format!("\tat com.example.F.f(F.java:{i})\n"),
                "Caused by: java.lang.IllegalStateException",
            ),
            traceback(
                "RangeError: Maximum call stack size exceeded",
                |i| format!("    at f (/app/index.js:{i}:5)\n"),
                "Node.js v20.0.0",
            ),
            traceback(
                "stack backtrace:",
                |i| format!("  {i}: app::f\n             at ./src/main.rs:{i}:5\n"),
                "note: Some details are omitted",
            ),
            traceback(
                "goroutine 1 [running]:",
                |i| format!("main.f(0x{i:x})\n\t/app/main.go:{i} +0x1d\n"),
                "exit status 2",
            ),
        ];
        for input in &cases {
            let (frames, out) = elided(input);
            assert_eq!(frames, 60 - 6 - 12, "{input}");
            assert!(out.contains("traceback frames"), "{out}");
            let first = input.lines().nth(1).expect("header");
            let last = input.lines().rev().nth(1).expect("last");
            assert!(out.contains(first) && out.contains(last), "{out}");
        }
    }

    /// With no tail frames kept (`SNIP_TRACEBACK_TAIL=0`), the run is elided to its
    /// end and the exception line after it kept.
    #[test]
    fn no_tail_frames_elides_to_the_run_s_end() {
        let input = traceback(
            "Traceback (most recent call last):",
            |i| format!("  File \"/app/m.py\", line {i}, in f\n    f(x)\n"),
            "KeyError: 'k'",
        );
        let mut doc = Doc::from_raw(input.as_bytes());
        let raw = RawIndex::new(input.as_bytes());
        let config = Config {
            traceback_tail_frames: 0,
            ..Config::default()
        };
        let (frames, _) = apply(&mut doc, &config, &raw);
        assert_eq!(frames, 60 - 6);
        let out = String::from_utf8(doc.render(None)).expect("utf-8");
        assert!(out.contains("KeyError: 'k'\nlog line after"), "{out}");
        assert!(!out.contains("line 59,"), "{out}");
    }

    /// Rows a cursor redrew carry original line ranges out of order (the first
    /// elided row starting after the last one ends, as `terminal-render` leaves
    /// them): the marker's range covers them all and runs forwards.
    #[test]
    fn redrawn_rows_give_a_forward_range() {
        let input = traceback(
            "Traceback (most recent call last):",
            |i| format!("  File \"/app/m.py\", line {i}, in f\n    f(x)\n"),
            "KeyError: 'k'",
        );
        let mut doc = Doc::from_raw(input.as_bytes());
        let raw = RawIndex::new(input.as_bytes());
        // The eighth frame's row was redrawn from line 100 on; later rows keep theirs.
        let row = 2 + 2 * 6;
        doc.lines[row].src_first = 100;
        doc.lines[row].src_last = 100;
        let (frames, _) = apply(&mut doc, &Config::default(), &raw);
        assert!(frames > 0);
        let m = doc
            .markers
            .iter()
            .find(|m| m.rule == RuleId::TracebackKeep)
            .expect("a marker");
        let (a, b) = m.lines.expect("lines");
        assert!(a <= b, "inverted: lines {a}-{b}");
        assert_eq!((a, b), (16, 101));
    }

    /// Frame-like lines broken up by plain ones are no run: nothing is elided.
    #[test]
    fn interrupted_frames_are_left_alone() {
        let mut s = String::new();
        for i in 0..200 {
            s.push_str(&format!("    at f (/app/index.js:{i}:5)\nplain {i}\n"));
        }
        assert_eq!(elided(&s).0, 0);
    }
}
