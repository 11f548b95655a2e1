//! `snip install|uninstall opencode` on real files in a temporary HOME and project.

use std::path::Path;

mod common;

use common::Env;

/// A JSONC config with comments, a trailing comma and tabs.
const CONFIG: &str = "{\n\t// the model everyone here uses\n\t\"model\": \"anthropic/claude-sonnet-4-6\",\n\t/* servers */\n\t\"mcp\": {\n\t\t\"github\": { \"type\": \"remote\", \"url\": \"https://example.invalid/mcp\" }, // remote\n\t},\n\t\"theme\": \"system\", // trailing comma next\n}\n";

fn backups(path: &Path) -> usize {
    common::backups(path).len()
}

#[test]
fn jsonc_comments_are_kept_install_is_idempotent_uninstall_is_byte_for_byte() {
    let env = Env::new();
    let config = env.project.join("opencode.jsonc");
    std::fs::write(&config, CONFIG).unwrap();

    env.ok(&["install", "opencode", "--scope", "project"]);
    let after = std::fs::read_to_string(&config).unwrap();
    for line in CONFIG
        .lines()
        .filter(|l| l.contains("//") || l.contains("/*"))
    {
        assert!(
            after.contains(line.trim()),
            "lost comment line {line:?} in\n{after}"
        );
    }
    assert!(after.contains("\"snip\""), "{after}");
    assert!(after.contains("\"github\""));
    // Still JSONC that the parser accepts, with snip's server in `mcp`.
    let plugin = env.project.join(".opencode/plugin/snip.ts");
    let source = std::fs::read_to_string(&plugin).unwrap();
    assert!(source.contains("tool.execute.after"));
    assert!(source.contains("\"hook\", \"opencode\""));
    assert!(!source.contains("__SNIP_BIN__"));
    assert_eq!(backups(&config), 1);

    let out = env.ok(&["install", "opencode", "--scope", "project"]);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), after);
    assert_eq!(backups(&config), 1);

    env.ok(&["uninstall", "opencode", "--scope", "project"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);
    assert!(!plugin.exists());
}

#[test]
fn a_new_user_config_is_created_and_removed() {
    let env = Env::new();
    env.ok(&["install", "opencode"]);
    let config = env.home.join(".config/opencode/opencode.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(v["mcp"]["snip"]["type"], "local");
    assert_eq!(v["mcp"]["snip"]["command"][1], "mcp");
    assert_eq!(v["mcp"]["snip"]["enabled"], true);
    assert!(env.home.join(".config/opencode/plugin/snip.ts").exists());
    env.ok(&["uninstall", "opencode"]);
    assert!(!config.exists());
    assert!(!env.home.join(".config/opencode/plugin/snip.ts").exists());
}

#[test]
fn an_edited_config_loses_only_the_snip_server() {
    let env = Env::new();
    let config = env.project.join("opencode.jsonc");
    std::fs::write(&config, CONFIG).unwrap();
    env.ok(&["install", "opencode", "--scope", "project"]);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("\"system\"", "\"dark\"")).unwrap();
    env.ok(&["uninstall", "opencode", "--scope", "project"]);
    let now = std::fs::read_to_string(&config).unwrap();
    assert_eq!(now, CONFIG.replace("\"system\"", "\"dark\""));
}

#[test]
fn malformed_config_and_foreign_plugin_are_refused_untouched() {
    let env = Env::new();
    let config = env.project.join("opencode.json");
    let bad = "{ \"mcp\": { \"x\": } }\n";
    std::fs::write(&config, bad).unwrap();
    let out = env.snip(&["install", "opencode", "--scope", "project"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to edit"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), bad);
    assert_eq!(backups(&config), 0);
    assert!(!env.project.join(".opencode").exists());

    std::fs::write(&config, "{}\n").unwrap();
    let plugin = env.project.join(".opencode/plugin/snip.ts");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, "export const Mine = async () => ({})\n").unwrap();
    let out = env.snip(&["install", "opencode", "--scope", "project"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not snip's plugin"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{}\n");
    assert_eq!(
        std::fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({})\n"
    );
}

#[test]
fn dry_run_prints_the_exact_edit() {
    let env = Env::new();
    let config = env.project.join("opencode.jsonc");
    std::fs::write(&config, CONFIG).unwrap();
    let out = env.ok(&["install", "opencode", "--scope", "project", "--dry-run"]);
    assert!(out.contains(&format!("+++ {}", config.display())), "{out}");
    assert!(out
        .lines()
        .any(|l| l.starts_with('+') && l.contains("\"snip\"")));
    assert!(out.contains("+++ ") && out.contains("snip.ts"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);
    assert!(!env.project.join(".opencode").exists());
}

#[test]
fn the_local_scope_is_refused() {
    let env = Env::new();
    let out = env.snip(&["install", "opencode", "--scope", "local"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `local` scope"));
}
