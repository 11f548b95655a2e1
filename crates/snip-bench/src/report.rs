//! Builds the proof table: one [`Row`] per input, [`Totals`] per section, and the
//! issue's [`Target`]s checked against them.

use crate::clue::{self, CallArgs};
use crate::{tokens, Kind};
use serde::Serialize;
use snip_core::{Config, Retain, Retention};
use std::time::{Duration, Instant};

/// What one restore call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Size in bytes of the whole response as the store sends it (its JSON text).
    pub response_bytes: u64,
    /// The recovered content (the slice, or the search matches), decoded.
    pub text: String,
}

/// The store behind a bench run: keeps originals and answers restore calls.
pub trait BenchStore {
    /// Keeps `original` (what [`snip_core::Retain::retain`] does).
    fn retain(&mut self, original: &[u8]) -> Retention;
    /// Executes one restore call.
    ///
    /// # Errors
    /// A message when the call cannot be executed at all (a response with a non-`ok`
    /// status is still `Ok`, with its text).
    fn restore(&mut self, call: &CallArgs) -> Result<Restored, String>;
}

struct StoreRetain<'a>(&'a mut dyn BenchStore);

impl Retain for StoreRetain<'_> {
    fn retain(&mut self, original: &[u8]) -> Retention {
        self.0.retain(original)
    }
}

/// Answers every retain with the retention the store gave on the recorded call, so timed
/// calls produce the same bytes without writing to disk.
struct Replay(Retention);

impl Retain for Replay {
    fn retain(&mut self, _original: &[u8]) -> Retention {
        self.0.clone()
    }
}

/// One input to bench: a generated shape or a bundled capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Shape name or capture file name.
    pub name: String,
    /// How the output is judged.
    pub kind: Kind,
    /// The tool output.
    pub bytes: Vec<u8>,
    /// The exact substring that must stay visible or be recoverable.
    pub clue: String,
    /// The command's exit status, for captures that record one.
    pub exit_code: Option<i32>,
}

/// How a clue that is not visible was got back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveredBy {
    /// A marker's own quoted restore call, executed verbatim.
    MarkerCall,
    /// One `search` call for the clue on a marker's id.
    Search,
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Shape name or capture file name.
    pub name: String,
    /// `text`, `json` or `diff`.
    pub kind: Kind,
    /// Input size in bytes.
    pub bytes_before: u64,
    /// Output size in bytes.
    pub bytes_after: u64,
    /// o200k_base tokens of the input.
    pub tokens_before: u64,
    /// o200k_base tokens of the output.
    pub tokens_after: u64,
    /// Tokens saved, percent of `tokens_before` (0–100; negative if the output grew).
    pub tokens_saved_pct: f64,
    /// The clue looked for.
    pub clue: String,
    /// The clue is in the output (after ANSI stripping).
    pub clue_visible: bool,
    /// The clue is visible, or came back from one restore call.
    pub clue_recoverable: bool,
    /// Which kind of restore call returned the clue (`None`: none did, or none ran).
    pub recovered_by: Option<RecoveredBy>,
    /// The restore call that returned the clue.
    pub restore_call: Option<String>,
    /// That call's response size in bytes.
    pub restore_response_bytes: Option<u64>,
    /// Number of markers quoting a restore call in the output.
    pub markers: u64,
    /// For diffs: the output is byte-identical to the input.
    pub diff_identical: Option<bool>,
    /// For diffs over their budget whose output differs from the input: it is the
    /// input shortened by whole hunks, every kept line byte-identical
    /// ([`crate::diffcheck::shortened_by_hunks`]); `None` for every other row.
    pub diff_by_hunks: Option<bool>,
    /// For JSON inputs: the output still parses as JSON.
    pub json_valid: Option<bool>,
    /// The recorded command's exit status (captures only; snip never changes it).
    pub exit_code: Option<i32>,
    /// The ids of the rules that changed something, in execution order.
    pub rules: Vec<String>,
    /// Something lossy happened (an elision).
    pub lossy: bool,
    /// The original was retained in the store.
    pub retained: bool,
    /// The output is at most the budget plus one marker ([`ONE_MARKER_BYTES`]).
    pub within_bound: bool,
    /// Set when the call failed open, with the reason.
    pub failed_open: Option<String>,
    /// Every timed call returned the same bytes as the recorded one.
    pub deterministic: bool,
    /// Median wall time of one in-process `compress` call, in microseconds (the store
    /// write is not included: timed calls replay the recorded retention).
    pub median_us: f64,
}

