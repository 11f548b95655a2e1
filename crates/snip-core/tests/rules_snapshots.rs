//! Snapshots of each rule on its fixtures (real captures or excerpts of them), under
//! `tests/fixtures/<rule-id>/`, plus idempotence and determinism over every fixture.
//! Review changes with `cargo insta review`; CI fails on any difference.

use snip_core::{compress, rules, Config, NoStore, RuleId};
use std::path::PathBuf;

fn fixtures(rule: RuleId) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rule.as_str());
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixtures for {rule}");
    v
}

/// The rule's budget for its snapshots: lossy rules get a small one so the excerpts
/// are over it.
fn config(rule: RuleId) -> Config {
    match rule {
        RuleId::TracebackKeep | RuleId::ShapeFold | RuleId::HeadTailElide => {
            Config::with_budget(4096)
        }
        _ => Config::default(),
    }
}

fn show(b: &[u8]) -> String {
    // Snapshots are text; make control bytes visible so `\r` and ESC show up.
    String::from_utf8_lossy(b)
        .replace('\r', "␍")
        .replace('\x1b', "␛")
}

#[test]
fn each_rule_on_its_fixtures() {
    for r in rules::REGISTRY
        .iter()
        .filter(|r| r.id != RuleId::JsonFields)
    {
        let cfg = config(r.id);
        for (name, input) in fixtures(r.id) {
            let out = rules::apply_one(r.id, &input, &cfg);
            if r.id == RuleId::DiffProtect {
                assert_eq!(out.as_deref(), Some(&input[..]), "{name}");
                continue;
            }
            let out = out.unwrap_or_else(|| panic!("{} changed nothing in {name}", r.id));
            insta::assert_snapshot!(format!("{}__{}", r.id, name), show(&out));
        }
    }
}

#[test]
fn pipeline_on_every_fixture_is_deterministic_and_idempotent() {
    for r in rules::REGISTRY
        .iter()
        .filter(|r| r.id != RuleId::JsonFields)
    {
        let cfg = config(r.id);
        for (name, input) in fixtures(r.id) {
            let a = compress(&input, &cfg, &mut NoStore);
            let b = compress(&input, &cfg, &mut NoStore);
            assert_eq!(a.output, b.output, "{name}: not deterministic");
            let again = compress(&a.output, &cfg, &mut NoStore);
            assert_eq!(again.output, a.output, "{name}: a second pass changed it");
            assert!(a.output.len() <= input.len());
        }
    }
}
