//! Safe edits of a host's configuration files, shared by every installer.
//!
//! - Edits are format-preserving: a concrete syntax tree (`jsonc-parser`'s CST) keeps
//!   every other key, its order, the indentation and, in JSONC files, the comments.
//! - A file that does not parse is refused with a message and left untouched.
//! - Before a file is changed, its bytes are copied to `<file>.snip-backup-<UTC time>`;
//!   the new bytes are written to a temporary file in the same directory and renamed
//!   over the original.
//! - Each install is recorded in `$XDG_STATE_HOME/snip/installs.json` (default
//!   `~/.local/state/snip/installs.json`): the original's sha256 and backup, the
//!   installed bytes' sha256, and the containers the install created. Uninstall
//!   restores the original byte for byte when the file is still exactly as installed;
//!   when it changed since, only snip's own entries are removed.
//! - `--dry-run` prints the exact edit as a unified diff and writes nothing.

use crate::error::{bail, Context as _, Error, Result};
use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Which JSON dialect a file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Strict JSON (Claude Code's files): comments and trailing commas are refused.
    Json,
    /// JSON with comments and trailing commas (OpenCode's `opencode.json[c]`).
    Jsonc,
}

/// One configuration file loaded for editing.
pub struct Doc {
    /// Absolute path.
    pub path: PathBuf,
    /// The bytes on disk (`None` when the file does not exist).
    pub original: Option<Vec<u8>>,
    /// The tree being edited.
    pub root: CstRootNode,
    /// JSON pointers (e.g. `/hooks/PostToolUse`) of containers this edit created.
    pub created: Vec<String>,
}

impl Doc {
    /// Loads `path` (absent → an empty object). Refuses, with a message naming the
    /// file, anything that is not a JSON object in `dialect`.
    pub fn load(path: &Path, dialect: Dialect) -> Result<Doc> {
        let original = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let text = match &original {
            Some(b) => std::str::from_utf8(b)
                .map_err(|_| refuse(path, "it is not UTF-8 text"))?
                .to_string(),
            None => String::new(),
        };
        let text = if text.trim().is_empty() {
            "{}\n".to_string()
        } else {
            text
        };
        if dialect == Dialect::Json {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| refuse(path, &format!("it is not valid JSON ({e})")))?;
            if !v.is_object() {
                return Err(refuse(path, "its top level is not a JSON object"));
            }
        }
        let root = CstRootNode::parse(&text, &parse_options())
            .map_err(|e| refuse(path, &format!("it is not valid JSONC ({e})")))?;
        match root.value() {
            Some(v) if v.as_object().is_some() => {}
            _ => return Err(refuse(path, "its top level is not a JSON object")),
        }
        Ok(Doc {
            path: path.to_path_buf(),
            original,
            root,
            created: Vec::new(),
        })
    }

    /// The current text of the tree.
    pub fn text(&self) -> String {
        self.root.to_string()
    }

    /// The tree as a `serde_json` value (for lookups).
    pub fn value(&self) -> Value {
        self.root.to_serde_value().unwrap_or(Value::Null)
    }

    /// The root object.
    pub fn root_object(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    /// The object at `path` (keys from the root), created where missing. Errors when a
    /// key on the way holds something other than an object.
    pub fn object_at(&mut self, path: &[&str]) -> Result<CstObject> {
        let mut obj = self.root_object();
        let mut pointer = String::new();
        for key in path {
            pointer.push('/');
            pointer.push_str(&escape_pointer(key));
            if obj.get(key).is_none() {
                self.created.push(pointer.clone());
            }
            obj = obj
                .object_value_or_create(key)
                .ok_or_else(|| refuse(&self.path, &format!("`{pointer}` is not a JSON object")))?;
        }
        Ok(obj)
    }

    /// The array under `key` of `obj` (at JSON pointer `parent`), created when missing.
    pub fn array_in(&mut self, obj: &CstObject, parent: &str, key: &str) -> Result<CstArray> {
        if obj.get(key).is_none() {
            self.created
                .push(format!("{parent}/{}", escape_pointer(key)));
        }
        obj.array_value_or_create(key)
            .ok_or_else(|| refuse(&self.path, &format!("`{parent}/{key}` is not a JSON array")))
    }

    /// The planned change to this file (`None` when the text is unchanged).
    pub fn into_change(self) -> Option<Change> {
        let mut after = self.text().into_bytes();
        if self.original.is_none() && !after.ends_with(b"\n") {
            after.push(b'\n');
        }
        let unchanged = match &self.original {
            Some(b) => *b == after,
            None => false,
        };
        (!unchanged).then_some(Change {
            path: self.path,
            before: self.original,
            after: Some(after),
            created: self.created,
        })
    }
}

