//! `snip gc`: remove expired originals and temp files of dead writers, and evict the
//! oldest originals until the store is within its caps.
use anyhow::{bail, Result};
use snip_store::{GcReport, StoreHandle};
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
    let store = match crate::common::existing_store() {
        Ok(StoreHandle::Open(s)) => s,
        Err(dir) => {
            // No store yet: nothing to collect, and nothing is created.
            if args.json {
                let mut v = serde_json::to_value(GcReport::default())?;
                v["store"] = dir.display().to_string().into();
                crate::common::print(format!("{v}\n"))?;
            } else {
                crate::common::print(format!(
                    "snip gc: there is no store at {} yet; nothing to collect\n",
                    dir.display()
                ))?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        Ok(StoreHandle::Disabled) => {
            crate::common::print("snip gc: the store is off (SNIP_STORE=0); nothing to collect\n")?;
            return Ok(ExitCode::SUCCESS);
        }
        Ok(StoreHandle::Unavailable(why)) => bail!("gc: {}", with_fix(&why)),
    };
    let r = match store.gc() {
        Ok(r) => r,
        Err(e) => bail!("gc: {}", with_fix(&e.to_string())),
    };
    if args.json {
        let mut v = serde_json::to_value(&r)?;
        v["store"] = store.dir().display().to_string().into();
        crate::common::print(format!("{v}\n"))?;
    } else {
        let t = super::stats::thousands;
        crate::common::print(format!(
            "snip gc: removed {} expired, {} over-cap and {} damaged originals, {} stale temp files; {} originals ({} bytes) left in {}\n",
            t(r.expired),
            t(r.evicted),
            t(r.damaged),
            t(r.stale_temp_files),
            t(r.entries),
            t(r.bytes),
            store.dir().display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `why`, and what to do when it is a write the file system refused (gc removes and
/// rewrites files, so it needs the store writable).
fn with_fix(why: &str) -> String {
    match snip_store::error::write_fix(why) {
        Some(fix) => format!("{why}; {fix}"),
        None => why.to_string(),
    }
}
