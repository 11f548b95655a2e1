//! The store of originals: atomic writes, caps, oldest-first eviction, many processes.
//!
//! Layout of a store directory (0700; every file 0600):
//!
//! ```text
//! key              32 random bytes: the HMAC key of ids
//! lock             flock(2) target; holds the usage counters (one JSON record padded
//!                  with spaces to 160 bytes, rewritten in place)
//! objects/         0700
//!   sn_<24 hex>    one original: 116-byte header + the bytes (see `entry`)
//!   .new-*         a large original's temp file just created, before its writer has
//!                  locked it
//!   .tmp-*         an original being written (renamed into place when complete):
//!                  a small one's writer holds the store lock while it exists, a
//!                  large one's holds the file itself locked from before it has
//!                  this name
//! ledger.jsonl     the savings ledger; ledger.jsonl.1 is the previous one
//! ```
//!
//! A small original (under 256 KiB) is written under one hold of the store lock:
//! counters read, counters written (already counting the new entry), temp file
//! written, renamed into place. A long-lived process may make that temp file ahead,
//! off the call's path ([`Store::prepare_spare`]: a `.tmp-*` file it holds locked,
//! like a large original's writer); the put then only writes and renames it. A large one is written to a temp file (locked with
//! flock while written) outside the store lock, between a reservation and its
//! settlement, each under the store lock. Readers never lock. An entry name appears
//! only when its file is complete, so a reader sees a whole entry or none. Every
//! cleaner of temp files holds the store lock, so it never sees a small writer's.

use crate::entry::{self, Entry, HEADER_LEN};
use crate::error::{IoContext, StoreError};
use crate::fsutil::{self, unix_ms};
use crate::id::{self, Key};
use crate::options::StoreOptions;
use fs4::fs_std::FileExt as _;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{ErrorKind, IoSlice, Write};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::time::{Duration, SystemTime};

/// Puts between full rescans of `objects/` (the usage counters are re-derived).
const RESCAN_EVERY_PUTS: u64 = 256;
/// Age after which the usage counters are re-derived by a rescan.
const RESCAN_EVERY: Duration = Duration::from_secs(600);
/// Originals at least this large (bytes) are hashed on a second thread while written.
const PARALLEL_HASH_MIN: usize = 256 * 1024;
/// Length of the usage record in the lock file: its JSON (at most 154 bytes) padded
/// with spaces and ending with a newline, so that it is rewritten by one `pwrite`
/// over the last one, never truncated.
const USAGE_RECORD_LEN: usize = 160;
/// A temp file left this long and not locked by a writer is from a dead writer.
const STALE_TEMP_AGE: Duration = Duration::from_secs(2);
/// Name prefix of a temp file before its writer has locked it.
const NEW_PREFIX: &str = ".new-";
/// Name prefix of a temp file its writer holds locked.
const TMP_PREFIX: &str = ".tmp-";

/// An open store of originals. Cheap to share by reference across threads; every
/// method is safe to call from many processes at once.
#[derive(Debug)]
pub struct Store {
    opts: StoreOptions,
    dir: PathBuf,
    objects: PathBuf,
    /// The key of ids (the shared store reads its own on first use).
    key: Option<Key>,
    /// The shared store, when `SNIP_STORE_URL` is set: originals and the ledger live
    /// there, and `dir` is only its URL (password masked), for messages.
    pub(crate) redis: Option<std::sync::Arc<crate::redis_store::Redis>>,
    /// Line indexes of large originals read whole by this process.
    pub(crate) lines: crate::restore::LineCache,
    /// An empty temp file made ahead for the next small put ([`Store::prepare_spare`]).
    spare: std::sync::Mutex<Option<Spare>>,
    /// Originals and ledger rows held until written ([`Store::write_behind`]), shared
    /// by every `Store` of this process opened on the same directory.
    pub(crate) behind: std::sync::Arc<crate::behind::Behind>,
}

/// An empty `.tmp-*` file in `objects/` made ahead of a put, held locked (so cleaners
/// leave it, as they leave a large original's writer's) until a put writes it and
/// renames it into place. Removed when dropped, if its name is still its own.
#[derive(Debug)]
struct Spare {
    file: File,
    path: PathBuf,
    /// Device and inode of `file`: the put checks that `path` still names it.
    dev: u64,
    ino: u64,
    /// The process that made it: a forked child shares the file and its lock, so
    /// only the maker uses it.
    pid: u32,
}

impl Spare {
    /// Whether this process made it and `path` still names this file (checked under
    /// the store lock: no other writer renames or removes it meanwhile).
    fn is_intact(&self) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        self.pid == std::process::id()
            && fs::symlink_metadata(&self.path)
                .is_ok_and(|m| m.is_file() && m.dev() == self.dev && m.ino() == self.ino)
    }

    /// Drops it without removing the file (renamed into place).
    fn disarm(mut self) {
        self.pid = 0;
    }
}

