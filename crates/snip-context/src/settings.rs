//! The frozen settings of one conversation pass.
//!
//! [`ContextSettings`] is built once per call (from defaults, or from `SNIP_CONTEXT_*`
//! variables through [`ContextSettings::from_lookup`]). The library reads no environment
//! itself: callers pass a lookup function.

use snip_core::config::{parse_bool, parse_usize, ConfigError};

/// Default of [`ContextSettings::keep_last`].
pub const DEFAULT_KEEP_LAST: usize = 20;
/// Default of [`ContextSettings::min_messages`].
pub const DEFAULT_MIN_MESSAGES: usize = 16;
/// Default of [`ContextSettings::min_chars`].
pub const DEFAULT_MIN_CHARS: usize = 300;
/// Default of [`ContextSettings::batch`]: ten results leave the protected window
/// together, so the compressed prefix changes at most once every ten tool results.
/// Measured with `snip bench context` (see `docs/context.md`): on the 100-turn session
/// the estimated cost falls steeply from 1 to 10 and is nearly flat beyond, while the
/// tokens sent keep rising with larger batches.
pub const DEFAULT_BATCH: usize = 10;

/// Settings of the conversation pass. Counts are numbers of messages or tool results;
/// sizes are Unicode scalar values (`char`s) of a tool result's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSettings {
    /// `SNIP_CONTEXT_ENABLED` (default `true`). When false the request passes through.
    pub enabled: bool,
    /// `SNIP_CONTEXT_KEEP_LAST` (default 20): the newest tool results always kept whole.
    pub keep_last: usize,
    /// `SNIP_CONTEXT_MIN_MESSAGES` (default 16): shorter conversations (entries of the
    /// `messages` array) pass through.
    pub min_messages: usize,
    /// `SNIP_CONTEXT_MIN_CHARS` (default 300): smaller tool results are kept whole.
    pub min_chars: usize,
    /// `SNIP_CONTEXT_BATCH` (default 10, at least 1): the number of tool results that
    /// have left the protected window is floored to a multiple of this, so results
    /// leave it `batch` at a time.
    pub batch: usize,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            enabled: true,
            keep_last: DEFAULT_KEEP_LAST,
            min_messages: DEFAULT_MIN_MESSAGES,
            min_chars: DEFAULT_MIN_CHARS,
            batch: DEFAULT_BATCH,
        }
    }
}

impl ContextSettings {
    /// Builds settings from `SNIP_CONTEXT_*` variables read through `lookup` (for
    /// example `|k| std::env::var(k).ok()`). Unset or empty variables take their
    /// defaults.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first variable whose value does not parse, or
    /// `SNIP_CONTEXT_BATCH=0`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut s = ContextSettings::default();
        if let Some(v) = lookup("SNIP_CONTEXT_ENABLED") {
            s.enabled = v.trim().is_empty() || parse_bool("SNIP_CONTEXT_ENABLED", &v)?;
        }
        let set = |field: &mut usize, name: &str, expected: &str| -> Result<(), ConfigError> {
            if let Some(v) = parse_usize(&lookup, name, expected)? {
                *field = v;
            }
            Ok(())
        };
        set(
            &mut s.keep_last,
            "SNIP_CONTEXT_KEEP_LAST",
            "a whole number of tool results, e.g. 20",
        )?;
        set(
            &mut s.min_messages,
            "SNIP_CONTEXT_MIN_MESSAGES",
            "a whole number of messages, e.g. 16",
        )?;
        set(
            &mut s.min_chars,
            "SNIP_CONTEXT_MIN_CHARS",
            "a whole number of characters, e.g. 300",
        )?;
        set(
            &mut s.batch,
            "SNIP_CONTEXT_BATCH",
            "a whole number of tool results, at least 1, e.g. 10",
        )?;
        if s.batch == 0 {
            return Err(ConfigError::new(
                "SNIP_CONTEXT_BATCH",
                "0",
                "a whole number of at least 1",
            ));
        }
        Ok(s)
    }

    /// The settings as `(variable, value)` pairs, in a fixed order, for `snip config`.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "SNIP_CONTEXT_ENABLED",
                (if self.enabled { "1" } else { "0" }).to_string(),
            ),
            ("SNIP_CONTEXT_KEEP_LAST", self.keep_last.to_string()),
            ("SNIP_CONTEXT_MIN_MESSAGES", self.min_messages.to_string()),
            ("SNIP_CONTEXT_MIN_CHARS", self.min_chars.to_string()),
            ("SNIP_CONTEXT_BATCH", self.batch.to_string()),
        ]
    }

    /// How many of `total` tool results (oldest first) have left the protected window:
    /// `total - keep_last`, floored to a multiple of `batch` (0 when `total <=
    /// keep_last`). Only these may be summarised.
    pub fn leaving(&self, total: usize) -> usize {
        let out = total.saturating_sub(self.keep_last);
        let batch = self.batch.max(1);
        out / batch * batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_when_unset() {
        let s = ContextSettings::from_lookup(|_| None).unwrap();
        assert_eq!(s, ContextSettings::default());
        assert_eq!((s.keep_last, s.min_messages, s.min_chars), (20, 16, 300));
    }

    #[test]
    fn reads_every_variable() {
        let s = ContextSettings::from_lookup(lookup(&[
            ("SNIP_CONTEXT_ENABLED", "off"),
            ("SNIP_CONTEXT_KEEP_LAST", "4"),
            ("SNIP_CONTEXT_MIN_MESSAGES", "2"),
            ("SNIP_CONTEXT_MIN_CHARS", "1_000"),
            ("SNIP_CONTEXT_BATCH", "3"),
        ]))
        .unwrap();
        assert!(!s.enabled);
        assert_eq!(
            (s.keep_last, s.min_messages, s.min_chars, s.batch),
            (4, 2, 1000, 3)
        );
        let names: Vec<_> = s.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names.len(), 5);
    }

    #[test]
    fn rejects_bad_values() {
        let e = ContextSettings::from_lookup(lookup(&[("SNIP_CONTEXT_BATCH", "0")])).unwrap_err();
        assert_eq!(e.variable, "SNIP_CONTEXT_BATCH");
        let e =
            ContextSettings::from_lookup(lookup(&[("SNIP_CONTEXT_KEEP_LAST", "x")])).unwrap_err();
        assert_eq!(e.variable, "SNIP_CONTEXT_KEEP_LAST");
        assert!(
            ContextSettings::from_lookup(lookup(&[("SNIP_CONTEXT_ENABLED", "maybe")])).is_err()
        );
    }

    #[test]
    fn leaving_floors_to_the_batch() {
        let s = ContextSettings {
            keep_last: 20,
            batch: 10,
            ..ContextSettings::default()
        };
        assert_eq!(s.leaving(0), 0);
        assert_eq!(s.leaving(20), 0);
        assert_eq!(s.leaving(29), 0);
        assert_eq!(s.leaving(30), 10);
        assert_eq!(s.leaving(39), 10);
        assert_eq!(s.leaving(40), 20);
        let one = ContextSettings {
            batch: 1,
            ..s.clone()
        };
        assert_eq!(one.leaving(21), 1);
        assert_eq!(one.leaving(22), 2);
    }
}
