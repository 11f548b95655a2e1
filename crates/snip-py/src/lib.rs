//! `snip._native`: snip's Rust core in-process for Python (PyO3, abi3, CPython ≥ 3.11).
//!
//! Four functions, each a thin translation of one library call:
//!
//! - [`compress`] → [`snip_store::compress_recorded`]: the output and its receipt;
//! - [`restore`] → [`snip_store::StoreHandle::restore`]: the store's response;
//! - [`config`] → the resolved `SNIP_*` settings;
//! - [`compress_messages`] → [`snip_context::compress_messages`]: the conversation
//!   pass over a JSON list of messages.
//!
//! Configuration and the store are read from `SNIP_*` variables on every call (the
//! store defaults to `$HERMES_HOME/cache/snip` when `HERMES_HOME` is set); keyword
//! options override single variables for one call (see [`settings`]). Rust work runs
//! with the GIL released, and every failure, panics included, returns the original.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod convert;
pub mod settings;
mod stores;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use snip_core::{Config, Outcome, Retention};
use snip_store::{LedgerRow, RestoreRequest, RestoreResponse, RestoreStatus, StoreOptions};

use crate::settings::Overrides;

/// Keyword options of [`compress`] that are not variables: the ledger's source label.
const SOURCE_OPTION: &str = "source";
/// Keyword option of [`compress_messages`] that is not a variable: the message format.
const FORMAT_OPTION: &str = "format";

/// Compresses one tool output; returns the receipt as a dict.
///
/// `text` is a `str` (compressed as its UTF-8 bytes) or `bytes` (may be invalid
/// UTF-8); the receipt's `output` has the same type. Receipt keys: `output`,
/// `changed`, `original_bytes`, `output_bytes` (bytes), `rules` (`[{"id": rule,
/// name: count, ...}]`), `id` (the retained original's store id or `None`),
/// `retained` (whether `id` is set), `lossy`,
/// `retention` (`"retained"`, `"off"`, `"failed"`, or `None` when not asked),
/// `retention_error`, `failed_open` (why the input came back unchanged, or `None`).
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
fn run_compress(input: &[u8], overrides: &Overrides, source: &str) -> Outcome {
    let run = catch_unwind(AssertUnwindSafe(|| {
        let config = match Config::from_lookup(|k| overrides.lookup(k)) {
            Ok(c) => c,
            Err(e) => return failed(input, &e.to_string()),
        };
        let handle = stores::handle(overrides);
        let outcome = snip_store::compress_recorded(input, &config, &handle, source);
        if matches!(outcome.retention, Some(Retention::Failed { .. })) {
            stores::forget();
        }
        outcome
    }));
    run.unwrap_or_else(|p| failed(input, &format!("internal panic: {}", panic_text(&*p))))
}

/// An unchanged outcome that says why.
fn failed(input: &[u8], why: &str) -> Outcome {
    let mut o = Outcome::unchanged(input);
    o.failed_open = Some(why.to_string());
    o
}

/// The text of a panic payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Builds the receipt dict of `outcome`, with `output` already converted.
fn receipt<'py>(
    py: Python<'py>,
    outcome: &Outcome,
    output: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("output", output)?;
    d.set_item("changed", outcome.changed)?;
    d.set_item("original_bytes", outcome.original_bytes)?;
    d.set_item("output_bytes", outcome.output_bytes())?;
    let rules = PyList::empty(py);
    for r in &outcome.rules {
        let rd = PyDict::new(py);
        rd.set_item("id", r.id.as_str())?;
        for (name, count) in &r.counts {
            rd.set_item(*name, *count)?;
        }
        rules.append(rd)?;
    }
    d.set_item("rules", rules)?;
    d.set_item("id", outcome.id())?;
    d.set_item("retained", outcome.id().is_some())?;
    d.set_item("lossy", outcome.lossy)?;
    let (retention, error) = match &outcome.retention {
        None => (None, None),
        Some(Retention::Retained { .. }) => (Some("retained"), None),
        Some(Retention::Off) => (Some("off"), None),
        Some(Retention::Failed { reason }) => (Some("failed"), Some(reason.as_str())),
    };
    d.set_item("retention", retention)?;
    d.set_item("retention_error", error)?;
    d.set_item("failed_open", outcome.failed_open.as_deref())?;
    Ok(d)
}

