//! Keyword options of the Python functions, turned into `SNIP_*` variables.
//!
//! Every function reads its configuration from the environment on every call, the same
//! variables the CLI reads. A keyword option overrides one variable for one call:
//! `max_bytes=4096` is `SNIP_MAX_BYTES=4096`, `store=False` is `SNIP_STORE=0`. `None`
//! means "as the environment says", and an empty string means "the default" (unset).

use std::collections::BTreeMap;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};

/// Per-call overrides: variable name → value, consulted before the environment.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    vars: BTreeMap<String, String>,
}

impl Overrides {
    /// Reads `name`: the override when set, else the process environment.
    pub fn lookup(&self, name: &str) -> Option<String> {
        match self.vars.get(name) {
            Some(v) => Some(v.clone()),
            None => std::env::var(name).ok(),
        }
    }

    /// Sets one variable for this call.
    pub fn set(&mut self, name: &str, value: String) {
        self.vars.insert(name.to_string(), value);
    }
}

/// Converts keyword options into overrides.
///
/// Each key `k` names the variable `SNIP_<K>` (upper case), which must be one of
/// `known` (the variables the call reads). Values may be `bool` (`1`/`0`), `int` or
/// `str`; `None` leaves the variable to the environment.
///
/// # Errors
/// `TypeError` naming an unknown option or a value of another type.
pub fn from_kwargs(
    kwargs: Option<&Bound<'_, PyDict>>,
    known: &[&str],
    skip: &[&str],
) -> PyResult<Overrides> {
    let mut out = Overrides::default();
    let Some(kwargs) = kwargs else {
        return Ok(out);
    };
    for (key, value) in kwargs.iter() {
        let key: String = key.extract()?;
        if skip.contains(&key.as_str()) {
            continue;
        }
        let var = format!("SNIP_{}", key.to_ascii_uppercase());
        if !known.contains(&var.as_str()) {
            let mut names: Vec<String> = known
                .iter()
                .map(|v| v.trim_start_matches("SNIP_").to_ascii_lowercase())
                .collect();
            names.sort();
            return Err(PyTypeError::new_err(format!(
                "unknown option {key:?}; known options: {}",
                names.join(", ")
            )));
        }
        if value.is_none() {
            continue;
        }
        let text = if value.is_instance_of::<PyBool>() {
            (if value.extract::<bool>()? { "1" } else { "0" }).to_string()
        } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyString>() {
            value.str()?.to_cow()?.into_owned()
        } else {
            return Err(PyTypeError::new_err(format!(
                "option {key:?} takes a bool, int or str, not {}",
                value.get_type().name()?
            )));
        };
        out.set(&var, text);
    }
    Ok(out)
}
