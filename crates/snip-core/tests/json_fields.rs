//! Tests of the `json-fields` rule: validity, kept keys, exact restore ranges, budget,
//! idempotence, determinism and bad input. serde_json is the oracle.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::Value;
use snip_core::marker;
use snip_core::rules::json_fields::{is_json, looks_like_json, JsonElision, MARKER_KEY, SEPARATOR};

use snip_core::Config;

/// `json-fields` with the lossless text rules on long strings, as the pipeline runs it.
fn apply(input: &[u8], config: &Config, id: Option<&str>, lossy: bool) -> Option<JsonElision> {
    snip_core::rules::json_fields::apply(input, config, id, lossy, &snip_core::rules::lossless_text)
}

/// A store id of the real shape (`sn_` + 24 hex).
const ID: &str = "sn_0123456789abcdef01234567";

fn corpus(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/corpus")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/json-fields")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parse(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| {
        let s = String::from_utf8_lossy(b);
        panic!("invalid JSON ({e}): {}", &s[..s.len().min(2000)])
    })
}

/// What the checker saw.
#[derive(Default, Debug)]
struct Seen {
    strings: u64,
    arrays: u64,
    items: u64,
    members: u64,
}

/// A `json-fields` marker found in a string of the output.
struct Found {
    what: String,
    bytes: Option<(u64, u64)>,
    /// `(field, start, end)` or `(None, start, end)` from the restore call.
    call: Option<(Option<String>, u64, u64)>,
}

fn parse_marker(text: &str) -> Found {
    let p = marker::parse(text).unwrap_or_else(|| panic!("not a marker: {text}"));
    assert_eq!(p.rule, snip_core::RuleId::JsonFields.as_str(), "{text}");
    let call = p.call.as_deref().map(|c| {
        let num = |key: &str| -> u64 {
            let at = c.find(key).unwrap_or_else(|| panic!("{key} in {c}")) + key.len();
            c[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap()
        };
        let field = c.find("field=\"").map(|at| {
            let mut out = String::new();
            let mut it = c[at + 7..].chars();
            while let Some(ch) = it.next() {
                match ch {
                    '\\' => out.push(it.next().unwrap()),
                    '"' => break,
                    ch => out.push(ch),
                }
            }
            out
        });
        (field, num(" start="), num(" end="))
    });
    Found {
        what: p.what,
        bytes: p.bytes,
        call,
    }
}

fn array_marker(v: &Value) -> Option<Found> {
    let s = v.as_str()?;
    s.starts_with("[snip: ")
        .then(|| parse_marker(s))
        .filter(|f| f.what.contains(" elided from this array"))
}

/// Whether an array item reports a failure, as `json-fields` reads it (its docs): a
/// string item with an error word standing alone; at any depth, a status-like member
/// whose short string value has one, an error-named member that is not empty, or a
/// member naming an exit status whose value is an integer other than 0.
fn reports_failure(item: &Value) -> bool {
    const STATUS: [&str; 9] = [
        "status",
        "state",
        "conclusion",
        "result",
        "outcome",
        "level",
        "severity",
        "message",
        "reason",
    ];
    let fails = |s: &str| snip_core::salience::names_a_failure(s.as_bytes());
    let quoted = |s: &str| Value::String(s.to_string()).to_string();
    match item {
        Value::String(s) => fails(&quoted(s)),
        Value::Array(xs) => xs.iter().any(|x| !x.is_string() && reports_failure(x)),
        Value::Object(m) => m.iter().any(|(k, v)| {
            let status = STATUS.iter().any(|n| k.eq_ignore_ascii_case(n))
                && v.as_str().is_some_and(|s| s.len() <= 120 && fails(s));
            let error_key = fails(k)
                && match v {
                    Value::Null => false,
                    Value::Bool(b) => *b,
                    Value::Number(n) => n.to_string() != "0",
                    Value::String(s) => !s.is_empty(),
                    Value::Array(xs) => !xs.is_empty(),
                    Value::Object(o) => !o.is_empty(),
                };
            // The exit-status words as salience spells them: lower, Title, UPPER, and
            // for the one-word names camelCase and PascalCase.
            let spelled = |w: &str, at: Option<usize>| {
                let title = format!("{}{}", w[..1].to_ascii_uppercase(), &w[1..]);
                let mut all = vec![w.to_string(), title.clone(), w.to_ascii_uppercase()];
                if let Some(at) = at {
                    let up = |s: &str| {
                        format!(
                            "{}{}{}",
                            &s[..at],
                            s[at..=at].to_ascii_uppercase(),
                            &s[at + 1..]
                        )
                    };
                    all.push(up(w));
                    all.push(up(&title));
                }
                all.contains(k)
            };
            let exit = [
                ("exit_code", None),
                ("exit_status", None),
                ("exitcode", Some(4)),
                ("exitstatus", Some(4)),
                ("returncode", Some(6)),
            ]
            .iter()
            .any(|&(w, at)| spelled(w, at))
                && (v.as_i64().is_some_and(|n| n != 0) || v.as_u64().is_some_and(|n| n != 0));
            status || error_key || exit || (!v.is_string() && reports_failure(v))
        }),
        _ => false,
    }
}

/// Splits an elided string into (head, marker, tail).
fn split_string(s: &str) -> Option<(&str, &str, &str)> {
    let open = format!("{SEPARATOR}[snip: ");
    let a = s.find(&open)?;
    let close = format!(")]{SEPARATOR}");
    let b = s[a..].find(&close)? + a;
    let (head, tail) = (&s[..a], &s[b + close.len()..]);
    Some((head, &s[a + SEPARATOR.len()..b + 2], tail))
}

/// Walks the original and the output together and checks the contract: same keys in the
/// same order, untouched values equal, every array marker's byte range holding exactly
/// its elided items, every string marker's restore range giving exactly the elided text.
/// `base` is the offset of this document in `original_bytes` (JSON Lines).
struct Checker<'a> {
    original_bytes: &'a [u8],
    root: &'a Value,
    /// JSON Lines: string markers carry raw byte ranges.
    line_mode: bool,
    seen: Seen,
}

