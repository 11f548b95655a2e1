//! `snip install|uninstall opencode`: registers the MCP server in `opencode.json` or
//! `opencode.jsonc` (comments and formatting kept) and writes the OpenCode plugin
//! (`opencode/snip.ts` in this crate, a `tool.execute.after` hook piping tool output through
//! `snip hook opencode`).
//!
//! | scope | config | plugin |
//! |---|---|---|
//! | `project` | `./opencode.jsonc`, else `./opencode.json` | `./.opencode/plugin/snip.ts` |
//! | `user` | `$XDG_CONFIG_HOME/opencode/opencode.json[c]` (default `~/.config`) | `…/opencode/plugin/snip.ts` |

use crate::claude_install::Scope;
use crate::config_file::{self, home, input, Change, Dialect, Doc, Undo};
use crate::engine;
use crate::error::{bail, Context as _, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The plugin source; `__SNIP_BIN__` becomes the binary's path (a JS string literal).
pub const PLUGIN_TEMPLATE: &str = include_str!("../opencode/snip.ts");
/// The line that marks a plugin file as snip's.
pub const PLUGIN_MARKER: &str = "// snip-plugin: v";

/// How OpenCode 1.18.33's bash tool starts an output it cut (it keeps the end and
/// saves the whole output to a file): this, the file's path, then a blank line.
pub const SAVED_NOTICE: &str = "...output truncated...\n\nFull output saved to: ";

/// The whole output of a bash call OpenCode cut before the plugin ran: when `shown`
/// (the text OpenCode passes the plugin) starts with [`SAVED_NOTICE`] naming `path`,
/// the file at `path` as read by the Claude Code hook's persisted-output reader (a
/// regular file of at most [`crate::claude_code::MAX_PERSISTED_BYTES`] bytes of
/// UTF-8), and what OpenCode appended after the output (its `<shell_metadata>`
/// block: a timeout, an abort), to be kept after the compressed whole. `None` when
/// the notice is absent, names another file, or the file cannot be read: the shown
/// text is then compressed as it is.
pub fn saved_output(shown: &str, path: &str) -> Option<(String, String)> {
    let rest = shown.strip_prefix(SAVED_NOTICE)?;
    let rest = rest.strip_prefix(path)?.strip_prefix("\n\n")?;
    let full = crate::claude_code::read_persisted(std::path::Path::new(path))?;
    const META: &str = "\n\n<shell_metadata>\n";
    let suffix = match rest.rfind(META) {
        Some(at) if rest.ends_with("</shell_metadata>") => rest[at..].to_string(),
        _ => String::new(),
    };
    Some((full, suffix))
}

/// The files one scope edits.
pub struct Paths {
    /// `opencode.jsonc` when it exists, else `opencode.json`.
    pub config: PathBuf,
    /// The plugin file.
    pub plugin: PathBuf,
}

impl Paths {
    /// The files of `scope` (`local` is not an OpenCode scope).
    pub fn for_scope(scope: Scope) -> Result<Paths> {
        let (dir, plugin_dir) = match scope {
            Scope::Project => {
                let cwd = std::env::current_dir().context("reading the current directory")?;
                (cwd.clone(), cwd.join(".opencode/plugin"))
            }
            Scope::User => {
                let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
                    Some(d) => PathBuf::from(d),
                    None => home()?.join(".config"),
                };
                let dir = base.join("opencode");
                (dir.clone(), dir.join("plugin"))
            }
            Scope::Local => bail!("OpenCode has no `local` scope; use --scope project or user"),
        };
        let jsonc = dir.join("opencode.jsonc");
        let config = if jsonc.exists() {
            jsonc
        } else {
            dir.join("opencode.json")
        };
        Ok(Paths {
            config,
            plugin: plugin_dir.join("snip.ts"),
        })
    }
}

/// `snip_restore` as OpenCode shows it to the model (`<server>_<tool>`, the server
/// installed as `snip`): the name markers quote in this host.
pub const RESTORE_TOOL: &str = "snip_snip_restore";

