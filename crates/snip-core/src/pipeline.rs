//! Runs the rules in the order of [`crate::rules::REGISTRY`].
//!
//! Order: `diff-protect` and `json-fields` gate first (a diff is returned untouched; a
//! JSON document goes through its own rule); then on text `terminal-render`,
//! `ansi-strip`, `repeat-collapse` (lossless, any size), then — only above the budget
//! and with a retained original or the store off — `traceback-keep` and
//! `head-tail-elide`. The original is offered to the store once: before the lossy rules
//! when the input is over the budget (their markers need its id, and a failed store
//! means lossless only), else after the lossless rules when they changed something.

use crate::doc::{Doc, RawIndex};
use crate::marker::{Marker, RestoreCall};
use crate::rules::{
    ansi_strip, diff_protect, head_tail_elide, json_fields, repeat_collapse, terminal_render,
    traceback_keep,
};
use crate::sparse;
use crate::{Config, Outcome, Retain, Retention, RuleReport};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Compresses `input` (bytes a tool returned; any encoding) under `config`, asking
/// `store` to keep the original when the output will differ from it.
///
/// Never panics and never returns something larger than the input: on an internal
/// error the outcome is the input unchanged with [`Outcome::failed_open`] set, and an
/// output that is not smaller is replaced by the input (net win or nothing).
pub fn compress(input: &[u8], config: &Config, store: &mut dyn Retain) -> Outcome {
    if !config.enabled || input.is_empty() {
        return Outcome::unchanged(input);
    }
    // Markers quote the host's name for the restore tool, and are sized with it.
    let run = || {
        crate::marker::with_restore_tool(&config.restore_tool, || run(input, config, store, true))
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(o) => o,
        Err(p) => {
            let msg = crate::util::panic_message(p.as_ref(), "internal error");
            let mut o = Outcome::unchanged(input);
            o.failed_open = Some(format!("snip failed open: {msg}"));
            o
        }
    }
}

fn retained_id(r: &Option<Retention>) -> Option<&str> {
    match r {
        Some(Retention::Retained { id }) => Some(id),
        _ => None,
    }
}

/// The pipeline on the full input, never reduced: the oracle for [`crate::sparse`].
#[cfg(test)]
pub(crate) fn compress_unreduced(input: &[u8], config: &Config) -> Outcome {
    run(input, config, &mut crate::NoStore, false)
}