impl Checker<'_> {
    fn walk(&mut self, orig: &Value, out: &Value) {
        match (orig, out) {
            (Value::Object(a), Value::Object(b)) if b.keys().any(|k| k.starts_with(MARKER_KEY)) => {
                // Kept members are the original's; each marker member's range holds
                // exactly the members it stands for.
                let mut accounted = 0usize;
                for (k, v) in b {
                    if k.starts_with(MARKER_KEY) {
                        let f = parse_marker(v.as_str().expect("marker member is a string"));
                        let m: usize = f.what.split(' ').next().unwrap().parse().unwrap();
                        assert!(f.what.ends_with("elided from this object"), "{}", f.what);
                        let (s, e) = f.bytes.expect("object marker without bytes");
                        if let Some((field, cs, ce)) = &f.call {
                            assert!(field.is_none());
                            assert_eq!((*cs, *ce), (s, e));
                        }
                        let slice = &self.original_bytes[s as usize..e as usize];
                        let members = parse(&[b"{", slice, b"}"].concat());
                        let members = members.as_object().unwrap();
                        assert!(members.len() <= m && m >= 1);
                        for (mk, mv) in members {
                            assert_eq!(a.get(mk), Some(mv), "elided member {mk} differs");
                        }
                        accounted += members.len();
                        self.seen.members += m as u64;
                    } else {
                        let orig_v = a.get(k).unwrap_or_else(|| panic!("key {k} is new"));
                        self.walk(orig_v, v);
                        accounted += 1;
                    }
                }
                assert_eq!(accounted, a.len(), "members neither kept nor in a marker");
            }
            (Value::Object(a), Value::Object(b)) => {
                let ka: Vec<_> = a.keys().collect();
                let kb: Vec<_> = b.keys().collect();
                assert_eq!(ka, kb, "object keys changed");
                for (k, v) in a {
                    self.walk(v, &b[k]);
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                // Kept items are the original's, in order; each marker element's range
                // holds exactly the items it stands for, and its salient count is the
                // number of them with an error word when some but not all have one.
                let mut i = 0usize;
                for y in b {
                    let Some(f) = array_marker(y) else {
                        let x = a.get(i).expect("an item is new");
                        self.walk(x, y);
                        i += 1;
                        continue;
                    };
                    let m: usize = f.what.split(' ').next().unwrap().parse().unwrap();
                    assert!(m >= 1 && i + m <= a.len(), "item counts: {}", f.what);
                    let (s, e) = f.bytes.expect("array marker without bytes");
                    if let Some((field, cs, ce)) = &f.call {
                        assert!(field.is_none());
                        assert_eq!((*cs, *ce), (s, e));
                    }
                    let slice = &self.original_bytes[s as usize..e as usize];
                    let items = parse(&[b"[", slice, b"]"].concat());
                    assert_eq!(
                        items.as_array().unwrap().as_slice(),
                        &a[i..i + m],
                        "array marker range is not the elided items"
                    );
                    let salient = (0..m).filter(|&k| reports_failure(&a[i + k])).count();
                    // The oracle reads decoded values; the rule reads raw text: they
                    // agree when no string holds an escape.
                    let escapes = (0..m).any(|k| a[i + k].to_string().contains('\\'));
                    let said = f
                        .what
                        .split(", ")
                        .nth(1)
                        .and_then(|w| w.split(' ').next())
                        .map_or(0, |n| n.parse::<usize>().unwrap());
                    // Items with a rare status value count too (more than the
                    // oracle's); none is said when every item of the run is salient.
                    if salient < m && !escapes {
                        assert!(said == 0 || said >= salient, "salient items: {}", f.what);
                        assert!(said < m, "salient items: {}", f.what);
                    }
                    i += m;
                    self.seen.arrays += 1;
                    self.seen.items += m as u64;
                }
                assert_eq!(i, a.len(), "items neither kept nor in a marker");
            }
            (Value::String(a), Value::String(b)) if a != b => {
                let Some((head, text, tail)) = split_string(b) else {
                    // Rewritten whole by the lossless text rules, which mark it.
                    assert!(
                        b.contains("[snip: ") && !b.contains("json-fields"),
                        "string changed without marker: {b:?}"
                    );
                    return;
                };
                let f = parse_marker(text);
                // `N bytes elided from this string[, K salient lines among them at …]`
                let n: usize = f
                    .what
                    .split(", ")
                    .next()
                    .and_then(|w| w.strip_suffix(" bytes elided from this string"))
                    .unwrap_or_else(|| panic!("{}", f.what))
                    .parse()
                    .unwrap();
                // Kept ends are the original's (unless the lossless text rules rendered
                // them, which leaves a marker of their own).
                let rendered = b.matches("[snip: ").count() > 1;
                if let Some((field, start, end)) = f.call {
                    let (start, end) = (start as usize, end as usize);
                    // JSON Lines, and strings too deep for a pointer: raw byte ranges.
                    if let (false, Some(field)) = (self.line_mode, &field) {
                        assert_eq!(
                            self.root.pointer(field),
                            Some(orig),
                            "pointer {field} does not address this string"
                        );
                        assert_eq!(end - start, n);
                        assert!(
                            end <= a.len() && a.is_char_boundary(start) && a.is_char_boundary(end)
                        );
                        if !rendered {
                            assert_eq!(head, &a[..start], "head is not the original's");
                            assert_eq!(tail, &a[end..], "tail is not the original's");
                        }
                    } else {
                        assert_eq!(f.bytes, Some((start as u64, end as u64)));
                        let raw = &self.original_bytes[start..end];
                        let mid: String = parse(&[b"\"", raw, b"\""].concat())
                            .as_str()
                            .unwrap()
                            .to_string();
                        assert_eq!(mid.len(), n);
                        if !rendered {
                            assert_eq!(format!("{head}{mid}{tail}"), *a);
                        }
                    }
                }
                self.seen.strings += 1;
            }
            _ => assert_eq!(orig, out),
        }
    }
}

