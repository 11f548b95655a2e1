//! Conversions between Python objects and JSON values (`serde_json::Value`).
//!
//! Used for restore requests (Python arguments → JSON, judged by the store's own
//! deserializer) and responses (JSON → `dict`). Only JSON's shapes are converted:
//! `None`, `bool`, `int`, `float`, `str`, `list`/`tuple` and `dict` with `str` keys.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// Converts a Python value into JSON.
///
/// # Errors
/// `TypeError` for a value of another type (or a non-`str` dict key); `ValueError`
/// for an integer outside `i64`/`u64` or a non-finite float.
pub fn to_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::Null);
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(u) = v.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return v
            .extract::<i64>()
            .map(Value::from)
            .map_err(|_| PyValueError::new_err("integer out of range"));
    }
    if v.is_instance_of::<PyFloat>() {
        let f: f64 = v.extract()?;
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("a float must be finite"));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if let Ok(l) = v.cast::<PyList>() {
        return l
            .iter()
            .map(|i| to_json(&i))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        return t
            .iter()
            .map(|i| to_json(&i))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut m = serde_json::Map::new();
        for (k, val) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("dict keys must be str"))?
                .to_str()?
                .to_string();
            m.insert(key, to_json(&val)?);
        }
        return Ok(Value::Object(m));
    }
    Err(PyTypeError::new_err(format!(
        "cannot convert {} to JSON",
        v.get_type().name()?
    )))
}

/// Converts a JSON value into Python (`dict`, `list`, `str`, `int`, `float`, `bool`,
/// `None`).
///
/// # Errors
/// Only if Python cannot allocate.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for item in a {
                l.append(to_py(py, item)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, item) in o {
                d.set_item(k, to_py(py, item)?)?;
            }
            d.into_any()
        }
    })
}