fn run(input: &[u8], config: &Config, store: &mut dyn Retain, may_reduce: bool) -> Outcome {
    if diff_protect::is_diff(input) {
        // Under its own budget a diff is returned as it is; over it, it shortens by
        // whole hunks only (every kept byte unchanged), or not at all.
        if input.len() > config.diff_max_bytes {
            let retention = store.retain(input);
            if let Retention::Retained { id } = &retention {
                if let Some(s) = diff_protect::hunks::shorten(input, config.diff_max_bytes, id) {
                    return Outcome {
                        changed: true,
                        original_bytes: input.len(),
                        rules: vec![diff_protect::report_shortened(&s)],
                        output: s.output,
                        retention: Some(retention),
                        lossy: true,
                        failed_open: None,
                    };
                }
            }
            let mut o = Outcome::unchanged(input);
            o.rules.push(diff_protect::report(input.len()));
            o.retention = Some(retention);
            return o;
        }
        let mut o = Outcome::unchanged(input);
        o.rules.push(diff_protect::report(input.len()));
        return o;
    }
    let over = input.len() > config.max_bytes;
    let mut retention: Option<Retention> = None;
    if over {
        retention = Some(store.retain(input));
    }
    let lossy_allowed = over && !matches!(retention, Some(Retention::Failed { .. }));

    // JSON: its own rule; valid JSON never goes through the line rules (they would
    // break it), except JSON Lines still over the budget after per-line elision, whose
    // whole lines the text rules may then elide (line numbers are unchanged by it).
    let mut json_lines: Option<(Vec<u8>, RuleReport)> = None;
    if json_fields::looks_like_json(input) {
        match json_fields::apply(
            input,
            config,
            retained_id(&retention),
            lossy_allowed,
            &lossless_text,
        ) {
            Some(j) if j.output.len() < input.len() => {
                let lossy = j.strings_elided + j.items_elided > 0;
                let report = json_fields::report(&j);
                // Only JSON Lines may be cut between lines: one document (with any
                // whitespace, blank lines included, around it) stays whole.
                if lossy_allowed && j.output.len() > config.max_bytes && j.json_lines {
                    json_lines = Some((j.output, report));
                } else {
                    if retention.is_none() {
                        retention = Some(store.retain(input));
                    }
                    return Outcome {
                        changed: true,
                        original_bytes: input.len(),
                        output: j.output,
                        rules: vec![report],
                        retention,
                        lossy,
                        failed_open: None,
                    };
                }
            }
            _ if json_fields::is_json(input) => {
                if lossy_allowed
                    && input.len() > config.max_bytes
                    && json_fields::is_json_lines(input)
                {
                    let o = json_lines_elided(input, input.to_vec(), None, config, retention);
                    if o.output.len() < input.len() {
                        return o;
                    }
                    return Outcome {
                        retention: o.retention,
                        ..Outcome::unchanged(input)
                    };
                }
                let mut o = Outcome::unchanged(input);
                o.retention = retention;
                return o;
            }
            _ => {}
        }
    }
    if let Some((text, report)) = json_lines {
        return json_lines_elided(input, text, Some(report), config, retention);
    }

    // Far over the budget: only the pieces the output can show go through the rules.
    let reduced = if may_reduce && lossy_allowed && input.len() >= sparse::min_bytes(config) {
        sparse::reduce(input, config)
    } else {
        None
    };
    let (l, mut raw) = match reduced {
        Some(r) => (r.text, Some(r.raw)),
        None => (lossless(input, 0, config), None),
    };
    let sparse = raw.is_some();
    let mut rules = l.reports();
    let line_starts = l.line_starts;
    let mut doc = l.doc;
    doc.footer.extend(Marker::lossless_footer(
        l.frames,
        l.backspaces,
        l.escapes,
        Some(RestoreCall::Bytes {
            start: 0,
            end: input.len() as u64,
        }),
    ));
    let mut lossy = false;
    // The document's rendered size (placeholder ids), kept up to date as rules change
    // it; not needed when nothing can change.
    let mut size = if lossy_allowed || !rules.is_empty() {
        doc.size()
    } else {
        0
    };
    if lossy_allowed && (sparse || size > config.max_bytes) {
        let raw = raw.get_or_insert_with(|| match line_starts {
            Some(s) => RawIndex::from_starts(s, input.len()),
            None => RawIndex::new(input),
        });
        let (tf, tl) = traceback_keep::apply(&mut doc, config, raw);
        if let Some(report) = traceback_keep::report(tf, tl) {
            lossy = true;
            rules.push(report);
            size = doc.size();
        }
        if size > config.max_bytes {
            if let Some(s) = elide_within_budget(&mut doc, config, raw, l.raw_offsets, true) {
                size = s;
            }
        }
        if let Some(report) = head_tail_elide::report(&doc) {
            lossy = true;
            rules.push(report);
        }
    }
    if rules.is_empty() {
        let mut o = Outcome::unchanged(input);
        o.retention = retention;
        return o;
    }
    if retention.is_none() {
        // Net win first (sized with a placeholder id as long as a real one), so an
        // output that will be thrown away costs no store entry.
        if size >= input.len() {
            // A short run of `\r` frames (`Rebasing (1/3)\rRebasing (2/3)\r…`) whose
            // footer outweighs what rendering saved: rendered without a footer (what a
            // terminal shows; docs/contract.md, guarantee 3), so glued frames never
            // reach the model. Only when nothing was elided.
            if !lossy && l.frames > 0 {
                doc.footer.clear();
                if doc.size() < input.len() {
                    return Outcome {
                        changed: true,
                        original_bytes: input.len(),
                        output: doc.render(None),
                        rules,
                        retention: None,
                        lossy: false,
                        failed_open: None,
                    };
                }
            }
            return Outcome::unchanged(input);
        }
        retention = Some(store.retain(input));
    }
    let output = doc.render(retained_id(&retention));
    if output.len() >= input.len() {
        let mut o = Outcome::unchanged(input);
        o.retention = retention;
        return o;
    }
    Outcome {
        changed: true,
        original_bytes: input.len(),
        output,
        rules,
        retention,
        lossy,
        failed_open: None,
    }
}

