//! `snip config`: print the resolved configuration (core, store, conversation pass).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip config`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Print one JSON object instead of `NAME=value` lines.
    #[arg(long)]
    json: bool,
    /// Print the rules instead, in execution order, from the core's rule table: one
    /// line each, `id<TAB>stage<TAB>summary` (`--json`: an array of objects with
    /// `id`, `stage`, `lossy`, `summary`).
    #[arg(long)]
    rules: bool,
}

/// Prints every resolved `SNIP_*` setting, one `NAME=value` per line. A bad value
/// stops with a one-line error naming the variable (exit status 2). A `SNIP_*`
/// variable that is set but is no setting (a misspelling: snip ignores it) gets one
/// line on stderr, with the closest setting's name.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.rules {
        return print_rules(args.json);
    }
    let lookup = |k: &str| std::env::var(k).ok();
    let mut entries = crate::common::core_config()?.entries();
    let store =
        snip_store::StoreOptions::from_lookup(lookup).map_err(|e| anyhow::anyhow!("{e}"))?;
    entries.extend(store.entries());
    let context =
        snip_context::ContextSettings::from_lookup(lookup).map_err(|e| anyhow::anyhow!("{e}"))?;
    entries.extend(context.entries());
    let known: Vec<&str> = entries
        .iter()
        .map(|(k, _)| *k)
        .chain(UNPRINTED.iter().copied())
        .collect();
    for name in unknown_settings(std::env::vars_os(), &known) {
        let hint =
            closest(&name, &known).map_or_else(String::new, |k| format!(" (did you mean {k}?)"));
        eprintln!("snip config: {name} is set, but snip reads no such setting{hint}");
    }
    if args.json {
        let map: serde_json::Map<String, serde_json::Value> = entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
            .collect();
        crate::common::print(format!("{}\n", serde_json::Value::Object(map)))?;
    } else {
        let text: String = entries.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        crate::common::print(text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Settings `snip config` does not print (docs/store.md, "Redis"): read, not unknown.
const UNPRINTED: &[&str] = &[
    "SNIP_STORE_URL",
    "SNIP_STORE_PASSWORD",
    "SNIP_STORE_CONNECT_TIMEOUT_MS",
    "SNIP_STORE_TIMEOUT_MS",
    "SNIP_HOST",
];

/// The names among `vars` (name, value) that start with `SNIP_`, are not in `known`
/// and are not empty (an empty value means unset), sorted.
fn unknown_settings(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    known: &[&str],
) -> Vec<String> {
    let mut out: Vec<String> = vars
        .filter(|(_, v)| !v.is_empty())
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with("SNIP_") && !known.contains(&k.as_str()))
        .collect();
    out.sort();
    out
}

/// The setting in `known` that `name` most likely means: the same name in capitals,
/// else the shortest setting it begins (`SNIP_STORE_TTL`: `SNIP_STORE_TTL_HOURS`),
/// else the closest by Jaro-Winkler similarity, at least 0.9 (as command-line parsers
/// suggest a misspelt flag); `None` when nothing is that close.
fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let upper = name.to_ascii_uppercase();
    if let Some(k) = known.iter().find(|k| **k == upper) {
        return Some(k);
    }
    if let Some(k) = known
        .iter()
        .filter(|k| k.starts_with(&upper))
        .min_by_key(|k| k.len())
    {
        return Some(k);
    }
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(&upper, k), *k))
        .filter(|(score, _)| *score >= 0.9)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// The rule table ([`snip_core::rules::REGISTRY`]), in execution order.
fn print_rules(json: bool) -> Result<ExitCode> {
    let stage = |s: snip_core::Stage| match s {
        snip_core::Stage::Gate => "gate",
        snip_core::Stage::Lossless => "lossless",
        snip_core::Stage::Lossy => "lossy",
    };
    let rules = snip_core::rules::REGISTRY.iter();
    let text = if json {
        let list: Vec<serde_json::Value> = rules
            .map(|r| {
                serde_json::json!({
                    "id": r.id.as_str(),
                    "stage": stage(r.stage),
                    "lossy": r.lossy,
                    "summary": r.summary,
                })
            })
            .collect();
        format!("{}\n", serde_json::Value::Array(list))
    } else {
        rules
            .map(|r| format!("{}\t{}\t{}\n", r.id, stage(r.stage), r.summary))
            .collect()
    };
    crate::common::print(text)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_setting_is_found_with_its_closest_name() {
        let known = [
            "SNIP_MAX_BYTES",
            "SNIP_HEAD_BYTES",
            "SNIP_STORE_DIR",
            "SNIP_STORE",
            "SNIP_STORE_URL",
            "SNIP_STORE_TTL_HOURS",
        ];
        let vars = [
            ("SNIP_MAX_BYTE", "1"),
            ("PATH", "/bin"),
            ("SNIP_STORE", "0"),
            ("SNIP_STOER_DIR", "x"),
            ("SNIP_XYZZY_QUUX", "1"),
            ("SNIP_EMPTY", ""),
        ]
        .map(|(k, v)| (k.into(), v.into()));
        let unknown = unknown_settings(vars.into_iter(), &known);
        assert_eq!(
            unknown,
            ["SNIP_MAX_BYTE", "SNIP_STOER_DIR", "SNIP_XYZZY_QUUX"]
        );
        assert_eq!(closest("SNIP_MAX_BYTE", &known), Some("SNIP_MAX_BYTES"));
        assert_eq!(closest("SNIP_STOER_DIR", &known), Some("SNIP_STORE_DIR"));
        assert_eq!(closest("SNIP_max_bytes", &known), Some("SNIP_MAX_BYTES"));
        assert_eq!(
            closest("SNIP_STORE_TTL", &known),
            Some("SNIP_STORE_TTL_HOURS")
        );
        assert_eq!(closest("SNIP_XYZZY_QUUX", &known), None);
    }
}
