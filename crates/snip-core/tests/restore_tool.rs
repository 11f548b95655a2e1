//! Markers quote the host's name for the restore tool (`Config::restore_tool`), and
//! the budget counts them as printed: an output whose markers name
//! `mcp__snip__snip_restore` stays within `max_bytes` like one naming `snip_restore`.

use snip_core::marker::{parse, strip_call_name};
use snip_core::{compress, Config, Retain, Retention};

/// A store that keeps everything under an id as long as a real one.
struct Keep;
impl Retain for Keep {
    fn retain(&mut self, _: &[u8]) -> Retention {
        Retention::Retained {
            id: "sn_00112233445566778899aabbccdd".into(),
        }
    }
}

const HOST: &str = "mcp__snip__snip_restore";

/// Outputs of the shapes the rules elide: a log with scattered error lines, a
/// traceback in a log, JSON with long strings and arrays, JSON Lines.
fn inputs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for n in [300usize, 700, 1500, 4000] {
        let log: String = (0..n)
            .map(|i| {
                if i % 97 == 13 {
                    format!(
                        "2026-12-01T10:{:02}:00Z ERROR job {i} failed: disk quota\n",
                        i % 60
                    )
                } else {
                    format!(
                        "2026-12-01T10:{:02}:00Z INFO job {i} ok in {} ms\n",
                        i % 60,
                        i % 89
                    )
                }
            })
            .collect();
        out.push(log.into_bytes());
        let mut tb = String::new();
        for i in 0..n / 2 {
            tb.push_str(&format!("collecting item {i}\n"));
        }
        tb.push_str("Traceback (most recent call last):\n");
        for i in 0..40 {
            tb.push_str(&format!(
                "  File \"/app/m{i}.py\", line {i}, in f{i}\n    g{i}()\n"
            ));
        }
        tb.push_str("ValueError: invalid record 2077\n");
        for i in 0..n / 2 {
            tb.push_str(&format!("cleanup {i}\n"));
        }
        out.push(tb.into_bytes());
        let items: Vec<String> = (0..n / 10)
            .map(|i| format!("{{\"id\": {i}, \"log\": \"{}\"}}", "x".repeat(i % 900)))
            .collect();
        out.push(
            format!(
                "{{\"items\": [{}], \"note\": \"{}\"}}",
                items.join(", "),
                "y".repeat(n * 3)
            )
            .into_bytes(),
        );
        let lines: String = (0..n)
            .map(|i| {
                format!(
                    "{{\"seq\": {i}, \"msg\": \"event {i} {}\"}}\n",
                    "z".repeat(i % 50)
                )
            })
            .collect();
        out.push(lines.into_bytes());
    }
    out
}

#[test]
fn markers_quote_the_hosts_name_and_stay_within_the_budget() {
    let mut close = 0;
    for budget in [1024usize, 2048, 3000, 4096, 8192] {
        for input in inputs() {
            let short = compress(&input, &Config::with_budget(budget), &mut Keep);
            let long_cfg = Config {
                restore_tool: HOST.to_string(),
                ..Config::with_budget(budget)
            };
            let long = compress(&input, &long_cfg, &mut Keep);
            assert_eq!(short.changed, long.changed);
            if !long.changed {
                continue;
            }
            let text = String::from_utf8_lossy(&long.output);
            assert!(text.contains("snip_restore("), "no restore call: {text}");
            // Every call names the host's tool (plain or JSON-escaped marker text).
            assert_eq!(
                text.matches("snip_restore(").count(),
                text.matches(&format!("{HOST}(")).count(),
                "{text}"
            );
            for line in text.lines().filter(|l| l.starts_with("[snip: ")) {
                assert!(parse(line).is_some(), "unparsed marker: {line}");
                if let Some(call) = line.split("restore: ").nth(1) {
                    assert!(call.starts_with(HOST), "{line}");
                    assert!(strip_call_name(call).is_some(), "{line}");
                }
            }
            // Lossy outputs fit the budget with the long name, as with the short one.
            if short.output.len() <= budget {
                assert!(
                    long.output.len() <= budget,
                    "{} bytes over a budget of {budget}",
                    long.output.len()
                );
            }
            // Renaming after the fact would have gone over here.
            let markers = short
                .output
                .windows(13)
                .filter(|w| w == b"snip_restore(")
                .count();
            if short.output.len() <= budget
                && short.output.len() + markers * (HOST.len() - 12) > budget
            {
                close += 1;
            }
        }
    }
    assert!(
        close > 0,
        "no case near the budget: the test could not fail"
    );
}

#[test]
fn the_default_name_is_the_mcp_servers() {
    let input: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    let o = compress(input.as_bytes(), &Config::with_budget(2048), &mut Keep);
    let text = String::from_utf8(o.output).unwrap();
    assert!(text.contains("restore: snip_restore(id=\""), "{text}");
    assert!(!text.contains("__snip_restore"), "{text}");
}

#[test]
fn snip_restore_tool_is_validated() {
    let get = |v: &'static str| move |k: &str| (k == "SNIP_RESTORE_TOOL").then(|| v.to_string());
    assert_eq!(Config::from_lookup(get(HOST)).unwrap().restore_tool, HOST);
    assert_eq!(
        Config::from_lookup(get("")).unwrap().restore_tool,
        "snip_restore"
    );
    for bad in [
        "restore",
        "mcp snip_restore",
        "x(snip_restore",
        "mcp__snip__snip_restorex",
    ] {
        let e = Config::from_lookup(get(bad)).unwrap_err();
        assert_eq!(e.variable, "SNIP_RESTORE_TOOL");
    }
}
