//! The store each call uses, opened from `SNIP_*` variables (and `HERMES_HOME`).
//!
//! Opening a store checks its directories and reads its key (about 15 µs), so the
//! last open store is kept and reused while the variables describe the same store and
//! its directory is still a real directory (one `lstat` per call). A store that could
//! not keep an original is dropped, so the next call opens it afresh.
//!
//! After a call that kept an original, a thread of the module's own makes the empty
//! temp file the store's next put of a new original will write and rename into place
//! ([`snip_store::Store::prepare_spare`]), so that a call does not wait for the kernel
//! to create a file: in a session nearly every output is a new original.

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
    *last = match *h {
        StoreHandle::Open(_) => Some((opts, Arc::clone(&h))),
        _ => None,
    };
    h
}

/// Forgets the kept store (after it failed to keep an original).
pub fn forget() {
    *LAST.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

/// Whether the store directory is still a directory, not a symlink (opening refuses
/// symlinks; a kept store must not outlive a swap).
fn is_real_dir(opts: &StoreOptions) -> bool {
    std::fs::symlink_metadata(&opts.dir).is_ok_and(|m| m.is_dir())
}

/// The thread that makes spares, with the process that started it (a forked child
/// has no such thread and starts its own).
static SPARES: Mutex<Option<(u32, Sender<Arc<StoreHandle>>)>> = Mutex::new(None);

/// Has a spare made for `handle`'s store, off this call's path, unless one is ready
/// (or the store is not an open directory store). Best effort: when no thread can
/// be started, puts create their temp file themselves.
pub fn prepare_spare(handle: &Arc<StoreHandle>) {
    let Some(store) = handle.store() else { return };
    if store.is_shared() || store.has_spare() {
        return;
    }
    let pid = std::process::id();
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    if spares.as_ref().is_none_or(|(p, _)| *p != pid) {
        let (tx, rx) = mpsc::channel::<Arc<StoreHandle>>();
        let started = std::thread::Builder::new()
            .name("snip-spare".into())
            .spawn(move || {
                for h in rx {
                    if let Some(s) = h.store() {
                        let _ = s.prepare_spare();
                    }
                }
            });
        *spares = started.is_ok().then_some((pid, tx));
    }
    if let Some((_, tx)) = spares.as_ref() {
        if tx.send(Arc::clone(handle)).is_err() {
            *spares = None;
        }
    }
}
