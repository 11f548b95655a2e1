//! Write-behind: a long-lived process (the Python module) keeps an original in memory
//! and returns its id at once; a thread of its own writes it to the directory store
//! right after the call ([`Store::write_pending`]).
//!
//! The promise a marker makes holds without waiting for the disk: a held original is
//! restorable from this process (its [`Store::restore`] reads it from memory, as the
//! Hermes plugin's `snip_restore` tool does) from the moment its id is returned, and
//! from any process once written, which happens while the model reads the output.
//! Writing goes through [`Store::put`]'s own path (temp file, rename, caps, eviction),
//! so a held original is kept as a written one is, and the ledger rows of held calls
//! are appended after it.
//!
//! When a write fails (a full or read-only disk), the original stays in memory (still
//! restorable here), write-behind stops and every later put is written at once, so the
//! call that cannot keep its original sees the error ([`Retention::Failed`]) and
//! shortens nothing it could not give back. A later [`Store::write_pending`] that
//! writes every held original turns write-behind on again.
//!
//! Held originals are bounded by [`HELD_MAX_BYTES`]; past it, a put is written at once.
//! An exiting process writes what it holds in [`Store::flush`] (the Python module
//! calls it at interpreter exit) and when the store is dropped. A process killed
//! before that loses its held originals: their ids then answer `not_found`, never
//! wrong bytes. A child forked after a call holds copies of its parent's held
//! originals and writes them too (the store keeps one entry per id); it never waits
//! for a write its parent's thread had under way (no lock is held across a write).
//!
//! [`Retention::Failed`]: snip_core::Retention::Failed

use crate::entry::{Entry, Source, HEADER_LEN};
use crate::error::StoreError;
use crate::id;
use crate::ledger::LedgerRow;
use crate::options::StoreOptions;
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Bytes of originals held in memory at most; past it, a put is written at once.
pub const HELD_MAX_BYTES: usize = 64 << 20;

/// Free space (bytes) a filesystem keeps beyond the held originals for a put to be
/// held: with less, the put is written at once, so a full disk is the call's error
/// (lossless only), not a held original that cannot be written.
const FREE_MARGIN: u64 = 1 << 20;

/// The write-behind state of each store directory of this process: every [`Store`]
/// opened on a directory shares it, so a held original is found (and written) by any
/// of them, and outlives them all.
static DIRS: Mutex<Vec<(PathBuf, Arc<Behind>)>> = Mutex::new(Vec::new());

/// The write-behind state of directory `dir` (see [`DIRS`]).
pub(crate) fn shared(dir: &Path) -> Arc<Behind> {
    let mut dirs = DIRS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, b)) = dirs.iter().find(|(d, _)| d == dir) {
        return Arc::clone(b);
    }
    let b = Arc::new(Behind::default());
    dirs.push((dir.to_path_buf(), Arc::clone(&b)));
    b
}

/// Writes what every store directory of this process still holds ([`Store::flush`]),
/// each through a store opened again with the options it was held under (which
/// creates its directories again when they are gone). Best effort: what cannot be
/// written stays held. For a process about to exit (the Python module calls it at
/// interpreter exit).
pub fn flush_held() {
    let dirs: Vec<Arc<Behind>> = DIRS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(_, b)| Arc::clone(b))
        .collect();
    for b in dirs {
        let (opts, key) = {
            let s = b.state();
            if s.held.is_empty() && s.rows.is_empty() {
                continue;
            }
            (s.opts.clone(), s.key.clone())
        };
        if let Some(store) = opts.and_then(|o| Store::open_keyed(&o, key.as_ref()).ok()) {
            let _ = store.flush();
        }
    }
}

/// The write-behind state of one [`Store`] (off until [`Store::write_behind`]).
#[derive(Debug, Default)]
pub(crate) struct Behind {
    state: Mutex<State>,
    /// Signalled when a writer is done (see [`State::writer`]).
    done: Condvar,
}

