//! The frozen configuration of one compression call.
//!
//! [`Config`] is built once (from defaults, or from `SNIP_*` variables through
//! [`Config::from_lookup`]) and never changes during a call. The core reads no
//! environment itself: callers pass a lookup function, which keeps the library pure.

use std::fmt;

/// Settings of the pipeline. All sizes are in **bytes** of UTF-8 (or raw) text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `SNIP_ENABLED` (default `true`). When false, [`crate::compress`] returns its input.
    pub enabled: bool,
    /// `SNIP_MAX_BYTES` (default 24,576): the budget. Lossy elision applies only to
    /// outputs above it, and aims to bring them under it.
    pub max_bytes: usize,
    /// `SNIP_HEAD_BYTES` (default 40% of the budget): bytes of whole lines kept from
    /// the start when the middle is elided.
    pub head_bytes: usize,
    /// `SNIP_TAIL_BYTES` (default 40% of the budget): bytes of whole lines kept from
    /// the end when the middle is elided.
    pub tail_bytes: usize,
    /// `SNIP_SALIENT_BYTES` (default 15% of the budget): bytes the salient-line
    /// islands of an elided middle may use together.
    pub salient_bytes: usize,
    /// `SNIP_SALIENT_CONTEXT` (default 1): lines of context kept on each side of a
    /// salient line.
    pub salient_context: usize,
    /// `SNIP_TRACEBACK_HEAD` (default 6): traceback frames kept after the header (at
    /// least: room under the budget goes to more distinct frames).
    pub traceback_head_frames: usize,
    /// `SNIP_TRACEBACK_TAIL` (default 12): traceback frames kept before the exception
    /// (at least, as for the head).
    pub traceback_tail_frames: usize,
    /// `SNIP_REPEAT_MIN` (default 3): the shortest run of identical lines collapsed.
    pub repeat_min: usize,
    /// `SNIP_JSON_STRING_KEEP` (default 512): bytes kept at each end of an elided JSON
    /// string.
    pub json_string_keep: usize,
    /// `SNIP_JSON_ARRAY_KEEP` (default 3): items kept at each end of an elided JSON array.
    pub json_array_keep: usize,
    /// `SNIP_DIFF_MAX_BYTES` (default 4× the budget): a diff's own budget. Diffs up
    /// to it are returned byte-identical; over it they shorten by whole hunks only.
    pub diff_max_bytes: usize,
    /// `SNIP_RESTORE_TOOL` (default `snip_restore`): the restore tool's name as the
    /// host shows it to the model, quoted by every marker's restore call, e.g.
    /// `mcp__snip__snip_restore` in Claude Code. Budgets count the marker as rendered
    /// with this name. It is `snip_restore` or a prefix of ASCII letters, digits, `_`
    /// and `-` ending in `_` followed by `snip_restore` (see [`crate::marker`]).
    pub restore_tool: String,
}

/// Defaults, derived from [`DEFAULT_MAX_BYTES`].
impl Default for Config {
    fn default() -> Self {
        Self::with_budget(DEFAULT_MAX_BYTES)
    }
}

/// `num / den` of `bytes`, rounded down, for any `bytes` (no overflow at `usize::MAX`).
fn share(bytes: usize, num: u128, den: u128) -> usize {
    (bytes as u128 * num / den) as usize
}

/// The default budget in bytes: below Hermes Agent's 50,000-character terminal cap.
pub const DEFAULT_MAX_BYTES: usize = 24_576;
/// The smallest `SNIP_MAX_BYTES` accepted, bytes. Under ~380 a marker and the footer
/// alone overflow the budget and a second pass changes the output (measured on the
/// corpus and 150 generated redraw mixes: idempotent from 384 on); 1024 leaves room.
pub const MIN_MAX_BYTES: usize = 1024;

