//! Where the store lives and how big it may grow, from `SNIP_*` variables.

use crate::error::StoreError;
use snip_core::ConfigError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default time to live of an original: 168 hours (7 days) since it was last stored.
pub const DEFAULT_TTL_HOURS: u64 = 168;
/// Default cap on the total size of the store's entry files: 128 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 128 * 1024 * 1024;
/// Default cap on the number of originals kept: 2,000.
pub const DEFAULT_MAX_ENTRIES: usize = 2000;
/// Default cap on one original's size: 32 MiB. Larger originals are not retained.
pub const DEFAULT_MAX_ENTRY_BYTES: u64 = 32 * 1024 * 1024;
/// Default response cap of one restore call: 8 KiB of content.
pub const DEFAULT_RECOVERY_MAX_BYTES: usize = 8192;
/// Hard maximum of the response cap: 64 KiB, whatever a request or variable asks.
pub const RECOVERY_HARD_MAX_BYTES: usize = 65536;
/// Smallest response cap a request may ask for (one UTF-8 code point always fits).
pub const RECOVERY_MIN_BYTES: usize = 4;
/// Default wait for a connection to the shared store (`SNIP_STORE_CONNECT_TIMEOUT_MS`).
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 20;
/// Default wait for one reply of the shared store (`SNIP_STORE_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT_MS: u64 = 50;

/// Where a shared store lives: `SNIP_STORE_URL` (with `SNIP_STORE_PASSWORD`, if set).
///
/// Its `Debug` and [`StoreUrl::masked`] never show a password.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    /// The URL as given (credentials included).
    pub(crate) raw: String,
    /// `SNIP_STORE_PASSWORD`, which takes the place of any password in the URL.
    pub(crate) password: Option<String>,
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreUrl({})", self.masked())
    }
}

/// The URL schemes `SNIP_STORE_URL` takes, and what each means.
const URL_EXPECTED: &str =
    "redis://[user:pass@]host:port/db, rediss://… (TLS), redis+cluster://host1:port1,host2:port2 or redis+sentinel://host1:port1,host2:port2/<service>[/db]";

impl StoreUrl {
    /// Checks the scheme and that a host is named.
    ///
    /// # Errors
    /// A [`ConfigError`] for `SNIP_STORE_URL`, showing the URL masked.
    pub fn parse(raw: &str, password: Option<String>) -> Result<StoreUrl, ConfigError> {
        let u = StoreUrl {
            raw: raw.trim().to_string(),
            password,
        };
        let bad = || ConfigError::new("SNIP_STORE_URL", &u.masked(), URL_EXPECTED);
        let (scheme, rest) = u.raw.split_once("://").ok_or_else(bad)?;
        if !matches!(
            scheme,
            "redis"
                | "rediss"
                | "redis+cluster"
                | "rediss+cluster"
                | "redis+sentinel"
                | "rediss+sentinel"
        ) {
            return Err(bad());
        }
        let hosts = rest.split('/').next().unwrap_or("");
        let hosts = hosts.rsplit_once('@').map_or(hosts, |(_, h)| h);
        if hosts.is_empty() || hosts.split(',').any(|h| h.trim().is_empty()) {
            return Err(bad());
        }
        Ok(u)
    }

    /// The scheme: `redis`, `rediss`, `redis+cluster`, `rediss+cluster`,
    /// `redis+sentinel` or `rediss+sentinel`.
    pub fn scheme(&self) -> &str {
        self.raw.split_once("://").map_or("", |(s, _)| s)
    }

    /// True for a cluster URL (`redis+cluster://`, `rediss+cluster://`).
    pub fn is_cluster(&self) -> bool {
        self.scheme().ends_with("+cluster")
    }

    /// True for a Sentinel URL (`redis+sentinel://`, `rediss+sentinel://`): the hosts
    /// are sentinels, the path names the service (then the database).
    pub fn is_sentinel(&self) -> bool {
        self.scheme().ends_with("+sentinel")
    }

    /// True for TLS (`rediss://`, `rediss+cluster://`, `rediss+sentinel://`).
    pub fn is_tls(&self) -> bool {
        self.scheme().starts_with("rediss")
    }