impl Drop for Store {
    /// Writes what write-behind still holds (see [`Store::write_behind`]).
    fn drop(&mut self) {
        if self.has_pending() {
            let _ = self.write_pending();
        }
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        if self.is_intact() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The store lock's file, held locked ([`Store::lock`]). Dropping it unlocks the file
/// before closing it: a child forked while the lock was held shares the open file
/// description, and closing alone would leave the lock held until the child exits
/// (its own next lock would then wait for itself).
#[derive(Debug)]
pub(crate) struct StoreLock(File);

impl std::ops::Deref for StoreLock {
    type Target = File;
    fn deref(&self) -> &File {
        &self.0
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = fs4::fs_std::FileExt::unlock(&self.0);
    }
}

/// What [`Store::gc`] did and what is left, in entries and bytes (entry files,
/// headers included).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    /// Originals removed because they outlived the TTL.
    pub expired: u64,
    /// Originals removed, oldest first, to bring the store within its caps.
    pub evicted: u64,
    /// Temp files of dead writers removed.
    pub stale_temp_files: u64,
    /// Originals removed because their file is damaged: a header that does not parse
    /// or disagrees with the file's size (a restore of them could only fail).
    pub damaged: u64,
    /// Originals left.
    pub entries: u64,
    /// Bytes left (entry files, headers included).
    pub bytes: u64,
}

/// Takes one entry of `bytes` (its file's size) off the usage counters in the held
/// `lock` file, when they can be read.
fn count_removed(lock: &File, bytes: u64) {
    if let Some(u) = read_usage(lock) {
        let left = Usage {
            entries: u.entries.saturating_sub(1),
            bytes: u.bytes.saturating_sub(bytes),
            ..u
        };
        write_usage(lock, &left);
    }
}

/// Usage counters kept in the lock file, updated under the lock.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Usage {
    entries: u64,
    bytes: u64,
    scanned_ms: u64,
    puts: u64,
    /// Bytes of temp files: reserved by each writer before it writes one, given back
    /// when it is renamed into place or removed. A writer killed mid-write never gives
    /// its bytes back, so its temp file counts against `SNIP_STORE_MAX_BYTES` until a
    /// scan removes it (and re-derives this from the temp files left).
    #[serde(default)]
    pending: u64,
}

/// A writer's reservation of `bytes` in [`Usage::pending`]; given back on drop unless
/// taken (the writer then settles it under the lock it already holds).
struct Reservation<'a> {
    store: &'a Store,
    bytes: u64,
}

impl Reservation<'_> {
    /// The bytes reserved (0 when none were), no longer given back on drop.
    fn take(&mut self) -> u64 {
        std::mem::take(&mut self.bytes)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.bytes > 0 {
            if let Ok(lock) = self.store.lock() {
                give_back(&lock, self.bytes);
            }
        }
    }
}

/// Under the lock: gives `bytes` of a reservation back.
fn give_back(lock: &File, bytes: u64) {
    if let Some(u) = read_usage(lock) {
        let u = Usage {
            pending: u.pending.saturating_sub(bytes),
            ..u
        };
        write_usage(lock, &u);
    }
}

/// One entry found by a scan.
struct Found {
    name: String,
    mtime: SystemTime,
    size: u64,
}

/// Where an id stands, without reading its bytes.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// Present and within its TTL.
    Live(Entry),
    /// Present but older than the TTL.
    Expired,
    /// Not in the store.
    Missing,
}

impl Store {
    /// Opens (creating if needed) the store in `opts.dir`, taken without trailing
    /// slashes and `.` components.
    ///
    /// # Errors
    /// [`StoreError::Disabled`] when `opts.enabled` is false; [`StoreError::Refused`]
    /// when the path is relative or has a `..` component, or the directory (or
    /// `objects/`, or the key file) is a symlink, not a directory, or owned by another
    /// user; [`StoreError::Io`] when it cannot be
    /// created or read.
    pub fn open(opts: &StoreOptions) -> Result<Store, StoreError> {
        Store::open_keyed(opts, None)
    }

    /// [`Store::open`], creating a missing key with `key`'s bytes when given: the
    /// originals a process still holds for a directory removed since were given ids
    /// under that key, and a directory made again under it names them alike (see
    /// [`crate::flush_held`]).
    pub(crate) fn open_keyed(opts: &StoreOptions, key: Option<&Key>) -> Result<Store, StoreError> {
        if !opts.enabled {
            return Err(StoreError::Disabled);
        }
        if let Some(url) = &opts.url {
            let r = crate::redis_store::Redis::open(url, opts)?;
            return Ok(Store {
                opts: opts.clone(),
                dir: PathBuf::from(r.location()),
                objects: PathBuf::new(),
                key: None,
                redis: Some(std::sync::Arc::new(r)),
                lines: Default::default(),
                spare: Default::default(),
                behind: Default::default(),
            });
        }
        // Checked by its last component: `link/` or `link/.` would otherwise name the
        // directory a symlink points to, which the symlink check cannot see.
        let dir = fsutil::normalize(&opts.dir);
        if !dir.is_absolute() {
            return Err(StoreError::Refused {
                path: dir,
                reason: "it is not an absolute path; set SNIP_STORE_DIR to an absolute directory"
                    .into(),
            });
        }
        if dir
            .components()
            .any(|c| c == std::path::Component::ParentDir)
        {
            return Err(StoreError::Refused {
                path: dir,
                reason:
                    "it contains a '..' component; give SNIP_STORE_DIR the directory it leads to"
                        .into(),
            });
        }
        fsutil::ensure_private_dir(&dir, false)?;
        let objects = dir.join("objects");
        fsutil::ensure_private_dir(&objects, true)?;
        let key = Key::load_or_create(&dir, key)?;
        let behind = crate::behind::shared(&dir);
        Ok(Store {
            opts: StoreOptions {
                dir: dir.clone(),
                ..opts.clone()
            },
            dir,
            objects,
            key: Some(key),
            redis: None,
            lines: Default::default(),
            spare: Default::default(),
            behind,
        })
    }