/// Parse options for JSONC: comments and trailing commas, nothing looser.
fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..ParseOptions::default()
    }
}

fn refuse(path: &Path, why: &str) -> Error {
    Error::Refused {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Converts a `serde_json` value to a CST input value (key order kept).
pub fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// One file's planned change.
#[derive(Debug, Clone)]
pub struct Change {
    /// Absolute path.
    pub path: PathBuf,
    /// Bytes before (`None`: the file does not exist).
    pub before: Option<Vec<u8>>,
    /// Bytes after (`None`: the file is deleted).
    pub after: Option<Vec<u8>>,
    /// Containers created by the install (JSON pointers), for later removal.
    pub created: Vec<String>,
}

impl Change {
    /// A whole file written (the OpenCode plugin).
    pub fn write_file(path: PathBuf, before: Option<Vec<u8>>, after: Vec<u8>) -> Change {
        Change {
            path,
            before,
            after: Some(after),
            created: Vec::new(),
        }
    }

    /// The unified diff of this change, as `--dry-run` prints it.
    pub fn diff(&self) -> String {
        let before = String::from_utf8_lossy(self.before.as_deref().unwrap_or_default());
        let after = String::from_utf8_lossy(self.after.as_deref().unwrap_or_default());
        let name = self.path.display().to_string();
        let old = if self.before.is_some() {
            name.clone()
        } else {
            "/dev/null".into()
        };
        let new = if self.after.is_some() {
            name
        } else {
            "/dev/null".into()
        };
        similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
            .unified_diff()
            .context_radius(3)
            .header(&old, &new)
            .to_string()
    }
}

/// What an install recorded about one file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileRecord {
    /// sha256 (hex) of the file before the first install; `None` when it did not exist.
    pub original_sha256: Option<String>,
    /// The backup holding those bytes.
    pub backup: Option<PathBuf>,
    /// sha256 (hex) of the file as the install left it.
    pub installed_sha256: String,
    /// Containers the install created (JSON pointers), removed again on uninstall
    /// when empty.
    #[serde(default)]
    pub created: Vec<String>,
    /// Backups written of this file while it held only what an install wrote (a
    /// later install on a file an install created): uninstall deletes them with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backups: Vec<PathBuf>,
    /// Directories the first install created to hold the file (deepest first):
    /// uninstall removes them again when they are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
}

/// The install records, keyed by absolute file path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Records {
    /// Format version.
    pub version: u32,
    /// One record per file.
    pub files: BTreeMap<PathBuf, FileRecord>,
}

impl Records {
    /// Where the records live.
    pub fn path() -> Result<PathBuf> {
        let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => home()?.join(".local/state"),
        };
        Ok(base.join("snip").join("installs.json"))
    }

    /// Loads the records (none yet → empty).
    pub fn load() -> Result<Records> {
        let path = Self::path()?;
        match std::fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b)
                .with_context(|| format!("reading install records {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Records {
                version: 1,
                ..Records::default()
            }),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Saves the records atomically.
    pub fn save(&self) -> Result<()> {
        let path = Self::path()?;
        let dir = path
            .parent()
            .context("install records path has no parent")?;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        write_atomic(&path, &text, None)
    }
}

/// The user's home directory (`$HOME`).
pub fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set")
}

/// sha256 as lowercase hex.
pub use snip_store::restore::sha256_hex;

