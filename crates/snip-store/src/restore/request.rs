//! The restore request: its fields and modes, the constructors callers use, and
//! the two ways one arrives (a marker's quoted call, or JSON).

use super::response::RestoreResponse;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use snip_core::marker::CallValue;

/// How to slice the original.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RestoreMode {
    /// Bytes `[start, end)`, 0-based, half-open (the default).
    #[default]
    Bytes,
    /// Lines `start..=end`, 1-based, inclusive; each line with its line ending.
    Lines,
    /// Literal (case-sensitive) search for `query` within lines `start..=end`.
    Search,
    /// The whole scope, only when it fits the response cap.
    Full,
}

/// How a `bytes` page's ends are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Ends move off the inside of a token (a run of non-blank bytes) of at most 1024
    /// bytes, so a page never splits one; the page may then hold up to 1024 bytes
    /// more on each side than `max_bytes`.
    Token,
}

/// A restore call, as a model or tool sends it: the arguments of the `snip_restore`
/// tool (MCP server, Python bindings, Hermes plugin). Unknown fields are rejected.
/// Its JSON Schema is [`crate::restore::schema`], committed as
/// `docs/schema/snip_restore.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "snip_restore",
    description = "Arguments of snip_restore: copy them from the restore call a [snip: …] marker quotes."
)]
pub struct RestoreRequest {
    /// The store id quoted in the marker (`sn_` + 24 lowercase hex).
    pub id: String,
    /// The mode; default `bytes`.
    #[serde(default)]
    pub mode: RestoreMode,
    /// `bytes`: first byte, 0-based (default 0). `lines`/`search`: first line,
    /// 1-based (default 1). Ignored by `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// `bytes`: end byte, exclusive (default: the end). `lines`/`search`: last line,
    /// inclusive (default: the last line). Values past the end are clamped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    /// `search` only: the literal text to find (1 to 1024 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// A JSON pointer (RFC 6901) to scope the request to one value of a JSON
    /// original: for a string, its decoded UTF-8 bytes; for any other value, its
    /// exact text in the original. For a JSON Lines original, the first token is the
    /// 0-based line index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Response cap in bytes of content (default `SNIP_RECOVERY_MAX_BYTES`, 8192; at
    /// least 4; clamped to 65536). Longer ranges are paged: send the response's
    /// `next` as `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<usize>,
    /// `search` only: lines of context on each side of a match (default 2, at most 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<usize>,
    /// `bytes` only: `"token"` keeps tokens of up to 1024 bytes whole at the page's
    /// ends (for a reader that filters each page, e.g. secret redaction); `start`,
    /// `end` and `next` in the response give the page's real range. Default: cut at
    /// the byte (on a UTF-8 boundary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Align>,
}

impl RestoreRequest {
    /// A `bytes` request for `[start, end)` of `id`.
    pub fn bytes(id: &str, start: u64, end: Option<u64>) -> Self {
        RestoreRequest {
            id: id.to_string(),
            mode: RestoreMode::Bytes,
            start: Some(start),
            end,
            ..Default::default()
        }
    }

    /// A `lines` request for lines `start..=end` of `id`.
    pub fn lines(id: &str, start: u64, end: Option<u64>) -> Self {
        RestoreRequest {
            id: id.to_string(),
            mode: RestoreMode::Lines,
            start: Some(start),
            end,
            ..Default::default()
        }
    }

    /// A `search` request for `query` in `id`.
    pub fn search(id: &str, query: &str) -> Self {
        RestoreRequest {
            id: id.to_string(),
            mode: RestoreMode::Search,
            query: Some(query.to_string()),
            ..Default::default()
        }
    }

    /// A `full` request for `id`.
    pub fn full(id: &str) -> Self {
        RestoreRequest {
            id: id.to_string(),
            mode: RestoreMode::Full,
            ..Default::default()
        }
    }
}