    /// The shared store, if this is one.
    pub(crate) fn shared(&self) -> Option<&crate::redis_store::Redis> {
        self.redis.as_deref()
    }

    /// Whether the store can be reached now: always for a directory (opening it
    /// checked it); for the shared store, one `PING` (opening it sends nothing).
    ///
    /// # Errors
    /// [`StoreError::Remote`] when the shared store does not answer.
    pub fn check(&self) -> Result<(), StoreError> {
        match &self.redis {
            Some(r) => r.ping(),
            None => Ok(()),
        }
    }

    /// The options this store was opened with.
    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    /// True when this is the shared store (`SNIP_STORE_URL`), not a directory.
    pub fn is_shared(&self) -> bool {
        self.redis.is_some()
    }

    /// The store directory; for the shared store, its URL with the password masked.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The id `original` has (or would have) in this store: `sn_` + 24 lowercase hex.
    ///
    /// # Errors
    /// [`StoreError::Remote`] when the shared store's key cannot be read.
    pub fn id_for(&self, original: &[u8]) -> Result<String, StoreError> {
        Ok(self.key()?.id_for_digest(&id::sha256(original)))
    }

    /// The key of ids.
    pub(crate) fn key(&self) -> Result<Key, StoreError> {
        match (&self.key, &self.redis) {
            (Some(k), _) => Ok(k.clone()),
            (None, Some(r)) => r.key(),
            (None, None) => unreachable!("a directory store always has its key"),
        }
    }

    /// Checks `len` against the entry caps, like [`Store::put`].
    pub(crate) fn check_size(&self, len: u64) -> Result<(), StoreError> {
        if len > self.opts.max_entry_bytes {
            return Err(StoreError::TooLarge {
                bytes: len,
                limit: self.opts.max_entry_bytes,
                variable: "SNIP_STORE_MAX_ENTRY_BYTES",
            });
        }
        if len + HEADER_LEN as u64 > self.opts.max_bytes {
            return Err(StoreError::TooLarge {
                bytes: len,
                limit: self.opts.max_bytes,
                variable: "SNIP_STORE_MAX_BYTES",
            });
        }
        Ok(())
    }

    /// Keeps `original` and returns its id. Idempotent: storing the same bytes again
    /// returns the same id and refreshes the entry's age (its TTL starts over).
    ///
    /// The file is written to a temp file and renamed into place (no fsync: after a
    /// power cut an id may answer `not_found`, never a partial original). When the
    /// store goes over a cap, the oldest originals are evicted (down to 90% of the cap,
    /// so that eviction scans are rare), never the one just stored.
    ///
    /// With write-behind on ([`Store::write_behind`]), the original is held in memory
    /// and written after the call ([`Store::write_pending`]).
    ///
    /// # Errors
    /// [`StoreError::TooLarge`] when the original is over `SNIP_STORE_MAX_ENTRY_BYTES`
    /// (or cannot fit in `SNIP_STORE_MAX_BYTES`); [`StoreError::Io`] when it cannot be
    /// written (disk full, read-only directory…).
    pub fn put(&self, original: &[u8]) -> Result<String, StoreError> {
        self.check_size(original.len() as u64)?;
        if let Some(id) = self.hold(original)? {
            return Ok(id);
        }
        self.put_now(original)
    }

    /// [`Store::put`], written now.
    pub(crate) fn put_now(&self, original: &[u8]) -> Result<String, StoreError> {
        self.put_known(original, None)
    }