/// The bytes writing `doc`'s marker lines as JSON strings adds: two quotes, and a
/// backslash before each `"` and `\` (markers hold no control characters).
fn json_quoting_bytes(doc: &Doc<'_>) -> usize {
    doc.lines
        .iter()
        .filter_map(|l| l.marker)
        .map(|i| {
            let m = doc.markers[i as usize].render(Some(crate::doc::SIZING_ID));
            2 + m.bytes().filter(|&b| b == b'"' || b == b'\\').count()
        })
        .sum()
}

/// JSON Lines over the budget after `json-fields`: `head-tail-elide` on its whole lines
/// (each kept line stays a valid document; markers use original line numbers).
fn json_lines_elided(
    input: &[u8],
    text: Vec<u8>,
    report: Option<RuleReport>,
    config: &Config,
    retention: Option<Retention>,
) -> Outcome {
    let raw = RawIndex::new(input);
    let mut rules: Vec<RuleReport> = report.into_iter().collect();
    // Whole lines only: a line cut to fit would not be a JSON document. Each marker line
    // is written as a JSON string, so every line stays a JSON value; when its quotes
    // and escapes push the output over the budget, the budget is lowered by them once.
    let mut cfg = config.clone();
    let doc = loop {
        let mut doc = Doc::from_raw(&text);
        let size = elide_within_budget(&mut doc, &cfg, &raw, false, false);
        let quoting = json_quoting_bytes(&doc);
        let fits = size.is_none_or(|n| n + quoting <= config.max_bytes);
        if fits || cfg.max_bytes < config.max_bytes {
            break doc;
        }
        cfg.max_bytes = config.max_bytes.saturating_sub(quoting);
    };
    rules.extend(head_tail_elide::report(&doc));
    let output = doc.render_markers_as(retained_id(&retention), true);
    Outcome {
        changed: true,
        original_bytes: input.len(),
        output,
        rules,
        retention,
        lossy: true,
        failed_open: None,
    }
}

/// Runs `head-tail-elide`, shrinking head and tail when markers and the footer push
/// the result over the budget (so that a second pass finds nothing to elide).
/// Returns the document's new size ([`Doc::size`]), or `None` when nothing was elided.
fn elide_within_budget(
    doc: &mut Doc<'_>,
    config: &Config,
    raw: &RawIndex,
    raw_offsets: bool,
    cut_lines: bool,
) -> Option<usize> {
    let mut cfg = config.clone();
    for attempt in 0..8 {
        if attempt == 7 {
            // Markers alone fill a tiny budget: keep only them.
            cfg.head_bytes = 0;
            cfg.tail_bytes = 0;
            cfg.salient_bytes = 0;
        }
        // The rule changes lines and markers, never the buffer: trials share it, and
        // read the same lines (each trial's result is a new, shorter list).
        let mut trial = Doc {
            buf: std::borrow::Cow::Borrowed(&doc.buf),
            lines: Vec::new(),
            markers: doc.markers.clone(),
            footer: doc.footer.clone(),
        };
        if !head_tail_elide::apply_from(&mut trial, &doc.lines, &cfg, raw, raw_offsets, cut_lines) {
            continue;
        }
        let size = trial.size();
        if size <= config.max_bytes || attempt == 7 {
            doc.lines = trial.lines;
            doc.markers = trial.markers;
            return Some(size);
        }
        let over = size - config.max_bytes + 16;
        cfg.head_bytes = cfg.head_bytes.saturating_sub(over / 2 + 1);
        cfg.tail_bytes = cfg.tail_bytes.saturating_sub(over / 2 + 1);
        cfg.salient_bytes = cfg.salient_bytes.saturating_sub(over);
    }
    None
}

/// What the lossless text rules (`terminal-render`, `ansi-strip`, `repeat-collapse`)
/// made of a text.
pub(crate) struct Lossless<'a> {
    pub doc: Doc<'a>,
    /// Line contents still sit at their original byte offsets (nothing rendered or
    /// stripped), so elision markers can quote byte ranges directly.
    pub raw_offsets: bool,
    pub frames: u64,
    pub backspaces: u64,
    pub escapes: u64,
    pub runs: u64,
    pub repeated: u64,
    /// Every line start of the input, when the renderer collected them on its way
    /// (see [`RawIndex::from_starts`]); `None` otherwise.
    pub line_starts: Option<Vec<usize>>,
}

