//! Runs the rules in order. Placeholder until the engine lands.
use crate::{Config, Outcome, Retain};

/// Compresses `input`. Never panics; on any internal failure returns the input.
pub fn compress(input: &[u8], config: &Config, store: &mut dyn Retain) -> Outcome {
    let _ = (config, store);
    Outcome::unchanged(input)
}