    /// [`Store::put_now`]; with `known`, the original's SHA-256 and the id it was
    /// given (a held original, whose id a marker already cites: written under that id
    /// even when the key changed since).
    pub(crate) fn put_known(
        &self,
        original: &[u8],
        known: Option<(&[u8; 32], &str)>,
    ) -> Result<String, StoreError> {
        let len = original.len() as u64;
        self.check_size(len)?;
        if let Some(r) = &self.redis {
            let digest = id::sha256(original);
            let id = r.key()?.id_for_digest(&digest);
            r.put(&id, &digest, original)?;
            return Ok(id);
        }
        let file_len = len + HEADER_LEN as u64;
        if original.len() < PARALLEL_HASH_MIN {
            let (digest, id) = match known {
                Some((d, id)) => (*d, id.to_string()),
                None => {
                    let digest = id::sha256(original);
                    let id = self.key()?.id_for_digest(&digest);
                    (digest, id)
                }
            };
            let path = self.objects.join(&id);
            if !self.refresh_if_present(&path, file_len) {
                self.put_small(original, &digest, &path, file_len)?;
            }
            return Ok(id);
        }
        let mut reservation = self.reserve(file_len)?;
        // Hash on a second thread while this one writes the bytes; a repeated
        // original then costs one wasted temp file, a new one half the time.
        let (digest, tmp) = match known {
            Some((d, _)) => (*d, self.write_temp(original)),
            None => std::thread::scope(|s| {
                let hasher = std::thread::Builder::new().spawn_scoped(s, || id::sha256(original));
                let tmp = self.write_temp(original);
                let digest = match hasher {
                    Ok(h) => h.join().unwrap_or_else(|_| id::sha256(original)),
                    Err(_) => id::sha256(original),
                };
                (digest, tmp)
            }),
        };
        let tmp = tmp?;
        let id = match known {
            Some((_, id)) => id.to_string(),
            None => self.key()?.id_for_digest(&digest),
        };
        let path = self.objects.join(&id);
        if self.refresh_if_present(&path, file_len) {
            return Ok(id); // the temp file is removed when dropped
        }
        // The header goes in last: the file is complete before it is renamed.
        tmp.as_file()
            .write_all_at(&entry::header(&digest, len), 0)
            .ctx("write", tmp.path().to_path_buf())?;

        let lock = self.lock()?;
        // Settled here, under the lock already held (a drop would take it again).
        let reserved = reservation.take();
        if self.refresh_if_present(&path, file_len) {
            drop(tmp);
            give_back(&lock, reserved);
            return Ok(id);
        }
        if let Err(e) = tmp.persist(&path) {
            drop(e.file);
            give_back(&lock, reserved);
            return Err(StoreError::io("rename into place", &path, e.error));
        }
        let mut usage = match self.fresh_usage(&lock) {
            Some(u) => Usage {
                entries: u.entries + 1,
                bytes: u.bytes + file_len,
                puts: u.puts + 1,
                pending: u.pending.saturating_sub(reserved),
                ..u
            },
            None => self.rescan_usage(&lock)?,
        };
        if usage.entries > self.opts.max_entries as u64
            || usage.bytes + usage.pending > self.opts.max_bytes
        {
            let low_entries = self.opts.max_entries as u64 - (self.opts.max_entries as u64 / 10);
            let low_bytes = self.opts.max_bytes - self.opts.max_bytes / 10;
            let (_, _, left) = self.evict(Some(&id), low_entries.max(1), low_bytes)?;
            usage = left;
        }
        write_usage(&lock, &usage);
        Ok(id)
    }

    /// Puts a small original (under [`PARALLEL_HASH_MIN`]) whose digest is known and
    /// whose entry was not found, under one hold of the store lock: the counters are
    /// read once and written once, already counting the new entry (evicting first when
    /// it would take the store over a cap), then the entry is written to a temp file
    /// and renamed into place. No reservation is needed: no other writer or cleaner
    /// can look at the counters or the temp file before the rename. A writer killed
    /// between the counters and the rename leaves counters that count its temp file
    /// (more than is in the store, never less) until the next rescan removes the file,
    /// which no one holds locked, and re-derives them.
    fn put_small(
        &self,
        original: &[u8],
        digest: &[u8; 32],
        path: &Path,
        file_len: u64,
    ) -> Result<(), StoreError> {
        let lock = self.lock()?;
        // Another writer may have put it since it was looked for.
        if self.refresh_if_present(path, file_len) {
            return Ok(());
        }
        let u = self.usage_or_rescan(&lock)?;
        let mut usage = Usage {
            entries: u.entries + 1,
            bytes: u.bytes + file_len,
            puts: u.puts + 1,
            ..u
        };
        if usage.entries > self.opts.max_entries as u64
            || usage.bytes + usage.pending > self.opts.max_bytes
        {
            // Room for the new entry, which is not there yet: down to 90% of the caps
            // with it.
            let low_entries = self.opts.max_entries as u64 - (self.opts.max_entries as u64 / 10);
            let low_bytes = self.opts.max_bytes - self.opts.max_bytes / 10;
            let keep = path.file_name().and_then(|n| n.to_str());
            let (_, _, left) = self.evict(
                keep,
                low_entries.max(1) - 1,
                low_bytes.saturating_sub(file_len),
            )?;
            usage = Usage {
                entries: left.entries + 1,
                bytes: left.bytes + file_len,
                puts: 1,
                ..left
            };
        }
        write_usage(&lock, &usage);
        if let Err(e) = self.write_entry(original, digest, path) {
            let without = Usage {
                entries: usage.entries - 1,
                bytes: usage.bytes - file_len,
                ..usage
            };
            write_usage(&lock, &without);
            return Err(e);
        }
        Ok(())
    }