impl Config {
    /// Defaults for a given budget (`max_bytes`): head and tail 40% each, islands 15%.
    pub fn with_budget(max_bytes: usize) -> Self {
        Config {
            enabled: true,
            max_bytes,
            head_bytes: share(max_bytes, 2, 5),
            tail_bytes: share(max_bytes, 2, 5),
            salient_bytes: share(max_bytes, 3, 20),
            salient_context: 1,
            traceback_head_frames: 6,
            traceback_tail_frames: 12,
            repeat_min: 3,
            json_string_keep: 512,
            json_array_keep: 3,
            diff_max_bytes: max_bytes.saturating_mul(4),
            restore_tool: crate::marker::RESTORE_TOOL.to_string(),
        }
    }

    /// Builds a config from `SNIP_*` variables read through `lookup` (for example
    /// `|k| std::env::var(k).ok()`). Unset variables take their defaults; the head,
    /// tail and salient shares follow `SNIP_MAX_BYTES` unless set themselves.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first variable whose value does not parse.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let max = parse_usize(
            &lookup,
            "SNIP_MAX_BYTES",
            "a whole number of bytes, e.g. 24576",
        )?
        .unwrap_or(DEFAULT_MAX_BYTES);
        if max < MIN_MAX_BYTES {
            return Err(ConfigError::new(
                "SNIP_MAX_BYTES",
                &max.to_string(),
                "a budget of at least 1024 bytes (markers alone take about 200)",
            ));
        }
        let mut c = Config::with_budget(max);
        // Empty means unset, as for every other variable (`SNIP_ENABLED=` keeps snip on).
        if let Some(v) = lookup("SNIP_ENABLED").filter(|v| !v.trim().is_empty()) {
            c.enabled = parse_bool("SNIP_ENABLED", &v)?;
        }
        let set = |field: &mut usize, name: &str, expected: &str| -> Result<(), ConfigError> {
            if let Some(v) = parse_usize(&lookup, name, expected)? {
                *field = v;
            }
            Ok(())
        };
        const BYTES: &str = "a whole number of bytes";
        set(&mut c.head_bytes, "SNIP_HEAD_BYTES", BYTES)?;
        set(&mut c.tail_bytes, "SNIP_TAIL_BYTES", BYTES)?;
        set(&mut c.salient_bytes, "SNIP_SALIENT_BYTES", BYTES)?;
        set(
            &mut c.salient_context,
            "SNIP_SALIENT_CONTEXT",
            "a whole number of lines, e.g. 1",
        )?;
        set(
            &mut c.traceback_head_frames,
            "SNIP_TRACEBACK_HEAD",
            "a whole number of frames, e.g. 6",
        )?;
        set(
            &mut c.traceback_tail_frames,
            "SNIP_TRACEBACK_TAIL",
            "a whole number of frames, e.g. 12",
        )?;
        set(
            &mut c.repeat_min,
            "SNIP_REPEAT_MIN",
            "a whole number of lines, at least 2, e.g. 3",
        )?;
        set(
            &mut c.json_string_keep,
            "SNIP_JSON_STRING_KEEP",
            "a whole number of bytes, e.g. 512",
        )?;
        set(
            &mut c.json_array_keep,
            "SNIP_JSON_ARRAY_KEEP",
            "a whole number of items, e.g. 3",
        )?;
        set(
            &mut c.diff_max_bytes,
            "SNIP_DIFF_MAX_BYTES",
            "a whole number of bytes, e.g. 98304",
        )?;
        if let Some(v) = lookup("SNIP_RESTORE_TOOL").filter(|v| !v.trim().is_empty()) {
            let name = v.trim();
            if !crate::marker::is_restore_tool_name(name) {
                return Err(ConfigError::new(
                    "SNIP_RESTORE_TOOL",
                    &v,
                    "snip_restore, or a prefix of letters, digits, _ and - ending in _ before it, e.g. mcp__snip__snip_restore",
                ));
            }
            c.restore_tool = name.to_string();
        }
        if c.diff_max_bytes < MIN_MAX_BYTES {
            // Under it every diff would shorten to its markers alone.
            return Err(ConfigError::new(
                "SNIP_DIFF_MAX_BYTES",
                &c.diff_max_bytes.to_string(),
                "a diff budget of at least 1024 bytes (a diff's markers alone take about 250 each)",
            ));
        }
        if c.repeat_min < 2 {
            return Err(ConfigError::new(
                "SNIP_REPEAT_MIN",
                &c.repeat_min.to_string(),
                "a whole number of at least 2",
            ));
        }
        if c.head_bytes
            .checked_add(c.tail_bytes)
            .is_none_or(|sum| sum > c.max_bytes)
        {
            // Blame the variable the user set: the tail when only it was set.
            let given = |name: &str| lookup(name).is_some_and(|v| !v.trim().is_empty());
            let (name, value) = if given("SNIP_TAIL_BYTES") && !given("SNIP_HEAD_BYTES") {
                ("SNIP_TAIL_BYTES", c.tail_bytes)
            } else {
                ("SNIP_HEAD_BYTES", c.head_bytes)
            };
            return Err(ConfigError::new(
                name,
                &value.to_string(),
                "SNIP_HEAD_BYTES + SNIP_TAIL_BYTES at most SNIP_MAX_BYTES",
            ));
        }
        Ok(c)
    }

    /// The resolved settings as `(variable, value)` pairs, in a fixed order, for
    /// `snip config`.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "SNIP_ENABLED",
                (if self.enabled { "1" } else { "0" }).to_string(),
            ),
            ("SNIP_MAX_BYTES", self.max_bytes.to_string()),
            ("SNIP_HEAD_BYTES", self.head_bytes.to_string()),
            ("SNIP_TAIL_BYTES", self.tail_bytes.to_string()),
            ("SNIP_SALIENT_BYTES", self.salient_bytes.to_string()),
            ("SNIP_SALIENT_CONTEXT", self.salient_context.to_string()),
            (
                "SNIP_TRACEBACK_HEAD",
                self.traceback_head_frames.to_string(),
            ),
            (
                "SNIP_TRACEBACK_TAIL",
                self.traceback_tail_frames.to_string(),
            ),
            ("SNIP_REPEAT_MIN", self.repeat_min.to_string()),
            ("SNIP_JSON_STRING_KEEP", self.json_string_keep.to_string()),
            ("SNIP_JSON_ARRAY_KEEP", self.json_array_keep.to_string()),
            ("SNIP_DIFF_MAX_BYTES", self.diff_max_bytes.to_string()),
            ("SNIP_RESTORE_TOOL", self.restore_tool.clone()),
        ]
    }
}