    /// The URL with any password shown as `***` (safe to print and log).
    pub fn masked(&self) -> String {
        let Some((scheme, rest)) = self.raw.split_once("://") else {
            // Not a URL: it may still hold a secret, so show only its length.
            return format!("<{} characters>", self.raw.chars().count());
        };
        let (auth, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        match auth.rsplit_once('@') {
            // `user:pass@`: the user is shown; a lone `x@` may be a password: hidden.
            Some((userinfo, hosts)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{hosts}{path}"),
                None => format!("{scheme}://***@{hosts}{path}"),
            },
            None => format!("{scheme}://{auth}{path}"),
        }
    }
}

/// Settings of the store, frozen when built.
///
/// All sizes are in bytes. Build with [`StoreOptions::from_lookup`] (environment) or
/// [`StoreOptions::in_dir`] (defaults in a given directory, for tests and tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// `SNIP_STORE` (default on). When off, nothing is written to disk: no originals,
    /// no ledger, and lossy markers say "original not retained".
    pub enabled: bool,
    /// The store directory: `SNIP_STORE_DIR`, else `$HERMES_HOME/cache/snip`, else
    /// `$XDG_CACHE_HOME/snip`, else `$HOME/.cache/snip`. Always absolute when enabled;
    /// empty when the store is off and no location could be resolved.
    pub dir: PathBuf,
    /// The variable that chose [`StoreOptions::dir`] (e.g. `SNIP_STORE_DIR`, `HOME`).
    pub dir_from: &'static str,
    /// `SNIP_STORE_TTL_HOURS` (default 168): an original older than this (since it was
    /// last stored) answers `expired` and is removed by the next eviction or `gc`.
    pub ttl: Duration,
    /// `SNIP_STORE_MAX_BYTES` (default 128 MiB): cap on the sum of entry file sizes
    /// (each entry is its original plus a 116-byte header).
    pub max_bytes: u64,
    /// `SNIP_STORE_MAX_ENTRIES` (default 2,000): cap on the number of originals.
    pub max_entries: usize,
    /// `SNIP_STORE_MAX_ENTRY_BYTES` (default 32 MiB): originals larger than this are
    /// not retained (the caller then applies only lossless rules).
    pub max_entry_bytes: u64,
    /// `SNIP_RECOVERY_MAX_BYTES` (default 8,192; a larger value than 65,536 is taken as
    /// 65,536): bytes of content one
    /// restore response carries unless the request asks for less or more (requests are
    /// clamped to [`RECOVERY_HARD_MAX_BYTES`]).
    pub recovery_max_bytes: usize,
    /// `SNIP_STORE_URL`: when set, originals and the ledger live in Redis at this URL
    /// instead of in [`StoreOptions::dir`] (see `docs/store.md`).
    pub url: Option<StoreUrl>,
    /// `SNIP_STORE_CONNECT_TIMEOUT_MS` (default 20): longest wait to connect to the
    /// shared store (TCP, TLS and the handshake).
    pub connect_timeout: Duration,
    /// `SNIP_STORE_TIMEOUT_MS` (default 50): longest wait for any one read or write of
    /// a reply of the shared store.
    pub timeout: Duration,
}