    /// Under the store lock: writes a small original's entry (header and bytes in one
    /// `writev`) to a new `.tmp-*` file and renames it to `path`. The temp file is not
    /// locked: every cleaner takes the store lock first, so none can see it while
    /// this writer lives; if the writer is killed, no one holds it and the next
    /// cleaner removes it.
    fn write_entry(
        &self,
        original: &[u8],
        digest: &[u8; 32],
        path: &Path,
    ) -> Result<(), StoreError> {
        let header = entry::header(digest, original.len() as u64);
        if let Some(spare) = self.take_spare() {
            if spare.is_intact() {
                write_two(&spare.file, &header, original).ctx("write", spare.path.clone())?;
                fs::rename(&spare.path, path)
                    .map_err(|e| StoreError::io("rename into place", path, e))?;
                spare.disarm(); // its name is now the entry's
                return Ok(());
            }
        }
        let tmp = tempfile::Builder::new()
            .prefix(TMP_PREFIX)
            .tempfile_in(&self.objects)
            .ctx("create a temp file in", &self.objects)?;
        write_two(tmp.as_file(), &header, original).ctx("write", tmp.path().to_path_buf())?;
        tmp.persist(path)
            .map_err(|e| StoreError::io("rename into place", path, e.error))?;
        Ok(())
    }