/// Prints the plan as unified diffs (dry run) or applies it: backups first, then
/// atomic writes, then the records. Returns the paths written.
pub fn apply_install(changes: Vec<Change>, dry_run: bool) -> Result<Vec<PathBuf>> {
    if dry_run {
        print_diffs(&changes);
        return Ok(Vec::new());
    }
    let mut records = Records::load()?;
    let mut written = Vec::new();
    for change in changes {
        let after = change
            .after
            .as_deref()
            .context("an install never deletes")?;
        let backup = match &change.before {
            Some(b) => Some(write_backup(&change.path, b)?),
            None => None,
        };
        let mut created_dirs = Vec::new();
        if let Some(dir) = change.path.parent() {
            // The ancestors that do not exist yet, deepest first.
            let mut d = Some(dir);
            while let Some(x) = d.filter(|x| !x.as_os_str().is_empty() && !x.exists()) {
                created_dirs.push(x.to_path_buf());
                d = x.parent();
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        write_atomic(
            &change.path,
            after,
            change.before.as_ref().map(|_| &change.path),
        )?;
        let installed = sha256_hex(after);
        let record = match records.files.get(&change.path) {
            // Still exactly as a previous install left it: keep that install's
            // original so uninstall goes back to the state before the first one.
            Some(prev)
                if change
                    .before
                    .as_deref()
                    .is_some_and(|b| sha256_hex(b) == prev.installed_sha256) =>
            {
                let mut created = prev.created.clone();
                created.extend(change.created.iter().cloned());
                let mut backups = prev.backups.clone();
                if prev.original_sha256.is_none() {
                    backups.extend(backup);
                }
                FileRecord {
                    installed_sha256: installed,
                    created,
                    backups,
                    ..prev.clone()
                }
            }
            _ => FileRecord {
                original_sha256: change.before.as_deref().map(sha256_hex),
                backup,
                installed_sha256: installed,
                created: change.created.clone(),
                backups: Vec::new(),
                created_dirs,
            },
        };
        records.files.insert(change.path.clone(), record);
        written.push(change.path);
    }
    records.save()?;
    Ok(written)
}

/// How a file is taken back on uninstall.
pub enum Undo {
    /// The file is still exactly as installed: put the original bytes back (or delete
    /// the file when the install created it).
    Exact(Change),
    /// The file changed since: the caller removes snip's entries from this document.
    Structural(Box<Doc>, Vec<String>),
    /// No install recorded and nothing of snip's found.
    Nothing,
}

/// Decides how to undo the install of `path`.
pub fn plan_uninstall(path: &Path, dialect: Option<Dialect>) -> Result<Undo> {
    let records = Records::load()?;
    let current = match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Some(current) = current else {
        return Ok(Undo::Nothing);
    };
    if let Some(rec) = records.files.get(path) {
        if sha256_hex(&current) == rec.installed_sha256 {
            let restored = match (&rec.original_sha256, &rec.backup) {
                (None, _) => None,
                (Some(sha), Some(backup)) => {
                    let bytes = std::fs::read(backup)
                        .with_context(|| format!("reading the backup {}", backup.display()))?;
                    if sha256_hex(&bytes) != *sha {
                        bail!(
                            "the backup {} no longer holds the original of {}; nothing \
                             was changed",
                            backup.display(),
                            path.display()
                        );
                    }
                    Some(bytes)
                }
                (Some(_), None) => bail!("the install record of {} has no backup", path.display()),
            };
            return Ok(Undo::Exact(Change {
                path: path.to_path_buf(),
                before: Some(current),
                after: restored,
                created: Vec::new(),
            }));
        }
    }
    let created = records
        .files
        .get(path)
        .map(|r| r.created.clone())
        .unwrap_or_default();
    match dialect {
        Some(d) => Ok(Undo::Structural(Box::new(Doc::load(path, d)?), created)),
        None => Ok(Undo::Nothing),
    }
}

/// What uninstall did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undone {
    /// Its original bytes are back, byte for byte.
    Restored,
    /// It changed since the install: snip's entries were taken out, the rest kept.
    EntriesRemoved,
    /// Deleted: the install created it.
    Removed,
}

/// Applies uninstall changes (backups of the current bytes first) and drops their
/// records; prints diffs instead on a dry run. A file the install created and that is
/// still exactly as installed is deleted without a backup (it holds only what snip
/// wrote); the backups recorded for a file the install created are deleted with the
/// record. Backups of files that existed before the install stay.
pub fn apply_uninstall(changes: Vec<Change>, dry_run: bool) -> Result<Vec<(PathBuf, Undone)>> {
    if dry_run {
        print_diffs(&changes);
        return Ok(Vec::new());
    }
    let mut records = Records::load()?;
    let mut written = Vec::new();
    for change in changes {
        let record = records.files.get(&change.path);
        let created = record.is_some_and(|r| r.original_sha256.is_none());
        let snip_backups = match record {
            Some(r) if created => r.backups.clone(),
            _ => Vec::new(),
        };
        let created_dirs = record.map(|r| r.created_dirs.clone()).unwrap_or_default();
        // Still exactly as the install left it: those bytes are snip's own, nothing
        // of the user's to back up, and the original comes back byte for byte.
        let exact = record.is_some_and(|r| {
            change
                .before
                .as_deref()
                .is_some_and(|b| sha256_hex(b) == r.installed_sha256)
        });
        let undone = match &change.after {
            Some(after) => {
                if let (false, Some(before)) = (exact, &change.before) {
                    write_backup(&change.path, before)?;
                }
                write_atomic(&change.path, after, Some(&change.path))?;
                if exact {
                    Undone::Restored
                } else {
                    Undone::EntriesRemoved
                }
            }
            None => {
                if !created {
                    if let Some(before) = &change.before {
                        write_backup(&change.path, before)?;
                    }
                }
                std::fs::remove_file(&change.path)
                    .with_context(|| format!("removing {}", change.path.display()))?;
                Undone::Removed
            }
        };
        for b in snip_backups {
            match std::fs::remove_file(&b) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("removing the backup {}", b.display()))
                }
                _ => {}
            }
        }
        if matches!(undone, Undone::Removed) {
            // Directories the install created, if nothing else is in them now
            // (`remove_dir` fails on a non-empty one, which then stays).
            for d in &created_dirs {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
            }
        }
        records.files.remove(&change.path);
        written.push((change.path, undone));
    }
    records.save()?;
    Ok(written)
}