/// What `snip hook opencode` prints for one tool output `input` of tool `tool` (the
/// ledger source is `opencode:<tool>`): the compressed output, or `None` when nothing
/// changed or on invalid UTF-8, an error or a panic (the caller echoes the input).
/// With `saved` (the file where OpenCode saved the whole output it cut, see
/// [`saved_output`]), the whole output is compressed instead when that is no longer
/// than what OpenCode showed. Markers quote [`RESTORE_TOOL`].
pub fn filter(input: &[u8], tool: &str, saved: Option<&str>) -> Option<Vec<u8>> {
    let source = format!("opencode:{tool}");
    engine::set_restore_tool(RESTORE_TOOL);
    std::panic::catch_unwind(|| {
        let whole = saved.and_then(|path| {
            let shown = std::str::from_utf8(input).ok()?;
            saved_output(shown, path)
        });
        // The whole output compressed, then what OpenCode appended; OpenCode's notice
        // goes (nothing is cut any more). Only when that is no longer than what
        // OpenCode showed (a diff is never shortened, a store failure allows lossless
        // rules only): else the shown text, compressed as it is.
        let from_whole = whole.and_then(|(full, suffix)| {
            let o = engine::compress(full.as_bytes(), &source);
            let mut out = o.output;
            out.extend_from_slice(suffix.as_bytes());
            (o.changed && out.len() <= input.len()).then_some(out)
        });
        from_whole.or_else(|| {
            Some(engine::compress(input, &source))
                .filter(|o| o.changed)
                .map(|o| o.output)
        })
    })
    .ok()
    .flatten()
}

/// The plugin file's bytes for the binary at `exe`.
pub fn plugin_source(exe: &Path) -> Result<Vec<u8>> {
    let literal = serde_json::to_string(&exe.to_string_lossy())?;
    Ok(PLUGIN_TEMPLATE
        .replace("__SNIP_BIN__", &literal)
        .into_bytes())
}

/// Plans the install (empty when already installed).
pub fn plan_install(scope: Scope, exe: &Path) -> Result<Vec<Change>> {
    let paths = Paths::for_scope(scope)?;
    let mut changes = Vec::new();

    let mut config = Doc::load(&paths.config, Dialect::Jsonc)?;
    if config
        .value()
        .get("mcp")
        .and_then(|m| m.get("snip"))
        .is_none()
    {
        let mcp = config.object_at(&["mcp"])?;
        mcp.append(
            "snip",
            input(&json!({
                "type": "local",
                "command": [exe.to_string_lossy(), "mcp"],
                "enabled": true,
            })),
        );
    }
    changes.extend(config.into_change());

    let wanted = plugin_source(exe)?;
    let existing = match std::fs::read(&paths.plugin) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", paths.plugin.display())),
    };
    match &existing {
        Some(b) if *b == wanted => {}
        Some(b) if !String::from_utf8_lossy(b).contains(PLUGIN_MARKER) => bail!(
            "refusing to overwrite {}: it is not snip's plugin. The file was left \
             untouched; move it away and run the command again.",
            paths.plugin.display()
        ),
        _ => changes.push(Change::write_file(paths.plugin, existing, wanted)),
    }
    Ok(changes)
}

/// Plans the uninstall: exact restores where files are as installed, otherwise the
/// removal of `mcp.snip` only (a plugin file edited since install is kept).
pub fn plan_uninstall(scope: Scope) -> Result<Vec<Change>> {
    let paths = Paths::for_scope(scope)?;
    let mut changes = Vec::new();
    match config_file::plan_uninstall(&paths.config, Some(Dialect::Jsonc))? {
        Undo::Exact(c) => changes.push(c),
        Undo::Structural(doc, created) => {
            if let Some(prop) = doc
                .root_object()
                .object_value("mcp")
                .and_then(|m| m.get("snip"))
            {
                prop.remove();
            }
            config_file::remove_empty_created(&doc, &created);
            changes.extend(doc.into_change());
        }
        Undo::Nothing => {}
    }
    match config_file::plan_uninstall(&paths.plugin, None)? {
        Undo::Exact(c) => changes.push(c),
        Undo::Structural(..) | Undo::Nothing => {
            if paths.plugin.exists() {
                eprintln!(
                    "snip: {} changed since it was installed; it was kept",
                    paths.plugin.display()
                );
            }
        }
    }
    Ok(changes)
}