    /// Reserves `bytes` for a temp file in the usage counters (see [`Usage::pending`]),
    /// first making room when the store would go over `SNIP_STORE_MAX_BYTES` with it.
    /// Counters due for a rescan are re-derived first, so every writer of a temp file
    /// outside the lock holds a reservation: a writer that reserved nothing while
    /// another writer's rescan counted its temp file as pending would leave those
    /// bytes counted after its rename, until the next rescan.
    fn reserve(&self, bytes: u64) -> Result<Reservation<'_>, StoreError> {
        let lock = self.lock()?;
        let mut r = Reservation {
            store: self,
            bytes: 0,
        };
        let mut u = self.usage_or_rescan(&lock)?;
        if u.bytes + u.pending + bytes > self.opts.max_bytes {
            let low_bytes = self.opts.max_bytes - self.opts.max_bytes / 10;
            let (_, _, left) = self.evict(
                None,
                self.opts.max_entries as u64,
                low_bytes.saturating_sub(bytes),
            )?;
            u = left;
        }
        u.pending += bytes;
        write_usage(&lock, &u);
        r.bytes = bytes;
        Ok(r)
    }

    /// Creates a temp file in `objects/`, locks it (so a cleaner can tell a live
    /// writer from a dead one: a `.tmp-*` file no one holds locked is a dead writer's)
    /// and writes `original` after room for the header. It is created as `.new-*` and
    /// renamed to `.tmp-*` once locked, so no `.tmp-*` file is ever unlocked while its
    /// writer lives.
    fn write_temp(&self, original: &[u8]) -> Result<tempfile::NamedTempFile, StoreError> {
        let tmp = self.locked_temp()?;
        tmp.as_file()
            .write_all_at(original, HEADER_LEN as u64)
            .ctx("write", tmp.path().to_path_buf())?;
        Ok(tmp)
    }

    /// Makes, unless one is ready, the empty temp file the next small put of a new
    /// original writes and renames into place, so that the put does not create a file
    /// (on ext4, creating one can cost far more than writing 50 KB to it: the kernel
    /// looks for a free inode past recently deleted ones). Meant for a long-lived
    /// process, on a thread of its own after each put: the file is created as
    /// `Store::write_temp` creates a large original's, held locked until used or
    /// until the store is dropped (then removed); a process that exits leaves an empty
    /// unlocked `.tmp-*` file, which the next rescan removes. Says whether it made
    /// one; a shared store makes none.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the temp file cannot be created, locked or renamed.
    pub fn prepare_spare(&self) -> Result<bool, StoreError> {
        if self.redis.is_some() || self.has_spare() {
            return Ok(false);
        }
        use std::os::unix::fs::MetadataExt as _;
        let (file, tmp_path) = self.locked_temp()?.into_parts();
        let md = file.metadata().ctx("inspect", tmp_path.to_path_buf())?;
        let path = tmp_path
            .keep()
            .map_err(|e| StoreError::io("keep", &self.objects, e.error))?;
        let spare = Spare {
            file,
            path,
            dev: md.dev(),
            ino: md.ino(),
            pid: std::process::id(),
        };
        let mut slot = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|s| s.pid == spare.pid) {
            return Ok(false); // another thread made one meanwhile: this one is removed
        }
        *slot = Some(spare);
        Ok(true)
    }

    /// Whether a spare made by this process is ready ([`Store::prepare_spare`]).
    pub fn has_spare(&self) -> bool {
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|s| s.pid == std::process::id())
    }

    /// Removes the spare, if any ([`Store::prepare_spare`]).
    pub(crate) fn drop_spare(&self) {
        drop(self.take_spare());
    }

    /// Takes the spare, if any.
    fn take_spare(&self) -> Option<Spare> {
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// A new empty temp file in `objects/`, locked: created as `.new-*` and renamed to
    /// `.tmp-*` once locked (see [`Store::write_temp`]).
    fn locked_temp(&self) -> Result<tempfile::NamedTempFile, StoreError> {
        let new = tempfile::Builder::new()
            .prefix(NEW_PREFIX)
            .tempfile_in(&self.objects)
            .ctx("create a temp file in", &self.objects)?;
        new.as_file()
            .lock_exclusive()
            .ctx("lock", new.path().to_path_buf())?;
        let (file, path) = new.into_parts();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(NEW_PREFIX))
            .map(|rest| format!("{TMP_PREFIX}{rest}"))
            .unwrap_or_else(|| format!("{TMP_PREFIX}{}", std::process::id()));
        let tmp_path = self.objects.join(name);
        path.persist_noclobber(&tmp_path)
            .map_err(|e| StoreError::io("rename a temp file to", &tmp_path, e.error))?;
        let tmp_path =
            tempfile::TempPath::try_from_path(&tmp_path).ctx("name", tmp_path.clone())?;
        Ok(tempfile::NamedTempFile::from_parts(file, tmp_path))
    }

    /// Looks up `id` (which must already be validated).
    pub(crate) fn lookup(&self, id: &str) -> Result<Lookup, StoreError> {
        debug_assert!(id::is_valid_id(id));
        if let Some(e) = self.held_entry(id) {
            return Ok(Lookup::Live(e));
        }
        if let Some(r) = &self.redis {
            return r.lookup(id);
        }
        let path = self.objects.join(id);
        let file = match fsutil::open_private_file(&path) {
            Ok(f) => f,
            Err(StoreError::Io { cause, .. }) if cause.kind() == ErrorKind::NotFound => {
                return Ok(Lookup::Missing)
            }
            Err(e) => return Err(e),
        };
        let md = file.metadata().ctx("inspect", &path)?;
        if self.is_expired(md.modified().ok()) {
            return Ok(Lookup::Expired);
        }
        self.entry_file(id, file, md.len())
            .map(Lookup::Live)
            .ctx("read", &path)
    }

    /// Opens `file`, the entry file of `id` (`len`: its size in bytes): its header
    /// parsed and checked against the size, and against `id`, which is the keyed hash
    /// of the original's SHA-256 that the header holds (a file copied or renamed
    /// under another entry's name holds another original, and is never served as
    /// this one).
    ///
    /// # Errors
    /// `InvalidData` when the header is malformed, disagrees with the size, or names
    /// another original; any read error.
    fn entry_file(&self, id: &str, file: File, len: u64) -> std::io::Result<Entry> {
        let entry = Entry::from_file(file, len)?;
        match &self.key {
            Some(key) if !key.names(id, &entry.sha256) => Err(std::io::Error::new(
                ErrorKind::InvalidData,
                "the entry file holds another original (its header's sha256 is not this id's)",
            )),
            _ => Ok(entry),
        }
    }

    /// Removes the entry file of `id` if it is still the file `entry` was read from
    /// (not a fresh copy renamed into place since), found damaged by a restore, and
    /// updates the usage counters. Best effort: says whether the file was removed.
    pub(crate) fn discard_damaged(&self, id: &str, entry: &Entry) -> bool {
        if let Some(r) = &self.redis {
            return r.discard(id);
        }
        let path = self.objects.join(id);
        let Ok(lock) = self.lock() else { return false };
        let Ok(md) = fs::symlink_metadata(&path) else {
            return false;
        };
        if !entry.is_file(&md) || fs::remove_file(&path).is_err() {
            return false;
        }
        count_removed(&lock, md.len());
        true
    }

    /// Removes the entry file of `id` whose header does not parse, disagrees with its
    /// size or names another original (see [`Store::entry_file`]), if it still does
    /// under the store lock (a fresh copy renamed into
    /// place since is kept), and updates the usage counters. Best effort: says whether
    /// the file was removed.
    pub(crate) fn discard_unreadable(&self, id: &str) -> bool {
        if self.redis.is_some() {
            return false;
        }
        let path = self.objects.join(id);
        let Ok(lock) = self.lock() else { return false };
        let Ok(file) = fsutil::open_private_file(&path) else {
            return false;
        };
        let Ok(md) = file.metadata() else {
            return false;
        };
        if !md.is_file() || self.entry_file(id, file, md.len()).is_ok() {
            return false;
        }
        if fs::remove_file(&path).is_err() {
            return false;
        }
        count_removed(&lock, md.len());
        true
    }

    /// True when `id` is valid, present and within its TTL.
    pub fn contains(&self, id: &str) -> bool {
        id::is_valid_id(id) && matches!(self.lookup(id), Ok(Lookup::Live(_)))
    }

    /// Removes expired originals and stale temp files, then evicts the oldest
    /// originals until the store is within its caps.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the store cannot be locked or listed.
    pub fn gc(&self) -> Result<GcReport, StoreError> {
        if let Some(r) = &self.redis {
            return r.gc();
        }
        let lock = self.lock()?;
        let (stale, _) = self.remove_stale_temps();
        let (expired, evicted, mut usage) =
            self.evict(None, self.opts.max_entries as u64, self.opts.max_bytes)?;
        let (damaged, freed) = self.remove_damaged()?;
        usage.entries = usage.entries.saturating_sub(damaged);
        usage.bytes = usage.bytes.saturating_sub(freed);
        trim_usage(&lock);
        write_usage(&lock, &usage);
        Ok(GcReport {
            expired,
            evicted,
            stale_temp_files: stale,
            damaged,
            entries: usage.entries,
            bytes: usage.bytes,
        })
    }

    /// Under the lock: removes every entry file whose header does not parse,
    /// disagrees with the file's size or names another original than the file's name
    /// (see [`Store::entry_file`]); returns how many, and their bytes. Reads each
    /// entry's header (`snip gc` only; a put never scans the store this way).
    fn remove_damaged(&self) -> Result<(u64, u64), StoreError> {
        let (mut n, mut bytes) = (0, 0);
        for f in self.scan()? {
            let path = self.objects.join(&f.name);
            let Ok(file) = fsutil::open_private_file(&path) else {
                continue;
            };
            let damaged = matches!(
                self.entry_file(&f.name, file, f.size),
                Err(e) if e.kind() == ErrorKind::InvalidData
            );
            if damaged && fs::remove_file(&path).is_ok() {
                n += 1;
                bytes += f.size;
            }
        }
        Ok((n, bytes))
    }

    /// Takes the store lock (exclusive; released when the guard is dropped). A fresh
    /// open file description each time, so threads of one process exclude each other
    /// too.
    pub(crate) fn lock(&self) -> Result<StoreLock, StoreError> {
        let path = self.dir.join("lock");
        let f = fsutil::open_rw_create(&path, false)?;
        f.lock_exclusive().ctx("lock", &path)?;
        Ok(StoreLock(f))
    }

    fn is_expired(&self, mtime: Option<SystemTime>) -> bool {
        match mtime.and_then(|m| SystemTime::now().duration_since(m).ok()) {
            Some(age) => age > self.opts.ttl,
            None => false,
        }
    }

    /// Under the lock: the counters, when they are not due for a rescan.
    fn fresh_usage(&self, lock: &File) -> Option<Usage> {
        read_usage(lock).filter(|u| !self.needs_rescan(u))
    }

    /// Under the lock: the counters re-derived from the directory (the record cut back
    /// to one first, see [`trim_usage`]).
    fn rescan_usage(&self, lock: &File) -> Result<Usage, StoreError> {
        trim_usage(lock);
        self.scan_usage()
    }

    /// Under the lock: the counters, re-derived first when they are due for a rescan.
    fn usage_or_rescan(&self, lock: &File) -> Result<Usage, StoreError> {
        match self.fresh_usage(lock) {
            Some(u) => Ok(u),
            None => self.rescan_usage(lock),
        }
    }

    fn needs_rescan(&self, u: &Usage) -> bool {
        let age = unix_ms(SystemTime::now()).saturating_sub(u.scanned_ms);
        u.puts >= RESCAN_EVERY_PUTS || age > RESCAN_EVERY.as_millis() as u64
    }

    /// If a complete entry for this path exists, refreshes its age and says so.
    fn refresh_if_present(&self, path: &Path, file_len: u64) -> bool {
        match fs::symlink_metadata(path) {
            Ok(md) if md.is_file() && md.len() == file_len => fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_modified(SystemTime::now()))
                .is_ok(),
            _ => false,
        }
    }

    /// Lists the entries in `objects/` (names that are valid ids only).
    fn scan(&self) -> Result<Vec<Found>, StoreError> {
        let mut out = Vec::new();
        for de in fs::read_dir(&self.objects).ctx("list", &self.objects)? {
            let Ok(de) = de else { continue };
            let Some(name) = de.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if !id::is_valid_id(&name) {
                continue;
            }
            let Ok(md) = de.metadata() else { continue };
            if !md.is_file() {
                continue;
            }
            out.push(Found {
                name,
                mtime: md.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                size: md.len(),
            });
        }
        Ok(out)
    }

    /// Under the lock: re-derives the usage counters from `objects/`, first removing
    /// temp files of dead writers (killed mid-write); the live writers' temp files
    /// count as `pending`.
    fn scan_usage(&self) -> Result<Usage, StoreError> {
        let (_, pending) = self.remove_stale_temps();
        let found = self.scan()?;
        Ok(Usage {
            entries: found.len() as u64,
            bytes: found.iter().map(|f| f.size).sum(),
            scanned_ms: unix_ms(SystemTime::now()),
            puts: 0,
            pending,
        })
    }

    /// Under the lock: removes expired entries, then the oldest ones (never `keep`)
    /// until at most `max_entries` entries and `max_bytes` bytes remain. Returns
    /// (expired removed, evicted, usage left).
    fn evict(
        &self,
        keep: Option<&str>,
        max_entries: u64,
        max_bytes: u64,
    ) -> Result<(u64, u64, Usage), StoreError> {
        let (_, pending) = self.remove_stale_temps();
        let mut found = self.scan()?;
        found.sort_by(|a, b| a.mtime.cmp(&b.mtime).then_with(|| a.name.cmp(&b.name)));
        let mut entries = found.len() as u64;
        let mut bytes: u64 = found.iter().map(|f| f.size).sum();
        let (mut expired, mut evicted) = (0, 0);
        for f in &found {
            if Some(f.name.as_str()) == keep {
                continue;
            }
            let is_expired = self.is_expired(Some(f.mtime));
            if !is_expired && entries <= max_entries && bytes + pending <= max_bytes {
                // Sorted oldest first: nothing later is expired either.
                break;
            }
            match fs::remove_file(self.objects.join(&f.name)) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io("remove", self.objects.join(&f.name), e)),
            }
            entries -= 1;
            bytes -= f.size;
            if is_expired {
                expired += 1;
            } else {
                evicted += 1;
            }
        }
        let usage = Usage {
            entries,
            bytes,
            scanned_ms: unix_ms(SystemTime::now()),
            puts: 0,
            pending,
        };
        Ok((expired, evicted, usage))
    }

    /// Removes temp files whose writer is gone: a `.tmp-*` file no writer holds
    /// locked (its writer locked it before giving it that name, and a killed writer's
    /// lock goes with it), and a `.new-*` file not locked and not modified for
    /// [`STALE_TEMP_AGE`] (a writer killed between creating and locking it). Returns
    /// (files removed, bytes of the temp files left: live writers').
    fn remove_stale_temps(&self) -> (u64, u64) {
        let Ok(rd) = fs::read_dir(&self.objects) else {
            return (0, 0);
        };
        let (mut n, mut left) = (0, 0);
        for de in rd.flatten() {
            let name = de.file_name();
            let name = name.to_string_lossy();
            let tmp = name.starts_with(TMP_PREFIX);
            if !tmp && !name.starts_with(NEW_PREFIX) {
                continue;
            }
            let path = de.path();
            let Ok(f) = File::open(&path) else { continue };
            let Ok(md) = f.metadata() else { continue };
            let old = md
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age >= STALE_TEMP_AGE);
            if (tmp || old)
                && f.try_lock_exclusive().unwrap_or(false)
                && fs::remove_file(&path).is_ok()
            {
                n += 1;
            } else {
                left += md.len();
            }
        }
        (n, left)
    }
}

