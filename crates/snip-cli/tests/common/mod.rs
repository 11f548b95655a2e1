//! The harness the `snip` binary's tests share: a temporary HOME and project to run
//! `snip` in, bundled captures, and piping input through a child process.
#![allow(dead_code)] // Each test file uses a part.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `snip` binary under test.
pub const SNIP: &str = env!("CARGO_BIN_EXE_snip");

/// The bytes of `fixtures/corpus/<name>`.
pub fn capture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/corpus")
            .join(name),
    )
    .unwrap()
}

/// Runs `cmd` with `input` on stdin (written from a thread, so a child that writes
/// before it has read everything cannot deadlock) and collects its output.
pub fn pipe(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A temporary HOME and project directory (removed when dropped); `snip` runs in the
/// project with that HOME and no XDG overrides.
pub struct Env {
    _tmp: tempfile::TempDir,
    /// `$HOME` for the runs.
    pub home: PathBuf,
    /// The working directory of the runs.
    pub project: PathBuf,
}

impl Env {
    /// Fresh, empty directories.
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Env {
            _tmp: tmp,
            home,
            project,
        }
    }

    /// Runs `snip ARGS` here.
    pub fn snip(&self, args: &[&str]) -> Output {
        Command::new(SNIP)
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    }

    /// Runs `snip ARGS` here, asserts it succeeded, and returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.snip(args);
        assert!(
            out.status.success(),
            "snip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// The backups an install made of `path` (`<name>.snip-backup-*` beside it), sorted;
/// none when its directory is gone.
pub fn backups(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let Ok(dir) = std::fs::read_dir(path.parent().unwrap()) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{name}.snip-backup-"))
        })
        .collect();
    v.sort();
    v
}

/// Puts an executable holding `bytes` at `dst` without this process ever opening
/// `dst` for writing.
///
/// A test that writes a program and then runs it races the other tests' threads: a
/// child they start between our `open` and `close` inherits the write descriptor
/// until its own exec, and running the file in that window fails with `ETXTBSY`
/// ("Text file busy"). The bytes go to a sibling file that is never run, and a child
/// process (`install`, coreutils) makes the executable, so no descriptor to it exists
/// here for another child to inherit.
pub fn place_executable(bytes: &[u8], dst: &Path) {
    let mut staged = dst.as_os_str().to_owned();
    staged.push(".staged");
    std::fs::write(&staged, bytes).unwrap();
    let status = Command::new("install")
        .args(["-m", "0755"])
        .arg(&staged)
        .arg(dst)
        .status()
        .expect("install (coreutils) runs");
    assert!(status.success(), "install -m 0755 {dst:?}: {status}");
    std::fs::remove_file(&staged).unwrap();
}