/// Sums over a section's rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// Number of rows.
    pub rows: u64,
    /// Sum of input sizes, bytes.
    pub bytes_before: u64,
    /// Sum of output sizes, bytes.
    pub bytes_after: u64,
    /// Sum of input tokens.
    pub tokens_before: u64,
    /// Sum of output tokens.
    pub tokens_after: u64,
    /// Tokens saved over the section, percent of `tokens_before` (0–100).
    pub tokens_saved_pct: f64,
    /// Rows whose clue is visible.
    pub clues_visible: u64,
    /// Rows whose clue is visible or came back from one restore call.
    pub clues_recoverable: u64,
    /// Rows whose clue came back from a marker's own call (not visible).
    pub clues_recovered_by_marker_call: u64,
    /// Rows whose clue came back only from a search call (not visible).
    pub clues_recovered_by_search: u64,
    /// Diff rows.
    pub diffs: u64,
    /// Diff rows whose output differs from the input other than as allowed: under
    /// their budget any difference, over it anything but whole hunks kept verbatim.
    pub diffs_changed: u64,
    /// Diff rows over their budget shortened by whole hunks, every kept line verbatim.
    pub diffs_by_hunks: u64,
    /// JSON rows.
    pub json_inputs: u64,
    /// JSON rows whose output no longer parses.
    pub json_invalid: u64,
    /// Rows whose output is over the budget plus one marker.
    pub over_bound: u64,
    /// Rows that failed open.
    pub failed_open: u64,
    /// Rows whose timed calls were not all byte-identical.
    pub nondeterministic: u64,
    /// Sum of the rows' median call times, microseconds.
    pub median_us_sum: f64,
}

impl Totals {
    /// Sums `rows`; the percentage is computed from the summed token counts.
    pub fn of(rows: &[Row]) -> Self {
        let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count() as u64;
        let tokens_before = rows.iter().map(|r| r.tokens_before).sum();
        let tokens_after = rows.iter().map(|r| r.tokens_after).sum();
        Totals {
            rows: rows.len() as u64,
            bytes_before: rows.iter().map(|r| r.bytes_before).sum(),
            bytes_after: rows.iter().map(|r| r.bytes_after).sum(),
            tokens_before,
            tokens_after,
            tokens_saved_pct: round2(tokens::saved_pct(tokens_before, tokens_after)),
            clues_visible: count(&|r| r.clue_visible),
            clues_recoverable: count(&|r| r.clue_recoverable),
            clues_recovered_by_marker_call: count(&|r| {
                !r.clue_visible && r.recovered_by == Some(RecoveredBy::MarkerCall)
            }),
            clues_recovered_by_search: count(&|r| {
                !r.clue_visible && r.recovered_by == Some(RecoveredBy::Search)
            }),
            diffs: count(&|r| r.kind == Kind::Diff),
            diffs_changed: count(&|r| {
                r.diff_identical == Some(false) && r.diff_by_hunks != Some(true)
            }),
            diffs_by_hunks: count(&|r| r.diff_by_hunks == Some(true)),
            json_inputs: count(&|r| r.kind == Kind::Json),
            json_invalid: count(&|r| r.json_valid == Some(false)),
            over_bound: count(&|r| !r.within_bound),
            failed_open: count(&|r| r.failed_open.is_some()),
            nondeterministic: count(&|r| !r.deterministic),
            median_us_sum: round1(rows.iter().map(|r| r.median_us).sum()),
        }
    }
}

/// One goal from the issue, checked against the totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// What is aimed at, e.g. `tokens saved >= 65%`.
    pub goal: String,
    /// What was measured, e.g. `71.3%`.
    pub measured: String,
    /// Whether the goal is met.
    pub met: bool,
}

/// The rows of one section, their totals and the targets checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// One row per input, in table order.
    pub rows: Vec<Row>,
    /// Sums over `rows`.
    pub totals: Totals,
    /// The goals for this section.
    pub targets: Vec<Target>,
}

/// The whole report: `{"shapes": {...}, "captures": {...}, "new_captures": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The eight generated shapes.
    pub shapes: Section,
    /// The 26 bundled real captures the rules were tuned on (`fixtures/corpus/`).
    pub captures: Section,
    /// The newer real captures (`fixtures/corpus-new/`), reported apart.
    pub new_captures: Section,
}

/// The room one marker may take above the budget, in bytes: an output is within its
/// bound when it is at most `max_bytes + ONE_MARKER_BYTES` long.
pub const ONE_MARKER_BYTES: usize = 512;

/// Settings of a bench run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The core configuration every call uses.
    pub config: Config,
    /// Timed calls per input (the median is reported). 0: no call is timed (one
    /// untimed call still checks determinism) and every `median_us` is 0, so that a
    /// report can be byte-identical from run to run.
    pub iterations: usize,
    /// The key of the temporary store [`crate::run`] opens (32 bytes); `None`: a
    /// random one, as every store makes. With a fixed key every id, every restore call
    /// quoting one and the token counts of the outputs holding them are the same on
    /// every run.
    pub store_key: Option<[u8; crate::store::KEY_LEN]>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            config: Config::default(),
            iterations: 5,
            store_key: None,
        }
    }
}