/// Reads the usage record (one `pread`): the fixed-width record, or the unpadded JSON
/// of earlier versions. `None` (a rescan) when the file is empty, torn, or longer than
/// a record.
fn read_usage(lock: &File) -> Option<Usage> {
    let mut buf = [0u8; USAGE_RECORD_LEN + 1];
    let n = lock.read_at(&mut buf, 0).ok()?;
    if n > USAGE_RECORD_LEN {
        return None;
    }
    serde_json::from_slice(buf[..n].trim_ascii()).ok()
}

/// Writes the usage record over the last one: one `pwrite` of [`USAGE_RECORD_LEN`]
/// bytes at 0 (the JSON, spaces, a newline), so no truncation is needed, and the file
/// still reads as JSON to earlier versions.
fn write_usage(lock: &File, u: &Usage) {
    // Best effort: a torn or missing record only forces a rescan next time.
    let Ok(mut rec) = serde_json::to_vec(u) else {
        return;
    };
    if rec.len() >= USAGE_RECORD_LEN {
        return; // five u64 fields take at most 154 bytes
    }
    rec.resize(USAGE_RECORD_LEN - 1, b' ');
    rec.push(b'\n');
    let _ = lock.write_all_at(&rec, 0);
}

/// Cuts the lock file back to one record when it is longer (left by something else
/// than [`write_usage`], which never shortens it): called when the counters are
/// re-derived, since such a file does not read as a record.
fn trim_usage(lock: &File) {
    if lock
        .metadata()
        .is_ok_and(|m| m.len() > USAGE_RECORD_LEN as u64)
    {
        let _ = lock.set_len(USAGE_RECORD_LEN as u64);
    }
}

/// Writes `head` then `body` at the start of the new file `f`: one `writev` for both
/// when it takes them whole (it does on a regular file short of a full disk), the
/// rest positionally.
fn write_two(f: &File, head: &[u8], body: &[u8]) -> std::io::Result<()> {
    let n = loop {
        match (&mut &*f).write_vectored(&[IoSlice::new(head), IoSlice::new(body)]) {
            Ok(n) => break n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    if n < head.len() {
        f.write_all_at(&head[n..], n as u64)?;
        f.write_all_at(body, head.len() as u64)
    } else {
        f.write_all_at(&body[n - head.len()..], n as u64)
    }
}

impl snip_core::Retain for Store {
    fn retain(&mut self, original: &[u8]) -> snip_core::Retention {
        match self.put(original) {
            Ok(id) => snip_core::Retention::Retained { id },
            Err(e) => snip_core::Retention::Failed {
                reason: e.to_string(),
            },
        }
    }
}
