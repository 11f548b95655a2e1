//! The shared store: originals and the ledger in Redis, chosen by `SNIP_STORE_URL`.
//!
//! Keys (every key of one entry carries the hash tag `{<id>}`, so a cluster keeps an
//! entry's keys on one slot):
//!
//! ```text
//! snip:key          32 random bytes: the HMAC key of ids, set once (SET NX), shared
//! snip:{sn_…}:o     one original: the same 116-byte header + bytes as an entry file,
//!                   written whole with SET NX EX <ttl>; Redis expires it
//! snip:ledger       the savings ledger: a stream capped near 100,000 rows (MAXLEN ~)
//! ```
//!
//! Every call waits at most `SNIP_STORE_CONNECT_TIMEOUT_MS` to connect and
//! `SNIP_STORE_TIMEOUT_MS` for each read or write of a reply; any failure is a
//! [`StoreError::Remote`], which callers treat as a full disk (fail open).

use crate::entry::{self, Entry, Source, HEADER_LEN};
use crate::error::StoreError;
use crate::id::{Key, KEY_LEN};
use crate::ledger::LedgerRow;
use crate::options::{StoreOptions, StoreUrl};
use crate::store::{GcReport, Lookup};
use redis::{ConnectionInfo, ConnectionLike, ErrorKind, IntoConnectionInfo, RedisError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The key holding the HMAC key of ids.
pub const KEY_KEY: &str = "snip:key";
/// The stream holding the ledger.
pub const LEDGER_KEY: &str = "snip:ledger";
/// About how many rows the ledger stream keeps (older rows are trimmed).
pub const LEDGER_MAX_ROWS: u64 = 100_000;
/// Originals at least this large (bytes) are first refreshed (`EXPIRE`) in case they
/// are already stored, rather than sent again.
const REFRESH_FIRST_MIN: usize = 64 * 1024;

/// The key of the original `id`.
pub(crate) fn object_key(id: &str) -> String {
    format!("snip:{{{id}}}:o")
}

enum Target {
    Single(redis::Client),
    Cluster(redis::cluster::ClusterClient, Vec<ConnectionInfo>),
}

enum Conn {
    Single(redis::Connection),
    Cluster(Box<redis::cluster::ClusterConnection>),
}

impl Conn {
    fn like(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Conn::Single(c) => c,
            Conn::Cluster(c) => c.as_mut(),
        }
    }
}

/// A connection (made on first use, made afresh after a failure) to the shared store.
pub(crate) struct Redis {
    target: Target,
    conn: Mutex<Option<Conn>>,
    location: String,
    secrets: Vec<String>,
    connect_timeout: Duration,
    timeout: Duration,
    ttl_secs: u64,
    host: String,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redis({})", self.location)
    }
}

impl Redis {
    /// Connects to the store at `url` and loads (or creates, once for every machine)
    /// the key of ids.
    ///
    /// # Errors
    /// [`StoreError::Remote`] with one line saying why.
    pub(crate) fn open(url: &StoreUrl, opts: &StoreOptions) -> Result<(Redis, Key), StoreError> {
        let location = url.masked();
        let mut secrets: Vec<String> = url.password.iter().cloned().collect();
        if let Some(p) = url_password(&url.raw) {
            secrets.push(p);
        }
        let fail = |reason: String| StoreError::Remote {
            location: location.clone(),
            reason: scrub(&reason, &secrets),
        };
        if url.is_tls() && !cfg!(feature = "redis-tls") {
            return Err(fail(format!(
                "{}:// needs snip built with the `redis-tls` feature; use redis:// on a trusted network or rebuild",
                url.scheme()
            )));
        }
        let plain = if url.is_tls() { "rediss" } else { "redis" };
        let rest = url.raw.split_once("://").map_or("", |(_, r)| r);
        let target = if url.is_cluster() {
            let (auth, tail) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let (userinfo, hosts) = match auth.rsplit_once('@') {
                Some((u, h)) => (format!("{u}@"), h),
                None => (String::new(), auth),
            };
            let mut nodes = Vec::new();
            for h in hosts.split(',') {
                let info = format!("{plain}://{userinfo}{}{tail}", h.trim())
                    .into_connection_info()
                    .map_err(|e| fail(format!("SNIP_STORE_URL does not parse: {e}")))?;
                nodes.push(with_password(info, url.password.as_deref()));
            }
            let client = redis::cluster::ClusterClient::builder(nodes.clone())
                .connection_timeout(opts.connect_timeout)
                .response_timeout(opts.timeout)
                .retries(2)
                .min_retry_wait(1)
                .max_retry_wait(10)
                .build()
                .map_err(|e| fail(format!("SNIP_STORE_URL is not a usable cluster: {e}")))?;
            Target::Cluster(client, nodes)
        } else {
            let info = format!("{plain}://{rest}")
                .into_connection_info()
                .map_err(|e| fail(format!("SNIP_STORE_URL does not parse: {e}")))?;
            let mut info = with_password(info, url.password.as_deref());
            // No CLIENT SETINFO at connect: one round trip less per call.
            let settings = info.redis_settings().clone().set_skip_set_lib_name();
            info = info.set_redis_settings(settings);
            Target::Single(
                redis::Client::open(info)
                    .map_err(|e| fail(format!("SNIP_STORE_URL is not usable: {e}")))?,
            )
        };
        let r = Redis {
            target,
            conn: Mutex::new(None),
            location: location.clone(),
            secrets: secrets.clone(),
            connect_timeout: opts.connect_timeout,
            timeout: opts.timeout,
            ttl_secs: opts.ttl.as_secs().max(1),
            host: host_name(),
        };
        let key = r.load_or_create_key()?;
        Ok((r, key))
    }

