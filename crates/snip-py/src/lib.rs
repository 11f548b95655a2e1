//! `snip._native`: snip's Rust core in-process for Python (PyO3, abi3, CPython ≥ 3.11).
//!
//! Functions, each a thin translation of one library call:
//!
//! - [`compress`] → [`snip_store::compress_recorded`], or over the in-memory cap
//!   [`snip_core::stream`] as `snip` does: the output and its receipt
//!   ([`snip_store::Receipt`]);
//! - [`compress_parts`] → [`snip_store::compress_parts`]: several texts under one
//!   budget;
//! - [`compress_json_fields`] → [`snip_store::compress_json_fields`]: a JSON
//!   result's string fields, one by one;
//! - [`restore`], [`restore_call`] → [`snip_store::StoreHandle::restore`]: the
//!   store's response;
//! - [`restore_schema`] → [`snip_store::restore::schema`]: the request's JSON Schema;
//! - [`config`] → the resolved `SNIP_*` settings;
//! - [`compress_messages`] → [`snip_context::compress_messages`]: the conversation
//!   pass over a JSON list of messages.
//!
//! Configuration and the store are read from `SNIP_*` variables on every call (the
//! store defaults to `$HERMES_HOME/cache/snip` when `HERMES_HOME` is set); keyword
//! options override single variables for one call (see [`settings`]). Rust work runs
//! with the GIL released, and every failure, panics included, returns the original.
//! Requests, responses and receipts are the store's serde types, converted with
//! `pythonize`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod settings;
mod stores;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use pythonize::{depythonize, pythonize};
use snip_core::{Config, Outcome, Retention, RuleReport};
use snip_store::{
    LedgerRow, RestoreRequest, RestoreResponse, RestoreStatus, StoreHandle, StoreOptions,
};

use crate::settings::Overrides;

/// Keyword options of [`compress`] that are not variables: the ledger's source label.
const SOURCE_OPTION: &str = "source";
/// Keyword option of [`compress_messages`] that is not a variable: the message format.
const FORMAT_OPTION: &str = "format";

/// Compresses one tool output; returns the receipt as a dict.
///
/// `text` is a `str` (compressed as its UTF-8 bytes) or `bytes` (may be invalid
/// UTF-8), read in place (not copied); the receipt's `output` has the same type.
/// Receipt keys ([`snip_store::Receipt`]'s, without `output_base64`): `output`,
/// `output_encoding`, `changed`, `original_bytes`, `output_bytes` (bytes), `rules`
/// (`[{"id": rule, name: count, ...}]`), `lossy`, `id` (the retained original's store
/// id or `None`), `retained` (whether `id` is set), `retention` (`"retained"`,
/// `"off"`, `"failed"`, or `None` when not asked), `retention_error`, `failed_open`
/// (why the input came back unchanged, or `None`).
///
/// The engine is `snip`'s for the same bytes on stdin: an input over the in-memory cap
/// (the store's entry cap, 32 MiB by default; 16 MiB with the store off) that is not
/// a JSON document is compressed as a stream: its markers cite no id, `rules` carry
/// no counts, and `retention` is `"failed"` (or `"off"`) when lines were elided.
///
/// Options: the `SNIP_*` variables of the core and the store in lower case without the
/// prefix (`max_bytes=4096`, `store=False`, `store_dir="/tmp/s"`), and `source` (the
/// ledger's label, default `python`).
///
/// # Errors
/// `TypeError` for an input that is neither `str` nor `bytes`, or an unknown option.
/// A bad variable value, a store failure or a panic fails open instead.
#[pyfunction]
#[pyo3(signature = (text, /, **opts))]
fn compress<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let overrides = settings::from_kwargs(opts, compress_variables(), &[SOURCE_OPTION])?;
    let source = match opts.and_then(|o| o.get_item(SOURCE_OPTION).ok().flatten()) {
        Some(s) if !s.is_none() => s.extract::<String>()?,
        _ => "python".to_string(),
    };
    if let Ok(s) = text.cast::<PyString>() {
        let Ok(input) = s.to_str() else {
            // Lone surrogates (e.g. from `surrogateescape`) have no UTF-8 form: the
            // text comes back as it is; sizes count its `surrogatepass` bytes.
            let raw = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
            let raw = raw.cast::<PyBytes>()?.as_bytes();
            let why = "text has lone surrogates (no UTF-8 form)";
            return receipt(py, &failed(raw, why), s.clone().into_any());
        };
        let outcome = py.detach(|| run_compress(input.as_bytes(), &overrides, &source));
        let output = if outcome.changed {
            match std::str::from_utf8(&outcome.output) {
                Ok(out) => PyString::new(py, out).into_any(),
                // A str in must be a str out: a cut inside a code point fails open.
                Err(_) => {
                    return receipt(
                        py,
                        &failed(input.as_bytes(), "output is not UTF-8"),
                        s.clone().into_any(),
                    )
                }
            }
        } else {
            s.clone().into_any()
        };
        return receipt(py, &outcome, output);
    }
    if let Ok(b) = text.cast::<PyBytes>() {
        let input = b.as_bytes();
        let outcome = py.detach(|| run_compress(input, &overrides, &source));
        let output = if outcome.changed {
            PyBytes::new(py, &outcome.output).into_any()
        } else {
            b.clone().into_any()
        };
        return receipt(py, &outcome, output);
    }
    Err(PyTypeError::new_err(format!(
        "compress() takes str or bytes, not {}",
        text.get_type().name()?
    )))
}

