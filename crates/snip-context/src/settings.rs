//! The frozen settings of one conversation pass.
//!
//! [`ContextSettings`] is built once per call (from defaults, or from `SNIP_CONTEXT_*`
//! variables through [`ContextSettings::from_lookup`]). The library reads no environment
//! itself: callers pass a lookup function.

use snip_core::config::{parse_bool, parse_usize, ConfigError};

/// Default of [`ContextSettings::keep_last`].
pub const DEFAULT_KEEP_LAST: usize = 6;
/// Default of [`ContextSettings::min_messages`].
pub const DEFAULT_MIN_MESSAGES: usize = 16;
/// Default of [`ContextSettings::min_chars`].
pub const DEFAULT_MIN_CHARS: usize = 300;
/// Default of [`ContextSettings::cache_write_pct`]: Anthropic's price of a 5-minute
/// cache write, 125% of the input price (the dearest common write price, so the rule
/// errs towards releasing less).
pub const DEFAULT_CACHE_WRITE_PCT: usize = 125;
/// Default of [`ContextSettings::cache_read_pct`]: Anthropic's cache read, 10% of the
/// input price.
pub const DEFAULT_CACHE_READ_PCT: usize = 10;

/// Settings of the conversation pass. Counts are numbers of messages, tool results or
/// API calls; sizes are Unicode scalar values (`char`s) of a tool result's text; prices
/// are percentages of the provider's price of one uncached input token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextSettings {
    /// `SNIP_CONTEXT_ENABLED` (default `true`). When false the request passes through.
    pub enabled: bool,
    /// `SNIP_CONTEXT_KEEP_LAST` (default 6): the newest tool results always kept whole.
    pub keep_last: usize,
    /// `SNIP_CONTEXT_MIN_MESSAGES` (default 16): shorter conversations (entries of the
    /// `messages` array) pass through.
    pub min_messages: usize,
    /// `SNIP_CONTEXT_MIN_CHARS` (default 300): smaller tool results are kept whole.
    pub min_chars: usize,
    /// `SNIP_CONTEXT_BATCH` (default unset = the cache-aware rule): when set to `n` (at
    /// least 1), the older rule instead: the number of tool results that have left the
    /// protected window is floored to a multiple of `n`, whatever it costs.
    pub batch: Option<usize>,
    /// `SNIP_CONTEXT_CACHE_WRITE_PCT` (default 125): the price of a token written to the
    /// provider's prompt cache, in percent of an uncached input token (Anthropic 125
    /// for 5-minute entries; OpenAI 100, it has no write premium).
    pub cache_write_pct: usize,
    /// `SNIP_CONTEXT_CACHE_READ_PCT` (default 10): the price of a token read from the
    /// cache, in percent of an uncached input token (Anthropic 10; OpenAI 10 to 50 by
    /// model).
    pub cache_read_pct: usize,
    /// `SNIP_CONTEXT_EXPECTED_CALLS` (default unset = learned): the API calls expected
    /// after a release. Unset, the pass assumes the session runs on for as many calls
    /// as it has made so far (its assistant messages).
    pub expected_calls: Option<usize>,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            enabled: true,
            keep_last: DEFAULT_KEEP_LAST,
            min_messages: DEFAULT_MIN_MESSAGES,
            min_chars: DEFAULT_MIN_CHARS,
            batch: None,
            cache_write_pct: DEFAULT_CACHE_WRITE_PCT,
            cache_read_pct: DEFAULT_CACHE_READ_PCT,
            expected_calls: None,
        }
    }
}

/// Reads an optional whole number where `auto` (or empty) means unset.
fn parse_auto(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    expected: &str,
) -> Result<Option<Option<usize>>, ConfigError> {
    match lookup(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() || v.trim().eq_ignore_ascii_case("auto") => Ok(Some(None)),
        Some(_) => Ok(parse_usize(lookup, name, expected)?.map(Some)),
    }
}

