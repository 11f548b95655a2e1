//! snip-core: make AI agents' tool output small without losing what matters.
//!
//! The core is pure: it reads no files, environment, clock or processes. It takes the
//! bytes a tool returned (which may be invalid UTF-8), a frozen [`Config`], and a
//! [`Retain`] implementation that keeps originals (the store lives in another crate),
//! and returns an [`Outcome`]: the bytes the model should see plus a receipt.
//!
//! The pipeline is an ordered table of rules ([`rules::REGISTRY`]); see `docs/` for the
//! contract, the marker grammar and the restore protocol.
//!
//! ```
//! use snip_core::{compress, Config, NoStore, RuleId};
//!
//! // 400 identical lines over a 4 KiB budget, without a store.
//! let input = "GET /healthz 200\n".repeat(400);
//! let out = compress(input.as_bytes(), &Config::with_budget(4096), &mut NoStore);
//! assert!(out.changed && out.output.len() < input.len());
//! assert_eq!(out.rules[0].id, RuleId::RepeatCollapse);
//! let text = String::from_utf8(out.output).unwrap();
//! assert!(text.starts_with("GET /healthz 200\n[snip: previous line repeated 399 more times"));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
mod doc;
mod escape;
mod json;
pub mod marker;
mod pipeline;
mod rare_rows;
pub mod rule;
pub mod rules;
pub mod salience;
mod sparse;
pub mod stream;
pub mod text;
pub mod util;

pub use config::{Config, ConfigError};
pub use marker::{Marker, Recovery, RestoreCall};
pub use pipeline::compress;
pub use rule::{RuleId, Stage};

/// What happened to the original when [`Retain::retain`] was asked to keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retention {
    /// The original is stored under this id (`sn_` + lowercase hex).
    Retained {
        /// The store id, quoted verbatim in markers' restore calls.
        id: String,
    },
    /// The user turned the store off (`SNIP_STORE=0`): lossy markers say the original
    /// is not retained.
    Off,
    /// The store could not keep it (full, read-only, entry over the cap…): only the
    /// lossless rules apply.
    Failed {
        /// One line saying why, for the receipt.
        reason: String,
    },
}

/// Keeps originals so that what a marker says was removed can be restored.
///
/// [`compress`] calls [`Retain::retain`] at most once per call, with the whole input,
/// and only when the output will differ from the input.
pub trait Retain {
    /// Keeps `original` and says where (or why not).
    fn retain(&mut self, original: &[u8]) -> Retention;
}

/// A [`Retain`] for callers without a store: every original is "not retained".
#[derive(Debug, Default, Clone, Copy)]
pub struct NoStore;

impl Retain for NoStore {
    fn retain(&mut self, _original: &[u8]) -> Retention {
        Retention::Off
    }
}

/// What one rule did during a call: its stable id and named counts (e.g.
/// `frames_removed`, `lines_elided`, `bytes_elided`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleReport {
    /// The rule, e.g. [`RuleId::TerminalRender`] (printed `terminal-render`).
    pub id: RuleId,
    /// Named counts, in the order the rule reports them.
    pub counts: Vec<(&'static str, u64)>,
}

/// The result of [`compress`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The bytes the model should see. Equal to the input when `changed` is false.
    pub output: Vec<u8>,
    /// Whether `output` differs from the input.
    pub changed: bool,
    /// Size of the input in bytes.
    pub original_bytes: usize,
    /// The rules that changed something, in execution order.
    pub rules: Vec<RuleReport>,
    /// What the store did with the original, when it was asked (`None`: not asked).
    pub retention: Option<Retention>,
    /// Whether anything lossy (elision) happened. Lossy output always has a retained
    /// original, unless the store is [`Retention::Off`].
    pub lossy: bool,
    /// Set when the call failed open (an internal error or panic): the output is the
    /// input, and this says why.
    pub failed_open: Option<String>,
}

impl Outcome {
    /// An unchanged outcome for `input`.
    pub fn unchanged(input: &[u8]) -> Self {
        Outcome {
            output: input.to_vec(),
            changed: false,
            original_bytes: input.len(),
            rules: Vec::new(),
            retention: None,
            lossy: false,
            failed_open: None,
        }
    }

    /// Size of the output in bytes.
    pub fn output_bytes(&self) -> usize {
        self.output.len()
    }

    /// The retained id, if the original was stored.
    pub fn id(&self) -> Option<&str> {
        match &self.retention {
            Some(Retention::Retained { id }) => Some(id),
            _ => None,
        }
    }
}
