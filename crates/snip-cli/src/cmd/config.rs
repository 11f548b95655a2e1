//! `snip config`: print the resolved configuration.
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip config`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Print JSON instead of `NAME=value` lines.
    #[arg(long)]
    json: bool,
}

/// Prints every resolved `SNIP_*` setting, one `NAME=value` per line.
pub fn run(args: Args) -> Result<ExitCode> {
    let cfg = crate::common::core_config()?;
    let entries = cfg.entries();
    if args.json {
        let map: serde_json::Map<String, serde_json::Value> = entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
            .collect();
        println!("{}", serde_json::Value::Object(map));
    } else {
        for (k, v) in entries {
            println!("{k}={v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