/// The variables [`compress`] reads (the core's and the store's).
fn compress_variables() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v: Vec<&'static str> = Config::default()
            .entries()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        v.extend(store_variables());
        v
    })
}

/// The store's variables.
fn store_variables() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        StoreOptions::in_dir("/")
            .entries()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    })
}

/// The core call, without the GIL. Never panics.
///
/// The engine is the one `snip` picks for the same input on stdin
/// ([`snip_store::reader`]): in memory with the original kept up to the store's entry
/// cap, else (for text that is not a JSON document the core can elide whole) as a
/// stream over the borrowed input, whose markers say the original is not kept.
fn run_compress(input: &[u8], overrides: &Overrides, source: &str) -> Outcome {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let config = match Config::from_lookup(|k| overrides.lookup(k)) {
            Ok(c) => c,
            Err(e) => return failed(input, &e.to_string()),
        };
        let handle = stores::handle(overrides);
        if streams(input, &config, &handle) {
            let outcome = stream(input, &config, &handle, source);
            stores::after_call(&handle);
            return outcome;
        }
        let outcome = snip_store::compress_recorded(input, &config, &handle, source);
        if let Some(Retention::Failed { .. }) = outcome.retention {
            stores::forget();
        }
        stores::after_call(&handle);
        outcome
    }));
    run.unwrap_or_else(|p| {
        failed(
            input,
            &format!(
                "internal panic: {}",
                snip_core::util::panic_message(&*p, "unknown panic")
            ),
        )
    })
}

/// Whether `snip` would compress `input` as a stream: longer than the in-memory cap
/// ([`snip_store::reader::in_memory_cap`]: the store's entry cap, at least 16 MiB),
/// compression on, and not a document the stream would pass through (a diff, a JSON
/// document spanning lines) that fits [`snip_store::reader::DOCUMENT_IN_MEMORY_MAX`]
/// (`snip` judges that on the first cap + 1 bytes it read, and so does this).
fn streams(input: &[u8], config: &Config, handle: &StoreHandle) -> bool {
    let cap = snip_store::reader::in_memory_cap(handle);
    if !config.enabled || input.len() <= cap {
        return false;
    }
    let head = &input[..input.len().min(cap + 1)];
    let document = snip_core::stream::passes_through(head);
    !(document && input.len() <= snip_store::reader::DOCUMENT_IN_MEMORY_MAX)
}

