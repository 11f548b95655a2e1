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
/// stops with a one-line error naming the variable (exit status 2).
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
