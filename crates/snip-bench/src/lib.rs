//! snip-bench: the proof table behind `snip bench`.
//!
//! It measures what snip saves and what it keeps, on three sets of inputs:
//! - [`shapes`]: eight generated tool-output shapes, each with one planted clue, sized
//!   like the published reference table for this kind of tool;
//! - [`captures`]: the real captures of `fixtures/corpus/`, embedded in the binary, with
//!   the clue their manifest names;
//! - the newer real captures of `fixtures/corpus-new/` (made by
//!   `scripts/capture-corpus.sh`), reported in their own section so that the first
//!   set's figures stay comparable.
//!
//! For each input [`report::bench_input`] records one `compress` call through a store,
//! times more calls, counts o200k_base tokens before and after ([`tokens`]; only here,
//! never on the hot path), and checks the clue ([`clue`]: visible, or else recovered by
//! one restore call), diffs (byte-identical) and JSON (still valid). [`render`] prints
//! the table as text, Markdown or JSON. [`workloads`] builds the larger inputs of the
//! criterion benches.
//!
//! What it does not own: the rules (snip-core) and the store (snip-store).
//!
//! ```
//! // o200k_base token counts, as the table reports them.
//! assert_eq!(snip_bench::tokens::count(b""), 0);
//! assert!(snip_bench::tokens::count(b"hello world") >= 2);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod captures;
pub mod clue;
pub mod diffcheck;
pub mod render;
pub mod report;
mod rng;
pub mod shapes;
pub mod store;
pub mod tokens;
pub mod workloads;

pub use report::{BenchStore, Options, Report, Row, Section, Totals};

use serde::Serialize;

/// How an output is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Terminal text: judged on savings and the clue.
    Text,
    /// One JSON document: the output must still parse.
    Json,
    /// A unified diff: the output must be byte-identical.
    Diff,
}

/// Builds the whole report with a fresh store in a temporary directory (removed
/// afterwards), keyed with [`Options::store_key`] when set: what `snip bench` prints.
///
/// # Errors
/// A message when the temporary store cannot be opened, or the embedded capture list
/// is inconsistent.
pub fn run(opts: &Options) -> Result<Report, String> {
    let mut store = match opts.store_key {
        Some(key) => store::TempStore::with_key(key)?,
        None => store::TempStore::new()?,
    };
    report::build(opts, &mut store)
}