/// `input` through [`snip_core::stream::StreamCompressor`] in one push (its windows are
/// read in place: no copy of the input is made but its unfinished last line), with one ledger row as `snip` writes for a stream. Its
/// markers cite no id: the receipt's `retention` is `failed` (store open: the input is
/// over what it keeps) or `off`, when anything was elided.
fn stream(input: &[u8], config: &Config, handle: &StoreHandle, source: &str) -> Outcome {
    let mut s = snip_core::stream::StreamCompressor::new(config);
    let mut output = Vec::new();
    let written = s
        .push(input, &mut output)
        .and_then(|()| s.finish(&mut output));
    let summary = match written {
        Ok(summary) => summary,
        Err(e) => return failed(input, &format!("stream: {e}")), // a Vec never fails
    };
    if let StoreHandle::Open(store) = handle {
        store.record(&LedgerRow::streamed(source, output.len() as u64, &summary));
    }
    let retention = summary.lossy.then(|| match handle {
        StoreHandle::Disabled => Retention::Off,
        StoreHandle::Unavailable(why) => Retention::Failed {
            reason: why.clone(),
        },
        StoreHandle::Open(_) => Retention::Failed {
            reason: format!(
                "the input ({} bytes) is over the {} bytes compressed in memory; compressed as a stream, the original is not kept",
                input.len(),
                snip_store::reader::in_memory_cap(handle)
            ),
        },
    });
    Outcome {
        changed: output != input,
        original_bytes: input.len(),
        rules: summary
            .rules
            .iter()
            .filter_map(|r| r.parse().ok())
            .map(|id| RuleReport {
                id,
                counts: Vec::new(),
            })
            .collect(),
        retention,
        lossy: summary.lossy,
        failed_open: None,
        output,
    }
}

/// An unchanged outcome that says why.
fn failed(input: &[u8], why: &str) -> Outcome {
    let mut o = Outcome::unchanged(input);
    o.failed_open = Some(why.to_string());
    o
}

/// The receipt dict of `outcome` ([`snip_store::Receipt`]'s keys, in its order), with `output` the
/// `str` or `bytes` given (so there is no `output_base64`: `output` is exact). Built
/// key by key: the output is not copied into a `String` or a second Python object.
fn receipt<'py>(
    py: Python<'py>,
    outcome: &Outcome,
    output: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let exact = output.is_instance_of::<PyString>() || std::str::from_utf8(&outcome.output).is_ok();
    let (retention, retention_error) = match &outcome.retention {
        None => (None, None),
        Some(Retention::Retained { .. }) => (Some("retained"), None),
        Some(Retention::Off) => (Some("off"), None),
        Some(Retention::Failed { reason }) => (Some("failed"), Some(reason.as_str())),
    };
    d.set_item("output", output)?;
    d.set_item(
        "output_encoding",
        if exact { "utf-8" } else { "utf-8-lossy" },
    )?;
    d.set_item("changed", outcome.changed)?;
    d.set_item("original_bytes", outcome.original_bytes)?;
    d.set_item("output_bytes", outcome.output_bytes())?;
    let rules = PyList::empty(py);
    for r in &outcome.rules {
        let rule = PyDict::new(py);
        rule.set_item("id", r.id.as_str())?;
        for (name, n) in &r.counts {
            rule.set_item(*name, *n)?;
        }
        rules.append(rule)?;
    }
    d.set_item("rules", rules)?;
    d.set_item("lossy", outcome.lossy)?;
    d.set_item("id", outcome.id())?;
    d.set_item("retained", outcome.id().is_some())?;
    d.set_item("retention", retention)?;
    d.set_item("retention_error", retention_error)?;
    d.set_item("failed_open", outcome.failed_open.as_deref())?;
    Ok(d)
}