/// Checks one output against its original (a document, or JSON Lines when the original
/// is not one document).
fn check(original: &[u8], out: &[u8]) -> Seen {
    if let Ok(root) = serde_json::from_slice::<Value>(original) {
        let out_v = parse(out);
        let mut c = Checker {
            original_bytes: original,
            root: &root,
            line_mode: false,
            seen: Seen::default(),
        };
        c.walk(&root, &out_v);
        return c.seen;
    }
    let orig_lines: Vec<&[u8]> = original.split(|&b| b == b'\n').collect();
    let out_lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    assert_eq!(orig_lines.len(), out_lines.len(), "line structure changed");
    let mut seen = Seen::default();
    for (a, b) in orig_lines.iter().zip(&out_lines) {
        if a.iter().all(u8::is_ascii_whitespace) {
            assert_eq!(a, b);
            continue;
        }
        let root = parse(a);
        let mut c = Checker {
            original_bytes: original,
            root: &root,
            line_mode: true,
            seen: Seen::default(),
        };
        c.walk(&root, &parse(b));
        seen.strings += c.seen.strings;
        seen.arrays += c.seen.arrays;
        seen.items += c.seen.items;
    }
    seen
}

/// Applies, checks validity and contract, idempotence and determinism; returns the
/// result.
fn run(input: &[u8], config: &Config, id: Option<&str>) -> Option<JsonElision> {
    let r = apply(input, config, id, true);
    let again = apply(input, config, id, true);
    assert_eq!(r, again, "not deterministic");
    if let Some(r) = &r {
        assert!(r.output.len() < input.len());
        let seen = check(input, &r.output);
        assert_eq!(seen.strings, r.strings_elided);
        assert_eq!(seen.items, r.items_elided);
        assert_eq!(seen.members, r.members_elided);
        let second = apply(&r.output, config, id, true);
        assert!(
            second.is_none(),
            "second pass changed the output:\n{}\n---\n{}",
            String::from_utf8_lossy(&r.output),
            String::from_utf8_lossy(&second.unwrap().output)
        );
    }
    r
}

