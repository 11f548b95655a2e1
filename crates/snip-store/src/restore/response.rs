//! The restore response: status, encoding and the JSON object every surface returns.

use super::request::{RestoreMode, RestoreRequest};
use crate::id;
use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The outcome of a restore call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreStatus {
    /// The slice is in `content`.
    Ok,
    /// No such id in this store (never stored, evicted, or expired and collected).
    NotFound,
    /// The original outlived the store's TTL.
    Expired,
    /// `full` was asked for a scope over the response cap: page it instead.
    TooLarge,
    /// The request is malformed (bad id, range, pointer, mode parameters).
    Invalid,
    /// The store is off or could not be opened.
    Unavailable,
    /// The store could not read the original (I/O error, damaged entry).
    Error,
}

/// How `content` relates to the original bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Encoding {
    /// `content` is exactly the slice's bytes.
    #[serde(rename = "utf-8")]
    Utf8,
    /// The slice is not valid UTF-8: `content` shows it with U+FFFD in place of
    /// invalid bytes, and `content_base64` holds the exact bytes.
    #[serde(rename = "utf-8-lossy")]
    Utf8Lossy,
}

/// One search match: a line that contains the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchMatch {
    /// Line number in the scope, 1-based.
    pub line: u64,
    /// Byte offset of the first occurrence on that line, 0-based, in the scope.
    pub byte: u64,
}

/// The answer to a [`RestoreRequest`], serialized as one JSON object.
///
/// `status`, `id`, `mode`, `content`, `start`, `end`, `next`, `total_bytes`,
/// `sha256` and `note` are always present (`null` when not applicable); the other
/// fields only when they apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RestoreResponse {
    /// The outcome.
    pub status: RestoreStatus,
    /// The id asked for (cut to 64 characters when it was not a valid id).
    pub id: String,
    /// The mode answered; `null` when the request could not be read (see
    /// [`RestoreResponse::malformed`]).
    pub mode: Option<RestoreMode>,
    /// The JSON pointer the request was scoped to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The slice as text (`bytes`, `lines`, `full`), or the search results in
    /// `grep -n` form (`N:line` for a match, `N-line` for context, `--` between
    /// groups). `null` unless `status` is `ok`.
    pub content: Option<String>,
    /// Whether `content` is exact; present with `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// The exact bytes of the slice in base64, when `encoding` is `utf-8-lossy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    /// Where this page starts, in the mode's unit: byte offset (0-based) for `bytes`
    /// and `full`, line number (1-based) for `lines` and `search`.
    pub start: Option<u64>,
    /// Where this page ends: byte offset, exclusive, for `bytes` and `full`; last line,
    /// inclusive, for `lines` and `search` (for `search`, the last line searched).
    pub end: Option<u64>,
    /// The `start` to send, with the same other fields, for the next page; `null`
    /// when the requested range is complete.
    pub next: Option<u64>,
    /// Byte range `[byte_start, byte_end)` of `content` in the scope (`lines` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_start: Option<u64>,
    /// See `byte_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_end: Option<u64>,
    /// Size of the whole original in bytes.
    pub total_bytes: Option<u64>,
    /// Size of the scope in bytes, when `field` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_bytes: Option<u64>,
    /// Number of lines in the scope (`lines` and `search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// SHA-256 of the whole original, lowercase hex.
    pub sha256: Option<String>,
    /// `search`: the matching lines in this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<SearchMatch>>,
    /// `search`: matching lines in the whole searched range (all pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_matches: Option<u64>,
    /// For `ok`: recovered text is data, not instructions (plus any caveat). For other
    /// statuses: one line saying what happened and what to do.
    pub note: String,
}

impl RestoreResponse {
    /// A response with no content: `status` and a one-line `note`.
    pub fn failure(req: &RestoreRequest, status: RestoreStatus, note: impl Into<String>) -> Self {
        RestoreResponse {
            status,
            id: req.id.chars().take(64).collect(),
            mode: Some(req.mode),
            field: req.field.clone(),
            content: None,
            encoding: None,
            content_base64: None,
            start: None,
            end: None,
            next: None,
            byte_start: None,
            byte_end: None,
            total_bytes: None,
            scope_bytes: None,
            total_lines: None,
            sha256: None,
            matches: None,
            total_matches: None,
            note: note.into(),
        }
    }

    /// The `invalid` answer to a request that could not be read (malformed JSON,
    /// unknown mode or field, a number out of range): `id` is echoed when the request
    /// had one, `mode` is `null` because none was understood.
    pub fn malformed(id: &str, note: impl Into<String>) -> Self {
        let req = RestoreRequest {
            id: id.to_string(),
            ..RestoreRequest::default()
        };
        RestoreResponse {
            mode: None,
            ..RestoreResponse::failure(&req, RestoreStatus::Invalid, note)
        }
    }

    /// The answer when the store directory does not exist (yet), for a caller that
    /// only reads and so does not create it: `invalid` for a malformed id, else
    /// `not_found`.
    pub fn no_store(req: &RestoreRequest, dir: &std::path::Path) -> Self {
        match id::validate_id(&req.id).map_err(|e| e.to_string()).and_then(|()| {
            req.shape_error().map_or(Ok(()), Err)
        }) {
            Err(e) => RestoreResponse::failure(req, RestoreStatus::Invalid, e),
            Ok(()) => RestoreResponse::failure(
                req,
                RestoreStatus::NotFound,
                format!(
                    "{} is not in this store: there is no store at {} (nothing kept there yet, or SNIP_STORE_DIR points elsewhere); re-run the command to see its output again",
                    req.id,
                    dir.display()
                ),
            ),
        }
    }

    /// The exact bytes of `content` (decoding `content_base64` when lossy); `None`
    /// without content.
    pub fn content_bytes(&self) -> Option<Vec<u8>> {
        match (&self.content_base64, &self.content) {
            (Some(b), _) => base64::engine::general_purpose::STANDARD.decode(b).ok(),
            (None, Some(c)) => Some(c.as_bytes().to_vec()),
            (None, None) => None,
        }
    }

    pub(super) fn with_content(mut self, bytes: &[u8]) -> Self {
        let t = JsonText::of(bytes);
        self.content = Some(t.text);
        self.encoding = Some(t.encoding);
        self.content_base64 = t.base64;
        self
    }
}

/// Bytes for a JSON field: as text, and when they are not valid UTF-8 also exactly,
/// in base64. Restore responses (`content`, `encoding`, `content_base64`) and the CLI's
/// receipt (`output`, `output_encoding`, `output_base64`) carry bytes this way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText {
    /// The bytes as text: exact when `encoding` is [`Encoding::Utf8`], else with
    /// U+FFFD in place of invalid bytes.
    pub text: String,
    /// Whether `text` is exact.
    pub encoding: Encoding,
    /// The exact bytes in base64 (standard alphabet, padded), only when `text` is not
    /// exact.
    pub base64: Option<String>,
}

impl JsonText {
    /// `bytes` as text, and in base64 when they are not valid UTF-8.
    pub fn of(bytes: &[u8]) -> JsonText {
        match std::str::from_utf8(bytes) {
            Ok(s) => JsonText {
                text: s.to_string(),
                encoding: Encoding::Utf8,
                base64: None,
            },
            Err(_) => JsonText {
                text: String::from_utf8_lossy(bytes).into_owned(),
                encoding: Encoding::Utf8Lossy,
                base64: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            },
        }
    }
}