/// Removes the now-empty containers an install created (deepest first).
pub fn remove_empty_created(doc: &Doc, created: &[String]) {
    let mut sorted: Vec<&String> = created.iter().collect();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for pointer in sorted {
        let keys: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|k| k.replace("~1", "/").replace("~0", "~"))
            .collect();
        let Some((last, parents)) = keys.split_last() else {
            continue;
        };
        let mut obj = doc.root_object();
        let mut found = true;
        for k in parents {
            match obj.object_value(k) {
                Some(o) => obj = o,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        if let Some(prop) = obj.get(last) {
            let empty = match prop.value().and_then(|v| v.to_serde_value()) {
                Some(Value::Object(o)) => o.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            if empty {
                prop.remove();
            }
        }
    }
}

fn print_diffs(changes: &[Change]) {
    let mut out = std::io::stdout().lock();
    if changes.is_empty() {
        let _ = writeln!(out, "# nothing to change");
    }
    for c in changes {
        let _ = write!(out, "{}", c.diff());
    }
    eprintln!("snip: dry run, nothing was written");
}

/// Copies `bytes` to `<path>.snip-backup-<UTC time>` (0600) and returns that path.
fn write_backup(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let stamp = utc_stamp(std::time::SystemTime::now());
    let name = path
        .file_name()
        .context("config path has no file name")?
        .to_string_lossy()
        .into_owned();
    for n in 0..1000 {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let backup = path.with_file_name(format!("{name}.snip-backup-{stamp}{suffix}"));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            opts.mode(0o600);
        }
        match opts.open(&backup) {
            Ok(mut f) => {
                f.write_all(bytes)
                    .with_context(|| format!("writing backup {}", backup.display()))?;
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("writing backup {}", backup.display()))
            }
        }
    }
    bail!("too many backups of {} this second", path.display())
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`,
/// keeping the permissions of `keep_mode_of` when given.
fn write_atomic(path: &Path, bytes: &[u8], keep_mode_of: Option<&PathBuf>) -> Result<()> {
    let dir = path.parent().context("path has no parent")?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    if let Some(src) = keep_mode_of {
        if let Ok(meta) = std::fs::metadata(src) {
            std::fs::set_permissions(tmp.path(), meta.permissions())?;
        }
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))?;
        }
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// `YYYYMMDDTHHMMSSZ` for a time (UTC, proleptic Gregorian).
pub fn utc_stamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        assert_eq!(utc_stamp(t), "20231114T221320Z");
        assert_eq!(utc_stamp(std::time::UNIX_EPOCH), "19700101T000000Z");
    }
}