/// Compresses `parts` (a list of `str`) so that together they fit one budget
/// (`max_bytes`, as [`compress`] reads it), by [`snip_store::compress_parts`]:
/// shortest first, each part getting what the earlier ones left split evenly among
/// the rest, at least `max_bytes / n` and never under the core's minimum (1024). For
/// texts a reader sees together: a command's two streams, the two sides of a host's
/// truncation notice. Returns one receipt per part, in order; options as
/// [`compress`]'s. A setting that does not parse fails every part open.
///
/// # Errors
/// `TypeError` for a part that is not a `str` (or has lone surrogates), or an unknown
/// option.
#[pyfunction]
#[pyo3(signature = (parts, /, **opts))]
fn compress_parts<'py>(
    py: Python<'py>,
    parts: Vec<String>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let overrides = settings::from_kwargs(opts, compress_variables(), &[SOURCE_OPTION])?;
    let source = match opts.and_then(|o| o.get_item(SOURCE_OPTION).ok().flatten()) {
        Some(s) if !s.is_none() => s.extract::<String>()?,
        _ => "python".to_string(),
    };
    let outcomes = py.detach(|| {
        let bytes: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
        let run = catch_unwind(AssertUnwindSafe(|| {
            let config = match Config::from_lookup(|k| overrides.lookup(k)) {
                Ok(c) => c,
                Err(e) => return bytes.iter().map(|b| failed(b, &e.to_string())).collect(),
            };
            let handle = stores::handle(&overrides);
            let out = snip_store::compress_parts(&bytes, &config, &handle, &source);
            if out
                .iter()
                .any(|o| matches!(o.retention, Some(Retention::Failed { .. })))
            {
                stores::forget();
            }
            stores::after_call(&handle);
            out
        }));
        run.unwrap_or_else(|p| {
            let why = format!(
                "internal panic: {}",
                snip_core::util::panic_message(&*p, "unknown panic")
            );
            bytes.iter().map(|b| failed(b, &why)).collect::<Vec<_>>()
        })
    });
    let list = PyList::empty(py);
    for (part, o) in parts.iter().zip(&outcomes) {
        // A str in is a str out: an output that is not UTF-8 fails that part open.
        let r = match std::str::from_utf8(&o.output) {
            Ok(out) => receipt(py, o, PyString::new(py, out).into_any())?,
            Err(_) => receipt(
                py,
                &failed(part.as_bytes(), "output is not UTF-8"),
                PyString::new(py, part).into_any(),
            )?,
        };
        list.append(r)?;
    }
    Ok(list)
}

/// Compresses the string fields of the JSON document `text` one by one (each with the
/// whole budget, kept and recorded as [`compress`] does), by
/// [`snip_store::compress_json_fields`]: strings under a key in `keep_keys` (names,
/// not output) and short strings without control characters are kept, as are keys,
/// their order and numbers' exact text. When the document is still over the budget,
/// it is compressed whole (the core's JSON rule elides inside it), if that stays
/// valid JSON. Returns `(is_json, new_text)`: `new_text` is the new document (with
/// changed fields, written as `json.dumps(…, ensure_ascii=False)` writes it), or
/// `None` when nothing changed (or `text` is not JSON, `is_json` false). Options as
/// [`compress`]'s; a setting that does not parse changes nothing.
///
/// # Errors
/// `TypeError` for an unknown option.
#[pyfunction]
#[pyo3(signature = (text, keep_keys, /, **opts))]
fn compress_json_fields<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    keep_keys: Vec<String>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<(bool, Option<String>)> {
    let overrides = settings::from_kwargs(opts, compress_variables(), &[SOURCE_OPTION])?;
    let source = match opts.and_then(|o| o.get_item(SOURCE_OPTION).ok().flatten()) {
        Some(s) if !s.is_none() => s.extract::<String>()?,
        _ => "python".to_string(),
    };
    let Ok(text) = text.to_str() else {
        return Ok((false, None)); // lone surrogates: not JSON text Rust can read
    };
    let fields = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let keep: Vec<&str> = keep_keys.iter().map(String::as_str).collect();
            let Ok(config) = Config::from_lookup(|k| overrides.lookup(k)) else {
                let json = serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok();
                return if json {
                    snip_store::Fields::Unchanged
                } else {
                    snip_store::Fields::NotJson
                };
            };
            let handle = stores::handle(&overrides);
            let fields = json_fields(text, &keep, &config, &handle, &source);
            stores::after_call(&handle);
            fields
        }))
        .unwrap_or(snip_store::Fields::Unchanged)
    });
    Ok(match fields {
        snip_store::Fields::NotJson => (false, None),
        snip_store::Fields::Unchanged => (true, None),
        snip_store::Fields::Changed(t) => (true, Some(t)),
    })
}

