//! Runs the rules in order. Placeholder until the engine lands.
use crate::{Config, Outcome, Retain};

/// Compresses `input`. Never panics; on any internal failure returns the input.
pub fn compress(input: &[u8], config: &Config, store: &mut dyn Retain) -> Outcome {
    let _ = (config, store);
    Outcome::unchanged(input)
}

/// The lossless text rules (terminal-render, ansi-strip, repeat-collapse) on one
/// text, e.g. a long JSON string field. `None` when nothing changes.
pub(crate) fn lossless_text(input: &[u8], config: &Config) -> Option<Vec<u8>> {
    let _ = (input, config);
    None
}
