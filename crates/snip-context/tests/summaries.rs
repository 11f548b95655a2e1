//! What a summary says: a failed result is never `ok`, and read/search/patch/terminal
//! summaries carry their window, pattern, change or line count. Results go through the
//! whole pass (`compress_request`) as a host would send them.

use serde_json::{json, Value};
use snip_context::{compress_request, summary, ContextSettings, FormatChoice, Summary};

fn store(b: &[u8]) -> Option<String> {
    Some(format!(
        "sn_{:024x}",
        b.len() as u128 * 7919 + b.first().copied().unwrap_or(0) as u128
    ))
}

/// Settings that summarise every result but the last.
fn all_but_last() -> ContextSettings {
    ContextSettings {
        keep_last: 1,
        min_messages: 0,
        batch: Some(1),
        ..ContextSettings::default()
    }
}

/// Summarises one OpenAI tool result of `name(args)` (a filler result follows it).
fn openai_summary(name: &str, args: Value, content: &str) -> Summary {
    let filler = "x".repeat(400);
    let req = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]},
        {"role": "tool", "tool_call_id": "c1", "content": content},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": filler},
    ]});
    let out = compress_request(&req, FormatChoice::Auto, &all_but_last(), &mut store);
    let text = out.request["messages"][2]["content"].as_str().unwrap();
    summary::parse(text).unwrap_or_else(|| panic!("not summarised: {:?}", out.report))
}

/// Summarises one Anthropic tool result of `name(input)`.
fn anthropic_summary(name: &str, input: Value, content: &str, is_error: Option<bool>) -> Summary {
    let mut result = json!({"type": "tool_result", "tool_use_id": "t1", "content": content});
    if let Some(e) = is_error {
        result["is_error"] = json!(e);
    }
    let req = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": name, "input": input}]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "y".repeat(400)}]},
    ]});
    let out = compress_request(&req, FormatChoice::Auto, &all_but_last(), &mut store);
    let text = out.request["messages"][2]["content"][0]["content"]
        .as_str()
        .unwrap();
    summary::parse(text).unwrap_or_else(|| panic!("not summarised: {:?}", out.report))
}

fn lines(prefix: &str, n: usize) -> String {
    (1..=n)
        .map(|i| format!("{prefix} {i} of the output\n"))
        .collect()
}

#[test]
fn a_failed_result_is_never_summarised_as_ok() {
    let body = lines("step", 40);
    let cases: Vec<(&str, Summary)> = vec![
        (
            "is_error",
            anthropic_summary("Bash", json!({"command": "make"}), &body, Some(true)),
        ),
        (
            "exit code field",
            openai_summary(
                "terminal",
                json!({"command": "make"}),
                &json!({"output": body, "exit_code": 2, "error": null}).to_string(),
            ),
        ),
        (
            "success: false",
            openai_summary(
                "patch",
                json!({"path": "a.rs"}),
                &json!({"success": false, "message": body}).to_string(),
            ),
        ),
        (
            "HTTP status",
            openai_summary(
                "web_fetch",
                json!({"url": "https://example.org/x"}),
                &json!({"status": 404, "body": body}).to_string(),
            ),
        ),
        (
            "error object",
            openai_summary(
                "web_fetch",
                json!({"url": "https://example.org/x"}),
                &json!({"error": {"message": "timed out"}, "text": body}).to_string(),
            ),
        ),
        (
            "exit line",
            openai_summary(
                "shell",
                json!({"cmd": "make"}),
                &format!("{body}Exit code 1\n"),
            ),
        ),
        (
            "error lines",
            openai_summary(
                "shell",
                json!({"cmd": "make"}),
                &format!("{body}error: linking failed\n{body}"),
            ),
        ),
        (
            "exit 0 but flagged",
            anthropic_summary(
                "Bash",
                json!({"command": "make"}),
                &format!("{body}Exit code 0\n"),
                Some(true),
            ),
        ),
    ];
    for (what, s) in &cases {
        assert_ne!(s.outcome, "ok", "{what}: {s:?}");
        assert_ne!(s.outcome, "exit 0", "{what}: {s:?}");
    }
    assert_eq!(cases[1].1.outcome, "exit 2");
    assert_eq!(cases[3].1.outcome, "HTTP 404");
    assert_eq!(cases[0].1.outcome, "error");
    assert_eq!(cases[2].1.outcome, "error");
    assert_eq!(cases[5].1.outcome, "exit 1");
    assert_eq!(cases[6].1.outcome, "1 error line");
}

#[test]
fn unknown_outcomes_say_so_and_known_successes_say_ok() {
    // OpenAI has no error flag: plain output with no status is `?`, never `ok`.
    let s = openai_summary("shell", json!({"cmd": "ls"}), &lines("file", 40));
    assert_eq!(s.outcome, "?");
    let s = openai_summary("mystery", json!({"q": "x"}), &lines("row", 40));
    assert_eq!(s.outcome, "?");
    // Anthropic's `is_error` defaults to false: the host says it went well.
    let s = anthropic_summary("Bash", json!({"command": "ls"}), &lines("file", 40), None);
    assert_eq!(s.outcome, "ok");
    let s = openai_summary(
        "terminal",
        json!({"command": "ls"}),
        &json!({"output": lines("file", 40), "exit_code": 0}).to_string(),
    );
    assert_eq!(s.outcome, "exit 0");
}