impl StoreOptions {
    /// Default settings with the store in `dir` (which should be absolute).
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        StoreOptions {
            enabled: true,
            dir: dir.into(),
            dir_from: "explicit",
            ttl: Duration::from_secs(DEFAULT_TTL_HOURS * 3600),
            max_bytes: DEFAULT_MAX_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            recovery_max_bytes: DEFAULT_RECOVERY_MAX_BYTES,
            url: None,
            connect_timeout: Duration::from_millis(DEFAULT_CONNECT_TIMEOUT_MS),
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        }
    }

    /// Reads the store settings through `lookup` (for example
    /// `|k| std::env::var(k).ok()`). Unset or empty variables take their defaults.
    ///
    /// # Errors
    /// [`StoreError::Config`] naming the first variable whose value does not parse or
    /// is out of range; [`StoreError::NoLocation`] when the store is on and no store
    /// location can be found (no `SNIP_STORE_DIR`, and none of `HERMES_HOME`,
    /// `XDG_CACHE_HOME`, `HOME` is an absolute path).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, StoreError> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let enabled = match get("SNIP_STORE") {
            Some(v) => snip_core::config::parse_bool("SNIP_STORE", &v)?,
            None => true,
        };
        let url = match get("SNIP_STORE_URL") {
            Some(u) => Some(StoreUrl::parse(&u, get("SNIP_STORE_PASSWORD"))?),
            None => None,
        };
        let (dir, dir_from) = match resolve_dir(&get) {
            Ok(found) => found,
            // A shared store needs no directory.
            Err(e) if enabled && url.is_none() => return Err(e),
            Err(_) => (PathBuf::new(), "none"),
        };
        let mut o = StoreOptions::in_dir(dir);
        o.enabled = enabled;
        o.dir_from = dir_from;
        o.url = url;
        let ms = "a whole number of milliseconds from 1 to 60000";
        for (name, slot) in [
            ("SNIP_STORE_CONNECT_TIMEOUT_MS", &mut o.connect_timeout),
            ("SNIP_STORE_TIMEOUT_MS", &mut o.timeout),
        ] {
            if let Some(v) = number(&get, name, ms)? {
                if v == 0 || v > 60_000 {
                    return Err(ConfigError::new(name, &v.to_string(), ms).into());
                }
                *slot = Duration::from_millis(v);
            }
        }
        let hours = "a whole number of hours from 1 to 876000";
        if let Some(h) = number(&get, "SNIP_STORE_TTL_HOURS", hours)? {
            if h == 0 || h > 24 * 365 * 100 {
                return Err(ConfigError::new("SNIP_STORE_TTL_HOURS", &h.to_string(), hours).into());
            }
            o.ttl = Duration::from_secs(h * 3600);
        }
        let bytes = "a whole number of bytes >= 1, e.g. 134217728";
        if let Some(v) = number(&get, "SNIP_STORE_MAX_BYTES", bytes)? {
            o.max_bytes = at_least_one("SNIP_STORE_MAX_BYTES", v, bytes)?;
        }
        if let Some(v) = number(&get, "SNIP_STORE_MAX_ENTRIES", "a whole number >= 1")? {
            let v = at_least_one("SNIP_STORE_MAX_ENTRIES", v, "a whole number >= 1")?;
            o.max_entries = usize::try_from(v).unwrap_or(usize::MAX);
        }
        let entry = "a whole number of bytes >= 1, e.g. 33554432";
        if let Some(v) = number(&get, "SNIP_STORE_MAX_ENTRY_BYTES", entry)? {
            o.max_entry_bytes = at_least_one("SNIP_STORE_MAX_ENTRY_BYTES", v, entry)?;
        }
        let cap = "a whole number of bytes >= 4 (at most 65536 is used)";
        if let Some(v) = number(&get, "SNIP_RECOVERY_MAX_BYTES", cap)? {
            if v < RECOVERY_MIN_BYTES as u64 {
                return Err(
                    ConfigError::new("SNIP_RECOVERY_MAX_BYTES", &v.to_string(), cap).into(),
                );
            }
            // Above the hard maximum the maximum applies, as for a request's own cap.
            o.recovery_max_bytes = v.min(RECOVERY_HARD_MAX_BYTES as u64) as usize;
        }
        Ok(o)
    }

    /// The resolved settings as `(variable, value)` pairs in a fixed order, for
    /// `snip config`. Sizes are printed in bytes, the TTL in hours.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let mut v = self.dir_entries();
        if let Some(u) = &self.url {
            v.push(("SNIP_STORE_URL", u.masked()));
            v.push((
                "SNIP_STORE_PASSWORD",
                (if u.password.is_some() {
                    "***"
                } else {
                    "(unset)"
                })
                .to_string(),
            ));
            v.push((
                "SNIP_STORE_CONNECT_TIMEOUT_MS",
                self.connect_timeout.as_millis().to_string(),
            ));
            v.push((
                "SNIP_STORE_TIMEOUT_MS",
                self.timeout.as_millis().to_string(),
            ));
        }
        v
    }

    fn dir_entries(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "SNIP_STORE",
                (if self.enabled { "1" } else { "0" }).to_string(),
            ),
            (
                "SNIP_STORE_DIR",
                format!("{} (from {})", self.dir.display(), self.dir_from),
            ),
            (
                "SNIP_STORE_TTL_HOURS",
                (self.ttl.as_secs() / 3600).to_string(),
            ),
            ("SNIP_STORE_MAX_BYTES", self.max_bytes.to_string()),
            ("SNIP_STORE_MAX_ENTRIES", self.max_entries.to_string()),
            (
                "SNIP_STORE_MAX_ENTRY_BYTES",
                self.max_entry_bytes.to_string(),
            ),
            (
                "SNIP_RECOVERY_MAX_BYTES",
                self.recovery_max_bytes.to_string(),
            ),
        ]
    }

    /// The largest original this store keeps, in bytes: the entry cap, and no more
    /// than fits in the total cap with its header.
    pub fn effective_entry_cap(&self) -> u64 {
        self.max_entry_bytes.min(
            self.max_bytes
                .saturating_sub(crate::entry::HEADER_LEN as u64),
        )
    }
}

