//! `snip install|uninstall claude-code` on real files in a temporary HOME and project.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;

use common::{backups, Env};

/// Claude Code user settings under the test HOME.
fn settings(env: &Env) -> PathBuf {
    env.home.join(".claude/settings.json")
}

/// A settings file as a person writes it: 4-space indent, keys in no sorted order.
const SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {
        "allow": ["Bash(npm test:*)"],
        "deny": []
    },
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write|Edit",
                "hooks": [{ "type": "command", "command": "prettier --write" }]
            }
        ]
    },
    "env": { "FOO": "1" }
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn snip_commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
                .filter_map(|h| h["command"].as_str().map(str::to_string))
                .filter(|c| c.ends_with(" hook claude-code"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn install_keeps_everything_else_is_idempotent_and_uninstall_is_byte_for_byte() {
    let env = Env::new();
    write(&settings(&env), SETTINGS);

    env.ok(&["install", "claude-code"]);
    let after = std::fs::read_to_string(settings(&env)).unwrap();
    let v = json(&settings(&env));
    // Every other key, in its order, with its value.
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "env"]);
    let before: Value = serde_json::from_str(SETTINGS).unwrap();
    for k in ["model", "permissions", "env"] {
        assert_eq!(v[k], before[k]);
    }
    // The user's own hook is first and untouched; snip's is added after it.
    assert_eq!(
        v["hooks"]["PostToolUse"][0],
        before["hooks"]["PostToolUse"][0]
    );
    let cmds = snip_commands(&v, "PostToolUse");
    assert_eq!(cmds.len(), 1);
    assert!(cmds[0].contains("snip"));
    assert!(v["hooks"].get("PreToolUse").is_none());
    // Formatting of the untouched part is kept (4-space indent).
    assert!(after.starts_with("{\n    \"model\": \"opus\",\n    \"permissions\": {\n"));
    // The MCP server is registered for the user.
    let claude = json(&env.home.join(".claude.json"));
    assert_eq!(
        claude["mcpServers"]["snip"]["args"],
        serde_json::json!(["mcp"])
    );
    assert_eq!(claude["mcpServers"]["snip"]["type"], "stdio");
    // A timestamped backup holds the original bytes.
    let b = backups(&settings(&env));
    assert_eq!(b.len(), 1);
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), SETTINGS);

    // Second run: nothing changes, no new backup.
    let out = env.ok(&["install", "claude-code"]);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), after);
    assert_eq!(backups(&settings(&env)).len(), 1);

    let out = env.ok(&["uninstall", "claude-code"]);
    assert!(
        out.contains(&format!("restored {}", settings(&env).display())),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), SETTINGS);
    assert!(!env.home.join(".claude.json").exists());
    // An exact restore backs nothing up (the bytes it replaces are the install's).
    assert_eq!(backups(&settings(&env)).len(), 1);
    let out = env.ok(&["uninstall", "claude-code"]);
    assert!(out.contains("not installed"), "{out}");
}

/// A file changed since the install (as Claude Code rewrites `~/.claude.json`) loses
/// only snip's entries, and uninstall says so instead of "restored".
#[test]
fn uninstall_of_a_changed_file_says_only_snips_entries_went() {
    let env = Env::new();
    let claude = env.home.join(".claude.json");
    write(&claude, "{\"numStartups\": 3, \"projects\": {}}\n");
    env.ok(&["install", "claude-code"]);
    let mut v = json(&claude);
    v["numStartups"] = 4.into();
    v["tipsHistory"] = serde_json::json!({"a": 1});
    std::fs::write(&claude, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let out = env.ok(&["uninstall", "claude-code"]);
    assert!(
        out.contains(&format!("removed snip's entries from {}", claude.display())),
        "{out}"
    );
    assert!(
        !out.contains(&format!("restored {}", claude.display())),
        "{out}"
    );
    let v = json(&claude);
    assert_eq!(v["numStartups"], 4);
    assert_eq!(v["tipsHistory"]["a"], 1);
    assert!(
        v.get("mcpServers").is_none_or(|m| m.get("snip").is_none()),
        "{v}"
    );
}

#[test]
fn wrap_bash_adds_the_pre_tool_use_hook_and_uninstall_goes_back_to_before_the_first_install() {
    let env = Env::new();
    write(&settings(&env), SETTINGS);
    env.ok(&["install", "claude-code"]);
    env.ok(&["install", "claude-code", "--wrap-bash"]);
    let v = json(&settings(&env));
    assert_eq!(snip_commands(&v, "PostToolUse").len(), 1);
    assert_eq!(snip_commands(&v, "PreToolUse").len(), 1);
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash");
    env.ok(&["uninstall", "claude-code"]);
    assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), SETTINGS);
}