    /// The URL, password masked.
    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    fn connect(&self) -> Result<Conn, RedisError> {
        match &self.target {
            Target::Single(c) => {
                let conn = c.get_connection_with_timeout(self.connect_timeout)?;
                conn.set_read_timeout(Some(self.timeout))?;
                conn.set_write_timeout(Some(self.timeout))?;
                Ok(Conn::Single(conn))
            }
            Target::Cluster(c, _) => Ok(Conn::Cluster(Box::new(c.get_connection()?))),
        }
    }

    /// Runs `f` on the connection (connecting first if needed). A failure of the
    /// connection drops it, so the next call connects afresh.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn ConnectionLike) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let conn = match guard.as_mut() {
            Some(c) => c,
            None => guard.insert(self.connect().map_err(|e| self.error(&e))?),
        };
        f(conn.like()).map_err(|e| {
            if e.is_io_error()
                || e.is_timeout()
                || e.is_connection_dropped()
                || e.is_unrecoverable_error()
                || matches!(e.kind(), ErrorKind::Parse)
            {
                *guard = None;
            }
            self.error(&e)
        })
    }

    /// One line for `e`, naming the likely cause; never a password.
    fn error(&self, e: &RedisError) -> StoreError {
        let code = e.code().unwrap_or("");
        let reason = if e.is_timeout() {
            format!(
                "no answer within {} ms to connect or {} ms to reply (SNIP_STORE_CONNECT_TIMEOUT_MS, SNIP_STORE_TIMEOUT_MS)",
                self.connect_timeout.as_millis(),
                self.timeout.as_millis()
            )
        } else if e.is_connection_refusal() {
            "connection refused: is Redis running at that address?".to_string()
        } else if e.kind() == ErrorKind::AuthenticationFailed
            || matches!(code, "NOAUTH" | "WRONGPASS" | "NOPERM")
        {
            format!("Redis refused the credentials ({}); check the user and password in SNIP_STORE_URL or SNIP_STORE_PASSWORD", first_line(&e.to_string()))
        } else if code == "OOM" {
            "Redis is full (maxmemory reached, nothing it may evict); set an expiry-aware maxmemory-policy such as volatile-lru (docs/store.md)".to_string()
        } else if code == "WRONGTYPE" {
            "a value of another type is at one of snip's keys (WRONGTYPE); delete it or point SNIP_STORE_URL at another database".to_string()
        } else if matches!(e.kind(), ErrorKind::Parse) {
            format!(
                "the server does not speak the Redis protocol ({})",
                first_line(&e.to_string())
            )
        } else {
            first_line(&e.to_string())
        };
        StoreError::Remote {
            location: self.location.clone(),
            reason: scrub(&reason, &self.secrets),
        }
    }

    fn refused(&self, reason: String) -> StoreError {
        StoreError::Remote {
            location: self.location.clone(),
            reason,
        }
    }

    fn load_or_create_key(&self) -> Result<Key, StoreError> {
        let mut fresh = [0u8; KEY_LEN];
        getrandom::fill(&mut fresh).map_err(|e| self.refused(format!("no random bytes: {e}")))?;
        // Set once, by whichever machine comes first; every other one reads it.
        let k: Option<Vec<u8>> = self.with(|c| {
            // Usually there: one round trip.
            if let Some(k) = redis::cmd("GET").arg(KEY_KEY).query::<Option<Vec<u8>>>(c)? {
                return Ok(Some(k));
            }
            let _: Option<String> = redis::cmd("SET")
                .arg(KEY_KEY)
                .arg(&fresh[..])
                .arg("NX")
                .query(c)?;
            redis::cmd("GET").arg(KEY_KEY).query(c)
        })?;
        let k = k.ok_or_else(|| self.refused(format!("{KEY_KEY} vanished right after it was set; is another program deleting snip's keys?")))?;
        let k: [u8; KEY_LEN] = k.as_slice().try_into().map_err(|_| {
            self.refused(format!(
                "{KEY_KEY} holds {} bytes, not {KEY_LEN}: it is not snip's key; delete it (ids then change) or point SNIP_STORE_URL at another database",
                k.len()
            ))
        })?;
        Ok(Key::from_bytes(k))
    }

    /// Keeps `original` (SHA-256 `digest`) under `id`: written whole or not at all;
    /// when present already, its TTL starts over.
    pub(crate) fn put(
        &self,
        id: &str,
        digest: &[u8; 32],
        original: &[u8],
    ) -> Result<(), StoreError> {
        let key = object_key(id);
        let ttl = self.ttl_secs;
        if original.len() >= REFRESH_FIRST_MIN {
            let refreshed: bool =
                self.with(|c| redis::cmd("EXPIRE").arg(&key).arg(ttl).query(c))?;
            if refreshed {
                return Ok(());
            }
        }
        let mut value = Vec::with_capacity(HEADER_LEN + original.len());
        value.extend_from_slice(&entry::header(digest, original.len() as u64));
        value.extend_from_slice(original);
        self.with(|c| {
            let set: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(&value)
                .arg("NX")
                .arg("EX")
                .arg(ttl)
                .query(c)?;
            if set.is_none() {
                let _: bool = redis::cmd("EXPIRE").arg(&key).arg(ttl).query(c)?;
            }
            Ok(())
        })
    }

    /// Where `id` stands: its header read with one range read, its size with STRLEN.
    pub(crate) fn lookup(self: &Arc<Self>, id: &str) -> Result<Lookup, StoreError> {
        let key = object_key(id);
        let (len, head): (u64, Vec<u8>) = self.with(|c| {
            let len: u64 = redis::cmd("STRLEN").arg(&key).query(c)?;
            if len == 0 {
                return Ok((0, Vec::new()));
            }
            let head: Vec<u8> = redis::cmd("GETRANGE")
                .arg(&key)
                .arg(0)
                .arg(HEADER_LEN - 1)
                .query(c)?;
            Ok((len, head))
        })?;
        if len == 0 {
            return Ok(Lookup::Missing);
        }
        Entry::from_header(&head, len, Source::Remote(Arc::clone(self), key))
            .map(Lookup::Live)
            .map_err(|e| self.refused(format!("{id} is damaged: {e}")))
    }

    /// Bytes `[start, end)` of the value at `key` (offsets in the value, header
    /// included), with one range read.
    pub(crate) fn read_range(&self, key: &str, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        if start >= end {
            return Ok(Vec::new());
        }
        let got: Vec<u8> = self
            .with(|c| {
                redis::cmd("GETRANGE")
                    .arg(key)
                    .arg(start)
                    .arg(end - 1)
                    .query(c)
            })
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        if got.len() as u64 != end - start {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the original was evicted or expired while it was read",
            ));
        }
        Ok(got)
    }

    /// Removes the original `id` (found damaged). Best effort.
    pub(crate) fn discard(&self, id: &str) -> bool {
        self.with(|c| redis::cmd("DEL").arg(object_key(id)).query::<u64>(c))
            .is_ok_and(|n| n > 0)
    }

    /// Appends `row` (naming this machine) to the ledger stream.
    pub(crate) fn record(&self, row: &LedgerRow) -> Result<(), StoreError> {
        let mut row = row.clone();
        if row.host.is_none() {
            row.host = Some(self.host.clone());
        }
        let json = serde_json::to_string(&row).map_err(|e| self.refused(e.to_string()))?;
        self.with(|c| {
            redis::cmd("XADD")
                .arg(LEDGER_KEY)
                .arg("MAXLEN")
                .arg("~")
                .arg(LEDGER_MAX_ROWS)
                .arg("*")
                .arg("row")
                .arg(&json)
                .query::<String>(c)
        })
        .map(|_| ())
    }

    /// The ledger rows from `since_ms` on, oldest first, and how many did not parse.
    pub(crate) fn ledger_rows(&self, since_ms: u64) -> Result<(Vec<LedgerRow>, u64), StoreError> {
        let reply: redis::streams::StreamRangeReply = self.with(|c| {
            redis::cmd("XRANGE")
                .arg(LEDGER_KEY)
                .arg(format!("{since_ms}-0"))
                .arg("+")
                .query(c)
        })?;
        let mut rows = Vec::with_capacity(reply.ids.len());
        let mut bad = 0;
        for sid in reply.ids {
            match sid
                .get::<Vec<u8>>("row")
                .and_then(|b| serde_json::from_slice::<LedgerRow>(&b).ok())
            {
                Some(r) if r.time_ms >= since_ms => rows.push(r),
                Some(_) => {}
                None => bad += 1,
            }
        }
        Ok((rows, bad))
    }

    /// Counts the originals kept (Redis expires and evicts them itself, so nothing is
    /// removed): a SCAN of every primary.
    pub(crate) fn gc(&self) -> Result<GcReport, StoreError> {
        let mut report = GcReport::default();
        let mut count = |c: &mut dyn ConnectionLike| -> redis::RedisResult<()> {
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg("snip:{sn_*}:o")
                    .arg("COUNT")
                    .arg(1000)
                    .query(c)?;
                for k in keys {
                    let n: u64 = redis::cmd("STRLEN").arg(&k).query(c)?;
                    if n > 0 {
                        report.entries += 1;
                        report.bytes += n;
                    }
                }
                if next == 0 {
                    return Ok(());
                }
                cursor = next;
            }
        };
        match &self.target {
            Target::Single(_) => self.with(|c| count(c))?,
            Target::Cluster(_, nodes) => {
                // Each seed node on its own: primaries only (a replica holds copies).
                for info in nodes {
                    let client = redis::Client::open(info.clone()).map_err(|e| self.error(&e))?;
                    let mut c = client
                        .get_connection_with_timeout(self.connect_timeout)
                        .map_err(|e| self.error(&e))?;
                    c.set_read_timeout(Some(self.timeout.max(Duration::from_secs(1))))
                        .map_err(|e| self.error(&e))?;
                    let role: Vec<redis::Value> = redis::cmd("ROLE")
                        .query(&mut c)
                        .map_err(|e| self.error(&e))?;
                    let primary =
                        matches!(role.first(), Some(redis::Value::BulkString(b)) if b == b"master");
                    if primary {
                        count(&mut c).map_err(|e| self.error(&e))?;
                    }
                }
            }
        }
        Ok(report)
    }
}