fn resolve_dir(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<(PathBuf, &'static str), StoreError> {
    if let Some(d) = get("SNIP_STORE_DIR") {
        let p = crate::fsutil::normalize(Path::new(&d));
        if !p.is_absolute() {
            return Err(
                ConfigError::new("SNIP_STORE_DIR", &d, "an absolute directory path").into(),
            );
        }
        return Ok((p, "SNIP_STORE_DIR"));
    }
    if let Some(h) = get("HERMES_HOME") {
        let p = Path::new(&h);
        if p.is_absolute() {
            return Ok((p.join("cache").join("snip"), "HERMES_HOME"));
        }
    }
    if let Some(x) = get("XDG_CACHE_HOME") {
        // The XDG spec says relative values are ignored.
        let p = Path::new(&x);
        if p.is_absolute() {
            return Ok((p.join("snip"), "XDG_CACHE_HOME"));
        }
    }
    if let Some(h) = get("HOME") {
        let p = Path::new(&h);
        if p.is_absolute() {
            return Ok((p.join(".cache").join("snip"), "HOME"));
        }
    }
    Err(StoreError::NoLocation { home: get("HOME") })
}

fn number(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    expected: &str,
) -> Result<Option<u64>, ConfigError> {
    match get(name) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .replace('_', "")
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ConfigError::new(name, &v, expected)),
    }
}

