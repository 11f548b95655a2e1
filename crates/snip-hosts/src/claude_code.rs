//! Claude Code hook payloads: `PostToolUse` (replace a tool's output with its
//! compressed form) and the opt-in `PreToolUse` Bash wrapper.
//!
//! Shapes (see `docs/claude-code.md` for sources): Claude Code validates
//! `hookSpecificOutput.updatedToolOutput` against the tool's own output schema and
//! silently keeps the original when it does not match, so every reply mirrors the
//! `tool_response` it was given and only replaces string fields:
//!
//! | tool | fields replaced |
//! |---|---|
//! | `Bash`, `PowerShell` | `stdout`, `stderr`, within one budget together (other keys kept) |
//! | `Read` (`type: "text"`) | `file.content` |
//! | `Grep` | `content`, and `filenames` when long, within one budget together |
//! | `Glob` | `filenames` when long |
//! | `WebFetch` | `result` |
//! | `mcp__*` | every `text` of a content-block list (also `updatedMCPToolOutput`) |
//!
//! Anything else, including snip's own MCP tools (`mcp__snip__*`), gets no reply.

use crate::engine;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::io::Read as _;

/// Upper bound, in bytes, for a persisted output file read back from
/// `persistedOutputPath` (the store's per-entry cap is 32 MiB).
pub const MAX_PERSISTED_BYTES: u64 = 32 * 1024 * 1024;

/// Prefix of the tools snip's own MCP server exposes; never rewritten.
const OWN_MCP_PREFIX: &str = "mcp__snip__";

/// `snip_restore` as Claude Code shows it to the model (`mcp__<server>__<tool>`, the
/// server installed as `snip`): the name markers quote in this host.
pub const RESTORE_TOOL: &str = "mcp__snip__snip_restore";

/// Answers one hook payload (the JSON Claude Code writes on stdin). `None` means
/// "no change": the caller prints `{}`.
pub fn respond(payload: &Value) -> Option<Value> {
    engine::set_restore_tool(RESTORE_TOOL);
    match payload.get("hook_event_name")?.as_str()? {
        "PostToolUse" => post_tool_use(payload),
        "PreToolUse" => pre_tool_use(payload, &std::env::current_exe().ok()?),
        _ => None,
    }
}

/// Why `payload` is not a hook payload snip can read, as one line for stderr, or
/// `None` when it is one (including events snip has nothing to do for, such as
/// `Stop`). Claude Code's hook input always carries `hook_event_name` (a string) in a
/// JSON object; without it snip does not guess the event from the other fields: the
/// hook answers "no change" (fail open) and says why on stderr.
pub fn not_a_payload(payload: &Value) -> Option<String> {
    let Some(obj) = payload.as_object() else {
        return Some("the hook payload is not a JSON object".into());
    };
    match obj.get("hook_event_name") {
        None => Some(
            "the hook payload has no hook_event_name (Claude Code sends one with every hook event)"
                .into(),
        ),
        Some(Value::String(_)) => None,
        Some(_) => Some("the hook payload's hook_event_name is not a string".into()),
    }
}

/// `PostToolUse`: the tool's output in its own shape, with long text compressed.
pub fn post_tool_use(payload: &Value) -> Option<Value> {
    engine::set_restore_tool(RESTORE_TOOL);
    let tool = payload.get("tool_name")?.as_str()?;
    if tool.starts_with(OWN_MCP_PREFIX) {
        return None;
    }
    if matches!(tool, "Bash" | "PowerShell") && runs_snip_restore(bash_command(payload)) {
        return None; // restored bytes reach the model as they are, never compressed again
    }
    let response = payload.get("tool_response")?;
    let source = format!("claude-code:{tool}");
    let updated = match tool {
        "Bash" | "PowerShell" => {
            let cwd = payload.get("cwd").and_then(Value::as_str);
            shell_output(response, cwd, &source)?
        }
        "Read" => read_output(response, &source)?,
        "Grep" => grep_output(response, &source)?,
        "Glob" => filenames_output(response, &source)?,
        "WebFetch" => string_field(response, "result", &source)?,
        t if t.starts_with("mcp__") => {
            let updated = mcp_output(response, &source)?;
            return Some(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PostToolUse",
                    "updatedToolOutput": updated.clone(),
                    "updatedMCPToolOutput": updated,
                }
            }));
        }
        _ => return None,
    };
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": updated,
        }
    }))
}