#[test]
fn cargo_metadata_comes_under_the_budget_valid_and_restorable() {
    let input = corpus("cargo-metadata-json-notty.txt");
    let config = Config::default();
    for id in [Some(ID), None] {
        let r = run(&input, &config, id).expect("cargo metadata shrinks");
        assert!(
            r.output.len() <= config.max_bytes,
            "{} bytes over a {} budget",
            r.output.len(),
            config.max_bytes
        );
        let v = parse(&r.output);
        assert_eq!(v["workspace_root"], "/home/u/dev/webapp");
        let text = String::from_utf8_lossy(&r.output);
        assert!(text.contains(r#"workspace_root":"/home/u/dev/webapp""#));
        assert!(r.items_elided > 0);
        // The first and last packages are kept, with names and versions.
        let packages = v["packages"].as_array().unwrap();
        assert_eq!(packages[0]["name"], "aho-corasick");
        assert!(packages.last().unwrap()["version"].is_string());
    }
}

#[test]
fn pip_inspect_keeps_every_package_under_the_budget() {
    let input = corpus("pip-inspect-json-notty.txt");
    let original = parse(&input);
    let config = Config::default();
    for id in [Some(ID), None] {
        let r = run(&input, &config, id).expect("pip inspect shrinks");
        assert!(
            r.output.len() <= config.max_bytes,
            "{} bytes",
            r.output.len()
        );
        // Elided in place: the kept text is the original's, whitespace and all.
        assert!(!r.minified);
        let v = parse(&r.output);
        let (a, b) = (
            original["installed"].as_array().unwrap(),
            v["installed"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "a package was dropped");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x["metadata"]["name"], y["metadata"]["name"]);
            assert_eq!(x["metadata"]["version"], y["metadata"]["version"]);
        }
        let text = String::from_utf8_lossy(&r.output);
        assert!(text.contains("site-packages/numpy-2.4.6.dist-info"));
        // The 136 KB description went, in the middle.
        assert!(r.strings_elided > 0);
        assert!(r.bytes_elided > 250_000);
    }
}

#[test]
fn lossless_only_when_lossy_is_not_allowed() {
    let input = corpus("pip-inspect-json-notty.txt");
    let r = apply(&input, &Config::default(), Some(ID), false).expect("minifies");
    assert!(r.minified);
    assert_eq!(
        (r.strings_elided, r.items_elided, r.bytes_elided),
        (0, 0, 0)
    );
    assert_eq!(parse(&r.output), parse(&input));
    assert!(!String::from_utf8_lossy(&r.output).contains("json-fields"));
    // Minified cargo metadata has nothing lossless left to do.
    assert!(apply(
        &corpus("cargo-metadata-json-notty.txt"),
        &Config::default(),
        None,
        false
    )
    .is_none());
}

#[test]
fn small_pretty_json_is_left_alone() {
    let input = fixture("pip-inspect-tzdata.json");
    assert!(input.len() < Config::default().max_bytes);
    assert_eq!(apply(&input, &Config::default(), Some(ID), true), None);
}

#[test]
fn whitespace_goes_only_over_the_budget() {
    let input = fixture("resolve-node.json");
    let r = apply(&input, &Config::with_budget(2000), Some(ID), true).expect("minified");
    assert!(r.minified);
    assert_eq!((r.strings_elided, r.items_elided), (0, 0));
    assert_eq!(parse(&r.output), parse(&input));
    assert!(!r.output.contains(&b' '));
    assert!(r.output.ends_with(b"}\n"), "trailing newline kept");
}

fn small_config(max: usize) -> Config {
    Config {
        json_string_keep: 64,
        json_array_keep: 2,
        ..Config::with_budget(max)
    }
}

#[test]
fn snapshots_of_small_fixtures() {
    for (name, budget) in [
        ("pip-inspect-tzdata.json", 1300),
        ("cargo-metadata-package.json", 1700),
        ("resolve-node.json", 1000),
        ("events.jsonl", 1200),
    ] {
        let input = fixture(name);
        let r = run(&input, &small_config(budget), Some("sn_5a1e")).expect(name);
        let text = String::from_utf8(r.output.clone()).unwrap();
        insta::assert_snapshot!(name.replace('.', "_"), text);
    }
}

#[test]
fn json_lines_are_elided_line_by_line() {
    let input = fixture("events.jsonl");
    let config = small_config(1000);
    let r = run(&input, &config, Some(ID)).expect("long line elided");
    assert_eq!(r.strings_elided, 1);
    let out = String::from_utf8(r.output).unwrap();
    assert_eq!(
        out.lines().count(),
        input.split(|&b| b == b'\n').count() - 1
    );
    for line in out.lines() {
        parse(line.as_bytes());
    }
    // Under the budget, nothing at all.
    assert_eq!(apply(&input, &Config::default(), Some(ID), true), None);
}

#[test]
fn long_arrays_keep_their_ends_and_one_marker() {
    let items: Vec<String> = (0..8000)
        .map(|i| format!("{{\"n\": {i}, \"ok\": true}}"))
        .collect();
    let input = format!("{{\"rows\": [{}], \"total\": 8000}}", items.join(", "));
    let config = Config::default();
    let r = run(input.as_bytes(), &config, Some(ID)).unwrap();
    let v = parse(&r.output);
    let rows = v["rows"].as_array().unwrap();
    // The room under the budget goes back to the rows: as many at each end as fit.
    let kept = (rows.len() - 1) / 2;
    assert_eq!(rows.len(), 2 * kept + 1);
    assert!(kept > 100, "{kept} rows at each end");
    assert_eq!(rows[0]["n"], 0);
    assert_eq!(rows[2 * kept]["n"], 7999);
    assert_eq!(r.items_elided, 8000 - 2 * kept as u64);
    assert!(rows[kept].as_str().unwrap().starts_with(&format!(
        "[snip: {} items elided from this array",
        8000 - 2 * kept
    )));
    let room = config.max_bytes / 10;
    assert!(
        r.output.len() <= config.max_bytes && r.output.len() + room >= config.max_bytes,
        "{} bytes",
        r.output.len()
    );
    // Scalars: a long list of numbers.
    let nums: Vec<String> = (0..20000).map(|i| (i * 7).to_string()).collect();
    let input = format!("[{}]", nums.join(","));
    let r = run(input.as_bytes(), &Config::default(), Some(ID)).unwrap();
    let len = parse(&r.output).as_array().unwrap().len();
    assert!(len > 1000 && len % 2 == 1, "{len} items");
}

/// `n` CI runs as a pretty-printed array, those at `failed` concluding in failure.
fn runs_array(n: usize, failed: &[usize]) -> Vec<u8> {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let c = if failed.contains(&i) {
                "failure"
            } else {
                "success"
            };
            serde_json::json!({"id": i, "status": "completed", "conclusion": c,
                               "url": format!("https://ci.example/runs/{i}")})
        })
        .collect();
    serde_json::to_vec_pretty(&items).unwrap()
}

#[test]
fn rare_items_with_an_error_word_stay_in_an_elided_array() {
    let input = runs_array(600, &[123, 321]);
    let r = run(&input, &small_config(4000), Some(ID)).expect("elided");
    let out = parse(&r.output);
    let kept: Vec<u64> = out
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["conclusion"] == "failure")
        .map(|v| v["id"].as_u64().unwrap())
        .collect();
    assert_eq!(kept, [123, 321]);
    assert!(r.output.len() <= 4000, "{} bytes", r.output.len());
}

#[test]
fn a_list_of_records_inside_an_envelope_is_elided_inside_not_whole() {
    // `kubectl get pods -o json`: the records are one member of the document, not its
    // last one. The envelope's members stay and the list keeps its ends and failures.
    let runs: Value = serde_json::from_slice(&runs_array(600, &[123, 321])).unwrap();
    let doc = serde_json::json!({"apiVersion": "v1", "items": runs, "kind": "List",
                                 "metadata": {"resourceVersion": ""}});
    let input = serde_json::to_vec_pretty(&doc).unwrap();
    for budget in [2048, 4000, 8192] {
        let r = run(&input, &small_config(budget), Some(ID)).expect("elided");
        let out = parse(&r.output);
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["apiVersion", "items", "kind", "metadata"],
            "at {budget}"
        );
        let items = out["items"].as_array().unwrap();
        assert_eq!(items[0]["id"], 0, "at {budget}");
        let failed = items
            .iter()
            .filter(|v| v["conclusion"] == "failure")
            .count();
        assert_eq!(failed, 2, "at {budget}");
    }
}