#[derive(Debug, Default)]
struct State {
    on: bool,
    /// Originals not written yet, oldest first (a few at a time: a session's calls
    /// are seconds apart, a write takes well under a millisecond).
    held: Vec<Held>,
    /// Their bytes, summed.
    bytes: usize,
    /// Ledger rows of calls not appended yet.
    rows: Vec<LedgerRow>,
    /// Why the last write failed: write-behind is off until every held original is
    /// written.
    failed: Option<String>,
    /// The options of the last store that held an original here ([`flush_held`]).
    opts: Option<StoreOptions>,
    /// The key of the first store that held an original here: the held originals'
    /// ids are its (a directory removed and made again by [`flush_held`] gets it
    /// back, so that an entry file's header names its id, see `Store::entry_file`).
    key: Option<crate::id::Key>,
    /// The process whose thread is writing, if one is: one writer at a time, and
    /// [`Store::flush`] waits for one under way. A process id, not a lock held while
    /// writing: a child forked meanwhile has no such thread (and its own id), so it
    /// does not wait for it.
    writer: Option<u32>,
}

#[derive(Debug, Clone)]
struct Held {
    id: String,
    digest: [u8; 32],
    bytes: Arc<[u8]>,
}

impl Behind {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The writer's turn ([`State::writer`]): given up when dropped.
struct Writer<'a>(&'a Behind);

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.0.state().writer = None;
        self.0.done.notify_all();
    }
}

impl Store {
    /// Turns write-behind on (see the module docs): for a long-lived process that
    /// calls [`Store::write_pending`] after each call that kept an original and
    /// [`Store::flush`] before it exits. No effect on the shared store, whose writes
    /// already go in one round trip after compressing.
    pub fn write_behind(&self) {
        if !self.is_shared() {
            self.behind.state().on = true;
        }
    }

    /// Whether originals or ledger rows are waiting to be written.
    pub fn has_pending(&self) -> bool {
        let s = self.behind.state();
        !s.held.is_empty() || !s.rows.is_empty()
    }

    /// Holds `original` (whose size the caller checked) instead of writing it, and
    /// returns its id; `None` when it is to be written at once: write-behind is off or
    /// failed, or the held bytes would go over [`HELD_MAX_BYTES`].
    pub(crate) fn hold(&self, original: &[u8]) -> Result<Option<String>, StoreError> {
        let held = {
            let s = self.behind.state();
            if !s.on || s.failed.is_some() || s.bytes + original.len() > HELD_MAX_BYTES {
                return Ok(None);
            }
            s.bytes
        };
        // Room on the disk for what is held and this one (one `statvfs`).
        let need = (held + original.len() + HEADER_LEN) as u64 + FREE_MARGIN;
        if fs4::available_space(self.dir()).map_or(true, |free| free < need) {
            return Ok(None);
        }
        let digest = id::sha256(original);
        let key = self.key()?;
        let id = key.id_for_digest(&digest);
        let mut s = self.behind.state();
        if s.opts.as_ref() != Some(self.options()) {
            s.opts = Some(self.options().clone());
        }
        if s.key.is_none() {
            s.key = Some(key);
        }
        if !s.held.iter().any(|h| h.id == id) {
            s.bytes += original.len();
            s.held.push(Held {
                id: id.clone(),
                digest,
                bytes: Arc::from(original),
            });
        }
        Ok(Some(id))
    }

    /// Keeps `row` for [`Store::write_pending`] when write-behind is on; else gives it
    /// back.
    pub(crate) fn hold_row(&self, row: &LedgerRow) -> bool {
        let mut s = self.behind.state();
        if s.on {
            s.rows.push(row.clone());
        }
        s.on
    }