/// The fields pass of [`compress_json_fields`] on the store behind `handle`, then the
/// core's JSON rule on the whole document when it is still over budget.
fn json_fields(
    text: &str,
    keep: &[&str],
    config: &Config,
    handle: &StoreHandle,
    source: &str,
) -> snip_store::Fields {
    let mut compress = |s: &str| {
        let o = snip_store::compress_recorded(s.as_bytes(), config, handle, source);
        if let Some(Retention::Failed { .. }) = o.retention {
            stores::forget();
        }
        (o.changed && !o.output.is_empty())
            .then(|| String::from_utf8(o.output).ok())
            .flatten()
    };
    let fields = snip_store::compress_json_fields(text, keep, &mut compress);
    let now = match &fields {
        snip_store::Fields::Changed(t) => t.as_str(),
        snip_store::Fields::Unchanged => text,
        snip_store::Fields::NotJson => return fields,
    };
    if now.len() <= config.max_bytes {
        return fields;
    }
    // Still over: the core's JSON rule elides inside the document (long
    // strings, middles of long arrays); taken only when it stays JSON.
    let whole =
        compress(now).filter(|w| serde_json::from_str::<&serde_json::value::RawValue>(w).is_ok());
    whole.map_or(fields, snip_store::Fields::Changed)
}

/// The JSON Schema of a restore request (the `snip_restore` tool's parameters), as a
/// dict: `docs/schema/snip_restore.json`.
#[pyfunction]
fn restore_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Ok(pythonize(py, &snip_store::restore::schema())?)
}

/// Answers a restore call; returns the store's response as a dict.
///
/// `mode` is `bytes` (default), `lines`, `search` or `full`; `start`/`end`,
/// `query`, `field` (a JSON pointer), `max_bytes` (content cap), `context` and
/// `align` (`"token"`) follow the restore protocol (`docs/restore.md`). Other keyword options are store
/// variables (`store_dir=...`). A malformed request answers `status: "invalid"`, a
/// store that cannot be opened `unavailable`; nothing here raises except an unknown
/// option (`TypeError`).
#[pyfunction]
#[pyo3(signature = (id, mode=None, *, start=None, end=None, query=None, field=None, max_bytes=None, context=None, align=None, **opts))]
#[allow(clippy::too_many_arguments)]
fn restore<'py>(
    py: Python<'py>,
    id: &Bound<'py, PyAny>,
    mode: Option<&Bound<'py, PyAny>>,
    start: Option<&Bound<'py, PyAny>>,
    end: Option<&Bound<'py, PyAny>>,
    query: Option<&Bound<'py, PyAny>>,
    field: Option<&Bound<'py, PyAny>>,
    max_bytes: Option<&Bound<'py, PyAny>>,
    context: Option<&Bound<'py, PyAny>>,
    align: Option<&Bound<'py, PyAny>>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let overrides = settings::from_kwargs(opts, store_variables(), &[])?;
    let req = PyDict::new(py);
    let args = [
        ("id", Some(id)),
        ("mode", mode),
        ("start", start),
        ("end", end),
        ("query", query),
        ("field", field),
        ("max_bytes", max_bytes),
        ("context", context),
        ("align", align),
    ];
    for (name, value) in args {
        if let Some(v) = value {
            req.set_item(name, v)?;
        }
    }
    answer(py, &req, &overrides)
}

/// Answers a restore call given as one dict of its arguments (a tool call's, as a
/// model sent them: `{"id": "sn_…", "mode": "lines", "start": 3}`); `None` values
/// count as absent, and a whole number sent as a string of digits (`"120"`) as that
/// number. Unknown arguments answer `invalid`. Keyword options are store variables.
///
/// # Errors
/// `TypeError` for an unknown option.
#[pyfunction]
#[pyo3(signature = (args, /, **opts))]
fn restore_call<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyDict>,
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let overrides = settings::from_kwargs(opts, store_variables(), &[])?;
    answer(py, args, &overrides)
}

