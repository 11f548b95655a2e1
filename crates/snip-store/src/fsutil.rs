//! Private directories and files: 0700/0600, owned by us, never through a symlink.

use crate::error::{IoContext, StoreError};
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Mode of the store directory and its subdirectories.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file in the store.
pub const FILE_MODE: u32 = 0o600;

/// The effective user id of this process.
pub fn euid() -> u32 {
    // Asked once per process: it does not change under us (snip never calls setuid).
    static EUID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *EUID.get_or_init(|| rustix::process::geteuid().as_raw())
}

/// `path` without trailing slashes, repeated slashes and `.` components (`..` is kept:
/// removing it is only right when no symlink precedes it). `/a/link/` → `/a/link`,
/// so that the last component is the link itself, not the directory it points to.
pub fn normalize(path: &Path) -> PathBuf {
    path.components().collect()
}

/// Creates `dir` (and missing parents) with mode 0700, then checks it: it must be a
/// real directory (not a symlink, not `/`) owned by this user, and writable by no one
/// else (group or other write would let another user swap its files).
/// With `tighten` (a directory snip made for itself, like `objects/`), group and other
/// bits are cleared to 0700; without it (the
/// directory the user named, which may be `$HOME` or a shared one) its mode is never
/// changed: files in it are 0600 and originals sit in the 0700 `objects/`.
///
/// # Errors
/// [`StoreError::Refused`] for `/`, a symlink, a non-directory, a foreign owner or
/// (without `tighten`) a directory group or others can write to; [`StoreError::Io`] when it cannot be
/// created or inspected.
pub fn ensure_private_dir(dir: &Path, tighten: bool) -> Result<(), StoreError> {
    let md = match fs::symlink_metadata(dir) {
        Ok(md) => md,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            DirBuilder::new()
                .recursive(true)
                .mode(DIR_MODE)
                .create(dir)
                .ctx("create directory", dir)?;
            fs::symlink_metadata(dir).ctx("inspect", dir)?
        }
        Err(e) => return Err(StoreError::io("inspect", dir, e)),
    };
    let refuse = |reason: String| StoreError::refused(dir, &reason);
    if dir.parent().is_none() {
        return Err(refuse("it is the root directory".into()));
    }
    if md.file_type().is_symlink() {
        return Err(refuse("it is a symlink".into()));
    }
    if !md.is_dir() {
        return Err(refuse("it is not a directory".into()));
    }
    let me = euid();
    if md.uid() != me {
        return Err(refuse(format!(
            "it is owned by uid {}, not by this user (uid {me})",
            md.uid()
        )));
    }
    if tighten && md.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(DIR_MODE))
            .ctx("set mode 0700 on", dir)?;
    } else if !tighten && md.mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "other users can write to it (mode {:04o}; chmod go-w it)",
            md.mode() & 0o7777
        )));
    }
    Ok(())
}

/// Opens an existing store file for reading without following a symlink, and checks
/// that it is a regular file owned by this user and not readable by others.
///
/// # Errors
/// [`StoreError::Io`] (e.g. `NotFound`) or [`StoreError::Refused`].
pub fn open_private_file(path: &Path) -> Result<File, StoreError> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .ctx("open", path)?;
    check_private(&f, path)?;
    Ok(f)
}

/// Opens (creating with mode 0600) a store file for appending or locking, without
/// following a symlink, and checks it as [`open_private_file`] does: a regular file
/// owned by this user, not readable or writable by others. A file that fails the
/// check (planted by another user, or made readable to others) is refused, never
/// written.
///
/// # Errors
/// [`StoreError::Io`] or [`StoreError::Refused`].
pub fn open_rw_create(path: &Path, append: bool) -> Result<File, StoreError> {
    open_rw_create_len(path, append).map(|(f, _)| f)
}

/// [`open_rw_create`], with the file's length from the check (no second `fstat`).
///
/// # Errors
/// As [`open_rw_create`].
pub fn open_rw_create_len(path: &Path, append: bool) -> Result<(File, u64), StoreError> {
    let mut o = OpenOptions::new();
    o.read(true)
        .create(true)
        .mode(FILE_MODE)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    if append {
        o.append(true);
    } else {
        o.write(true);
    }
    let f = o.open(path).ctx("open", path)?;
    let len = check_private(&f, path)?.len();
    Ok((f, len))
}

/// Refuses an open store file that is not a regular file owned by this user with no
/// group or other permission bits.
fn check_private(f: &File, path: &Path) -> Result<fs::Metadata, StoreError> {
    let md = f.metadata().ctx("inspect", path)?;
    let refuse = |reason: String| StoreError::refused(path, &reason);
    if !md.is_file() {
        return Err(refuse("it is not a regular file".into()));
    }
    if md.uid() != euid() {
        return Err(refuse(format!("it is owned by uid {}", md.uid())));
    }
    if md.mode() & 0o077 != 0 {
        return Err(StoreError::Refused {
            path: path.to_path_buf(),
            reason: format!(
                "its mode is {:04o}, open to others; run chmod 600 {}",
                md.mode() & 0o7777,
                path.display()
            ),
        });
    }
    Ok(md)
}

/// Milliseconds since the Unix epoch (0 for times before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