#[test]
fn items_with_a_rare_status_value_stay() {
    // Pods: `phase` is `Running` on all but two, which hold no error word.
    let pods: Vec<Value> = (0..400)
        .map(|i| {
            let phase = match i {
                150 => "Pending",
                250 => "Unknown",
                _ => "Running",
            };
            serde_json::json!({"metadata": {"name": format!("web-{i}"), "namespace": "default"},
                               "status": {"phase": phase, "ready": i != 250}})
        })
        .collect();
    let doc = serde_json::json!({"apiVersion": "v1", "items": pods, "kind": "List"});
    let input = serde_json::to_vec_pretty(&doc).unwrap();
    let r = run(&input, &small_config(4000), Some(ID)).expect("elided");
    let out = parse(&r.output);
    let kept: Vec<&str> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["metadata"]["name"].as_str())
        .filter(|n| ["web-150", "web-250"].contains(n))
        .collect();
    assert_eq!(kept, ["web-150", "web-250"]);
    // A name whose values all differ, or where no value is common, is no status.
    let names: Vec<Value> = (0..400)
        .map(|i| {
            let kind = ["lib", "bin", "test"][i % 3];
            let name = format!("pkg-{}", (b'a' + (i % 26) as u8) as char);
            serde_json::json!({"name": name, "kind": kind})
        })
        .collect();
    let input = serde_json::to_vec_pretty(&names).unwrap();
    let r = run(&input, &small_config(2000), Some(ID)).expect("elided");
    assert!(!String::from_utf8(r.output)
        .unwrap()
        .contains("salient items"));
}

#[test]
fn a_failing_record_longer_than_an_island_stays_when_it_fits() {
    // `kubectl get pods -o json`: each pod is some 900 bytes, over the 600 of an
    // island; one is waiting in CrashLoopBackOff, deep inside its record. At the
    // default budget it is shown, not only counted.
    let pods: Vec<Value> = (0..200)
        .map(|i| {
            let state = if i == 133 {
                serde_json::json!({"waiting": {"reason": "CrashLoopBackOff",
                                               "message": "back-off 5m0s restarting failed container"}})
            } else {
                serde_json::json!({"running": {"startedAt": "2026-12-01T10:00:00Z"}})
            };
            serde_json::json!({
                "metadata": {"name": format!("web-{i:03}"), "namespace": "default",
                             "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d9f8c"},
                             "uid": format!("0f1e2d3c-{i:04}-4b5a-8c7d-112233445566")},
                "spec": {"nodeName": format!("node-{}", i % 7), "restartPolicy": "Always",
                         "containers": [{"name": "web", "image": "nginx:1.27"}]},
                "status": {"phase": "Running", "podIP": format!("10.0.{}.{}", i / 250, i % 250),
                           "containerStatuses": [{"name": "web", "ready": i != 133,
                                                  "restartCount": if i == 133 { 41 } else { 0 },
                                                  "state": state}]}
            })
        })
        .collect();
    let doc = serde_json::json!({"apiVersion": "v1", "items": pods, "kind": "List"});
    let input = serde_json::to_vec_pretty(&doc).unwrap();
    let r = run(&input, &Config::default(), Some(ID)).expect("elided");
    let out = parse(&r.output);
    let shown: Vec<&str> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["metadata"]["name"].as_str())
        .collect();
    assert!(shown.contains(&"web-133"), "{shown:?}");
    assert!(r.output.len() <= Config::default().max_bytes);
}

#[test]
fn items_whose_exit_status_is_not_zero_stay() {
    // Commands a runner reports as records: every exit status 0 but two, under three
    // spellings of the name; none holds an error word.
    for name in ["exit_code", "exitCode", "returncode"] {
        let steps: Vec<Value> = (0..300)
            .map(|i| {
                let code = match i {
                    77 => 2,
                    201 => -9,
                    _ => 0,
                };
                serde_json::json!({"step": i, "cmd": format!("make part-{i}"), name: code})
            })
            .collect();
        let input = serde_json::to_vec_pretty(&steps).unwrap();
        let r = run(&input, &small_config(3000), Some(ID)).expect("elided");
        let out = parse(&r.output);
        let kept: Vec<i64> = out
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v[name].as_i64().is_some_and(|c| c != 0))
            .map(|v| v["step"].as_i64().unwrap())
            .collect();
        assert_eq!(kept, [77, 201], "{name}");
    }
}

#[test]
fn items_with_an_error_word_that_go_are_counted() {
    // Too many to keep (one in three): the markers count those they hold, which the
    // checker in `run` compares with the original's items.
    let failed: Vec<usize> = (0..600).step_by(3).collect();
    let input = runs_array(600, &failed);
    let r = run(&input, &small_config(4000), Some(ID)).expect("elided");
    let text = String::from_utf8(r.output).unwrap();
    assert!(
        text.contains(" salient items among them at items "),
        "{text}"
    );
}

#[test]
fn strings_are_cut_on_code_points_and_escapes() {
    let config = Config {
        json_string_keep: 101,
        ..Config::with_budget(1024)
    };
    let units = [
        "é",
        "😀",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\t",
        "\\\"",
        "a\\\\",
        "\\u0007x",
    ];
    // Distinct lines, so that repeat-collapse leaves them alone.
    let lines: String = (0..2000).map(|i| format!("{i}\\n")).collect();
    for body in units.iter().map(|u| u.repeat(2000)).chain([lines]) {
        let input = format!("{{\"k\": \"{body}\", \"z\": 1}}");
        for id in [Some(ID), None] {
            let r = run(input.as_bytes(), &config, id).unwrap_or_else(|| panic!("{body}"));
            assert!(r.output.len() <= 1024, "{}", r.output.len());
            assert_eq!(r.strings_elided, 1);
        }
    }
}

#[test]
fn keys_and_short_values_survive_generated_documents() {
    for keys in [60, 300] {
        generated_document(keys);
    }
}