/// The store's answer to the request `args`, judged by the store's own (strict)
/// deserializer, exactly as it judges the MCP server's requests.
fn answer<'py>(
    py: Python<'py>,
    args: &Bound<'py, PyDict>,
    overrides: &Overrides,
) -> PyResult<Bound<'py, PyAny>> {
    const INTS: [&str; 4] = ["start", "end", "max_bytes", "context"];
    let req = PyDict::new(py);
    let mut out_of_range = None;
    for (k, v) in args.iter() {
        if v.is_none() {
            continue;
        }
        let name = k.extract::<String>().unwrap_or_default();
        let int = INTS.contains(&name.as_str());
        let digits = v
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok().map(|t| t.trim().to_string()))
            .filter(|t| int && !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
        let v = match digits {
            Some(t) => t.parse::<u128>().map_or(v.clone(), |n| {
                n.into_pyobject(py).map_or(v.clone(), |o| o.into_any())
            }),
            None => v.clone(),
        };
        // An int past 64 bits is a bad request like any other: it gets `invalid`, not
        // an exception.
        if v.is_instance_of::<pyo3::types::PyInt>()
            && !v.is_instance_of::<pyo3::types::PyBool>()
            && v.extract::<u64>().is_err()
            && v.extract::<i64>().is_err()
        {
            out_of_range.get_or_insert(name);
            continue;
        }
        req.set_item(k, v)?;
    }
    let id_text = args
        .get_item("id")?
        .and_then(|v| v.extract::<String>().ok())
        .unwrap_or_default();
    let response = match (out_of_range, depythonize::<RestoreRequest>(&req)) {
        (Some(name), _) => RestoreResponse::malformed(
            &id_text,
            format!("invalid restore call: {name} is out of range (0 to 18446744073709551615)"),
        ),
        (None, Err(e)) => {
            RestoreResponse::malformed(&id_text, format!("invalid restore call: {e}"))
        }
        (None, Ok(request)) => py.detach(|| run_restore(&request, overrides)),
    };
    Ok(pythonize(py, &response)?)
}

/// The store call, without the GIL. Never panics.
fn run_restore(request: &RestoreRequest, overrides: &Overrides) -> RestoreResponse {
    let run = catch_unwind(AssertUnwindSafe(|| {
        stores::handle(overrides).restore(request)
    }));
    run.unwrap_or_else(|p| {
        RestoreResponse::failure(
            request,
            RestoreStatus::Error,
            format!(
                "internal panic: {}",
                snip_core::util::panic_message(&*p, "unknown panic")
            ),
        )
    })
}

/// The resolved settings, `{variable: value}` with string values, in the order
/// `snip config` prints them: the core's, the conversation pass's, then the store's.
///
/// # Errors
/// `ValueError` naming the first variable whose value does not parse; `TypeError`
/// for an unknown option.
#[pyfunction]
#[pyo3(signature = (**opts))]
fn config<'py>(py: Python<'py>, opts: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyDict>> {
    let known = [compress_variables(), context_variables()].concat();
    let overrides = settings::from_kwargs(opts, &known, &[])?;
    let lookup = |k: &str| overrides.lookup(k);
    let err = |e: snip_core::ConfigError| PyValueError::new_err(e.to_string());
    let core = Config::from_lookup(lookup).map_err(err)?;
    let context = snip_context::ContextSettings::from_lookup(lookup).map_err(err)?;
    let store =
        StoreOptions::from_lookup(lookup).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    for (k, v) in core
        .entries()
        .into_iter()
        .chain(context.entries())
        .chain(store.entries())
    {
        d.set_item(k, v)?;
    }
    // A path, usable as one (`snip config` prints where it came from as well).
    d.set_item("SNIP_STORE_DIR", store.dir.to_string_lossy())?;
    Ok(d)
}

/// The conversation pass's variables.
fn context_variables() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        snip_context::ContextSettings::default()
            .entries()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    })
}

