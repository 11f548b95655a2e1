//! Runs the rules in the order of [`crate::rules::REGISTRY`].
//!
//! Order: `diff-protect` and `json-fields` gate first (a diff is returned untouched; a
//! JSON document goes through its own rule); then on text `terminal-render`,
//! `ansi-strip`, `repeat-collapse` (lossless, any size), then — only above the budget
//! and with a retained original or the store off — `traceback-keep`, `shape-fold` and
//! `head-tail-elide`. The original is offered to the store once: before the lossy rules
//! when the input is over the budget (their markers need its id, and a failed store
//! means lossless only), else after the lossless rules when they changed something.

use crate::doc::{Doc, RawIndex};
use crate::marker::{Marker, RestoreCall};
use crate::rule::{Elide, Engine, GateRun, Gated, Pass, Stage, Streamed, Text, TextCounts};
use crate::rules::{self, head_tail_elide};
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
    // The gates, in table order: the first that claims the input decides the call.
    let mut g = GateRun {
        input,
        config,
        store: &mut *store,
        retention: None,
    };
    for rule in rules::in_stage(Stage::Gate) {
        let Pass::Gate(gate) = rule.pass else {
            continue;
        };
        match gate(&mut g) {
            Gated::Continue => {}
            Gated::Done(o) => return o,
            Gated::ElideLines {
                text,
                report,
                or_unchanged,
            } => {
                let o = json_lines_elided(input, text, report, config, g.retention.take());
                if or_unchanged && o.output.len() >= input.len() {
                    return Outcome {
                        retention: o.retention,
                        ..Outcome::unchanged(input)
                    };
                }
                return o;
            }
        }
    }
    // Over the budget the original is offered to the store before the lossy rules
    // (their markers need its id; a failed store means lossless only).
    g.retain_if_over();
    let lossy_allowed = g.lossy_allowed();
    let mut retention = g.retention.take();

    // Far over the budget: only the pieces the output can show go through the rules.
    let reduced = if may_reduce && lossy_allowed && input.len() >= sparse::min_bytes(config) {
        sparse::reduce(input, config)
    } else {
        None
    };
    let (l, mut raw) = match reduced {
        Some(r) => (r.text, Some(r.raw)),
        None => (
            lossless(input, 0, config, crate::rule::lossless_rules_ran(input)),
            None,
        ),
    };
    let sparse = raw.is_some();
    let mut rules = l.reports();
    let line_starts = l.line_starts;
    let mut doc = l.doc;
    doc.footer.extend(Marker::lossless_footer(
        l.counts.frames,
        l.counts.backspaces,
        l.counts.escapes,
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
            Some(s) => RawIndex::from_starts(input, s),
            None => RawIndex::new(input),
        });
        let mut e = Elide {
            doc: &mut doc,
            config,
            raw,
            raw_offsets: l.raw_offsets,
            size,
        };
        for rule in rules::in_stage(Stage::Lossy) {
            if let Pass::Lossy(pass) = rule.pass {
                if let Some(report) = pass(&mut e) {
                    lossy = true;
                    rules.push(report);
                }
            }
        }
        size = e.size;
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
            // reach the model. Only when rendering is the whole change: nothing
            // elided, no other marker (a `repeat-collapse` run) in the text.
            if !lossy && l.counts.frames > 0 && doc.lines.iter().all(|l| l.marker.is_none()) {
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
        let size = head_tail_elide::within_budget(&mut doc, &cfg, &raw, false, false);
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

/// What the lossless text rules (`terminal-render`, `ansi-strip`, `repeat-collapse`)
/// made of a text.
pub(crate) struct Lossless<'a> {
    pub doc: Doc<'a>,
    /// Line contents still sit at their original byte offsets (nothing rendered or
    /// stripped), so elision markers can quote byte ranges directly.
    pub raw_offsets: bool,
    /// What the rules counted.
    pub counts: TextCounts,
    /// Every line start of the input, when the renderer collected them on its way
    /// (see [`RawIndex::from_starts`]); `None` otherwise.
    pub line_starts: Option<Vec<usize>>,
    /// The input's line feeds, as the rules read them ([`Text::newlines`]).
    pub newlines: Option<u32>,
}

impl Lossless<'_> {
    /// The receipt rows of the rules that changed something, each built by its rule,
    /// in table order.
    fn reports(&self) -> Vec<RuleReport> {
        rules::in_stage(Stage::Lossless)
            .filter_map(|r| match r.pass {
                Pass::Lossless { report, .. } => report(&self.counts),
                _ => None,
            })
            .collect()
    }
}

/// The lossless text rules on `input`, a piece of an original whose first line is
/// original line `first_line` (0-based); `lossless_ran`: the whole original is a
/// rendering snip made ([`crate::rule::lossless_rules_ran`]).
pub(crate) fn lossless<'a>(
    input: &'a [u8],
    first_line: u32,
    config: &Config,
    lossless_ran: bool,
) -> Lossless<'a> {
    // Line starts are collected for an input that may need lossy markers.
    let want_starts = first_line == 0 && input.len() > config.max_bytes;
    lossless_in(
        Engine::Memory,
        input,
        first_line,
        config,
        want_starts,
        lossless_ran,
        None,
    )
}

/// The lossless rules that run in `engine` on `input`, in table order: all of them in
/// memory; on the stream, those it runs per window ([`Streamed::PerWindow`]), with
/// escapes stripped line by line.
pub(crate) fn lossless_in<'a>(
    engine: Engine,
    input: &'a [u8],
    first_line: u32,
    config: &Config,
    want_starts: bool,
    lossless_ran: bool,
    scratch: Option<crate::doc::Scratch>,
) -> Lossless<'a> {
    let mut t = Text::new(input, first_line, want_starts, lossless_ran);
    t.scratch = scratch;
    t.strip_whole = engine == Engine::Memory;
    for rule in rules::in_stage(Stage::Lossless) {
        if let Pass::Lossless { apply, .. } = rule.pass {
            if engine == Engine::Memory || matches!(rule.stream, Streamed::PerWindow) {
                apply(&mut t, config);
            }
        }
    }
    t.doc();
    Lossless {
        doc: t.doc.take().expect("read above"),
        raw_offsets: t.raw_offsets,
        counts: t.counts,
        line_starts: t.line_starts,
        newlines: t.newlines,
    }
}

/// The lossless text rules (terminal-render, ansi-strip, repeat-collapse) on one
/// text, e.g. a long JSON string field. `None` when nothing changes. Markers say
/// `lossless` (they carry no store id). The footer counts every frame, backspace and
/// ANSI escape removed, as the text path's does: it is what says why the kept text
/// differs from the original's bytes (escapes alone were once left uncounted, and a
/// coloured string came out stripped with no marker at all).
pub(crate) fn lossless_text(input: &[u8], config: &Config) -> Option<Vec<u8>> {
    let mut l = lossless(input, 0, config, crate::rule::lossless_rules_ran(input));
    if !l.counts.changed() {
        return None;
    }
    let c = &l.counts;
    let footer = Marker::lossless_footer(c.frames, c.backspaces, c.escapes, None);
    l.doc.footer.extend(footer);
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