fn generated_document(keys: usize) {
    let mut doc = String::from("{");
    for i in 0..keys {
        doc.push_str(&format!(
            "\"key{i}\": {{\"name\": \"n{i}\", \"blob\": \"{}\", \"list\": [{}]}},",
            "x".repeat(i * 50),
            (0..i % 40)
                .map(|j| j.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    doc.push_str("\"end\": null}");
    let r = run(doc.as_bytes(), &Config::default(), Some(ID)).unwrap();
    // 300 objects of three keys fit too: members of the big object are elided.
    assert!(r.output.len() <= Config::default().max_bytes);
    let (a, b) = (parse(doc.as_bytes()), parse(&r.output));
    let mut kept = 0;
    for i in 0..keys {
        let k = format!("key{i}");
        if b.get(&k).is_some() {
            assert_eq!(a[&k]["name"], b[&k]["name"]);
            kept += 1;
        }
    }
    assert!(kept >= 2, "{kept} members kept");
    assert!(
        b.get(format!("key{}", keys - 1)).is_some(),
        "last member kept"
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 100_000;
    let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(
        apply(arrays.as_bytes(), &Config::default(), None, true),
        None
    );
    let spaced = format!("{}{}", "[ ".repeat(depth), " ]".repeat(depth));
    let r = apply(spaced.as_bytes(), &Config::default(), None, true).expect("minified");
    assert_eq!(r.output, arrays.as_bytes());
    let objects = format!("{}1{}", "{\"a\": ".repeat(depth), "}".repeat(depth));
    let r = apply(objects.as_bytes(), &Config::default(), None, true).expect("minified");
    assert_eq!(r.output, objects.replace(' ', "").as_bytes());
    // A long string at the bottom, over the budget.
    let deep_string = format!(
        "{}\"{}\"{}",
        "[".repeat(depth),
        "y".repeat(300_000),
        "]".repeat(depth)
    );
    let r = apply(deep_string.as_bytes(), &Config::default(), Some(ID), true).unwrap();
    assert!(r.output.starts_with(&deep_string.as_bytes()[..depth]));
    assert!(r
        .output
        .ends_with(&deep_string.as_bytes()[deep_string.len() - depth..]));
    assert_eq!(r.strings_elided, 1);
    assert_eq!(apply(&r.output, &Config::default(), Some(ID), true), None);
    // Unclosed deep nesting is not JSON.
    assert_eq!(
        apply("[".repeat(depth).as_bytes(), &Config::default(), None, true),
        None
    );
}

#[test]
fn truncated_json_is_not_json() {
    let input = fixture("cargo-metadata-package.json");
    let config = small_config(300);
    for cut in 1..input.len() - 2 {
        assert_eq!(
            apply(&input[..cut], &config, None, true),
            None,
            "cut at {cut}"
        );
    }
    let big = corpus("cargo-metadata-json-notty.txt");
    for cut in (1..big.len() - 2).step_by(big.len() / 17) {
        assert_eq!(
            apply(&big[..cut], &Config::default(), None, true),
            None,
            "cut at {cut}"
        );
    }
}

#[test]
fn invalid_utf8_is_not_json() {
    let mut input = format!("{{\"a\": \"{}\"}}", "x".repeat(50_000)).into_bytes();
    assert!(apply(&input, &Config::default(), None, true).is_some());
    input[20] = 0xFF;
    assert_eq!(apply(&input, &Config::default(), None, true), None);
    let mut split = "[\"é\"]".as_bytes().to_vec();
    split.remove(3);
    assert_eq!(apply(&split, &Config::default(), None, true), None);
}

#[test]
fn malformed_json_is_not_json() {
    let config = small_config(300);
    for bad in [
        "",
        "   ",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "[01]",
        "[1.]",
        "[-]",
        "[1e]",
        "[tru]",
        "{1:2}",
        "[\"a\\x\"]",
        "[\"\\u12g4\"]",
        "[\"tab\there\"]",
        "[1] [2]",
        "{\"a\":1}}",
        "[nul]",
        "[\"\\u00\"]",
    ] {
        let padded = format!("{bad}{}", " ".repeat(400));
        assert_eq!(
            apply(padded.as_bytes(), &config, None, true),
            None,
            "{bad:?}"
        );
    }
}

#[test]
fn full_check_tells_valid_json_that_cannot_shrink_from_non_json() {
    let mut flat = String::from("{");
    for i in 0..5000 {
        flat.push_str(&format!("\"k{i}\":{i},"));
    }
    flat.push_str("\"end\":0}");
    // Nothing to save under the budget, yet it is JSON.
    assert_eq!(
        apply(
            flat.as_bytes(),
            &Config::with_budget(1 << 20),
            Some(ID),
            true
        ),
        None
    );
    assert!(is_json(flat.as_bytes()));
    assert!(is_json(&fixture("events.jsonl")));
    assert!(is_json(&corpus("cargo-metadata-json-notty.txt")));
    let big = corpus("pip-inspect-json-notty.txt");
    assert!(!is_json(&big[..big.len() - 3]));
    assert!(!is_json(b"{\"a\":1}\nnot json\n"));
    assert!(!is_json(b"[1,2"));
    assert!(!is_json(b"\xff"));
}

/// JSON Lines whose first or last line is a scalar (`"start"`, `2`) are JSON Lines too:
/// a long line is elided inside its string, every line stays a JSON value. They were
/// read as text, and a long line was cut with a bare marker line between its pieces.
#[test]
fn json_lines_opening_with_a_scalar_stay_json_lines() {
    let long = format!("{{\"msg\": \"{}\"}}", "x".repeat(60_000));
    for input in [
        format!("\"start\"\n{long}\n2\n"),
        format!("42\n{long}\nnull"),
        format!("{long}\ntrue\n"),
    ] {
        let out = snip_core::compress(
            input.as_bytes(),
            &Config::default(),
            &mut snip_core::NoStore,
        )
        .output;
        assert!(out.len() < 24_576, "{} bytes", out.len());
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let want = input.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(lines.len(), want, "{text}");
        for l in lines {
            serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        }
    }
}

#[test]
fn cheap_detection() {
    for yes in [
        "{}",
        " {\"a\":1}\n",
        "[1,2]",
        "[\"x\"]",
        "[]",
        "{\"a\":1}\n{\"a\":2}\n",
        "[{}]",
        // JSON Lines opening or ending with a scalar line.
        "\"start\"\n{\"a\":1}\n2\n",
        "42\n[1]",
        "{\"a\":1}\nnull\n",
    ] {
        assert!(looks_like_json(yes.as_bytes()), "{yes:?}");
    }
    for no in [
        "",
        "{",
        "[INFO] starting",
        "hello",
        "{not json}",
        "[2024-01-01] x\nok",
        "\"s\"",
        "[1,2",
        "diff --git a b",
        "2026-12-01 started\n2026-12-01 done",
        "42\nhello",
        "hello\n{\"a\":1}",
        "true story\n[1]",
        // Scalar lines only: a column of numbers is text.
        "1\n2\n3\n",
        "true\nfalse",
    ] {
        assert!(!looks_like_json(no.as_bytes()), "{no:?}");
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "\\PC{0,12}",
        "[a-zé😀\"\\\\\n\t\u{1}/]{0,40}",
        ("[a-z ]{1,8}", 0usize..400).prop_map(|(s, n)| s.repeat(n)),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e12f64..1e12).prop_map(Value::from),
        text.clone().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 400, 40, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(Value::Array),
            prop::collection::vec(("[a-z/~\"]{0,6}", inner), 0..12)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_json_stays_valid_and_never_grows(
        v in json_value(),
        pretty in any::<bool>(),
        budget in 0usize..3000,
        skeep in 0usize..64,
        akeep in 0usize..4,
        with_id in any::<bool>(),
    ) {
        let input = if pretty {
            serde_json::to_vec_pretty(&v).unwrap()
        } else {
            serde_json::to_vec(&v).unwrap()
        };
        let config = Config { json_string_keep: skeep, json_array_keep: akeep, ..Config::with_budget(budget) };
        let id = with_id.then_some(ID);
        if let Some(r) = run(&input, &config, id) {
            prop_assert!(r.output.len() < input.len());
        }
    }
}

#[test]
fn multiline_documents_are_told_from_json_lines() {
    use snip_core::rules::json_fields::opens_multiline_document as opens;
    assert!(opens(b"{\n  \"a\": 1,\n"));
    assert!(opens(b"\n\n[\n  1,\n"));
    assert!(opens(b"{\"a\": [1,"), "a document cut mid-line");
    assert!(!opens(b"{\"a\": 1}\n{\"a\": 2}\n"), "JSON Lines");
    assert!(!opens(b"plain text {\n"));
    assert!(!opens(b"   \n"));
}

/// A string nested so deep that its pointer would outgrow the budget is restored by
/// its raw byte range instead (as in JSON Lines), and the document meets the budget.
#[test]
fn deeply_nested_string_is_restored_by_byte_range() {
    let key = "k".repeat(50);
    let depth = 20; // pointer of 20 * 51 bytes, over the 512 a marker quotes
    let mut doc = String::new();
    for _ in 0..depth {
        doc.push_str(&format!("{{\"{key}\":"));
    }
    let log: String = (0..6000)
        .map(|i| format!("line {i} of log text\n"))
        .collect();
    doc.push_str(&serde_json::to_string(&log).unwrap());
    doc.push_str(&"}".repeat(depth));
    let config = Config::default();
    let r = run(doc.as_bytes(), &config, Some(ID)).expect("elided");
    assert!(r.output.len() <= config.max_bytes, "{}", r.output.len());
    let text = String::from_utf8(r.output).unwrap();
    assert!(text.contains("mode=\\\"bytes\\\", start="), "{text}");
    assert!(!text.contains("field="), "{text}");
}

/// JSON Lines of long lines over the budget: whole lines kept or elided, never a line
/// cut to fit (every line but the markers is a document).
#[test]
fn json_lines_are_never_cut_inside_a_line() {
    let input: String = (0..50)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"ts": i, "msg": "m".repeat(2000)})
            )
        })
        .collect();
    let config = Config::default();
    let out = snip_core::compress(input.as_bytes(), &config, &mut snip_core::NoStore);
    assert!(out.changed && out.output.len() <= config.max_bytes);
    let text = String::from_utf8(out.output).unwrap();
    let mut docs = 0;
    for line in text.lines() {
        if line.starts_with("[snip:") {
            continue;
        }
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        docs += 1;
    }
    assert!(docs >= 5, "{docs} documents kept");
}