fn at_least_one(name: &str, v: u64, expected: &str) -> Result<u64, ConfigError> {
    if v == 0 {
        Err(ConfigError::new(name, "0", expected))
    } else {
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn opts(pairs: &[(&str, &str)]) -> Result<StoreOptions, StoreError> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        StoreOptions::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn location_order() {
        let all = [
            ("SNIP_STORE_DIR", "/s"),
            ("HERMES_HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(opts(&all).unwrap().dir, PathBuf::from("/s"));
        // Trailing slashes and `.` components go (the symlink check needs the name).
        let o = opts(&[("SNIP_STORE_DIR", "/s/link//./")]).unwrap();
        assert_eq!(o.dir, PathBuf::from("/s/link"));
        assert_eq!(opts(&all[1..]).unwrap().dir, PathBuf::from("/h/cache/snip"));
        assert_eq!(opts(&all[2..]).unwrap().dir, PathBuf::from("/x/snip"));
        let o = opts(&all[3..]).unwrap();
        assert_eq!(o.dir, PathBuf::from("/home/u/.cache/snip"));
        assert_eq!(o.dir_from, "HOME");
        // Relative XDG_CACHE_HOME is ignored, as the spec says.
        let o = opts(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/u")]).unwrap();
        assert_eq!(o.dir, PathBuf::from("/u/.cache/snip"));
    }

    #[test]
    fn defaults_and_overrides() {
        let o = opts(&[("HOME", "/u")]).unwrap();
        assert!(o.enabled);
        assert_eq!(o.ttl, Duration::from_secs(168 * 3600));
        assert_eq!(o.max_bytes, 128 << 20);
        assert_eq!(o.max_entries, 2000);
        assert_eq!(o.max_entry_bytes, 32 << 20);
        assert_eq!(o.recovery_max_bytes, 8192);
        let o = opts(&[
            ("HOME", "/u"),
            ("SNIP_STORE_TTL_HOURS", "2"),
            ("SNIP_STORE_MAX_BYTES", "1_000"),
            ("SNIP_STORE_MAX_ENTRIES", "5"),
            ("SNIP_STORE_MAX_ENTRY_BYTES", "600"),
            ("SNIP_RECOVERY_MAX_BYTES", "65536"),
        ])
        .unwrap();
        assert_eq!(o.ttl, Duration::from_secs(7200));
        assert_eq!(o.max_bytes, 1000);
        assert_eq!(o.max_entries, 5);
        assert_eq!(o.effective_entry_cap(), 600);
        assert_eq!(o.recovery_max_bytes, 65536);
        assert_eq!(o.entries().len(), 7);
        // Over the hard maximum: the maximum, as a request's own cap is clamped.
        let o = opts(&[("HOME", "/u"), ("SNIP_RECOVERY_MAX_BYTES", "1000000")]).unwrap();
        assert_eq!(o.recovery_max_bytes, 65536);
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (k, v) in [
            ("SNIP_STORE_DIR", "relative/dir"),
            ("SNIP_STORE", "maybe"),
            ("SNIP_STORE_TTL_HOURS", "0"),
            ("SNIP_STORE_MAX_BYTES", "12MB"),
            ("SNIP_STORE_MAX_ENTRIES", "0"),
            ("SNIP_RECOVERY_MAX_BYTES", "3"),
        ] {
            match opts(&[("HOME", "/u"), (k, v)]).unwrap_err() {
                StoreError::Config(e) => assert_eq!(e.variable, k, "{e}"),
                e => panic!("{k}: {e}"),
            }
        }
        // No location: one line saying so and what to set.
        for home in [&[][..], &[("HOME", "relative")][..]] {
            let e = opts(home).unwrap_err();
            assert!(matches!(e, StoreError::NoLocation { .. }), "{e}");
            let text = e.to_string();
            assert!(
                text.starts_with("no store location could be found"),
                "{text}"
            );
            assert!(text.contains("set SNIP_STORE_DIR"), "{text}");
            assert!(!text.contains('\n') && !text.contains("unset it"), "{text}");
        }
    }

    #[test]
    fn store_urls_parse_and_never_show_a_password() {
        let o = opts(&[("SNIP_STORE_URL", "redis://u:s3cret@h:6379/2")]).unwrap();
        let u = o.url.as_ref().unwrap();
        assert!(!u.is_cluster() && !u.is_tls());
        assert_eq!(u.masked(), "redis://u:***@h:6379/2");
        assert!(!format!("{o:?}").contains("s3cret"));
        let shown: String = o
            .entries()
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        assert!(
            shown.contains("SNIP_STORE_URL=redis://u:***@h:6379/2"),
            "{shown}"
        );
        assert!(!shown.contains("s3cret"));
        // A shared store needs no directory.
        assert!(o.dir.as_os_str().is_empty());
        let u = StoreUrl::parse("redis+cluster://:pw@a:1,b:2", Some("x".into())).unwrap();
        assert!(u.is_cluster());
        assert_eq!(u.masked(), "redis+cluster://:***@a:1,b:2");
        let u = StoreUrl::parse("redis+sentinel://u:pw@a:1,b:2/snip/3", None).unwrap();
        assert!(u.is_sentinel() && !u.is_cluster() && !u.is_tls());
        assert_eq!(u.masked(), "redis+sentinel://u:***@a:1,b:2/snip/3");
        let u = StoreUrl::parse("rediss://token@h:1", None).unwrap();
        assert!(u.is_tls());
        assert_eq!(u.masked(), "rediss://***@h:1");
        for bad in [
            "http://h:1",
            "h:6379",
            "redis://",
            "redis+cluster://a:1,,b:2",
            "redis://u:p@/0",
        ] {
            let e = StoreUrl::parse(bad, None).unwrap_err();
            assert_eq!(e.variable, "SNIP_STORE_URL");
        }
        // The error shows the URL masked.
        let e = opts(&[("SNIP_STORE_URL", "memcached://u:s3cret@h:1")]).unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        for (k, v) in [
            ("SNIP_STORE_TIMEOUT_MS", "0"),
            ("SNIP_STORE_CONNECT_TIMEOUT_MS", "x"),
        ] {
            assert!(opts(&[("HOME", "/u"), (k, v)]).is_err());
        }
    }

    #[test]
    fn off_needs_no_location() {
        let o = opts(&[("SNIP_STORE", "0")]).unwrap();
        assert!(!o.enabled);
        assert_eq!(o.dir, PathBuf::new());
    }
}
