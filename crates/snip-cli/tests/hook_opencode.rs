//! `snip hook opencode`: the filter the OpenCode plugin runs on a tool output, and
//! `--saved PATH`, the whole output OpenCode saved when it cut a bash output itself.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

const ERROR_LINE: &str = "2026-11-30T12:00:00Z ERROR db: connection refused (code=57P01)";

fn filter(store: &Path, stdin: &str, saved: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snip"));
    cmd.args(["hook", "opencode", "--tool", "bash"]);
    if let Some(p) = saved {
        cmd.arg("--saved").arg(p);
    }
    let mut child = cmd
        .env("SNIP_STORE_DIR", store)
        .env("SNIP_MAX_BYTES", "4096")
        .env_remove("SNIP_RESTORE_TOOL")
        .env_remove("SNIP_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// A 300 KB log with the error line in the middle, and OpenCode's cut of it: its
/// notice naming `path`, then the end.
fn log_and_cut(path: &Path) -> (String, String) {
    let mut lines: Vec<String> = (0..3600)
        .map(|i| {
            format!(
                "2026-11-30T13:00:00Z INFO shard-{}: copied block {i} checksum ok",
                i % 16
            )
        })
        .collect();
    lines.insert(1800, ERROR_LINE.to_string());
    let full = lines.join("\n") + "\n";
    let tail: String = lines[lines.len() - 500..].join("\n");
    let shown = format!(
        "...output truncated...\n\nFull output saved to: {}\n\n{tail}",
        path.display()
    );
    (full, shown)
}

#[test]
fn the_saved_whole_is_compressed_instead_of_opencodes_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let saved = tmp.path().join("tool_0001");
    let (full, shown) = log_and_cut(&saved);
    std::fs::write(&saved, &full).unwrap();

    let out = filter(&store, &shown, Some(&saved));
    assert!(out.contains(ERROR_LINE), "{out}");
    assert!(!out.contains("output truncated"), "{out}");
    assert!(out.len() <= 4096, "{} bytes", out.len());
    assert!(out.contains("restore: snip_snip_restore(id=\"sn_"), "{out}");
    // A marker's restore call gives back lines of the saved whole.
    let at = out.find("snip_snip_restore(id=").unwrap();
    let call = &out[at..at + out[at..].find(')').unwrap() + 1];
    let restored = Command::new(env!("CARGO_BIN_EXE_snip"))
        .args(["restore", call, "--raw"])
        .env("SNIP_STORE_DIR", &store)
        .output()
        .unwrap();
    assert!(restored.status.success(), "{call}");
    let got = String::from_utf8(restored.stdout).unwrap();
    assert!(!got.is_empty() && full.contains(&got), "{call}: {got:.200}");

    // OpenCode's `<shell_metadata>` block after the output is kept.
    let meta = "\n\n<shell_metadata>\nshell tool terminated command after exceeding timeout 120000 ms.\n</shell_metadata>";
    let out = filter(&store, &format!("{shown}{meta}"), Some(&saved));
    assert!(out.contains(ERROR_LINE) && out.ends_with(meta), "{out}");
}

#[test]
fn the_cut_text_is_compressed_when_the_saved_file_does_not_qualify() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let saved = tmp.path().join("tool_0002");
    let (full, shown) = log_and_cut(&saved);
    // No such file; then a notice naming another file; then no --saved at all.
    let missing = filter(&store, &shown, Some(&saved));
    std::fs::write(&saved, &full).unwrap();
    let other = filter(&store, &shown, Some(&tmp.path().join("elsewhere")));
    let plain = filter(&store, &shown, None);
    // A directory is not a saved output.
    let dir = filter(&store, &shown, Some(tmp.path()));
    for out in [&missing, &other, &plain, &dir] {
        assert!(out.starts_with("...output truncated..."), "{out}");
        assert!(!out.contains(ERROR_LINE));
        assert!(out.len() < shown.len());
    }
}