fn with_password(info: ConnectionInfo, password: Option<&str>) -> ConnectionInfo {
    match password {
        Some(p) => {
            let settings = info.redis_settings().clone().set_password(p);
            info.set_redis_settings(settings)
        }
        None => info,
    }
}

/// The password in a URL's user info, if any (to keep it out of messages).
fn url_password(raw: &str) -> Option<String> {
    let rest = raw.split_once("://")?.1;
    let auth = rest.split('/').next()?;
    let (userinfo, _) = auth.rsplit_once('@')?;
    let p = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
    (!p.is_empty()).then(|| p.to_string())
}

/// `msg` on one line, with every secret replaced by `***`.
fn scrub(msg: &str, secrets: &[String]) -> String {
    let mut s = msg.replace(['\n', '\r'], " ");
    for secret in secrets.iter().filter(|s| s.len() >= 3) {
        s = s.replace(secret.as_str(), "***");
    }
    s
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// This machine's name, as ledger rows name it: `SNIP_HOST`, else the host name.
fn host_name() -> String {
    std::env::var("SNIP_HOST")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .or_else(|| std::env::var("HOSTNAME").ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
        .chars()
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_pass() {
        assert_eq!(
            url_password("redis://u:s3cret@h:1/0").as_deref(),
            Some("s3cret")
        );
        assert_eq!(url_password("redis://h:1/0"), None);
        let s = scrub("bad s3cret\nthere", &["s3cret".into()]);
        assert_eq!(s, "bad *** there");
        assert_eq!(object_key("sn_0"), "snip:{sn_0}:o");
    }
}