    /// The held original `id`, as an entry read from memory.
    pub(crate) fn held_entry(&self, id: &str) -> Option<Entry> {
        let s = self.behind.state();
        let h = s.held.iter().find(|h| h.id == id)?;
        Some(Entry::in_memory(
            Source::Memory(Arc::clone(&h.bytes)),
            &h.digest,
        ))
    }

    /// Writes the held originals, oldest first, through [`Store::put`]'s path, then
    /// appends the held ledger rows. An original stays held until it is written; the
    /// first that fails stops the writing and turns write-behind off (see the module
    /// docs), and its error is returned. Rows that cannot be appended are dropped, as
    /// [`Store::record`] drops them.
    ///
    /// # Errors
    /// The first write's error ([`StoreError::Io`], [`StoreError::TooLarge`]).
    pub fn write_pending(&self) -> Result<(), StoreError> {
        let me = std::process::id();
        {
            let mut s = self.behind.state();
            while s.writer == Some(me) {
                s = self
                    .behind
                    .done
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            s.writer = Some(me);
        }
        // Cleared however the writes end (a panic included), so no flush waits forever.
        let _writer = Writer(&self.behind);
        self.write_held()
    }

    /// [`Store::write_pending`]'s writes, by the one writer.
    fn write_held(&self) -> Result<(), StoreError> {
        let mut result = Ok(());
        loop {
            let Some(next) = self.behind.state().held.first().cloned() else {
                break;
            };
            match self.put_known(&next.bytes, Some((&next.digest, &next.id))) {
                Ok(_) => {
                    let mut s = self.behind.state();
                    if let Some(k) = s.held.iter().position(|h| h.id == next.id) {
                        let h = s.held.remove(k);
                        s.bytes -= h.bytes.len();
                    }
                    if s.held.is_empty() {
                        s.failed = None;
                    }
                }
                Err(e) => {
                    self.behind.state().failed = Some(e.to_string());
                    result = Err(e);
                    break;
                }
            }
        }
        let rows = std::mem::take(&mut self.behind.state().rows);
        for row in &rows {
            let _ = self.try_record(row);
        }
        result
    }

    /// Waits for a write under way and writes what is still held ([`Store::write_pending`]).
    ///
    /// # Errors
    /// As [`Store::write_pending`].
    pub fn flush(&self) -> Result<(), StoreError> {
        let written = self.write_pending();
        self.drop_spare(); // an exiting process leaves no empty temp file
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreOptions;

    /// A write-behind store in `dir/s` holding `text`, its writer turn marked as taken
    /// by process `pid`, and the held original's id.
    fn held_with_writer(dir: &std::path::Path, text: &[u8], pid: u32) -> (Store, String) {
        let store = Store::open(&StoreOptions::in_dir(dir.join("s"))).unwrap();
        store.write_behind();
        let id = store.put(text).unwrap();
        store.behind.state().writer = Some(pid);
        (store, id)
    }

    #[test]
    fn a_writer_of_another_process_is_not_waited_for() {
        // A child forked while its parent's thread was writing inherits the parent's
        // writer mark; that thread does not exist in the child.
        let dir = tempfile::tempdir().unwrap();
        let other = std::process::id().wrapping_add(1);
        let (store, id) = held_with_writer(dir.path(), b"held in a forked child\n", other);
        store.flush().unwrap();
        assert!(dir.path().join("s/objects").join(&id).is_file());
        assert_eq!(store.behind.state().writer, None);
    }

    #[test]
    fn a_flush_waits_for_the_writer_of_this_process() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id) = held_with_writer(
            dir.path(),
            b"written by the other thread\n",
            std::process::id(),
        );
        std::thread::scope(|sc| {
            let flusher = sc.spawn(|| store.flush());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!flusher.is_finished(), "waits while this process writes");
            // The writer is done (its turn dropped): the flush goes on.
            drop(Writer(&store.behind));
            flusher.join().unwrap().unwrap();
        });
        assert!(dir.path().join("s/objects").join(&id).is_file());
    }
}
