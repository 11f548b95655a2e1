//! The rule table: every rule in [`snip_core::rules::REGISTRY`] has a fixture folder
//! `tests/fixtures/<rule-id>/` with at least one case where the rule must fire (the
//! folder's files) and one where it must not (`no-fire/`), and its module doc has the
//! four sections What it does / Why / Example / Options.

use snip_core::rules::{self, REGISTRY};
use snip_core::{Config, RuleId};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files directly in `dir` (not in subfolders), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// The budget the rule's fixtures are cut for: lossy rules get a small one so the
/// excerpts are over it (as in `rules_snapshots.rs`), and `json-fields` the small one
/// its own snapshots use (`tests/json_fields.rs`).
fn config(rule: RuleId) -> Config {
    match rule {
        RuleId::TracebackKeep | RuleId::ShapeFold | RuleId::HeadTailElide => {
            Config::with_budget(4096)
        }
        RuleId::JsonFields => Config {
            json_string_keep: 64,
            json_array_keep: 2,
            ..Config::with_budget(1000)
        },
        _ => Config::default(),
    }
}

/// Whether the rule alone did something to `input`: `diff-protect` fires by returning
/// the input itself, every other rule by returning something different.
fn fires(rule: RuleId, input: &[u8]) -> bool {
    match rules::apply_one(rule, input, &config(rule)) {
        None => false,
        Some(out) if rule == RuleId::DiffProtect => out == input,
        Some(out) => out != input,
    }
}

#[test]
fn every_rule_fires_on_its_fixtures_and_not_on_its_no_fire_cases() {
    for r in REGISTRY {
        let dir = root().join("tests/fixtures").join(r.id.as_str());
        let fire = files(&dir);
        assert!(!fire.is_empty(), "{}: no fixture where it fires", r.id);
        for f in &fire {
            let input = std::fs::read(f).unwrap();
            assert!(
                fires(r.id, &input),
                "{} did not fire on {}",
                r.id,
                f.display()
            );
        }
        let quiet = files(&dir.join("no-fire"));
        assert!(
            !quiet.is_empty(),
            "{}: no fixture where it must not fire",
            r.id
        );
        for f in &quiet {
            let input = std::fs::read(f).unwrap();
            assert!(!fires(r.id, &input), "{} fired on {}", r.id, f.display());
        }
    }
}

/// The rule's source: `src/rules/<id>.rs` or `src/rules/<id>/mod.rs` (`-` read as `_`).
fn source(rule: RuleId) -> String {
    let name = rule.as_str().replace('-', "_");
    let dir = root().join("src/rules");
    let file = dir.join(format!("{name}.rs"));
    let path = if file.exists() {
        file
    } else {
        dir.join(name).join("mod.rs")
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_rule_doc_has_what_why_example_options() {
    for r in REGISTRY {
        let doc: String = source(r.id)
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| format!("{}\n", l.trim_start_matches("//!").trim()))
            .collect();
        assert!(
            doc.contains(&format!("`{}`", r.id)),
            "{}: the module doc does not name the rule",
            r.id
        );
        let mut at = 0;
        for section in ["What it does", "Why", "Example", "Options"] {
            // `**Section.**` (a paragraph) or `# Section` (a heading), in this order.
            let found = [format!("**{section}.**"), format!("# {section}\n")]
                .iter()
                .filter_map(|s| doc[at..].find(s.as_str()))
                .min();
            let k = found.unwrap_or_else(|| panic!("{}: no {section} section (in order)", r.id));
            at += k + 1;
        }
    }
}