#[test]
fn files_the_install_created_are_removed_with_their_backups() {
    let env = Env::new();
    let mcp = env.home.join(".claude.json");
    env.ok(&["install", "claude-code"]);
    // A second install on the file the first one created backs that file up.
    env.ok(&["install", "claude-code", "--wrap-bash"]);
    assert_eq!(backups(&settings(&env)).len(), 1);
    let out = env.ok(&["uninstall", "claude-code"]);
    for f in [settings(&env), mcp.clone()] {
        assert!(!f.exists(), "{}", f.display());
        assert!(
            out.contains(&format!(
                "removed {} (it did not exist before install)",
                f.display()
            )),
            "{out}"
        );
        assert!(backups(&f).is_empty(), "{:?}", backups(&f));
    }
    assert!(!out.contains("restored"), "{out}");
    // So is the directory the install created for the settings (HOME had none).
    let dir = settings(&env).parent().unwrap().to_path_buf();
    assert!(!dir.exists(), "{} left behind", dir.display());

    // A file that existed before the install keeps the backup of its original.
    write(&settings(&env), SETTINGS);
    env.ok(&["install", "claude-code"]);
    env.ok(&["install", "claude-code", "--wrap-bash"]);
    let out = env.ok(&["uninstall", "claude-code"]);
    assert!(
        out.contains(&format!("restored {}", settings(&env).display())),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), SETTINGS);
    let kept = backups(&settings(&env));
    assert!(
        kept.iter()
            .any(|b| std::fs::read_to_string(b).unwrap() == SETTINGS),
        "{kept:?}"
    );
}

#[test]
fn a_file_edited_after_install_loses_only_snips_entries() {
    let env = Env::new();
    write(&settings(&env), SETTINGS);
    env.ok(&["install", "claude-code", "--wrap-bash"]);
    // The user (or Claude Code) edits the file afterwards.
    let text = std::fs::read_to_string(settings(&env)).unwrap();
    let edited = text.replacen("\"model\": \"opus\"", "\"model\": \"sonnet\"", 1);
    std::fs::write(settings(&env), &edited).unwrap();

    env.ok(&["uninstall", "claude-code"]);
    let v = json(&settings(&env));
    let mut expected: Value = serde_json::from_str(SETTINGS).unwrap();
    expected["model"] = "sonnet".into();
    assert_eq!(v, expected);
    assert!(snip_commands(&v, "PostToolUse").is_empty());
}

#[test]
fn malformed_settings_are_refused_and_left_untouched() {
    let env = Env::new();
    for bad in [
        "{ \"model\": \"opus\", }\n",
        "{ // comment\n \"a\": 1 }\n",
        "[1, 2]\n",
    ] {
        write(&settings(&env), bad);
        let out = env.snip(&["install", "claude-code"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing to edit"), "{err}");
        assert!(err.contains("settings.json"), "{err}");
        assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), bad);
        assert!(backups(&settings(&env)).is_empty());
        assert!(!env.home.join(".claude.json").exists());
    }
}

#[test]
fn dry_run_prints_the_edit_and_writes_nothing() {
    let env = Env::new();
    write(&settings(&env), SETTINGS);
    let out = env.ok(&["install", "claude-code", "--wrap-bash", "--dry-run"]);
    assert!(
        out.contains(&format!("--- {}", settings(&env).display())),
        "{out}"
    );
    assert!(
        out.contains("+++ /dev/null") || out.contains(".claude.json"),
        "{out}"
    );
    assert!(out
        .lines()
        .any(|l| l.starts_with('+') && l.contains("hook claude-code")));
    assert!(out
        .lines()
        .any(|l| l.starts_with('+') && l.contains("\"PreToolUse\"")));
    assert_eq!(std::fs::read_to_string(settings(&env)).unwrap(), SETTINGS);
    assert!(backups(&settings(&env)).is_empty());
    assert!(!env.home.join(".claude.json").exists());
    assert!(!env.home.join(".local/state/snip").exists());
}

#[test]
fn project_and_local_scopes() {
    let env = Env::new();
    env.ok(&["install", "claude-code", "--scope", "project"]);
    let settings = env.project.join(".claude/settings.json");
    assert_eq!(snip_commands(&json(&settings), "PostToolUse").len(), 1);
    let mcp = json(&env.project.join(".mcp.json"));
    assert_eq!(
        mcp["mcpServers"]["snip"]["args"],
        serde_json::json!(["mcp"])
    );
    assert!(!env.home.join(".claude/settings.json").exists());

    // An existing ~/.claude.json (Claude Code's own state) keeps everything else.
    let state = "{\n  \"numStartups\": 7,\n  \"projects\": {}\n}\n";
    write(&env.home.join(".claude.json"), state);
    env.ok(&["install", "claude-code", "--scope", "local"]);
    let local = env.project.join(".claude/settings.local.json");
    assert_eq!(snip_commands(&json(&local), "PostToolUse").len(), 1);
    let claude = json(&env.home.join(".claude.json"));
    assert_eq!(claude["numStartups"], 7);
    let cwd = env.project.canonicalize().unwrap();
    let key = cwd.to_string_lossy();
    let found = claude["projects"]
        .as_object()
        .unwrap()
        .iter()
        .any(|(k, p)| {
            Path::new(k).canonicalize().ok().as_deref() == Some(&cwd)
                && p["mcpServers"]["snip"].is_object()
        });
    assert!(found, "no projects[{key}].mcpServers.snip in {claude}");

    env.ok(&["uninstall", "claude-code", "--scope", "local"]);
    assert_eq!(
        std::fs::read_to_string(env.home.join(".claude.json")).unwrap(),
        state
    );
    assert!(!local.exists());
    env.ok(&["uninstall", "claude-code", "--scope", "project"]);
    assert!(!settings.exists());
    assert!(!env.project.join(".mcp.json").exists());
}
