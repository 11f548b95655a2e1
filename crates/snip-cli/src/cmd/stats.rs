//! `snip stats`: what the savings ledger says, honestly.
//!
//! Counts every rewrite, including those that saved nothing; prints exact byte
//! counts and a percentage that is never rounded to zero when it is not zero (a loss
//! shows as negative).
use anyhow::{bail, Result};
use snip_store::{Stats, StoreHandle};
use std::fmt::Write as _;
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
        crate::common::print(render(
            stats,
            &dir.display().to_string(),
            args.since.as_deref(),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The text report.
fn render(s: &Stats, dir: &str, since: Option<&str>) -> String {
    let mut out = String::new();
    let span = since.map(|d| format!(", last {d}")).unwrap_or_default();
    let _ = writeln!(out, "snip savings ({dir}{span})");
    if s.rewrites == 0 {
        let _ = writeln!(out, "  no rewrites recorded");
        return out;
    }
    let _ = writeln!(
        out,
        "  rewrites      {} ({} smaller, {} saved nothing)",
        thousands(s.rewrites),
        thousands(s.saved_some),
        thousands(s.saved_nothing)
    );
    let change = if s.bytes_saved >= 0 {
        format!("saved {}", thousands(s.bytes_saved as u64))
    } else {
        format!("grew by {}", thousands(s.bytes_saved.unsigned_abs()))
    };
    let _ = writeln!(
        out,
        "  bytes         {} -> {} ({change}, {})",
        thousands(s.bytes_before),
        thousands(s.bytes_after),
        percent(s.percent_saved)
    );
    let _ = writeln!(
        out,
        "  recoverable   {} of {} retained originals still in the store ({} lossy rewrites)",
        thousands(s.recoverable),
        thousands(s.retained),
        thousands(s.lossy)
    );
    for (src, t) in &s.by_source {
        let _ = writeln!(
            out,
            "  {src:<13} {} rewrites, {} -> {} bytes",
            thousands(t.rewrites),
            thousands(t.bytes_before),
            thousands(t.bytes_after)
        );
    }
    if !s.by_rule.is_empty() {
        let rules: Vec<String> = s.by_rule.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let _ = writeln!(out, "  rules         {}", rules.join(", "));
    }
    if s.unreadable_rows > 0 {
        let _ = writeln!(
            out,
            "  ({} unreadable ledger lines skipped)",
            s.unreadable_rows
        );
    }
    out
}

/// `p` with as many decimals as it takes (up to 6) not to show a non-zero value as
/// zero; negative stays negative.
pub(crate) fn percent(p: f64) -> String {
    if p == 0.0 {
        return "0%".into();
    }
    for d in 1..=6 {
        let s = format!("{p:.d$}");
        if s.trim_start_matches('-')
            .bytes()
            .any(|b| (b'1'..=b'9').contains(&b))
        {
            return format!("{s}%");
        }
    }
    format!("{p:e}%")
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
    fn percent_never_rounds_a_non_zero_to_zero() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(81.04), "81.0%");
        assert_eq!(percent(0.004), "0.004%");
        assert_eq!(percent(-0.004), "-0.004%");
        assert_eq!(percent(-12.5), "-12.5%");
    }

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
