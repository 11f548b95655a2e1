//! Shared test helpers: the bundled corpus and its manifest.
#![allow(dead_code, missing_docs)]

use std::path::PathBuf;

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// One manifest row: file, tty, clue, exit code.
pub struct Capture {
    pub file: String,
    pub clue: String,
    pub bytes: Vec<u8>,
}

pub fn corpus() -> Vec<Capture> {
    corpus_in("corpus")
}

/// The captures of `fixtures/<set>/` (`corpus` or `corpus-new`), in manifest order.
pub fn corpus_in(set: &str) -> Vec<Capture> {
    let dir = fixtures().join(set);
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("manifest");
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("column");
    let (f, c) = (col("file"), col("clue"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            let file = cells[f].to_string();
            let bytes = std::fs::read(dir.join(&file)).expect("capture");
            Capture {
                file,
                clue: cells[c].to_string(),
                bytes,
            }
        })
        .collect()
}

/// A `Retain` that pretends to keep originals under a fixed id (the core is pure; the
/// store crate has its own tests).
pub struct FakeStore(pub Vec<Vec<u8>>);

impl snip_core::Retain for FakeStore {
    fn retain(&mut self, original: &[u8]) -> snip_core::Retention {
        self.0.push(original.to_vec());
        snip_core::Retention::Retained {
            id: format!("sn_{:024x}", self.0.len()),
        }
    }
}

pub fn compress(input: &[u8]) -> snip_core::Outcome {
    snip_core::compress(
        input,
        &snip_core::Config::default(),
        &mut FakeStore(Vec::new()),
    )
}