/// A UTF-8 byte-order mark before a document: the document goes through
/// `json-fields` (it was cut as text into invalid JSON), the mark kept in front.
#[test]
fn a_byte_order_mark_before_json_is_kept_and_the_json_stays_valid() {
    let items: Vec<Value> = (0..2000)
        .map(|i| serde_json::json!({"id": i, "d": "x".repeat(200)}))
        .collect();
    let mut input = b"\xef\xbb\xbf".to_vec();
    input.extend_from_slice(
        serde_json::to_string(&serde_json::json!({"items": items}))
            .unwrap()
            .as_bytes(),
    );
    input.push(b'\n');
    let config = Config::default();
    let out = snip_core::compress(&input, &config, &mut snip_core::NoStore);
    assert!(
        out.changed && out.output.len() <= config.max_bytes,
        "{}",
        out.output.len()
    );
    assert_eq!(out.rules[0].id, snip_core::RuleId::JsonFields);
    let body = out
        .output
        .strip_prefix(b"\xef\xbb\xbf")
        .expect("the mark first");
    serde_json::from_slice::<Value>(body).expect("valid JSON");
    assert!(looks_like_json(&input) && is_json(&input));
}

/// A pretty-printed registry-style document: a `time` object of many version keys
/// inside the top level, a few status members, and a `versions` array.
fn release_document(versions: usize, indent: &str) -> String {
    let mut time = Vec::new();
    let mut list = Vec::new();
    for i in 0..versions {
        let v = format!("{}.{}.{}", i / 100, (i / 10) % 10, i % 10);
        time.push(format!(
            "{indent}{indent}\"{v}\": \"2024-{:02}-{:02}T10:{:02}:00.000Z\"",
            1 + i % 12,
            1 + i % 28,
            i % 60
        ));
        list.push(format!("{indent}{indent}\"{v}\""));
    }
    format!(
        "{{\n{indent}\"name\": \"tool\\u00e9\",\n{indent}\"time\": {{\n{}\n{indent}}},\n{indent}\"dist-tags\": {{\n{indent}{indent}\"latest\": \"9.9.9\"\n{indent}}},\n{indent}\"versions\": [\n{}\n{indent}],\n{indent}\"description\": \"caf\\u00e9 \\\"quoted\\\" \\u2603\"\n}}\n",
        time.join(",\n"),
        list.join(",\n")
    )
}