/// Benches one input: one recorded call through `store`, `iterations` timed calls, token
/// counts and the clue, diff and JSON checks.
pub fn bench_input(input: &Input, opts: &Options, store: &mut dyn BenchStore) -> Row {
    let outcome = snip_core::compress(&input.bytes, &opts.config, &mut StoreRetain(store));
    let replay = outcome.retention.clone().unwrap_or(Retention::Off);
    let mut times = Vec::with_capacity(opts.iterations.max(1));
    let mut deterministic = true;
    for _ in 0..opts.iterations.max(1) {
        let mut r = Replay(replay.clone());
        let t = Instant::now();
        let again = snip_core::compress(&input.bytes, &opts.config, &mut r);
        times.push(t.elapsed());
        deterministic &= again.output == outcome.output;
    }
    if opts.iterations == 0 {
        times = vec![Duration::ZERO];
    }
    let out = &outcome.output;
    let tokens_before = tokens::count(&input.bytes);
    let tokens_after = if outcome.changed {
        tokens::count(out)
    } else {
        tokens_before
    };
    let clue_visible = clue::visible(out, &input.clue);
    let markers = clue::markers(out);
    let recovered = recover(&markers, &input.clue, store);
    Row {
        name: input.name.clone(),
        kind: input.kind,
        bytes_before: input.bytes.len() as u64,
        bytes_after: out.len() as u64,
        tokens_before,
        tokens_after,
        tokens_saved_pct: round2(tokens::saved_pct(tokens_before, tokens_after)),
        clue: input.clue.clone(),
        clue_visible,
        clue_recoverable: clue_visible || recovered.is_some(),
        recovered_by: recovered.as_ref().map(|r| r.0),
        restore_call: recovered.as_ref().map(|r| r.1.clone()),
        restore_response_bytes: recovered.as_ref().map(|r| r.2),
        markers: markers.len() as u64,
        diff_identical: (input.kind == Kind::Diff).then(|| *out == input.bytes),
        diff_by_hunks: (input.kind == Kind::Diff
            && *out != input.bytes
            && input.bytes.len() > opts.config.diff_max_bytes)
            .then(|| crate::diffcheck::shortened_by_hunks(&input.bytes, out)),
        json_valid: (input.kind == Kind::Json)
            .then(|| serde_json::from_slice::<serde::de::IgnoredAny>(out).is_ok()),
        exit_code: input.exit_code,
        rules: outcome.rules.iter().map(|r| r.id.to_string()).collect(),
        lossy: outcome.lossy,
        retained: outcome.id().is_some(),
        // A diff has its own, larger budget (`SNIP_DIFF_MAX_BYTES`).
        within_bound: out.len()
            <= if input.kind == Kind::Diff {
                opts.config.diff_max_bytes
            } else {
                opts.config.max_bytes
            } + ONE_MARKER_BYTES,
        failed_open: outcome.failed_open.clone(),
        deterministic,
        median_us: round1(median(&mut times).as_secs_f64() * 1e6),
    }
}

/// How a clue came back: the kind of call, the call as quoted, its response size in
/// bytes.
pub type Recovery = (RecoveredBy, String, u64);

/// The first marker call (in order of appearance) whose response contains `clue`; else
/// the first `search` call for `clue` on a marker's id that finds it; else `None`.
pub fn recover(
    markers: &[snip_core::marker::ParsedMarker],
    clue: &str,
    store: &mut dyn BenchStore,
) -> Option<Recovery> {
    let calls: Vec<CallArgs> = markers
        .iter()
        .filter_map(|m| clue::parse_call(m.call.as_deref()?).ok())
        .collect();
    for call in &calls {
        if let Ok(r) = store.restore(call) {
            if r.text.contains(clue) {
                return Some((RecoveredBy::MarkerCall, call.render(), r.response_bytes));
            }
        }
    }
    let mut ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let search = CallArgs {
            id: id.to_string(),
            mode: "search".into(),
            query: Some(clue.to_string()),
            ..CallArgs::default()
        };
        if let Ok(r) = store.restore(&search) {
            if r.text.contains(clue) {
                return Some((RecoveredBy::Search, search.render(), r.response_bytes));
            }
        }
    }
    None
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    match times.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => times[n / 2],
        n => (times[n / 2 - 1] + times[n / 2]) / 2,
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The generated shapes as inputs, in table order.
pub fn shape_inputs() -> Vec<Input> {
    crate::shapes::all()
        .into_iter()
        .map(|s| Input {
            name: s.name.to_string(),
            kind: s.kind,
            bytes: s.input,
            clue: s.clue.to_string(),
            exit_code: None,
        })
        .collect()
}