/// Bash: `{stdout, stderr, interrupted, …}`. When Claude Code persisted the full
/// output to a file (`persistedOutputPath`), `stdout` holds only a preview: the file is
/// read back, compressed, and the persisted keys are dropped so the model sees the
/// compressed whole instead of a 2 KB preview.
///
/// The model reads `stdout` and `stderr` together, so they share one budget
/// (`SNIP_MAX_BYTES`) by [`snip_store::compress_parts`]: the shorter stream may use up
/// to half of it, the longer one what the shorter one left (at least half), and
/// neither less than the core's minimum budget. A stream that fits is left as it is.
///
/// A relative `persistedOutputPath` is read from the payload's `cwd` (the session's
/// directory), not from the directory the hook was started in.
fn shell_output(response: &Value, cwd: Option<&str>, source: &str) -> Option<Value> {
    let fields = response.as_object()?;
    let persisted = response.get("persistedOutputPath").and_then(Value::as_str);
    let stdout: Option<Cow<'_, str>> = match persisted {
        Some(path) => {
            let path = match cwd {
                Some(dir) if std::path::Path::new(path).is_relative() => {
                    std::path::Path::new(dir).join(path)
                }
                _ => std::path::PathBuf::from(path),
            };
            Some(Cow::Owned(read_persisted(&path)?))
        }
        None => fields
            .get("stdout")
            .and_then(Value::as_str)
            .map(Cow::Borrowed),
    };
    let stderr = fields
        .get("stderr")
        .and_then(Value::as_str)
        .map(Cow::Borrowed);
    // The reply's object: every field in its order, the two streams' texts not copied
    // (they are set below, compressed or as they were).
    let mut obj: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("stdout" | "stderr", Value::String(_)) => Value::String(String::new()),
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect();
    let config = crate::common::core_config().ok()?;
    let [new_stdout, new_stderr] =
        engine::compress_parts_str([stdout.as_deref(), stderr.as_deref()], &config, source);
    let changed = new_stdout.is_some() || new_stderr.is_some();
    if new_stdout.is_none() && persisted.is_some() {
        // Nothing shrank: Claude Code's preview stays.
        return None;
    }
    // Each stream: compressed, or its own text again (the preview, when persisted).
    for (key, new) in [("stdout", new_stdout), ("stderr", new_stderr)] {
        let text = match new {
            Some(c) => c,
            None => match fields.get(key) {
                Some(Value::String(t)) => t.clone(),
                _ => continue,
            },
        };
        obj.insert(key.into(), Value::String(text));
    }
    if persisted.is_some() {
        obj.remove("persistedOutputPath");
        obj.remove("persistedOutputSize");
    }
    // The schema requires these three; a payload without them is not a Bash result.
    let well_formed = obj.get("stdout").is_some_and(Value::is_string)
        && obj.get("stderr").is_some_and(Value::is_string)
        && obj.get("interrupted").is_some_and(Value::is_boolean);
    (changed && well_formed).then_some(Value::Object(obj))
}

/// Reads a file Claude Code persisted. Only a regular file of at most
/// [`MAX_PERSISTED_BYTES`] holding UTF-8 is read; anything else (a FIFO, a device, a
/// directory, a larger file) is "no persisted output" and the result stays as it is.
/// The file is opened non-blocking (a FIFO put there after a check would otherwise
/// block the open) and checked through the open handle.
pub(crate) fn read_persisted(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_PERSISTED_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_PERSISTED_BYTES + 1)
        .read_to_string(&mut text)
        .ok()?;
    // Grown since it was checked: over the cap all the same.
    (text.len() as u64 <= MAX_PERSISTED_BYTES).then_some(text)
}

/// Read: `{type: "text", file: {filePath, content, numLines, startLine, totalLines}}`.
fn read_output(response: &Value, source: &str) -> Option<Value> {
    let mut obj = response.as_object()?.clone();
    if obj.get("type").and_then(Value::as_str) != Some("text") {
        return None;
    }
    let file = obj.get("file")?;
    let updated = string_field(file, "content", source)?;
    obj.insert("file".into(), updated);
    Some(Value::Object(obj))
}

