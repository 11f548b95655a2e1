//! `snip stats`: what the savings ledger says, honestly.
//!
//! Counts every rewrite, including those that saved nothing; prints exact byte
//! counts and a percentage that is never rounded to zero when it is not zero (a loss
//! shows as negative).
use anyhow::{bail, Result};
use snip_store::{Stats, StoreHandle};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// Arguments of `snip stats`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Only rewrites in this last span: a whole number and a unit, s/m/h/d/w
    /// (e.g. 90m, 24h, 7d).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
}

/// Runs `snip stats`.
pub fn run(args: Args) -> Result<ExitCode> {
    let since = match &args.since {
        None => None,
        Some(s) => Some(SystemTime::now() - parse_duration(s)?),
    };
    let store = match crate::common::existing_store() {
        Ok(StoreHandle::Open(s)) => s,
        Err(dir) => {
            // No store yet: nothing was recorded, and nothing is created.
            let since_ms = since
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64);
            let stats = Stats::from_rows(&[], since_ms, |_| false);
            return print_stats(&stats, &dir, &args);
        }
        Ok(StoreHandle::Disabled) => {
            crate::common::print(
                "snip stats: the store is off (SNIP_STORE=0), so no ledger is kept\n",
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        Ok(StoreHandle::Unavailable(why)) => bail!("stats: {why}"),
    };
    // The shared store is opened without a connection: say so when it is not there,
    // rather than report an empty ledger.
    store.check().map_err(|e| anyhow::anyhow!("stats: {e}"))?;
    print_stats(&store.stats(since), store.dir(), &args)
}

/// Prints the summary of the store in `dir`, as text or JSON.
fn print_stats(stats: &Stats, dir: &Path, args: &Args) -> Result<ExitCode> {
    if args.json {
        let mut v = serde_json::to_value(stats)?;
        v["store"] = dir.display().to_string().into();
        crate::common::print(format!("{v}\n"))?;
    } else {
        crate::common::print(stats.render(&dir.display().to_string(), args.since.as_deref()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `1234567` → `1,234,567`.
pub(crate) use snip_core::util::group_digits as thousands;

/// Parses `90s`, `30m`, `24h`, `7d`, `2w`.
fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => 0,
    };
    match n.parse::<u64>() {
        Ok(n) if secs > 0 => Ok(Duration::from_secs(n.saturating_mul(secs))),
        _ => bail!(
            "--since takes a whole number and a unit (s, m, h, d, w), e.g. 24h or 7d; got {s:?}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_numbers() {
        assert_eq!(parse_duration("24h").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(604_800));
        assert_eq!(parse_duration("90m").unwrap(), Duration::from_secs(5400));
        for bad in ["", "h", "7", "7y", "-1h", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(100), "100");
    }
}