/// A variable whose value does not parse. Its `Display` is one line naming the
/// variable, the value and what is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The variable, e.g. `SNIP_MAX_BYTES`.
    pub variable: String,
    /// The value found.
    pub value: String,
    /// What the variable takes.
    pub expected: String,
}

impl ConfigError {
    /// A new error for `variable` holding `value`, which should be `expected`.
    pub fn new(variable: &str, value: &str, expected: &str) -> Self {
        ConfigError {
            variable: variable.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={:?} is not valid: expected {} (unset it to use the default)",
            self.variable, self.value, self.expected
        )
    }
}

impl std::error::Error for ConfigError {}

/// Parses a `usize` variable; `None` when unset or empty. `expected` says what the
/// value counts, for the error (e.g. `"a whole number of lines, e.g. 1"`).
pub fn parse_usize(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &str,
    expected: &str,
) -> Result<Option<usize>, ConfigError> {
    match lookup(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v
            .trim()
            .replace('_', "")
            .parse::<usize>()
            .map(Some)
            .map_err(|e| match e.kind() {
                // All digits, too many of them: say that, not "a whole number".
                std::num::IntErrorKind::PosOverflow => ConfigError::new(
                    name,
                    &v,
                    &format!("{expected}, at most {} (it is larger)", usize::MAX),
                ),
                _ => ConfigError::new(name, &v, expected),
            }),
    }
}

