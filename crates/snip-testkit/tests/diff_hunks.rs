//! Big diffs shorten by whole hunks, never inside one (issue 17, item 5): real git
//! repositories built in a temporary directory with the `git` binary, their `git log
//! -p` and `git diff` compressed, and every output checked with the accounting checker
//! (kept bytes and marker ranges tile the original; every restore call returns its
//! range), and kept file sections applied with `git apply --check`.

use snip_core::Config;
use snip_testkit::{compress_and_check, TempStore};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .args(["-c", "color.ui=never", "-c", "core.pager=cat"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
        .env("GIT_COMMITTER_NAME", "A")
        .env("GIT_COMMITTER_EMAIL", "a@example.invalid")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("git runs");
    if let Some(b) = stdin {
        child.stdin.take().unwrap().write_all(b).unwrap();
    }
    drop(child.stdin.take());
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// A file of `n` numbered lines, lines `changed` (by index) marked with `rev`.
fn file_text(n: usize, changed: &[usize], rev: usize) -> String {
    (0..n)
        .map(|i| {
            if changed.contains(&i) {
                format!("line {i} of the file, revision {rev}\n")
            } else {
                format!("line {i} of the file\n")
            }
        })
        .collect()
}

/// Hunk headers `@@ … @@` (with their counts) of a diff, in order.
fn hunk_headers(d: &str) -> Vec<String> {
    d.lines()
        .filter(|l| l.starts_with("@@ -"))
        .map(|l| {
            let end = l[2..].find("@@").unwrap() + 4;
            l[..end].to_string()
        })
        .collect()
}

/// Checks what every shortened diff must satisfy: accounting (every marker restores
/// its exact bytes), kept hunks complete (their counts match their bodies) and every
/// elided hunk counted in a marker (named with its header when `named`).
fn check_shortened_only(input: &[u8], cfg: &Config, store: &TempStore, named: bool) -> String {
    let (out, checked) = compress_and_check(input, cfg, &store.handle).unwrap();
    assert!(checked.markers > 0, "nothing was elided");
    let out = String::from_utf8(out).unwrap();
    let input = std::str::from_utf8(input).unwrap();
    // Kept hunks are complete: count each body against its header.
    let lines: Vec<&str> = out.lines().collect();
    let mut i = 0;
    let mut kept = Vec::new();
    while i < lines.len() {
        if let Some(rest) = lines[i].strip_prefix("@@ -") {
            let (ranges, _) = rest.split_once(" @@").unwrap();
            let (o, n) = ranges.split_once(" +").unwrap();
            let count = |r: &str| r.split_once(',').map_or(1, |(_, c)| c.parse().unwrap());
            let (mut old, mut new): (usize, usize) = (count(o), count(n));
            kept.push(lines[i].to_string());
            i += 1;
            while old > 0 || new > 0 {
                let l = lines[i];
                assert!(!l.starts_with("[snip: "), "a marker inside a hunk");
                match l.as_bytes().first() {
                    Some(b'+') => new -= 1,
                    Some(b'-') => old -= 1,
                    Some(b'\\') => {}
                    _ => {
                        old -= 1;
                        new -= 1;
                    }
                }
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    // Every hunk of the input is kept or named in a marker.
    let markers: String = lines
        .iter()
        .filter(|l| l.starts_with("[snip: ") && l.contains("diff-protect"))
        .map(|l| format!("{l}\n"))
        .collect();
    let all = hunk_headers(input);
    let kept_n = kept.len();
    let counted: usize = markers
        .lines()
        .map(|l| {
            let n = l["[snip: ".len()..].split(' ').next().unwrap();
            n.parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(kept_n + counted, all.len(), "hunks kept + hunks counted");
    if named {
        let named = markers.matches(" @@ -").count();
        assert_eq!(kept_n + named, all.len(), "hunks kept + hunks named");
    }
    out
}

/// [`check_shortened_only`], and the output within the diff budget.
fn check_shortened(input: &[u8], cfg: &Config, store: &TempStore, named: bool) -> String {
    let out = check_shortened_only(input, cfg, store, named);
    assert!(
        out.len() <= cfg.diff_max_bytes,
        "{} bytes out, over the diff budget {}",
        out.len(),
        cfg.diff_max_bytes
    );
    out
}

/// The `diff-protect` marker lines of an output.
fn diff_markers(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("[snip: ") && l.contains(" · diff-protect · "))
        .collect()
}

/// A `git log -p` of 320 commits, each with a long message and touching 20 to 60 of
/// 80 files (two hunks in each).
fn wide_log(d: &Path) -> Vec<u8> {
    git(d, &["init", "-q", "-b", "main"], None);
    let mut s = String::new();
    for c in 0..320usize {
        s += "commit refs/heads/main\n";
        s += &format!(
            "committer A <a@example.invalid> {} +0000\n",
            1_700_000_000 + c
        );
        let mut msg = format!("change {c}: a wide refactor across many modules\n\n");
        for k in 0..6 {
            msg += &format!(
                "Paragraph {k} of the message of commit {c}, explaining at length why \
                 every one of these files had to change together.\n"
            );
        }
        s += &format!("data {}\n{msg}", msg.len());
        let touched = 20 + c * 7 % 41;
        for k in 0..touched {
            let f = (c * 13 + k) % 80;
            let text = file_text(60, &[3 + c % 5, 40 + c % 11], c);
            s += &format!(
                "M 100644 inline src/module_{f:02}/file_{f:02}.rs\ndata {}\n{text}\n",
                text.len()
            );
        }
    }
    git(d, &["fast-import", "--quiet"], Some(s.as_bytes()));
    git(d, &["log", "-p", "main"], None)
}

#[test]
fn a_wide_git_log_p_gets_compact_markers_that_restore_their_runs() {
    let dir = tempfile::tempdir().unwrap();
    let log = wide_log(dir.path());
    let text = String::from_utf8_lossy(&log).into_owned();
    let commits = text.matches("\ncommit ").count() + 1;
    assert!(commits >= 300, "{commits} commits");
    // Commit headers (and other text outside files) alone: what is always kept.
    let headers: usize = text
        .split_inclusive('\n')
        .scan(true, |outside, l| {
            if l.starts_with("commit ") {
                *outside = true;
            } else if l.starts_with("diff --git ") {
                *outside = false;
            }
            // The blank line `git log` puts between a diff and the next commit.
            Some(if *outside || l == "\n" { l.len() } else { 0 })
        })
        .sum();
    let store = TempStore::new();
    // The default diff budget (98,304 bytes), under the commit headers' size: every
    // header is kept, and each run gets a compact marker (counts only).
    let cfg = Config::default();
    assert!(headers > cfg.diff_max_bytes, "headers of {headers} bytes");
    let out = check_shortened_only(&log, &cfg, &store, false);
    assert_eq!(
        out.matches("\ncommit ").count() + 1,
        commits,
        "commit headers kept"
    );
    let markers = diff_markers(&out);
    let marker_bytes: usize = markers.iter().map(|m| m.len() + 1).sum();
    assert!(markers.len() <= commits, "{} markers", markers.len());
    for m in &markers {
        assert!(m.len() <= 256, "a marker of {} bytes: {m}", m.len());
    }
    assert_eq!(
        out.len(),
        headers + marker_bytes,
        "only headers and markers"
    );
    // A budget the headers fit with room to spare (600 KiB, the headers ~230 KB), but
    // not with markers naming every hunk or every file: the output fits the budget,
    // its markers name the first files of their runs and count the rest (at most 512
    // bytes each with these 24-byte names) and take at most a third of it (measured:
    // 195,243 bytes, 31.8%).
    let cfg = Config {
        diff_max_bytes: 600 * 1024,
        ..Config::default()
    };
    assert!(
        headers < cfg.diff_max_bytes / 2,
        "headers of {headers} bytes"
    );
    let out = check_shortened(&log, &cfg, &store, false);
    assert_eq!(
        out.matches("\ncommit ").count() + 1,
        commits,
        "commit headers kept"
    );
    let marker_bytes: usize = diff_markers(&out).iter().map(|m| m.len() + 1).sum();
    assert!(
        marker_bytes <= cfg.diff_max_bytes / 3,
        "{marker_bytes} marker bytes"
    );
    for m in diff_markers(&out) {
        assert!(m.len() <= 512, "a marker of {} bytes: {m}", m.len());
    }
}

#[test]
fn a_git_log_p_of_1000_commits_keeps_every_commit_header_and_whole_hunks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"], None);
    // 1,000 commits through one fast-import stream, each changing three lines (three
    // hunks) of one of 20 files.
    let mut s = String::new();
    for c in 0..1000usize {
        let f = c % 20;
        let changed = [c % 7 * 10, 100 + c % 13 * 10, 290 - c % 5];
        let text = file_text(300, &changed, c);
        s += "commit refs/heads/main\n";
        s += &format!(
            "committer A <a@example.invalid> {} +0000\n",
            1_700_000_000 + c
        );
        let msg = format!("change {c} in f{f}\n");
        s += &format!("data {}\n{msg}", msg.len());
        s += &format!("M 100644 inline f{f}.txt\ndata {}\n{text}\n", text.len());
    }
    git(d, &["fast-import", "--quiet"], Some(s.as_bytes()));
    let log = git(d, &["log", "-p", "main"], None);
    let commits = String::from_utf8_lossy(&log).matches("\ncommit ").count() + 1;
    assert!(commits >= 1000, "{commits} commits");
    // Every commit header is kept (about 200 bytes each with its marker), so the
    // budget must hold a thousand of them.
    let cfg = Config {
        diff_max_bytes: 600 * 1024,
        ..Config::default()
    };
    assert!(
        log.len() > 2 * cfg.diff_max_bytes,
        "log of {} bytes",
        log.len()
    );
    let store = TempStore::new();
    let out = check_shortened(&log, &cfg, &store, true);
    assert_eq!(
        out.matches("\ncommit ").count() + 1,
        commits,
        "commit headers kept"
    );
}

#[test]
fn a_600_kb_patch_ends_within_the_diff_budget_and_its_kept_sections_apply() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"], None);
    let files = 70;
    for f in 0..files {
        std::fs::write(d.join(format!("f{f}.txt")), file_text(1000, &[], 0)).unwrap();
    }
    git(d, &["add", "."], None);
    git(d, &["commit", "-q", "-m", "base"], None);
    for f in 0..files {
        let changed: Vec<usize> = (0..1000).filter(|i| i % 37 < 3).collect();
        let mut t = file_text(1000, &changed, f);
        if f == 41 {
            t = t.replace("line 500 of the file\n", "error: conflict at line 500\n");
        }
        std::fs::write(d.join(format!("f{f}.txt")), t).unwrap();
    }
    let patch = git(d, &["diff"], None);
    assert!(patch.len() >= 600 * 1024, "patch of {} bytes", patch.len());
    let cfg = Config::default();
    let store = TempStore::new();
    let out = check_shortened(&patch, &cfg, &store, true);
    // The salient hunk is kept.
    assert!(
        out.contains("+error: conflict at line 500"),
        "salient hunk elided"
    );
    git(d, &["checkout", "-q", "."], None);
    // Each kept file section (its header and kept hunks, markers left out) applies.
    let mut sections = 0;
    for sec in out.split("diff --git ").skip(1) {
        let body: String = sec
            .lines()
            .filter(|l| !l.starts_with("[snip: "))
            .map(|l| format!("{l}\n"))
            .collect();
        if !body.contains("\n@@ -") {
            continue;
        }
        let p = d.join("section.patch");
        std::fs::write(&p, format!("diff --git {body}")).unwrap();
        git(d, &["apply", "--check", p.to_str().unwrap()], None);
        sections += 1;
    }
    assert!(sections > 0);
}

#[test]
fn diffs_under_the_diff_budget_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"], None);
    std::fs::write(d.join("f.txt"), file_text(3000, &[], 0)).unwrap();
    git(d, &["add", "."], None);
    git(d, &["commit", "-q", "-m", "base"], None);
    let changed: Vec<usize> = (0..3000).filter(|i| i % 20 == 0).collect();
    std::fs::write(d.join("f.txt"), file_text(3000, &changed, 1)).unwrap();
    let patch = git(d, &["diff"], None);
    let cfg = Config::default();
    // Over the text budget, under the diff budget.
    assert!(patch.len() > cfg.max_bytes && patch.len() <= cfg.diff_max_bytes);
    let store = TempStore::new();
    let (out, _) = compress_and_check(&patch, &cfg, &store.handle).unwrap();
    assert!(out == patch);
}
