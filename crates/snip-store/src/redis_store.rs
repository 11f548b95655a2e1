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
use crate::restore::{Sparse, VERIFY_ALWAYS_MAX_BYTES};
use crate::store::{GcReport, Lookup};
use redis::{ConnectionInfo, ConnectionLike, ErrorKind, IntoConnectionInfo, RedisError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    /// A primary found through Sentinel: asked again at every new connection, so a
    /// failover is followed.
    Sentinel(Sentinel),
}

/// How to find the primary through Sentinel. The client library's own Sentinel
/// client waits on the sentinels without a time limit; this asks them with snip's
/// connect and reply timeouts.
struct Sentinel {
    sentinels: Vec<ConnectionInfo>,
    service: String,
    /// `redis` or `rediss`, for the primary.
    scheme: String,
    /// `user:pass@` (or empty) from the URL, for the primary.
    userinfo: String,
    db: u32,
    password: Option<String>,
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

/// Connections kept for reuse: calls from several threads each take one (or make a
/// new one), so they do not wait for each other.
const POOL_MAX: usize = 16;
/// After a failure to reach the server, calls fail at once (with the same reason)
/// for this long, doubled after each further failure up to [`BACKOFF_MAX`].
const BACKOFF_MIN: Duration = Duration::from_millis(50);
/// The longest a long-lived process waits before trying the server again.
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// The server could not be reached: until when calls fail without trying, and why.
struct Down {
    until: Instant,
    wait: Duration,
    reason: String,
}

/// An original ready to send: its id and its value (header, then the bytes).
pub(crate) struct Pending {
    id: String,
    value: Vec<u8>,
    /// The line index, for originals over [`VERIFY_ALWAYS_MAX_BYTES`].
    lines: Option<Vec<u8>>,
}

impl Pending {
    pub(crate) fn new(id: String, digest: &[u8; 32], original: &[u8]) -> Pending {
        let mut value = Vec::with_capacity(HEADER_LEN + original.len());
        value.extend_from_slice(&entry::header(digest, original.len() as u64));
        value.extend_from_slice(original);
        let lines = (original.len() as u64 > VERIFY_ALWAYS_MAX_BYTES).then(|| line_index(original));
        Pending { id, value, lines }
    }
}

/// Lines between two entries of a stored line index.
pub(crate) const INDEX_STRIDE: u64 = 64;

/// The stored line index of `original`: the number of lines (as `lines` restores
/// count them: a final `\n` ends the last line, it does not start one), then the
/// byte offset of lines 1, 1 + 64, 1 + 128, …; each a little-endian u64.
fn line_index(original: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + original.len() / 512);
    out.extend_from_slice(&0u64.to_le_bytes());
    if original.is_empty() {
        return out;
    }
    out.extend_from_slice(&0u64.to_le_bytes());
    let mut count = 1u64;
    for i in memchr::memchr_iter(b'\n', original) {
        if i + 1 < original.len() {
            if count.is_multiple_of(INDEX_STRIDE) {
                out.extend_from_slice(&(i as u64 + 1).to_le_bytes());
            }
            count += 1;
        }
    }
    out[..8].copy_from_slice(&count.to_le_bytes());
    out
}

/// The key of the line index of the original at `object` (`snip:{id}:o`).
fn index_key(object: &str) -> String {
    format!("{}:l", object.strip_suffix(":o").unwrap_or(object))
}

/// The shared store: connections made on demand and kept in a small pool; after the
/// server could not be reached, calls fail at once for a short, growing while
/// (50 ms doubling to 2 s), then try again, so a long-lived process recovers when the
/// server is back.
pub(crate) struct Redis {
    target: Target,
    pool: Mutex<Vec<Conn>>,
    down: Mutex<Option<Down>>,
    key: OnceLock<Key>,
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
    /// Reads the store's URL; connects only when first used (a server that is down
    /// now may be up for a later call).
    ///
    /// # Errors
    /// [`StoreError::Remote`] with one line saying why the URL cannot be used.
    pub(crate) fn open(url: &StoreUrl, opts: &StoreOptions) -> Result<Redis, StoreError> {
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
        let target = if url.is_cluster() || url.is_sentinel() {
            let (auth, tail) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let (userinfo, hosts) = match auth.rsplit_once('@') {
                Some((u, h)) => (format!("{u}@"), h),
                None => (String::new(), auth),
            };
            if url.is_sentinel() {
                sentinel_target(plain, &userinfo, hosts, tail, url.password.as_deref())
                    .map_err(fail)?
            } else {
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
            }
        } else {
            let info = format!("{plain}://{rest}")
                .into_connection_info()
                .map_err(|e| fail(format!("SNIP_STORE_URL does not parse: {e}")))?;
            let info = quiet(with_password(info, url.password.as_deref()));
            Target::Single(
                redis::Client::open(info)
                    .map_err(|e| fail(format!("SNIP_STORE_URL is not usable: {e}")))?,
            )
        };
        Ok(Redis {
            target,
            pool: Mutex::new(Vec::new()),
            down: Mutex::new(None),
            key: OnceLock::new(),
            location: location.clone(),
            secrets: secrets.clone(),
            connect_timeout: opts.connect_timeout,
            timeout: opts.timeout,
            ttl_secs: opts.ttl.as_secs().max(1),
            host: host_name(),
        })
    }