#[test]
fn large_objects_elide_members_and_stay_within_the_budget() {
    for (versions, indent, budget) in [
        (3000, "  ", 24_576),
        (1500, "\t", 8192),
        (800, "    ", 4096),
    ] {
        let doc = release_document(versions, indent);
        let config = Config::with_budget(budget);
        let r = run(doc.as_bytes(), &config, Some(ID)).expect("shrinks");
        assert!(r.members_elided > 0);
        assert!(!r.minified);
        assert!(
            r.output.len() <= budget,
            "{} bytes over {budget}",
            r.output.len()
        );
        let text = String::from_utf8(r.output.clone()).unwrap();
        // Verbatim: the kept members keep their own whitespace and escapes.
        assert!(
            text.contains(&format!("{indent}{indent}\"latest\": \"9.9.9\"")),
            "{text}"
        );
        assert!(text.contains("\"name\": \"tool\\u00e9\""));
        assert!(text.contains(&format!("\"{MARKER_KEY}\": \"[snip: ")));
        // The room is used: within a tenth of the budget.
        assert!(
            r.output.len() + budget / 10 >= budget,
            "{} bytes",
            r.output.len()
        );
    }
}

#[test]
fn salient_members_of_an_elided_object_are_kept() {
    let mut doc = String::from("{\n");
    for i in 0..2000 {
        let value = match i {
            700 => "\"ERROR: disk full\"".to_string(),
            1300 => "\"failed\"".to_string(),
            _ => format!("\"ok {i:05}\""),
        };
        let key = if i == 1300 {
            "status".to_string()
        } else {
            format!("k{i:05}")
        };
        doc.push_str(&format!("  \"{key}\": {value},\n"));
    }
    doc.push_str("  \"last\": 0\n}\n");
    let r = run(doc.as_bytes(), &Config::with_budget(4096), Some(ID)).expect("shrinks");
    let text = String::from_utf8(r.output).unwrap();
    assert!(
        text.contains("  \"k00700\": \"ERROR: disk full\",\n"),
        "{text}"
    );
    assert!(text.contains("  \"status\": \"failed\",\n"), "{text}");
    assert!(text.contains(&format!("\"{MARKER_KEY} 2\"")), "{text}");
}

#[test]
fn nested_objects_with_duplicate_keys_escapes_and_a_bom_stay_valid() {
    let mut inner = String::new();
    for i in 0..1500 {
        inner.push_str(&format!(
            "\"dup\": \"v\\n{i}\\u00e9\", \"k\\\"{i}\": [{i}, \"\u{1F600}\"], "
        ));
    }
    let doc = format!("\u{feff}{{\"outer\": {{\"a\": {{{inner}\"z\": 1}}}}, \"n\": 2}}");
    let config = Config::with_budget(4096);
    let r = apply(doc.as_bytes(), &config, Some(ID), true).expect("shrinks");
    assert!(r.output.starts_with("\u{feff}".as_bytes()));
    assert!(r.output.len() <= 4096, "{}", r.output.len());
    assert!(r.members_elided > 0);
    let bom = "\u{feff}".len();
    let v = parse(&r.output[bom..]);
    assert_eq!(v["n"], 2);
    assert!(v["outer"]["a"].get(MARKER_KEY).is_some());
    assert_eq!(
        apply(&r.output, &config, Some(ID), true),
        None,
        "not idempotent"
    );
}

#[test]
fn distinct_items_fill_the_budget() {
    let slugs: Vec<String> = (0..6000)
        .map(|i| {
            format!(
                "\"item-{:x}-{}\"",
                i * 7919,
                ["red", "blue", "green"][i % 3]
            )
        })
        .collect();
    let doc = format!("{{\"slugs\": [{}], \"total\": 6000}}", slugs.join(", "));
    let config = Config::with_budget(16_384);
    let r = run(doc.as_bytes(), &config, Some(ID)).expect("shrinks");
    assert!(
        r.output.len() <= 16_384 && r.output.len() >= 16_384 - 1639,
        "{}",
        r.output.len()
    );
    let v = parse(&r.output);
    assert!(v["slugs"].as_array().unwrap().len() > 500);
    assert_eq!(v["total"], 6000);
}

/// A string elided with nothing kept at its ends (`json_string_keep` 0) far under the
/// budget gets room back: its kept ends grow from 0 bytes (a growth step that always
/// advances), up to near the budget, and the result is checked like every other.
#[test]
fn a_string_kept_to_nothing_gets_its_ends_back() {
    let lines: String = (0..400)
        .map(|i| format!("line {i} of the log\\n"))
        .collect();
    let input = format!("{{\"log\": \"{lines}\", \"n\": 1}}");
    for budget in [1024, 4096] {
        let config = Config {
            json_string_keep: 0,
            ..Config::with_budget(budget)
        };
        for id in [Some(ID), None] {
            let r = run(input.as_bytes(), &config, id).expect("elided");
            assert_eq!(r.strings_elided, 1);
            assert!(r.output.len() <= budget, "{}", r.output.len());
            assert!(
                r.output.len() >= budget - budget / 10,
                "{budget}: only {} bytes used",
                r.output.len()
            );
            assert!(r.output.starts_with(b"{\"log\": \"line 0 of the log"));
        }
    }
}