impl RestoreRequest {
    /// What is malformed in the request's own shape, seen without the original: a
    /// range whose start is after its end, line 0, an empty or over-long query,
    /// `max_bytes` below 4. Checked right after the id and before the lookup, so a
    /// malformed request answers `invalid` whether or not the store holds its id
    /// (evicted or never stored). Bounds that need the original (a start past its
    /// end) are checked once it is read.
    pub fn shape_error(&self) -> Option<String> {
        if let Some(n) = self
            .max_bytes
            .filter(|&n| n < crate::options::RECOVERY_MIN_BYTES)
        {
            return Some(format!(
                "max_bytes {n} is too small: ask for 4 to 65536 bytes"
            ));
        }
        let (start, end) = (self.start, self.end);
        match self.mode {
            RestoreMode::Bytes => match (start, end) {
                (Some(a), Some(b)) if a > b => Some(format!(
                    "start {a} is after end {b}; bytes are 0-based, half-open [start, end)"
                )),
                _ => None,
            },
            RestoreMode::Lines | RestoreMode::Search => {
                if self.mode == RestoreMode::Search {
                    match self.query.as_deref() {
                        None | Some("") => {
                            return Some("search needs a non-empty query (literal text)".into())
                        }
                        Some(q) if q.len() > super::MAX_QUERY_BYTES => {
                            return Some(format!(
                                "query is {} bytes; search takes at most {}",
                                q.len(),
                                super::MAX_QUERY_BYTES
                            ))
                        }
                        Some(_) => {}
                    }
                }
                match (start, end) {
                    (Some(0), _) => Some("lines are 1-based: start must be at least 1".into()),
                    (Some(a), Some(b)) if b < a && self.mode == RestoreMode::Lines => {
                        Some(format!(
                            "end line {b} is before start line {a}; lines are 1-based, inclusive"
                        ))
                    }
                    _ => None,
                }
            }
            RestoreMode::Full => None,
        }
    }
}

impl RestoreRequest {
    /// Parses a restore call as markers quote it, e.g.
    /// `snip_restore(id="sn_…", mode="lines", start=201, end=7940)`, or with a host's
    /// name for the tool such as `mcp__snip__snip_restore(…)` (also with
    /// `field="/a/0/b"`, `query="…"`, `max_bytes=N`, `context=N`). String values use
    /// `\"` and `\\` escapes; whitespace around arguments is ignored.
    ///
    /// # Errors
    /// One line saying what is malformed.
    pub fn from_call(call: &str) -> Result<RestoreRequest, String> {
        let mut req = RestoreRequest::default();
        snip_core::marker::parse_restore_call(call, |key, value| {
            let num = |v: &CallValue| match v {
                CallValue::Num(n) => Ok(*n),
                CallValue::Str(_) => {
                    Err(format!("{key} takes a whole number, not a quoted string"))
                }
            };
            let text = |v: CallValue| match v {
                CallValue::Str(s) => Ok(s),
                CallValue::Num(_) => Err(format!("{key} takes a quoted string, not a number")),
            };
            match key {
                "id" => req.id = text(value)?,
                "mode" => {
                    req.mode = match text(value)?.as_str() {
                        "bytes" => RestoreMode::Bytes,
                        "lines" => RestoreMode::Lines,
                        "search" => RestoreMode::Search,
                        "full" => RestoreMode::Full,
                        m => {
                            return Err(format!(
                                "mode {m:?} is not one of bytes, lines, search, full"
                            ))
                        }
                    }
                }
                "start" => req.start = Some(num(&value)?),
                "end" => req.end = Some(num(&value)?),
                "query" => req.query = Some(text(value)?),
                "field" => req.field = Some(text(value)?),
                "max_bytes" => req.max_bytes = Some(num(&value)? as usize),
                "context" => req.context = Some(num(&value)? as usize),
                k => return Err(format!("unknown argument {k:?} in the restore call")),
            }
            Ok(())
        })?;
        if req.id.is_empty() {
            return Err("the restore call has no id".into());
        }
        Ok(req)
    }

