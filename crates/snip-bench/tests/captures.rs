//! The embedded captures are the repository's `fixtures/corpus/` files, joined with
//! their manifest rows.

use snip_bench::captures::{self, parse_manifest, FILES, MANIFEST_TSV};
use snip_bench::clue::strip_ansi;
use snip_bench::Kind;
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus")
}

#[test]
fn embedded_bytes_are_the_repository_files() {
    let on_disk = std::fs::read_to_string(corpus_dir().join("MANIFEST.tsv")).unwrap();
    assert_eq!(on_disk, MANIFEST_TSV);
    for f in FILES {
        let bytes = std::fs::read(corpus_dir().join(f.file)).unwrap();
        assert!(
            bytes == f.bytes,
            "{} differs from the embedded copy",
            f.file
        );
    }
    let files_on_disk = std::fs::read_dir(corpus_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .count();
    assert_eq!(files_on_disk, FILES.len(), "every capture is embedded");
}

#[test]
fn every_manifest_row_joins_an_embedded_capture() {
    let all = captures::all().unwrap();
    assert_eq!(all.len(), 26);
    for c in &all {
        let row = &c.manifest;
        assert_eq!(c.file.file, row.file);
        assert!(!row.clue.is_empty());
        let stripped = strip_ansi(c.file.bytes);
        assert!(
            memchr::memmem::find(&stripped, row.clue.as_bytes()).is_some(),
            "{}: the clue is in the stripped capture",
            row.file
        );
    }
    let diff = all.iter().find(|c| c.file.kind == Kind::Diff).unwrap();
    assert_eq!(diff.manifest.exit_code, 1, "git diff --no-index exits 1");
}

#[test]
fn kinds_match_content() {
    for f in FILES {
        let json = serde_json::from_slice::<serde_json::Value>(f.bytes).is_ok();
        assert_eq!(json, f.kind == Kind::Json, "{}: JSON kind", f.file);
        let diff = f.bytes.starts_with(b"diff --git ");
        assert_eq!(diff, f.kind == Kind::Diff, "{}: diff kind", f.file);
    }
}

#[test]
fn manifest_parser_finds_columns_by_name() {
    let tsv = "exit_code\tclue\tfile\n1\ta \"quoted\" clue\tx.txt\n\n";
    let rows = parse_manifest(tsv).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].file, "x.txt");
    assert_eq!(rows[0].clue, "a \"quoted\" clue");
    assert_eq!(rows[0].exit_code, 1);
    assert!(
        parse_manifest("file\tclue\n").is_err(),
        "no exit_code column"
    );
    assert!(parse_manifest("file\tclue\texit_code\nx\ty\tnope\n").is_err());
}

#[test]
fn manifest_rows_carry_their_command() {
    let rows = parse_manifest("file\tclue\texit_code\tcommand\nx.txt\ty\t0\tls -l\n").unwrap();
    assert_eq!(rows[0].command, "ls -l");
    assert!(captures::all()
        .unwrap()
        .iter()
        .all(|c| !c.manifest.command.is_empty()));
}

#[test]
fn the_new_set_is_the_repository_files_joined_with_their_rows() {
    use snip_bench::captures::{Set, NEW_FILES, NEW_MANIFEST_TSV};
    let dir = corpus_dir().join("../corpus-new");
    let on_disk = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    assert_eq!(on_disk, NEW_MANIFEST_TSV);
    for f in NEW_FILES {
        let bytes = std::fs::read(dir.join(f.file)).unwrap();
        assert!(
            bytes == f.bytes,
            "{} differs from the embedded copy",
            f.file
        );
        let json = serde_json::from_slice::<serde_json::Value>(f.bytes).is_ok();
        assert_eq!(json, f.kind == Kind::Json, "{}: JSON kind", f.file);
        let stripped = strip_ansi(f.bytes);
        let diff = stripped.starts_with(b"diff --git ")
            || memchr::memmem::find(&stripped, b"\ndiff --git ").is_some();
        assert_eq!(diff, f.kind == Kind::Diff, "{}: diff kind", f.file);
    }
    let files_on_disk = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .count();
    assert_eq!(files_on_disk, NEW_FILES.len(), "every capture is embedded");
    let all = captures::of(Set::New).unwrap();
    assert!(all.len() >= 30);
    for c in &all {
        let stripped = strip_ansi(c.file.bytes);
        assert!(
            memchr::memmem::find(&stripped, c.manifest.clue.as_bytes()).is_some(),
            "{}: the clue is in the stripped capture",
            c.manifest.file
        );
    }
}