    /// The URL, password masked.
    pub(crate) fn location(&self) -> &str {
        &self.location
    }

    /// The key of ids: read (or created, once for every machine) on first use, then
    /// kept for the life of the process.
    ///
    /// # Errors
    /// [`StoreError::Remote`] when it cannot be read.
    pub(crate) fn key(&self) -> Result<Key, StoreError> {
        if let Some(k) = self.key.get() {
            return Ok(k.clone());
        }
        let k = self.load_or_create_key()?;
        Ok(self.key.get_or_init(|| k).clone())
    }

    fn connect(&self) -> Result<Conn, RedisError> {
        let single = |c: &redis::Client| -> Result<Conn, RedisError> {
            let conn = c.get_connection_with_timeout(self.connect_timeout)?;
            conn.set_read_timeout(Some(self.timeout))?;
            conn.set_write_timeout(Some(self.timeout))?;
            Ok(Conn::Single(conn))
        };
        match &self.target {
            Target::Single(c) => single(c),
            Target::Cluster(c, _) => Ok(Conn::Cluster(Box::new(c.get_connection()?))),
            Target::Sentinel(s) => {
                let mut last = None;
                for info in &s.sentinels {
                    match self.primary_from(s, info) {
                        Ok(c) => return single(&c),
                        Err(e) => last = Some(e),
                    }
                }
                Err(last.unwrap_or_else(|| {
                    RedisError::from((ErrorKind::InvalidClientConfig, "no sentinel named"))
                }))
            }
        }
    }

