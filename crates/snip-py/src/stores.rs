//! The store each call uses, opened from `SNIP_*` variables (and `HERMES_HOME`).
//!
//! Opening a store checks its directories and reads its key (about 15 µs), so the
//! last open store is kept and reused while the variables describe the same store and
//! its directory is still a real directory (one `lstat` per call). A store that could
//! not keep an original is dropped, so the next call opens it afresh.
//!
//! A store opened here writes behind ([`snip_store::Store::write_behind`]): a call
//! that keeps an original holds it in memory and returns; a thread of the module's
//! own then writes it, appends the call's ledger row, and makes the empty temp file
//! the next put of a new original will write and rename into place
//! ([`snip_store::Store::prepare_spare`]). A call waits for none of it: in a session
//! nearly every output is a new original. A held original is restorable from this
//! process at once ([`crate::restore`] reads the same store), and from any process
//! once written; [`flush`] writes what is held (at interpreter exit).

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use snip_store::{StoreHandle, StoreOptions};

use crate::settings::Overrides;

/// The last store opened, with the options it was opened with.
static LAST: Mutex<Option<(StoreOptions, Arc<StoreHandle>)>> = Mutex::new(None);

/// The store the variables describe: `SNIP_STORE_DIR`, else `$HERMES_HOME/cache/snip`,
/// else the XDG cache directory. Never fails: a store that is off or cannot be opened
/// is a [`StoreHandle`] variant saying so.
pub fn handle(overrides: &Overrides) -> Arc<StoreHandle> {
    let opts = match StoreOptions::from_lookup(|k| overrides.lookup(k)) {
        Ok(o) => o,
        Err(e) => return Arc::new(StoreHandle::Unavailable(e.to_string())),
    };
    if !opts.enabled {
        return Arc::new(StoreHandle::Disabled);
    }
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((o, h)) = last.as_ref() {
        if *o == opts && is_real_dir(&opts) {
            return Arc::clone(h);
        }
    }
    let h = Arc::new(StoreHandle::open(&opts));
    if let Some(store) = h.store() {
        store.write_behind();
    }
    *last = match *h {
        StoreHandle::Open(_) => Some((opts, Arc::clone(&h))),
        _ => None,
    };
    h
}

/// Forgets the kept store (after it failed to keep an original): the next call opens
/// it afresh. What it held is not lost: every store of a directory shares what is held
/// there ([`snip_store::Store::write_behind`]).
pub fn forget() {
    *LAST.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

/// Writes what every store of this process still holds, opening each again if need
/// be ([`snip_store::flush_held`]). Best effort: an original that cannot be written
/// stays held, restorable from this process.
pub fn flush() {
    let last = LAST.lock().unwrap_or_else(PoisonError::into_inner).clone();
    if let Some(s) = last.as_ref().and_then(|(_, h)| h.store()) {
        let _ = s.flush(); // also removes its spare
    }
    snip_store::flush_held();
}

/// Whether the store directory and its `objects/` are still directories, not
/// symlinks (opening refuses symlinks; a kept store must not outlive a swap, and a
/// put held in memory must not cite a directory that can no longer take it).
fn is_real_dir(opts: &StoreOptions) -> bool {
    let dir = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    dir(&opts.dir) && dir(&opts.dir.join("objects"))
}

/// The thread that writes held originals and makes spares, with the process that
/// started it (a forked child has no such thread and starts its own).
static WRITER: Mutex<Option<(u32, Sender<Arc<StoreHandle>>)>> = Mutex::new(None);

/// After a call: has `handle`'s store write what it holds and make a spare, off this
/// call's path (unless the store is not an open directory store, or has nothing to
/// do). When no thread can be started, writes here.
pub fn after_call(handle: &Arc<StoreHandle>) {
    let Some(store) = handle.store() else { return };
    if store.is_shared() || (!store.has_pending() && store.has_spare()) {
        return;
    }
    let pid = std::process::id();
    let mut writer = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    if writer.as_ref().is_none_or(|(p, _)| *p != pid) {
        let (tx, rx) = mpsc::channel::<Arc<StoreHandle>>();
        let started = std::thread::Builder::new()
            .name("snip-writer".into())
            .spawn(move || {
                for h in rx {
                    if let Some(s) = h.store() {
                        // A write that fails may be a directory removed since the
                        // store was opened: opening it again makes it again.
                        if s.write_pending().is_err() {
                            if let Ok(again) = snip_store::Store::open(s.options()) {
                                let _ = again.write_pending();
                            }
                        }
                        let _ = s.prepare_spare();
                    }
                }
            });
        *writer = started.is_ok().then_some((pid, tx));
    }
    let sent = writer
        .as_ref()
        .is_some_and(|(_, tx)| tx.send(Arc::clone(handle)).is_ok());
    if !sent {
        *writer = None;
        drop(writer);
        let _ = store.write_pending();
    }
}
