//! The store's error type. Every message is one line that says what to do.

use std::io;
use std::path::PathBuf;

/// Why the store could not be opened or could not keep an original.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store is turned off (`SNIP_STORE=0`).
    #[error("the store of originals is off (SNIP_STORE=0); unset SNIP_STORE to turn it on")]
    Disabled,
    /// A `SNIP_*` variable of the store does not parse.
    #[error("{0}")]
    Config(#[from] snip_core::ConfigError),
    /// The store is on but no directory for it can be found: no `SNIP_STORE_DIR`, and
    /// none of `HERMES_HOME`, `XDG_CACHE_HOME`, `HOME` is an absolute path.
    #[error(
        "no store location could be found ({}); set SNIP_STORE_DIR to an absolute directory, or SNIP_STORE=0 to turn the store off",
        match home {
            Some(h) => format!("HOME={h:?} is not an absolute path, and neither HERMES_HOME nor XDG_CACHE_HOME is one"),
            None => "HOME is not set, and neither HERMES_HOME nor XDG_CACHE_HOME is an absolute path".to_string(),
        }
    )]
    NoLocation {
        /// `HOME` as found (`None`: unset or empty).
        home: Option<String>,
    },
    /// The store directory (or a file in it) is unsafe or unfit to use: a symlink, not
    /// a directory, owned by another user, open to others, a damaged key file.
    #[error("refusing store {}: {reason}", path.display())]
    Refused {
        /// The refused path.
        path: PathBuf,
        /// Why, then what to do, e.g. `it is a symlink; set SNIP_STORE_DIR to a
        /// directory you own` (built by `StoreError::refused`).
        reason: String,
    },
    /// The original is larger than the store keeps.
    #[error("original of {bytes} bytes is over {variable}={limit}; it is not retained; raise {variable} to keep originals this large")]
    TooLarge {
        /// Size of the original, in bytes.
        bytes: u64,
        /// The cap, in bytes.
        limit: u64,
        /// The variable that sets the cap.
        variable: &'static str,
    },
    /// The shared store (`SNIP_STORE_URL`) could not be reached, did not answer in
    /// time, or refused the call. `location` is the URL with its password masked.
    #[error("shared store {location}: {reason}")]
    Remote {
        /// The store's URL, password masked.
        location: String,
        /// One line saying what went wrong and what to do.
        reason: String,
    },
    /// A file system operation failed. The message ends with the OS error, which is
    /// therefore not also given as [`std::error::Error::source`] (a printed error
    /// chain would repeat it).
    #[error("store: cannot {action} {}: {cause}", path.display())]
    Io {
        /// What was being done, e.g. `create`.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
}

impl StoreError {
    /// True when the shared store could not be reached or answered in time (rather
    /// than refusing the call): the connection is then dropped and made afresh.
    pub fn is_remote(&self) -> bool {
        matches!(self, StoreError::Remote { .. })
    }

    /// [`StoreError::Refused`] for `path` because of `why`, with the fix that fits
    /// most refusals: another directory.
    pub(crate) fn refused(path: impl Into<PathBuf>, why: &str) -> Self {
        StoreError::Refused {
            path: path.into(),
            reason: format!("{why}; set SNIP_STORE_DIR to a directory you own"),
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, cause: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            cause,
        }
    }
}

/// Attaches an action and a path to an I/O result.
pub(crate) trait IoContext<T> {
    fn ctx(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T, StoreError>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::io(action, path, e))
    }
}

/// What to do about a failed store write, from the store's one-line reason (its
/// [`StoreError`] message, which ends with the OS error for a failed file operation):
/// for a read-only file system or directory, and a full disk or quota. `None` for
/// other reasons: the store's own messages (a cap, a refused directory) name their fix.
pub fn write_fix(reason: &str) -> Option<&'static str> {
    if reason.contains("(os error 30)") {
        Some("the store is on a read-only file system: set SNIP_STORE_DIR to a directory on a writable one")
    } else if reason.contains("(os error 13)") || reason.contains("(os error 1)") {
        Some("this user cannot write the store directory: make it writable (chmod u+w), or set SNIP_STORE_DIR to a directory you own")
    } else if reason.contains("(os error 28)") || reason.contains("(os error 122)") {
        Some("the store's disk (or quota) is full: free space, or lower SNIP_STORE_MAX_BYTES and run `snip gc`")
    } else {
        None
    }
}