/// The conversation pass over `messages_json` (a JSON array of OpenAI chat or
/// Anthropic messages). Returns the new array as JSON, or `None` when nothing was
/// summarised, the input is not JSON, a setting does not parse, or anything fails.
///
/// Settings: `format` (`openai`, `anthropic`, `auto`: default), the `SNIP_CONTEXT_*`
/// variables in lower case without `SNIP_` (`context_keep_last=...`) or without
/// `SNIP_CONTEXT_` (`keep_last=...`), store variables, and `source` (the ledger's
/// label, default `python:context`).
///
/// # Errors
/// `TypeError` for an unknown setting or an unknown `format`.
#[pyfunction]
#[pyo3(signature = (messages_json, /, **settings))]
fn compress_messages<'py>(
    py: Python<'py>,
    messages_json: &Bound<'py, PyString>,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    let known = [context_variables(), store_variables()].concat();
    // `keep_last=3` is accepted as well as `context_keep_last=3`.
    let short = context_short_names(settings)?;
    let overrides = settings::from_kwargs(short.as_ref(), &known, &[FORMAT_OPTION, SOURCE_OPTION])?;
    let format = match settings.and_then(|o| o.get_item(FORMAT_OPTION).ok().flatten()) {
        Some(f) if !f.is_none() => f
            .extract::<String>()?
            .parse::<snip_context::FormatChoice>()
            .map_err(PyTypeError::new_err)?,
        _ => snip_context::FormatChoice::Auto,
    };
    let source = match settings.and_then(|o| o.get_item(SOURCE_OPTION).ok().flatten()) {
        Some(s) if !s.is_none() => s.extract::<String>()?,
        _ => "python:context".to_string(),
    };
    let Ok(text) = messages_json.to_str() else {
        return Ok(None); // lone surrogates: no UTF-8 form, pass through
    };
    let out = py.detach(|| run_context(text, format, &overrides, &source));
    Ok(out.map(|s| PyString::new(py, &s)))
}

/// Renames `keep_last=` style settings to `context_keep_last=` (the variable
/// `SNIP_CONTEXT_KEEP_LAST`).
fn context_short_names<'py>(
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(settings) = settings else {
        return Ok(None);
    };
    let short: Vec<String> = context_variables()
        .iter()
        .map(|v| v.trim_start_matches("SNIP_CONTEXT_").to_ascii_lowercase())
        .collect();
    let out = PyDict::new(settings.py());
    for (k, v) in settings.iter() {
        let key: String = k.extract()?;
        if short.contains(&key) {
            out.set_item(format!("context_{key}"), v)?;
        } else {
            out.set_item(key, v)?;
        }
    }
    Ok(Some(out))
}

/// The pass, without the GIL. `None` when nothing changed or anything failed. A
/// request that changed gets one ledger row (as `snip context` writes), tagged
/// `source`.
fn run_context(
    text: &str,
    format: snip_context::FormatChoice,
    overrides: &Overrides,
    source: &str,
) -> Option<String> {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let settings = snip_context::ContextSettings::from_lookup(|k| overrides.lookup(k)).ok()?;
        if !settings.enabled {
            return None;
        }
        let messages: serde_json::Value = serde_json::from_str(text).ok()?;
        let handle = stores::handle(overrides);
        let store = handle.store()?;
        let mut keep = |original: &[u8]| store.put(original).ok();
        let out = snip_context::compress_messages(&messages, format, &settings, &mut keep);
        let json = out
            .changed
            .then(|| serde_json::to_string(&out.request).ok())
            .flatten();
        if json.is_some() {
            store.record(&context_row(&out.report, source));
        }
        stores::after_call(&handle);
        json
    }));
    run.ok().flatten()
}

/// The ledger row of one request whose older tool results were summarised: bytes of
/// the replaced originals before, of their summaries after (the row `snip context`
/// writes; each summary quotes its own id, so the row names none).
fn context_row(r: &snip_context::ContextReport, source: &str) -> LedgerRow {
    LedgerRow::context_summary(
        source,
        r.original_bytes as u64,
        r.summary_bytes as u64,
        r.summarised,
    )
}

/// Writes the originals and ledger rows the store still holds (the module keeps an
/// original in memory while its own thread writes it, right after each call); called
/// at interpreter exit. Best effort: an original that cannot be written stays
/// restorable from this process.
#[pyfunction]
fn flush(py: Python<'_>) {
    py.detach(|| {
        let _ = catch_unwind(stores::flush);
    });
}

/// The extension module `snip._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_MAX_BYTES", snip_core::config::DEFAULT_MAX_BYTES)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(compress_parts, m)?)?;
    m.add_function(wrap_pyfunction!(compress_json_fields, m)?)?;
    m.add_function(wrap_pyfunction!(restore, m)?)?;
    m.add_function(wrap_pyfunction!(restore_call, m)?)?;
    m.add_function(wrap_pyfunction!(restore_schema, m)?)?;
    m.add_function(wrap_pyfunction!(config, m)?)?;
    m.add_function(wrap_pyfunction!(compress_messages, m)?)?;
    m.add_function(wrap_pyfunction!(flush, m)?)?;
    Ok(())
}