/// Grep: `{mode, numFiles, filenames, content?, numLines?, …}`. The model reads
/// `content` and the `filenames` list together, so they share one budget
/// (`SNIP_MAX_BYTES`) by [`snip_store::compress_parts`], as Bash's `stdout` and
/// `stderr` do; the list is compressed as the lines the model reads (see
/// [`filenames_lines`]).
fn grep_output(response: &Value, source: &str) -> Option<Value> {
    let mut obj = response.as_object()?.clone();
    let content = obj.get("content").and_then(Value::as_str);
    let names = filenames_lines(&obj);
    let config = crate::common::core_config().ok()?;
    let [new_content, new_names] =
        engine::compress_parts_str([content, names.as_deref()], &config, source);
    let changed = new_content.is_some() || new_names.is_some();
    if let Some(c) = new_content {
        obj.insert("content".into(), Value::String(c));
    }
    if let Some(n) = new_names {
        obj.insert("filenames".into(), split_lines(&n));
    }
    changed.then_some(Value::Object(obj))
}

/// Glob: a long list of paths is compressed as the lines the model reads, then split
/// back into one array item per line (markers included).
fn filenames_output(response: &Value, source: &str) -> Option<Value> {
    let mut obj = response.as_object()?.clone();
    let text = filenames_lines(&obj)?;
    let compressed = engine::compress_str(&text, source)?;
    obj.insert("filenames".into(), split_lines(&compressed));
    Some(Value::Object(obj))
}

/// The `filenames` list as the lines the model reads, one path a line; `None` when
/// there is none, an item is not a string, or a path holds a line break.
fn filenames_lines(obj: &Map<String, Value>) -> Option<String> {
    let names = obj.get("filenames")?.as_array()?;
    let mut text = String::new();
    for (i, n) in names.iter().enumerate() {
        let n = n.as_str()?;
        if n.contains('\n') || n.contains('\r') {
            return None;
        }
        if i > 0 {
            text.push('\n');
        }
        text.push_str(n);
    }
    Some(text)
}

/// A compressed list back as one array item per line.
fn split_lines(text: &str) -> Value {
    Value::Array(
        text.split('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// Replaces one string field of an object with its compressed form.
fn string_field(response: &Value, key: &str, source: &str) -> Option<Value> {
    let mut obj: Map<String, Value> = response.as_object()?.clone();
    let text = obj.get(key)?.as_str()?;
    let compressed = engine::compress_str(text, source)?;
    obj.insert(key.into(), Value::String(compressed));
    Some(Value::Object(obj))
}

/// MCP tools: a content-block list (`[{type: "text", text}, …]`), a result object
/// with such a `content` list, or a plain string. Non-text blocks are kept as they are.
fn mcp_output(response: &Value, source: &str) -> Option<Value> {
    match response {
        Value::Array(blocks) => Some(Value::Array(mcp_blocks(blocks, source)?)),
        Value::Object(obj) => {
            let blocks = obj.get("content")?.as_array()?;
            let mut obj = obj.clone();
            obj.insert("content".into(), Value::Array(mcp_blocks(blocks, source)?));
            Some(Value::Object(obj))
        }
        Value::String(s) => engine::compress_str(s, source).map(Value::String),
        _ => None,
    }
}

/// Compresses the `text` of every text block; `None` when no block changed.
fn mcp_blocks(blocks: &[Value], source: &str) -> Option<Vec<Value>> {
    let mut changed = false;
    let out = blocks
        .iter()
        .map(|b| {
            if b.get("type").and_then(Value::as_str) == Some("text") {
                if let Some(v) = string_field(b, "text", source) {
                    changed = true;
                    return v;
                }
            }
            b.clone()
        })
        .collect();
    changed.then_some(out)
}

/// Shell builtins whose effect must stay in Claude Code's own shell; a command using
/// any of them is never wrapped (a subshell would lose the change).
const STATEFUL_BUILTINS: &[&str] = &[
    "cd", "pushd", "popd", "export", "unset", "source", ".", "alias", "unalias", "set", "shopt",
    "exec", "ulimit", "umask", "declare", "typeset", "readonly", "local", "eval", "trap", "hash",
    "builtin", "enable",
];

/// `PreToolUse` for Bash (opt-in with `snip install claude-code --wrap-bash`): rewrites
/// the command to run through `snip run` so failing commands and outputs over Claude
/// Code's own cut are compressed too. `snip run` is given the restore tool's name as
/// Claude Code shows it (`--restore-tool mcp__snip__snip_restore`, or
/// `SNIP_RESTORE_TOOL` when set), so its markers quote the name the model can call.
/// Only `updatedInput` is set: the permission decision stays with the user's rules
/// (it is never `allow`).
pub fn pre_tool_use(payload: &Value, snip_exe: &std::path::Path) -> Option<Value> {
    engine::set_restore_tool(RESTORE_TOOL);
    if payload.get("tool_name")?.as_str()? != "Bash" {
        return None;
    }
    let input = payload.get("tool_input")?.as_object()?;
    let command = input.get("command")?.as_str()?;
    if command.trim().is_empty()
        || input.get("run_in_background").and_then(Value::as_bool) == Some(true)
        || changes_shell_state(command)
        || starts_background_job(command)
    {
        return None;
    }
    if runs_snip_restore(command) {
        return None;
    }
    let exe = snip_exe.to_str()?;
    if command.starts_with(&format!("{} run ", shell_quote(exe))) {
        return None;
    }
    let tool = crate::common::core_config()
        .map(|c| c.restore_tool)
        .unwrap_or_else(|_| RESTORE_TOOL.to_string());
    let prefix = format!(
        "{} run --restore-tool {} -- ",
        shell_quote(exe),
        shell_quote(&tool)
    );
    let mut updated = input.clone();
    updated.insert(
        "command".into(),
        Value::String(format!("{prefix}bash -c {}", shell_quote(command))),
    );
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": updated,
        }
    }))
}