/// Parses a boolean variable: `1/true/yes/on` or `0/false/no/off` (any case).
pub fn parse_bool(name: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(ConfigError::new(
            name,
            v,
            "1 or 0 (true/false, yes/no, on/off)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(name: &str, value: &str) -> String {
        let (name, value) = (name.to_string(), value.to_string());
        Config::from_lookup(|k| (k == name).then(|| value.clone()))
            .expect_err("a bad value is refused")
            .to_string()
    }

    /// A number too large to hold is refused as too large, not as "not a number".
    #[test]
    fn a_number_too_large_is_called_too_large() {
        let e = error("SNIP_MAX_BYTES", "99999999999999999999999");
        assert!(e.contains("at most") && e.contains("it is larger"), "{e}");
        let e = error("SNIP_MAX_BYTES", "lots");
        assert!(!e.contains("it is larger"), "{e}");
    }

    /// Head and tail over the budget: the error names the variable that was set.
    #[test]
    fn head_and_tail_over_the_budget_blame_the_variable_set() {
        let e = error("SNIP_TAIL_BYTES", "1000000");
        assert!(e.starts_with("SNIP_TAIL_BYTES=\"1000000\""), "{e}");
        let e = error("SNIP_HEAD_BYTES", "1000000");
        assert!(e.starts_with("SNIP_HEAD_BYTES=\"1000000\""), "{e}");
        let both = Config::from_lookup(|k| {
            matches!(k, "SNIP_HEAD_BYTES" | "SNIP_TAIL_BYTES").then(|| "20000".to_string())
        })
        .expect_err("40,000 bytes of head and tail exceed the default budget")
        .to_string();
        assert!(both.starts_with("SNIP_HEAD_BYTES="), "{both}");
    }

    /// Each variable's error names it and the unit it counts.
    #[test]
    fn errors_name_the_variable_and_its_unit() {
        for (name, unit) in [
            ("SNIP_MAX_BYTES", "bytes"),
            ("SNIP_HEAD_BYTES", "bytes"),
            ("SNIP_SALIENT_CONTEXT", "lines"),
            ("SNIP_TRACEBACK_HEAD", "frames"),
            ("SNIP_TRACEBACK_TAIL", "frames"),
            ("SNIP_REPEAT_MIN", "lines"),
            ("SNIP_JSON_ARRAY_KEEP", "items"),
        ] {
            let e = error(name, "lots");
            assert!(e.contains(name) && e.contains(unit), "{name}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        assert!(Config::from_lookup(|_| None).is_ok());
        // A budget markers alone would overflow is refused; the smallest accepted works.
        let e = error("SNIP_MAX_BYTES", "512");
        assert!(
            e.contains("SNIP_MAX_BYTES") && e.contains("at least 1024"),
            "{e}"
        );
        let min = MIN_MAX_BYTES.to_string();
        let c = Config::from_lookup(|k| (k == "SNIP_MAX_BYTES").then(|| min.clone())).unwrap();
        assert_eq!(c.max_bytes, MIN_MAX_BYTES);
        // So is a diff budget under it (every diff would be its markers alone).
        for v in ["0", "1", "1023"] {
            let e = error("SNIP_DIFF_MAX_BYTES", v);
            assert!(
                e.contains("SNIP_DIFF_MAX_BYTES") && e.contains("at least 1024"),
                "{e}"
            );
        }
        let c = Config::from_lookup(|k| (k == "SNIP_DIFF_MAX_BYTES").then(|| min.clone())).unwrap();
        assert_eq!(c.diff_max_bytes, MIN_MAX_BYTES);
    }

    #[test]
    fn empty_means_unset() {
        let c = Config::from_lookup(|k| (k == "SNIP_ENABLED").then(String::new)).unwrap();
        assert!(c.enabled, "SNIP_ENABLED= keeps snip on");
        let off = Config::from_lookup(|k| (k == "SNIP_ENABLED").then(|| "0".into())).unwrap();
        assert!(!off.enabled);
    }
}
