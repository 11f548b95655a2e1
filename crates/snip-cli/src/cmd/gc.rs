//! `snip gc`: remove expired originals and temp files of dead writers, and evict the
//! oldest originals until the store is within its caps.
use anyhow::{bail, Result};
use snip_store::StoreHandle;
use std::process::ExitCode;

/// Arguments of `snip gc`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `snip gc`.
pub fn run(args: Args) -> Result<ExitCode> {
    let store = match snip_store::open_from_env() {
        StoreHandle::Open(s) => s,
        StoreHandle::Disabled => {
            crate::common::print("snip gc: the store is off (SNIP_STORE=0); nothing to collect\n")?;
            return Ok(ExitCode::SUCCESS);
        }
        StoreHandle::Unavailable(why) => bail!("gc: {why}"),
    };
    let r = store.gc()?;
    if args.json {
        let mut v = serde_json::to_value(&r)?;
        v["store"] = store.dir().display().to_string().into();
        crate::common::print(format!("{v}\n"))?;
    } else {
        let t = super::stats::thousands;
        crate::common::print(format!(
            "snip gc: removed {} expired and {} over-cap originals, {} stale temp files; {} originals ({} bytes) left in {}\n",
            t(r.expired),
            t(r.evicted),
            t(r.stale_temp_files),
            t(r.entries),
            t(r.bytes),
            store.dir().display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
