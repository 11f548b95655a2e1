//! Every marker example in docs/markers.md parses, and says what its variant says.

use snip_core::marker;

#[test]
fn every_documented_marker_parses() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/markers.md"
    ))
    .unwrap();
    let mut in_block = false;
    let mut n = 0;
    let mut rules = std::collections::BTreeSet::new();
    for line in doc.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block || !line.starts_with("[snip: ") {
            continue;
        }
        n += 1;
        if line.contains(" → ") {
            // The conversation summary: its own shape, ending in a restore call.
            assert!(
                line.ends_with("\")]") && line.contains("restore: snip_restore(id=\"sn_"),
                "{line}"
            );
            continue;
        }
        let m = marker::parse(line).unwrap_or_else(|| panic!("does not parse: {line}"));
        assert!(
            snip_core::rules::REGISTRY
                .iter()
                .any(|r| r.id.as_str() == m.rule),
            "unknown rule in {line}"
        );
        assert!(
            m.id.is_some() || m.not_retained || line.ends_with(" · lossless]"),
            "{line}"
        );
        if let Some(call) = &m.call {
            assert!(
                call.contains("mode=\"lines\"") || call.contains("mode=\"bytes\""),
                "{line}"
            );
        }
        rules.insert(m.rule);
    }
    assert!(n >= 12, "only {n} examples found");
    // Every rule that can remove something has a documented example.
    for r in snip_core::rules::REGISTRY
        .iter()
        .filter(|r| r.id != snip_core::RuleId::DiffProtect)
    {
        assert!(rules.contains(r.id.as_str()), "no example for {}", r.id);
    }
}