    /// Parses a JSON restore request (the MCP tool's arguments).
    ///
    /// # Errors
    /// An `invalid` response saying what is wrong.
    pub fn from_json(json: &str) -> Result<RestoreRequest, Box<RestoreResponse>> {
        serde_json::from_str(json).map_err(|e| {
            let id = serde_json::from_str::<serde_json::Value>(json)
                .ok()
                .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string))
                .unwrap_or_default();
            Box::new(RestoreResponse::malformed(
                &id,
                format!("malformed restore request: {e}"),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::restore::RestoreStatus;

    #[test]
    fn calls_parse_as_markers_render_them() {
        use snip_core::marker::RestoreCall;
        let id = "sn_0123456789abcdef01234567";
        for (call, mode, field) in [
            (
                RestoreCall::Lines { start: 3, end: 9 },
                RestoreMode::Lines,
                None,
            ),
            (
                RestoreCall::Bytes { start: 0, end: 10 },
                RestoreMode::Bytes,
                None,
            ),
            (
                RestoreCall::FieldBytes {
                    field: "/a\\\"b/0".into(),
                    start: 5,
                    end: 50,
                },
                RestoreMode::Bytes,
                Some("/a\\\"b/0"),
            ),
        ] {
            let r = RestoreRequest::from_call(&call.render(id)).unwrap();
            assert_eq!(r.id, id);
            assert_eq!(r.mode, mode);
            assert_eq!(r.field.as_deref(), field);
            assert!(r.start.is_some() && r.end.is_some());
        }
        let r = RestoreRequest::from_call(&format!(
            "snip_restore(id=\"{id}\", mode=\"search\", query=\"a, b=\\\"c\\\"\", context=1)"
        ))
        .unwrap();
        assert_eq!(r.query.as_deref(), Some("a, b=\"c\""));
        assert_eq!(r.context, Some(1));
        for bad in [
            "",
            "snip_restore(",
            "snip_restore()",
            "snip_restore(id=sn_x)",
            "snip_restore(id=\"sn_x\" mode=\"bytes\")",
            "snip_restore(id=\"sn_x\", mode=\"chars\")",
            "snip_restore(id=\"sn_x\", start=\"1\")",
            "snip_restore(id=\"sn_x\", offset=1)",
            "snip_restore(id=\"sn_x)",
        ] {
            assert!(RestoreRequest::from_call(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn json_requests() {
        let r = RestoreRequest::from_json(r#"{"id":"sn_1","mode":"lines","start":2,"end":null}"#)
            .unwrap();
        assert_eq!(r.mode, RestoreMode::Lines);
        assert_eq!(r.start, Some(2));
        let bad = RestoreRequest::from_json(r#"{"id":"sn_1","mode":"chars"}"#).unwrap_err();
        assert_eq!(bad.status, RestoreStatus::Invalid);
        assert_eq!(bad.id, "sn_1");
        assert_eq!(
            bad.mode, None,
            "an unknown mode is not echoed as another one"
        );
        let bad = RestoreRequest::from_json(r#"{"id":"sn_1","offset":3}"#).unwrap_err();
        assert!(bad.note.contains("offset"), "{}", bad.note);
    }
}

#[cfg(test)]
mod host_tool_names {
    use super::RestoreRequest;

    #[test]
    fn a_hosts_name_for_the_tool_parses() {
        let plain =
            RestoreRequest::from_call(r#"snip_restore(id="sn_a", mode="lines", start=2, end=4)"#)
                .unwrap();
        for name in ["mcp__snip__snip_restore", "snip_snip_restore"] {
            let call = format!(r#"{name}(id="sn_a", mode="lines", start=2, end=4)"#);
            assert_eq!(RestoreRequest::from_call(&call).unwrap(), plain);
        }
    }
}