/// The old set's bundled captures as inputs, in manifest order.
///
/// # Errors
/// When the embedded manifest and files disagree (see [`crate::captures::all`]).
pub fn capture_inputs() -> Result<Vec<Input>, String> {
    set_inputs(crate::captures::Set::Old)
}

/// One set's bundled captures as inputs, in manifest order.
///
/// # Errors
/// When the embedded manifest and files disagree (see [`crate::captures::of`]).
pub fn set_inputs(set: crate::captures::Set) -> Result<Vec<Input>, String> {
    Ok(crate::captures::of(set)?
        .into_iter()
        .map(|c| Input {
            name: c.file.file.to_string(),
            kind: c.file.kind,
            bytes: c.file.bytes.to_vec(),
            clue: c.manifest.clue,
            exit_code: Some(c.manifest.exit_code),
        })
        .collect())
}

/// Benches every input of a section and checks the section's targets.
pub fn section(
    inputs: &[Input],
    opts: &Options,
    store: &mut dyn BenchStore,
    targets: fn(&Totals) -> Vec<Target>,
) -> Section {
    let rows: Vec<Row> = inputs.iter().map(|i| bench_input(i, opts, store)).collect();
    let totals = Totals::of(&rows);
    Section {
        targets: targets(&totals),
        rows,
        totals,
    }
}

/// The whole report: the eight shapes, then the old and the new bundled captures.
///
/// # Errors
/// When the embedded capture list is inconsistent (see [`capture_inputs`]).
pub fn build(opts: &Options, store: &mut dyn BenchStore) -> Result<Report, String> {
    Ok(Report {
        shapes: section(&shape_inputs(), opts, store, shape_targets),
        captures: section(&capture_inputs()?, opts, store, capture_targets),
        new_captures: section(
            &set_inputs(crate::captures::Set::New)?,
            opts,
            store,
            new_capture_targets,
        ),
    })
}

fn target(goal: &str, measured: String, met: bool) -> Target {
    Target {
        goal: goal.to_string(),
        measured,
        met,
    }
}

fn common_targets(t: &Totals) -> Vec<Target> {
    vec![
        target(
            "every clue visible or recoverable",
            format!("{}/{}", t.clues_recoverable, t.rows),
            t.clues_recoverable == t.rows,
        ),
        target(
            "0 diffs changed (over its budget a diff may shorten by whole hunks)",
            t.diffs_changed.to_string(),
            t.diffs_changed == 0,
        ),
        target(
            "JSON valid everywhere",
            format!("{} invalid", t.json_invalid),
            t.json_invalid == 0,
        ),
    ]
}

/// The goals for the shapes: >= 65% of tokens saved, 8/8 recoverable, >= 6/8
/// visible, no diff changed, JSON valid.
pub fn shape_targets(t: &Totals) -> Vec<Target> {
    let mut v = vec![
        target(
            "tokens saved >= 65%",
            format!("{:.1}%", t.tokens_saved_pct),
            t.tokens_saved_pct >= 65.0,
        ),
        target(
            "clues visible >= 6/8",
            format!("{}/{}", t.clues_visible, t.rows),
            t.clues_visible >= 6,
        ),
    ];
    v.extend(common_targets(t));
    v
}

/// The goals for the real captures: >= 80% of tokens saved, every clue visible
/// or recoverable, no diff changed, JSON valid.
pub fn capture_targets(t: &Totals) -> Vec<Target> {
    let mut v = vec![target(
        "tokens saved >= 80%",
        format!("{:.1}%", t.tokens_saved_pct),
        t.tokens_saved_pct >= 80.0,
    )];
    v.extend(common_targets(t));
    v
}

/// The goals for the new captures: >= 85% of tokens saved over the set, every
/// clue visible or recoverable, clues visible in >= 95% of them, no output over the
/// budget plus one marker, no diff changed, JSON valid. Several are not met today: the
/// manifest's `known_failures` column says which capture fails which check.
pub fn new_capture_targets(t: &Totals) -> Vec<Target> {
    let visible_pct = if t.rows == 0 {
        100.0
    } else {
        100.0 * t.clues_visible as f64 / t.rows as f64
    };
    let mut v = vec![
        target(
            "tokens saved >= 85%",
            format!("{:.1}%", t.tokens_saved_pct),
            t.tokens_saved_pct >= 85.0,
        ),
        target(
            "clues visible >= 95%",
            format!("{}/{} ({visible_pct:.1}%)", t.clues_visible, t.rows),
            visible_pct >= 95.0,
        ),
        target(
            "0 outputs over budget + one marker",
            t.over_bound.to_string(),
            t.over_bound == 0,
        ),
    ];
    v.extend(common_targets(t));
    v
}
