"""The plugin installs both ways Hermes supports and registers what it promises."""

from __future__ import annotations

import json

from conftest import Home, hermes_cli

REGISTERED = """
p = loaded_snip()
from tools.registry import registry
entry = registry.get_entry("snip_restore")
mgr = get_plugin_manager()
answer({
    "plugin": p,
    "tool_toolset": entry.toolset if entry else None,
    "hooks": sorted(h for h in ("transform_terminal_output", "transform_tool_result")
                    if mgr.has_hook(h)),
    "middleware": mgr.has_middleware("llm_request"),
    "module": getattr(sys.modules.get("snip"), "__file__", None),
})
"""


def test_pip_entry_point_is_listed_and_enabled_by_hermes_cli(homes: dict[str, Home]) -> None:
    listed = json.loads(hermes_cli(homes["pip"].path, "plugins", "list", "--json").stdout)
    entries = listed if isinstance(listed, list) else listed.get("plugins", [])
    snip = [p for p in entries if p.get("name") == "snip"]
    assert snip and snip[0]["status"] == "enabled", listed
    assert snip[0]["source"] == "entrypoint"
    got = homes["pip"].run(REGISTERED)
    assert got["plugin"]["enabled"] and got["plugin"]["source"] == "entrypoint", got
    assert got["plugin"]["error"] is None
    assert got["tool_toolset"] == "snip"
    assert got["hooks"] == ["transform_terminal_output", "transform_tool_result"]
    assert got["middleware"] is True


def test_plugin_folder_installed_by_hermes_cli_loads(homes: dict[str, Home]) -> None:
    folder = homes["folder"].path / "plugins" / "snip"
    assert (folder / "plugin.yaml").is_file() and (folder / "__init__.py").is_file()
    # The pip entry point of the same name would win over the folder (Hermes loads
    # the later source); hide it so the folder copy is what loads.
    got = homes["folder"].run(
        REGISTERED,
        before="""
        import hermes_cli.plugins as _hp
        _hp.PluginManager._scan_entry_points = lambda self: []
        """,
    )
    assert got["plugin"]["enabled"] and got["plugin"]["source"] == "user", got
    assert got["plugin"]["error"] is None
    assert got["tool_toolset"] == "snip"
    assert got["hooks"] == ["transform_terminal_output", "transform_tool_result"]
    assert got["middleware"] is True


def test_plain_home_has_no_snip(homes: dict[str, Home]) -> None:
    got = homes["plain"].run(REGISTERED)
    assert got["plugin"] is None or not got["plugin"]["enabled"]
    assert got["tool_toolset"] is None
    assert got["hooks"] == [] and got["middleware"] is False


def test_disable_then_enable_with_hermes_cli(homes: dict[str, Home], tmp_path) -> None:
    home = Home(tmp_path / "toggle", homes["pip"].env)
    home.path.mkdir()
    hermes_cli(home.path, "plugins", "enable", "snip", "--no-allow-tool-override")
    assert home.run(REGISTERED)["plugin"]["enabled"] is True
    hermes_cli(home.path, "plugins", "disable", "snip")
    off = home.run(REGISTERED)
    assert off["hooks"] == [] and off["tool_toolset"] is None