impl ContextSettings {
    /// Builds settings from `SNIP_CONTEXT_*` variables read through `lookup` (for
    /// example `|k| std::env::var(k).ok()`). Unset or empty variables take their
    /// defaults; `SNIP_CONTEXT_BATCH` and `SNIP_CONTEXT_EXPECTED_CALLS` also take
    /// `auto` (their default).
    ///
    /// # Errors
    /// [`ConfigError`] naming the first variable whose value does not parse,
    /// `SNIP_CONTEXT_BATCH=0`, `SNIP_CONTEXT_CACHE_READ_PCT=0`, or a read price above
    /// the write price.
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
            "a whole number of tool results, e.g. 6",
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
            &mut s.cache_write_pct,
            "SNIP_CONTEXT_CACHE_WRITE_PCT",
            "a whole percentage of the input price, e.g. 125",
        )?;
        set(
            &mut s.cache_read_pct,
            "SNIP_CONTEXT_CACHE_READ_PCT",
            "a whole percentage of the input price, at least 1, e.g. 10",
        )?;
        if let Some(b) = parse_auto(
            &lookup,
            "SNIP_CONTEXT_BATCH",
            "auto, or a whole number of tool results, at least 1, e.g. 10",
        )? {
            s.batch = b;
        }
        if let Some(e) = parse_auto(
            &lookup,
            "SNIP_CONTEXT_EXPECTED_CALLS",
            "auto, or a whole number of API calls, e.g. 50",
        )? {
            s.expected_calls = e;
        }
        if s.batch == Some(0) {
            return Err(ConfigError::new(
                "SNIP_CONTEXT_BATCH",
                "0",
                "auto, or a whole number of at least 1",
            ));
        }
        if s.cache_read_pct == 0 {
            return Err(ConfigError::new(
                "SNIP_CONTEXT_CACHE_READ_PCT",
                "0",
                "a whole percentage of at least 1",
            ));
        }
        if s.cache_read_pct > s.cache_write_pct {
            return Err(ConfigError::new(
                "SNIP_CONTEXT_CACHE_READ_PCT",
                &s.cache_read_pct.to_string(),
                "a percentage no higher than SNIP_CONTEXT_CACHE_WRITE_PCT",
            ));
        }
        Ok(s)
    }

    /// The settings as `(variable, value)` pairs, in a fixed order, for `snip config`.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let auto = |v: Option<usize>| v.map_or_else(|| "auto".to_string(), |n| n.to_string());
        vec![
            (
                "SNIP_CONTEXT_ENABLED",
                (if self.enabled { "1" } else { "0" }).to_string(),
            ),
            ("SNIP_CONTEXT_KEEP_LAST", self.keep_last.to_string()),
            ("SNIP_CONTEXT_MIN_MESSAGES", self.min_messages.to_string()),
            ("SNIP_CONTEXT_MIN_CHARS", self.min_chars.to_string()),
            ("SNIP_CONTEXT_BATCH", auto(self.batch)),
            (
                "SNIP_CONTEXT_CACHE_WRITE_PCT",
                self.cache_write_pct.to_string(),
            ),
            (
                "SNIP_CONTEXT_CACHE_READ_PCT",
                self.cache_read_pct.to_string(),
            ),
            ("SNIP_CONTEXT_EXPECTED_CALLS", auto(self.expected_calls)),
        ]
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
        assert_eq!((s.keep_last, s.min_messages, s.min_chars), (6, 16, 300));
        assert_eq!((s.batch, s.expected_calls), (None, None));
        assert_eq!((s.cache_write_pct, s.cache_read_pct), (125, 10));
    }

    #[test]
    fn reads_every_variable() {
        let s = ContextSettings::from_lookup(lookup(&[
            ("SNIP_CONTEXT_ENABLED", "off"),
            ("SNIP_CONTEXT_KEEP_LAST", "4"),
            ("SNIP_CONTEXT_MIN_MESSAGES", "2"),
            ("SNIP_CONTEXT_MIN_CHARS", "1_000"),
            ("SNIP_CONTEXT_BATCH", "3"),
            ("SNIP_CONTEXT_CACHE_WRITE_PCT", "100"),
            ("SNIP_CONTEXT_CACHE_READ_PCT", "50"),
            ("SNIP_CONTEXT_EXPECTED_CALLS", "40"),
        ]))
        .unwrap();
        assert!(!s.enabled);
        assert_eq!(
            (s.keep_last, s.min_messages, s.min_chars, s.batch),
            (4, 2, 1000, Some(3))
        );
        assert_eq!(
            (s.cache_write_pct, s.cache_read_pct, s.expected_calls),
            (100, 50, Some(40))
        );
        let names: Vec<_> = s.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names.len(), 8);
        let auto = ContextSettings::from_lookup(lookup(&[
            ("SNIP_CONTEXT_BATCH", "auto"),
            ("SNIP_CONTEXT_EXPECTED_CALLS", " AUTO "),
        ]))
        .unwrap();
        assert_eq!(auto, ContextSettings::default());
    }

    #[test]
    fn rejects_bad_values() {
        for (k, v) in [
            ("SNIP_CONTEXT_BATCH", "0"),
            ("SNIP_CONTEXT_KEEP_LAST", "x"),
            ("SNIP_CONTEXT_ENABLED", "maybe"),
            ("SNIP_CONTEXT_CACHE_READ_PCT", "0"),
            ("SNIP_CONTEXT_CACHE_READ_PCT", "200"),
            ("SNIP_CONTEXT_EXPECTED_CALLS", "many"),
        ] {
            let e = ContextSettings::from_lookup(lookup(&[(k, v)])).unwrap_err();
            assert_eq!(e.variable, k, "{k}={v}");
        }
    }
}