/// The `command` of a Bash payload's `tool_input` ("" when absent).
fn bash_command(payload: &Value) -> &str {
    payload
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// True when `command` runs `snip restore`: some simple command of it (split at
/// `;`, `&`, `|`, newlines, parentheses and backquotes outside quotes) holds the words
/// `snip` (by its last path component) and `restore` one after the other, past its
/// command word, after variable assignments and the reserved words that may open a
/// command (`{`, `!`, `if`, `then`, `do`, …), unless that command word is one that
/// only shows or searches text (`echo`, `grep`, `cat`, …); also inside `snip run
/// [OPTIONS] -- CMD…`, a shell's `-c 'SCRIPT'` wherever the shell is in the command
/// (`timeout 5 bash -c '…'`), any quoted script handed to a command (`eval "…"`,
/// `script -c '…'`, `bash <<< '…'`), command substitutions (`"$(snip restore …)"`,
/// `$(which snip) restore`), and with options before the subcommand (`snip --format
/// json restore`). So every wrapper that runs its arguments
/// (`time -p`, `timeout 30`, `nohup`, `xargs`, `sudo`, `stdbuf -oL`, …) is seen
/// through without being listed, and a command that only mentions it (`grep -r "snip
/// restore" .`, `echo snip restore`) does not run it. When in doubt, yes: the output of
/// a restore compressed again would hide the bytes the model asked for behind a new
/// marker, where leaving a mention's short output whole costs little.
pub fn runs_snip_restore(command: &str) -> bool {
    runs_restore_in(command, 0)
}

fn runs_restore_in(script: &str, depth: usize) -> bool {
    depth < 4
        && (substituted_snip_restore(script)
            || shell_words(script).split(|w| w.is_none()).any(|simple| {
                let words: Vec<&str> = simple.iter().flatten().map(String::as_str).collect();
                simple_runs_restore(&words, depth)
            }))
}

/// Whether `script` runs snip found by a command substitution (`$(which snip)
/// restore …`, `` `command -v snip` restore ``), which the word splitting cuts apart.
fn substituted_snip_restore(script: &str) -> bool {
    script.match_indices("restore").any(|(i, _)| {
        // Quoted or not: `"$(which snip)" restore`.
        let before = script[..i].trim_end().trim_end_matches(['"', '\'']);
        let inner = if let Some(b) = before.strip_suffix(')') {
            b.rfind("$(").map(|a| &b[a + 2..])
        } else if let Some(b) = before.strip_suffix('`') {
            b.rfind('`').map(|a| &b[a + 1..])
        } else {
            None
        };
        inner.is_some_and(|t| t.trim_end().ends_with("snip"))
    })
}

/// Commands that only show or search the text they are given: `snip restore` among
/// their arguments is a mention, not a run.
const MENTIONS: &[&str] = &[
    "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "less", "more", "head",
    "tail", "sed", "awk", "man", "git", "test", "[", "#",
];

/// One simple command's words: does it run `snip restore`?
fn simple_runs_restore(words: &[&str], depth: usize) -> bool {
    // Assignments and the reserved words that may come before a command.
    let start = words
        .iter()
        .position(|w| {
            !(is_assignment(w)
                || matches!(
                    *w,
                    "{" | "}" | "!" | "if" | "then" | "else" | "elif" | "do" | "while" | "until"
                ))
        })
        .unwrap_or(words.len());
    // A command substitution runs whatever the command around it is, inside quotes
    // too (`out="$(snip restore …)"`, `echo "$(snip restore …)"`).
    if words
        .iter()
        .any(|w| substitutions(w).any(|inner| runs_restore_in(inner, depth + 1)))
    {
        return true;
    }
    let words = &words[start..];
    let Some(cmd) = words.first() else {
        return false;
    };
    if MENTIONS.contains(&last_component(cmd)) {
        return false;
    }
    for (i, w) in words.iter().enumerate() {
        // A quoted script handed to the command (`bash -c '…'` wherever the shell
        // stands, `eval "…"`, `script -c '…'`, `bash <<< '…'`) may run it.
        if i > 0 && w.contains(char::is_whitespace) && runs_restore_in(w, depth + 1) {
            return true;
        }
        if last_component(w) == "snip" {
            // Options before the subcommand (`snip --format json restore …`).
            let mut k = i + 1;
            while let Some(o) = words.get(k).filter(|o| o.starts_with('-')) {
                k += if *o == "--format" { 2 } else { 1 };
            }
            match words.get(k) {
                Some(&"restore") => return true,
                // `snip run [OPTIONS] -- CMD…`
                Some(&"run") => {
                    if let Some(k) = words[i + 1..].iter().position(|w| *w == "--") {
                        return simple_runs_restore(&words[i + 2 + k..], depth);
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// A command word's last path component (`/usr/local/bin/snip` → `snip`).
fn last_component(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The scripts of the command substitutions in `word` (`$(…)`, up to its last `)`;
/// `` `…` ``), as a quoted word keeps them.
fn substitutions(word: &str) -> impl Iterator<Item = &str> {
    let dollar = word.find("$(").and_then(|a| {
        word.rfind(')')
            .filter(|&b| b > a + 2)
            .map(|b| &word[a + 2..b])
    });
    let tick = word.find('`').and_then(|a| {
        word.rfind('`')
            .filter(|&b| b > a + 1)
            .map(|b| &word[a + 1..b])
    });
    dollar.into_iter().chain(tick)
}

/// A shell command line as words (quotes removed, backslash escapes applied), with
/// `None` at each command separator outside quotes (`;`, `&`, `|`, newline, `(`,
/// `)`, a backquote). Not a full shell parser: enough to tell which word is a simple
/// command's command word.
fn shell_words(line: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        word.get_or_insert_with(String::new).push(n);
                    }
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    w.push(n);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.extend(chars.next());
                        }
                        _ => w.push(n),
                    }
                }
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' => {
                out.extend(word.take().map(Some));
                out.push(None);
            }
            c if c.is_whitespace() => out.extend(word.take().map(Some)),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word.take().map(Some));
    out
}

/// True when some simple command in `command` starts with a stateful builtin, or the
/// command assigns a shell variable on its own (`X=1`), which would not survive a
/// subshell. Conservative: a false positive only means "not wrapped".
pub fn changes_shell_state(command: &str) -> bool {
    let separators = |c: char| matches!(c, ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' | '`');
    command.split(separators).any(|segment| {
        let mut words = segment.split_whitespace().peekable();
        let mut saw_assignment = false;
        while let Some(w) = words.peek() {
            if is_assignment(w) {
                saw_assignment = true;
                words.next();
            } else {
                break;
            }
        }
        match words.next() {
            Some(w) => {
                let w = w.trim_start_matches('$');
                STATEFUL_BUILTINS.contains(&w) || w.starts_with("$(")
            }
            None => saw_assignment,
        }
    })
}

/// True when `command` starts a background job: a `&` control operator outside
/// quotes (`server &`, `a & b`; not `&&`, `>&`, `2>&1`, `&>`, `|&`, `;&`), or a
/// `coproc`. Wrapped in `snip run`, such a job would keep the output pipe open and
/// `snip run` would wait for it to end. Conservative: a `&` in a comment or a here
/// document also counts, which only means "not wrapped".
pub fn starts_background_job(command: &str) -> bool {
    let b = command.as_bytes();
    let (mut i, mut prev) = (0, b' ');
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1, // the next byte is literal
            b'\'' => {
                // Single quotes: nothing is special up to the closing quote.
                i += b[i + 1..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |n| n + 1);
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'&' if b.get(i + 1) == Some(&b'&') => i += 1, // `&&`
            b'&' if matches!(prev, b'>' | b'<' | b'|' | b';') || b.get(i + 1) == Some(&b'>') => {}
            b'&' => return true,
            _ => {}
        }
        prev = b.get(i).copied().unwrap_or(b' ');
        i += 1;
    }
    let separators = |c: char| matches!(c, ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}');
    command
        .split(separators)
        .any(|segment| segment.split_whitespace().next() == Some("coproc"))
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// POSIX single-quote quoting: `it's` → `'it'\''s'`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// When a setting is not valid (so outputs pass unchanged) or the store could not keep
/// an original (so an output reached the model whole), adds Claude Code's
/// `systemMessage` to the reply, shown to the user, once per session (`session_id`): a
/// marker file `snip-told-<uid>-<session hash>` in the temp directory, created
/// exclusively, records that the session was told.
pub fn tell_once(
    reply: Option<serde_json::Value>,
    payload: &serde_json::Value,
) -> Option<serde_json::Value> {
    let message = match (engine::setting_error(), engine::store_failure()) {
        (Some(e), _) => setting_message(e),
        (None, Some(why)) => store_failure_message(why),
        (None, None) => return reply,
    };
    let session = payload
        .get("session_id")
        .and_then(|s| s.as_str())
        .unwrap_or("");
    let hash = snip_store::restore::sha256_hex(session.as_bytes());
    let mark = std::env::temp_dir().join(format!(
        "snip-told-{}-{}",
        rustix::process::geteuid().as_raw(),
        &hash[..16]
    ));
    // create_new never follows a planted symlink; an existing file means told already.
    if std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&mark)
        .is_err()
    {
        return reply;
    }
    let mut reply = reply.unwrap_or_else(|| serde_json::json!({}));
    reply["systemMessage"] = message.into();
    Some(reply)
}

/// The `systemMessage` for outputs passed through unchanged because a setting is not
/// valid (`error`, the setting's one-line error).
pub fn setting_message(error: &str) -> String {
    format!(
        "snip: tool outputs reach the model uncompressed because a setting is not valid: {error}. Said once per session."
    )
}

/// The `systemMessage` for an output that reached the model uncompressed because the
/// store could not keep its original (`why`, the store's one-line reason): the cause,
/// then the fix for that cause.
pub fn store_failure_message(why: &str) -> String {
    let why = why.trim_end_matches('.');
    // The store's own reasons name their fix (an entry or store cap: the variable to
    // raise; a refused or missing directory: what to set); a failed write does not.
    let fix = snip_store::error::write_fix(why)
        .map(|f| format!("; {f}"))
        .unwrap_or_default();
    format!(
        "snip: an output reached the model uncompressed because the store of originals could not keep it: {why}{fix}. Or set SNIP_STORE=0 to compress without keeping originals. Said once per session."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateful_commands_are_not_wrapped() {
        for c in [
            "cd src && ls",
            "export A=1",
            "A=1",
            "ls; cd ..",
            "source venv/bin/activate && pytest",
            "(cd x) ; pushd y",
        ] {
            assert!(changes_shell_state(c), "{c}");
        }
        for c in ["ls -la", "cargo test 2>&1 | tail", "A=1 make", "echo cd"] {
            assert!(!changes_shell_state(c), "{c}");
        }
    }

    #[test]
    fn background_jobs_are_seen() {
        for c in [
            "sleep 100 &",
            "npm run dev & sleep 2; curl localhost:3000",
            "(server &)",
            "a && b &",
            "python -m http.server 8000 &\n",
            "coproc cat",
            "echo x; coproc { cat; }",
        ] {
            assert!(starts_background_job(c), "{c}");
        }
        for c in [
            "cargo test 2>&1",
            "make && make install",
            "cmd >& out.log",
            "cmd &> out.log",
            "cmd |& tee log",
            "cmd <&3",
            "echo 'a & b'",
            "echo \"a & b\" \\& c",
            "echo \"it's \\\" & \"",
            "case x in a) echo;& esac",
            "echo coproc",
        ] {
            assert!(!starts_background_job(c), "{c}");
        }
    }

    #[test]
    fn quoting_round_trips_through_sh() {
        let q = shell_quote("echo 'a' \"b\" $HOME");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf %s {q}"))
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"echo 'a' \"b\" $HOME");
    }

    #[test]
    fn restore_commands_pass_through() {
        for cmd in [
            "snip restore 'snip_restore(id=\"sn_1\", mode=\"full\")' --raw",
            "/opt/bin/snip restore sn_1 --lines 3:9",
            "cd x && \"/opt/my dir/snip\" restore sn_1",
            "'/opt/snip' run -- bash -c 'snip restore sn_1 --raw'",
            "SNIP_STORE_DIR=/tmp/s snip restore sn_1",
            "env A=1 nice -n 5 snip restore sn_1 | head",
            "sudo -u me /usr/local/bin/snip restore sn_1",
            "ls; snip run --restore-tool t -- snip restore sn_1",
            "echo start\nsnip restore sn_1",
            // Wrappers and reserved words before it, none of them listed anywhere.
            "time -p snip restore sn_1 --bytes 0:8192 --raw",
            "command -p snip restore sn_1",
            "timeout 30 snip restore sn_1",
            "nohup snip restore sn_1",
            "{ snip restore sn_1; }",
            "if true; then snip restore sn_1; fi",
            "! snip restore sn_1",
            "echo sn_1 | xargs snip restore",
            "stdbuf -oL snip restore sn_1",
            "timeout 5 bash -c 'snip restore sn_1'",
            "for i in 1; do snip restore sn_1; done",
            // Options before the subcommand, substitutions, quoted scripts.
            "snip --format json restore sn_1",
            "snip --format=json restore sn_1",
            "out=\"$(snip restore sn_1)\"; echo \"$out\"",
            "echo \"$(snip restore sn_1)\"",
            "echo \"`snip restore sn_1`\"",
            "eval \"snip restore sn_1\"",
            "bash <<< 'snip restore sn_1'",
            "script -q -c 'snip restore sn_1' /dev/null",
            "$(which snip) restore sn_1",
            "\"$(command -v snip)\" restore sn_1",
        ] {
            assert!(runs_snip_restore(cmd), "{cmd}");
            let p = json!({"hook_event_name":"PostToolUse","tool_name":"Bash",
                "tool_input":{"command":cmd},
                "tool_response":{"stdout":"x\n".repeat(40_000),"stderr":"","interrupted":false}});
            assert!(post_tool_use(&p).is_none(), "{cmd}");
        }
        for cmd in [
            "cargo test",
            "echo restore",
            "snipper restore",
            "git restore .",
            r#"grep -r "snip restore" ."#,
            "echo snip restore",
            "rg 'snip restore sn_1' docs/",
            "cat notes.txt | grep snip\\ restore",
            "bash -c 'echo snip restore'",
            "printf '%s\\n' snip restore",
            "git log --grep 'snip restore'",
            "timeout 5 bash -c 'echo snip restore'",
        ] {
            assert!(!runs_snip_restore(cmd), "{cmd}");
        }
        let p = json!({"hook_event_name":"PreToolUse","tool_name":"Bash",
            "tool_input":{"command":"snip restore sn_1 --raw"}});
        assert!(pre_tool_use(&p, std::path::Path::new("/opt/snip")).is_none());
    }

    #[test]
    fn pre_tool_use_never_allows() {
        let p = json!({"hook_event_name":"PreToolUse","tool_name":"Bash",
            "tool_input":{"command":"cargo test","description":"run tests","timeout":1000}});
        let r = pre_tool_use(&p, std::path::Path::new("/opt/snip bin/snip")).unwrap();
        let h = &r["hookSpecificOutput"];
        assert!(h.get("permissionDecision").is_none());
        assert_eq!(
            h["updatedInput"]["command"],
            "'/opt/snip bin/snip' run --restore-tool mcp__snip__snip_restore -- bash -c 'cargo test'"
        );
        assert_eq!(h["updatedInput"]["timeout"], 1000);
        assert_eq!(h["updatedInput"]["description"], "run tests");
    }
}