impl Lossless<'_> {
    /// Whether any lossless rule changed the text (what the receipt rows and the
    /// footer report).
    fn changed(&self) -> bool {
        self.frames > 0 || self.backspaces > 0 || self.escapes > 0 || self.runs > 0
    }

    /// The receipt rows of the rules that changed something, each built by its rule.
    fn reports(&self) -> Vec<RuleReport> {
        terminal_render::report(self.frames, self.backspaces)
            .into_iter()
            .chain(ansi_strip::report(self.escapes))
            .chain(repeat_collapse::report(self.runs, self.repeated))
            .collect()
    }
}

/// The lossless text rules on `input`, a piece of an original whose first line is
/// original line `first_line` (0-based).
pub(crate) fn lossless<'a>(input: &'a [u8], first_line: u32, config: &Config) -> Lossless<'a> {
    // What needs rendering is found once: frame controls (`\r`, backspace) or escapes.
    let controls = terminal_render::Controls::scan(input);
    let (escapes_seen, frame_controls) = (controls.escape, controls.frames());
    // Escapes without frame controls: strip them in one pass unless one of them moves
    // the cursor (then the terminal emulator renders, as below).
    if escapes_seen && !frame_controls {
        if let Some((text, escapes)) = ansi_strip::strip_unless_cursor(input) {
            let lines = Doc::from_raw_at(&text, first_line).lines;
            let mut doc = Doc {
                buf: std::borrow::Cow::Owned(text),
                lines,
                markers: Vec::new(),
                footer: Vec::new(),
            };
            let (runs, repeated) = repeat_collapse::apply(&mut doc, config);
            return Lossless {
                doc,
                raw_offsets: escapes == 0,
                frames: 0,
                backspaces: 0,
                escapes,
                runs,
                repeated,
                line_starts: None,
            };
        }
    }
    // Here the input holds a frame control or a cursor escape, or neither escapes nor
    // frame controls (nothing to render).
    // Line starts are collected for an input that may need lossy markers.
    let starts = first_line == 0 && input.len() > config.max_bytes;
    let rendered = if escapes_seen || frame_controls {
        terminal_render::render_applicable(input, first_line, controls, starts)
    } else {
        None
    };
    let (mut doc, raw_offsets, frames, backspaces, mut escapes, line_starts) = match rendered {
        Some(r) => (
            r.doc,
            false,
            r.frames_removed,
            r.backspaces_removed,
            r.escapes_removed,
            r.line_starts,
        ),
        None => {
            let doc = Doc::from_raw_at(input, first_line);
            // Nothing rendered: the lines start where the input's lines do (a last
            // start at the input's end, after a final `\n`, is implied).
            let starts = starts.then(|| RawIndex::starts_of(&doc.lines));
            (doc, true, 0, 0, 0, starts)
        }
    };
    let stripped = if escapes_seen {
        ansi_strip::apply(&mut doc)
    } else {
        0
    };
    escapes += stripped;
    let (runs, repeated) = repeat_collapse::apply(&mut doc, config);
    Lossless {
        doc,
        raw_offsets: raw_offsets && stripped == 0,
        frames,
        backspaces,
        escapes,
        runs,
        repeated,
        line_starts,
    }
}

/// The lossless text rules (terminal-render, ansi-strip, repeat-collapse) on one
/// text, e.g. a long JSON string field. `None` when nothing changes. Markers say
/// `lossless` (they carry no store id).
pub(crate) fn lossless_text(input: &[u8], config: &Config) -> Option<Vec<u8>> {
    let mut l = lossless(input, 0, config);
    if !l.changed() {
        return None;
    }
    l.doc
        .footer
        .extend(Marker::lossless_footer(l.frames, l.backspaces, 0, None));
    let out = l.doc.render(None);
    (out.len() < input.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text inside a JSON string goes through the same lossless rules, and a change
    /// made by backspaces alone counts (it was dropped when only frames, escapes and
    /// repeats were looked at).
    #[test]
    fn lossless_text_keeps_a_backspace_rendering() {
        let input = ("x".repeat(100) + &"\u{8}".repeat(100)).repeat(20);
        let out = lossless_text(input.as_bytes(), &Config::default()).expect("rendered");
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with(&format!(
                "{}\n[snip: removed 2000 backspaces",
                "x".repeat(100)
            )),
            "{out}"
        );
    }
}