/// Answers a restore call; returns the store's response as a dict.
///
/// `mode` is `bytes` (default), `lines`, `search` or `full`; `start`/`end`,
/// `query`, `field` (a JSON pointer), `max_bytes` (content cap) and `context` follow
/// the restore protocol (`docs/restore.md`). Other keyword options are store
/// variables (`store_dir=...`). A malformed request answers `status: "invalid"`, a
/// store that cannot be opened `unavailable`; nothing here raises except an unknown
/// option (`TypeError`).
#[pyfunction]
#[pyo3(signature = (id, mode=None, *, start=None, end=None, query=None, field=None, max_bytes=None, context=None, **opts))]
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
    opts: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let overrides = settings::from_kwargs(opts, store_variables(), &[])?;
    // The request is built as JSON so that the store's own (strict) deserializer
    // judges it, exactly as it judges the MCP server's requests.
    let mut req = serde_json::Map::new();
    let args = [
        ("id", Some(id)),
        ("mode", mode),
        ("start", start),
        ("end", end),
        ("query", query),
        ("field", field),
        ("max_bytes", max_bytes),
        ("context", context),
    ];
    let mut out_of_range = None;
    for (name, value) in args {
        if let Some(v) = value.filter(|v| !v.is_none()) {
            // An int JSON cannot carry (past 64 bits) is a bad request like any other:
            // it gets `invalid`, not an exception.
            if v.is_instance_of::<pyo3::types::PyInt>()
                && !v.is_instance_of::<pyo3::types::PyBool>()
                && v.extract::<u64>().is_err()
                && v.extract::<i64>().is_err()
            {
                out_of_range.get_or_insert(name);
                continue;
            }
            req.insert(name.to_string(), convert::to_json(v)?);
        }
    }
    let response = match out_of_range {
        Some(name) => invalid(
            req.get("id"),
            format!("invalid restore call: {name} is out of range (0 to 18446744073709551615)"),
        ),
        None => py.detach(|| run_restore(serde_json::Value::Object(req), &overrides)),
    };
    let value = serde_json::to_value(&response)
        .map_err(|e| PyValueError::new_err(format!("restore response: {e}")))?;
    convert::to_py(py, &value)
}

/// The `invalid` answer to a request the store cannot judge; `id` (the request's, when
/// it is a string) is echoed.
fn invalid(id: Option<&serde_json::Value>, note: String) -> RestoreResponse {
    RestoreResponse::malformed(id.and_then(|v| v.as_str()).unwrap_or_default(), note)
}

/// The store call, without the GIL. Never panics.
fn run_restore(req: serde_json::Value, overrides: &Overrides) -> RestoreResponse {
    let parsed: Result<RestoreRequest, _> = serde_json::from_value(req.clone());
    let request = match parsed {
        Ok(r) => r,
        Err(e) => return invalid(req.get("id"), format!("invalid restore call: {e}")),
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        stores::handle(overrides).restore(&request)
    }));
    run.unwrap_or_else(|p| {
        RestoreResponse::failure(
            &request,
            RestoreStatus::Error,
            format!("internal panic: {}", panic_text(&*p)),
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
        if !out.changed {
            return None;
        }
        let json = serde_json::to_string(&out.request).ok()?;
        store.record(&context_row(&out.report, source));
        Some(json)
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

/// The extension module `snip._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_MAX_BYTES", snip_core::config::DEFAULT_MAX_BYTES)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(restore, m)?)?;
    m.add_function(wrap_pyfunction!(config, m)?)?;
    m.add_function(wrap_pyfunction!(compress_messages, m)?)?;
    Ok(())
}