#[test]
fn read_summaries_carry_the_window_and_real_lines() {
    let gutter: String = (121..=180)
        .map(|i| format!("{i:>6}\tfn line_{i}() {{}}\n"))
        .collect();
    let s = openai_summary(
        "read_file",
        json!({"path": "src/lib.rs", "offset": 121, "limit": 60}),
        &gutter,
    );
    assert!(s.tool.contains("src/lib.rs"), "{s:?}");
    assert_eq!(s.facts.as_deref(), Some("lines 121–180"));
    assert_eq!(s.first.as_deref(), Some("fn line_121() {}"));
    assert_eq!(s.last.as_deref(), Some("fn line_180() {}"));
    assert_eq!(s.outcome, "ok");
    // Claude Code's Read: `N→text`, window from the gutter.
    let arrows: String = (10..=50)
        .map(|i| format!("{i:>6}→let x{i} = {i};\n"))
        .collect();
    let s = anthropic_summary(
        "Read",
        json!({"file_path": "/r/a.py", "offset": 10, "limit": 41}),
        &arrows,
        None,
    );
    assert_eq!(s.facts.as_deref(), Some("lines 10–50"));
    assert_eq!(s.first.as_deref(), Some("let x10 = 10;"));
    // A JSON read without a gutter: the window from the call, the length from the result.
    let s = openai_summary(
        "read_file",
        json!({"path": "notes.md", "offset": 5, "limit": 30}),
        &json!({"content": lines("note", 30), "total_lines": 2000}).to_string(),
    );
    assert_eq!(s.facts.as_deref(), Some("lines 5–34 of 2,000"));
}

#[test]
fn search_summaries_carry_the_pattern_and_match_count() {
    let hits: String = (1..=25)
        .map(|i| format!("src/m{i}.rs:{i}:    let total = compute_total(x);\n"))
        .collect();
    let s = anthropic_summary(
        "Grep",
        json!({"pattern": "compute_total", "path": "src"}),
        &hits,
        None,
    );
    assert!(s.tool.contains("`compute_total`"), "{s:?}");
    assert_eq!(s.facts.as_deref(), Some("25 matches"));
    let s = openai_summary(
        "search_files",
        json!({"path": ".", "pattern": "TODO"}),
        &json!({"total_count": 113, "matches": [{"path": "a", "line": 1, "content": lines("TODO", 20)}]})
            .to_string(),
    );
    assert!(s.tool.contains("`TODO`"), "{s:?}");
    assert_eq!(s.facts.as_deref(), Some("113 matches"));
}

#[test]
fn patch_summaries_carry_the_file_and_change() {
    let diff = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,4 +1,5 @@\n fn a() {}\n-fn b() {}\n+fn b() -> u8 { 1 }\n+fn c() {}\n fn d() {}\n"
        .repeat(8);
    let s = openai_summary(
        "patch",
        json!({"path": "src/x.rs", "old_string": "fn b() {}", "new_string": "fn b() -> u8 { 1 }\nfn c() {}"}),
        &json!({"success": true, "diff": diff}).to_string(),
    );
    assert!(s.tool.contains("src/x.rs"), "{s:?}");
    assert_eq!(s.facts.as_deref(), Some("+16 −8"));
    assert_eq!(s.outcome, "ok");
    // Claude Code's Edit answers with prose: the change comes from the call.
    let old = lines("old", 3);
    let new = lines("new", 5);
    let s = anthropic_summary(
        "Edit",
        json!({"file_path": "/r/y.rs", "old_string": old, "new_string": new}),
        &format!(
            "The file /r/y.rs has been updated. Here's the result:\n{}",
            lines("ctx", 30)
        ),
        None,
    );
    assert!(s.tool.contains("/r/y.rs"), "{s:?}");
    assert_eq!(s.facts.as_deref(), Some("+5 −3"));
}

#[test]
fn terminal_summaries_count_lines_and_note_the_host_cut() {
    let out = format!(
        "{}... [48213 characters truncated] ...\n{}",
        lines("a", 20),
        lines("b", 20)
    );
    let s = openai_summary(
        "terminal",
        json!({"command": "cargo test"}),
        &json!({"output": out, "exit_code": 101}).to_string(),
    );
    assert_eq!(s.outcome, "exit 101");
    assert_eq!(s.facts.as_deref(), Some("41 lines, truncated by the host"));
    let s = anthropic_summary("Bash", json!({"command": "ls"}), &lines("f", 30), None);
    assert_eq!(s.facts.as_deref(), Some("30 lines"));
}

#[test]
fn the_json_entry_point_passes_bytes_through_or_rewrites() {
    use snip_context::compress_request_json;
    let s = all_but_last();
    for junk in [&b"not json"[..], b"{\"messages\": 3}", b"[1, 2"] {
        let (out, report) = compress_request_json(junk, FormatChoice::Auto, &s, &mut store);
        assert_eq!(&*out, junk);
        assert!(report.skipped.is_some());
    }
    let req = json!({"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": lines("x", 50)},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": lines("y", 50)},
    ]});
    let text = serde_json::to_vec_pretty(&req).unwrap();
    let (out, report) = compress_request_json(&text, FormatChoice::Auto, &s, &mut store);
    assert_eq!(report.summarised, 1);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert!(v["messages"][2]["content"]
        .as_str()
        .unwrap()
        .starts_with("[snip: "));
    assert_eq!(v["messages"][4], req["messages"][4]);
}