    /// Asks the sentinel at `info` for the primary of `s.service`, and checks that it
    /// is a primary (a failover may be under way).
    fn primary_from(
        &self,
        s: &Sentinel,
        info: &ConnectionInfo,
    ) -> Result<redis::Client, RedisError> {
        let mut c =
            redis::Client::open(info.clone())?.get_connection_with_timeout(self.connect_timeout)?;
        c.set_read_timeout(Some(self.timeout))?;
        c.set_write_timeout(Some(self.timeout))?;
        let addr: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(&s.service)
            .query(&mut c)?;
        let (host, port) = addr.ok_or_else(|| {
            RedisError::from((
                ErrorKind::InvalidClientConfig,
                "the sentinels know no primary by that service name",
                s.service.clone(),
            ))
        })?;
        let primary = format!("{}://{}{host}:{port}/{}", s.scheme, s.userinfo, s.db)
            .into_connection_info()
            .map(|i| quiet(with_password(i, s.password.as_deref())))?;
        let client = redis::Client::open(primary)?;
        let mut p = client.get_connection_with_timeout(self.connect_timeout)?;
        p.set_read_timeout(Some(self.timeout))?;
        let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut p)?;
        if !matches!(role.first(), Some(redis::Value::BulkString(b)) if b == b"master") {
            return Err(RedisError::from((
                ErrorKind::InvalidClientConfig,
                "the address the sentinels gave is not a primary (a failover is under way)",
            )));
        }
        Ok(client)
    }

    /// Runs `f` on a connection: one from the pool, else a new one. A connection
    /// that fails is dropped; when it came from the pool (the server may have
    /// restarted since), `f` is tried once more on a new one. While the server is
    /// known to be down (see [`Redis`]), fails at once.
    fn with<T>(
        &self,
        mut f: impl FnMut(&mut dyn ConnectionLike) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let pooled = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match pooled {
            Some(c) => {
                let mut c = c;
                match f(c.like()) {
                    Ok(v) => {
                        self.give_back(c);
                        return Ok(v);
                    }
                    Err(e) if !broken(&e) => {
                        self.give_back(c);
                        return Err(self.error(&e));
                    }
                    Err(_) => self.fresh()?,
                }
            }
            None => self.fresh()?,
        };
        match f(conn.like()) {
            Ok(v) => {
                self.give_back(conn);
                Ok(v)
            }
            Err(e) => {
                let err = self.error(&e);
                if broken(&e) {
                    self.note_down(&err);
                } else {
                    self.give_back(conn);
                }
                Err(err)
            }
        }
    }

    /// A new connection, unless the server was found down a moment ago.
    fn fresh(&self) -> Result<Conn, StoreError> {
        {
            let down = self.down.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(d) = down.as_ref() {
                if Instant::now() < d.until {
                    return Err(self.refused(d.reason.clone()));
                }
            }
        }
        match self.connect() {
            Ok(c) => {
                *self.down.lock().unwrap_or_else(|p| p.into_inner()) = None;
                Ok(c)
            }
            Err(e) => {
                let err = self.error(&e);
                self.note_down(&err);
                Err(err)
            }
        }
    }

    fn note_down(&self, err: &StoreError) {
        let reason = match err {
            StoreError::Remote { reason, .. } => reason.clone(),
            other => other.to_string(),
        };
        let mut down = self.down.lock().unwrap_or_else(|p| p.into_inner());
        let wait = down
            .as_ref()
            .map_or(BACKOFF_MIN, |d| (d.wait * 2).min(BACKOFF_MAX));
        *down = Some(Down {
            until: Instant::now() + wait,
            wait,
            reason,
        });
    }

    fn give_back(&self, c: Conn) {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOL_MAX {
            pool.push(c);
        }
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
        self.write(&[Pending::new(id.to_string(), digest, original)], None)
    }

    /// Keeps every one of `entries` and appends `row` to the ledger, in one round trip
    /// (plus one per original of 64 KiB or more, refreshed first in case it is already
    /// stored, rather than sent again): per entry `SET key value NX EX ttl` then
    /// `EXPIRE key ttl` (so one already there has its TTL start over), then `XADD`.
    ///
    /// # Errors
    /// [`StoreError::Remote`] when any of it failed; entries may then be kept or not
    /// (each is whole or absent).
    pub(crate) fn write(
        &self,
        entries: &[Pending],
        row: Option<&LedgerRow>,
    ) -> Result<(), StoreError> {
        let ttl = self.ttl_secs;
        let mut send = Vec::with_capacity(entries.len());
        for e in entries {
            if e.value.len() >= REFRESH_FIRST_MIN + HEADER_LEN {
                let refreshed: bool = self.with(|c| {
                    redis::cmd("EXPIRE")
                        .arg(object_key(&e.id))
                        .arg(ttl)
                        .query(c)
                })?;
                if refreshed {
                    continue;
                }
            }
            send.push(e);
        }
        let row = row.map(|r| self.row_json(r)).transpose()?;
        if send.is_empty() && row.is_none() {
            return Ok(());
        }
        let mut p = redis::pipe();
        for e in &send {
            let key = object_key(&e.id);
            p.cmd("SET")
                .arg(&key)
                .arg(&e.value)
                .arg("NX")
                .arg("EX")
                .arg(ttl)
                .ignore();
            p.cmd("EXPIRE").arg(&key).arg(ttl).ignore();
            if let Some(lines) = &e.lines {
                let key = index_key(&key);
                p.cmd("SET")
                    .arg(&key)
                    .arg(lines)
                    .arg("NX")
                    .arg("EX")
                    .arg(ttl)
                    .ignore();
                p.cmd("EXPIRE").arg(&key).arg(ttl).ignore();
            }
        }
        if let Some(json) = &row {
            p.cmd("XADD")
                .arg(LEDGER_KEY)
                .arg("MAXLEN")
                .arg("~")
                .arg(LEDGER_MAX_ROWS)
                .arg("*")
                .arg("row")
                .arg(json)
                .ignore();
        }
        self.with(|c| query_all::<()>(&p, c))
    }

    /// Where `id` stands: its header read with one range read, its size with STRLEN.
    pub(crate) fn lookup(self: &Arc<Self>, id: &str) -> Result<Lookup, StoreError> {
        let key = object_key(id);
        let (len, head): (u64, Vec<u8>) = self.with(|c| {
            let mut p = redis::pipe();
            p.cmd("STRLEN")
                .arg(&key)
                .cmd("GETRANGE")
                .arg(&key)
                .arg(0)
                .arg(HEADER_LEN - 1);
            query_all(&p, c)
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

    /// The line index of the original at `key`, read whole in one round trip (about
    /// 8 bytes per 64 lines); `None` when there is none (not stored, or evicted) or it
    /// is malformed.
    pub(crate) fn line_index(&self, key: &str) -> std::io::Result<Option<Sparse>> {
        let ikey = index_key(key);
        let raw: Vec<u8> = self
            .with(|c| redis::cmd("GET").arg(&ikey).query(c))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        if raw.len() < 8 || !raw.len().is_multiple_of(8) {
            return Ok(None);
        }
        let mut words = raw
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        let count = words.next().unwrap_or(0);
        let starts: Vec<u64> = words.collect();
        if !starts.is_sorted() {
            return Ok(None);
        }
        Ok(Some(Sparse { count, starts }))
    }

    /// One `PING`: whether the server answers now.
    pub(crate) fn ping(&self) -> Result<(), StoreError> {
        self.with(|c| redis::cmd("PING").query::<String>(c))
            .map(|_| ())
    }

    /// Removes the original `id` (found damaged). Best effort.
    pub(crate) fn discard(&self, id: &str) -> bool {
        let key = object_key(id);
        self.with(|c| {
            redis::cmd("DEL")
                .arg(&key)
                .arg(index_key(&key))
                .query::<u64>(c)
        })
        .is_ok_and(|n| n > 0)
    }

    /// Appends `row` (naming this machine) to the ledger stream.
    pub(crate) fn record(&self, row: &LedgerRow) -> Result<(), StoreError> {
        self.write(&[], Some(row))
    }

    /// `row` as the ledger stream holds it, naming this machine.
    fn row_json(&self, row: &LedgerRow) -> Result<String, StoreError> {
        let mut row = row.clone();
        if row.host.is_none() {
            row.host = Some(self.host.clone());
        }
        serde_json::to_string(&row).map_err(|e| self.refused(e.to_string()))
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
            Target::Single(_) | Target::Sentinel(_) => self.with(|c| count(c))?,
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

/// `p`'s commands in one round trip where the connection pipelines (a single
/// server); one after another on a cluster connection, whose synchronous client
/// routes each command to its slot's node but does not pipeline. For pipelines whose
/// replies are all wanted, or none (`T = ()`): the cluster path keeps every reply.
fn query_all<T: redis::FromRedisValue>(
    p: &redis::Pipeline,
    c: &mut dyn ConnectionLike,
) -> redis::RedisResult<T> {
    if c.supports_pipelining() {
        return p.query(c);
    }
    let mut out = Vec::new();
    for cmd in p.cmd_iter() {
        out.push(cmd.query::<redis::Value>(c)?);
    }
    redis::from_redis_value(redis::Value::Array(out)).map_err(Into::into)
}

/// True when `e` leaves the connection unusable (it is then dropped).
fn broken(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
        || matches!(e.kind(), ErrorKind::Parse)
}

/// `info` without CLIENT SETINFO at connect: one round trip less per connection.
fn quiet(info: ConnectionInfo) -> ConnectionInfo {
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    info.set_redis_settings(settings)
}

/// The Sentinel target of `redis+sentinel://[user:pass@]s1:p1,s2:p2/<service>[/db]`:
/// the user and password are the primary's (the sentinels are asked without them).
fn sentinel_target(
    plain: &str,
    userinfo: &str,
    hosts: &str,
    tail: &str,
    password: Option<&str>,
) -> Result<Target, String> {
    let mut path = tail.trim_start_matches('/').split('/');
    let service = path.next().unwrap_or("").to_string();
    if service.is_empty() {
        return Err("SNIP_STORE_URL names no Sentinel service: use redis+sentinel://host:port[,host:port…]/<service>[/<db>]".into());
    }
    let db: u32 = match path.next() {
        None | Some("") => 0,
        Some(d) => d
            .parse()
            .map_err(|_| format!("SNIP_STORE_URL: database {d:?} is not a number"))?,
    };
    let mut sentinels = Vec::new();
    for h in hosts.split(',') {
        let info = format!("{plain}://{}/", h.trim())
            .into_connection_info()
            .map_err(|e| format!("SNIP_STORE_URL does not parse: {e}"))?;
        sentinels.push(quiet(info));
    }
    Ok(Target::Sentinel(Sentinel {
        sentinels,
        service,
        scheme: plain.to_string(),
        userinfo: userinfo.to_string(),
        db,
        password: password.map(str::to_string),
    }))
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
        assert_eq!(index_key(&object_key("sn_0")), "snip:{sn_0}:l");
    }

    #[test]
    fn line_index_counts_as_lines_restores_do() {
        let words = |b: &[u8]| -> Vec<u64> {
            b.chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        assert_eq!(words(&line_index(b"")), [0]);
        assert_eq!(words(&line_index(b"a")), [1, 0]);
        assert_eq!(words(&line_index(b"a\n")), [1, 0]);
        assert_eq!(words(&line_index(b"a\n\n")), [2, 0]);
        let text: String = (0..200).map(|i| format!("{i}\n")).collect();
        let w = words(&line_index(text.as_bytes()));
        assert_eq!(w[0], 200);
        // Lines 1, 65, 129, 193 start at the offsets of "0", "64", "128", "192".
        let at = |n: usize| text.find(&format!("\n{n}\n")).unwrap() as u64 + 1;
        assert_eq!(&w[1..], &[0, at(64), at(128), at(192)]);
    }
}
