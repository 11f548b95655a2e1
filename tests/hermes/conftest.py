"""Fixtures for the tests against real Hermes Agent (hermes-agent from PyPI).

Each scenario runs in a fresh Python process, the way Hermes itself starts: the
process gets its own ``HERMES_HOME`` (one with the plugin installed and enabled by
Hermes's own CLI, one without), imports ``hermes_cli.plugins`` and calls
``discover_plugins()`` before touching any tool, then runs the test's code and prints
one JSON document. ``scripts/test-hermes.sh`` builds the venv these tests run in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
HERMES = Path(sys.executable).parent / "hermes"

#: Printed before the JSON answer of a scenario, so logs on stdout cannot confuse it.
ANSWER_MARK = "@@SNIP-ANSWER@@"

# Runs before every scenario's code: the plugin system is loaded the way Hermes
# loads it (discover_plugins() first; importing the terminal tool alone loads none).
PRELUDE = """
import json, os, sys
from hermes_cli.plugins import discover_plugins, get_plugin_manager
discover_plugins()
from tools.terminal_tool import terminal_tool
import model_tools

def answer(obj):
    sys.stdout.write("\\n" + MARK + json.dumps(obj, ensure_ascii=False) + "\\n")
    sys.stdout.flush()

def loaded_snip():
    for p in get_plugin_manager().list_plugins():
        if p["key"] == "snip":
            return p
    return None
"""


@dataclass(frozen=True)
class Home:
    """One ``HERMES_HOME`` and the extra environment its scenarios run with."""

    path: Path
    env: dict[str, str]

    def run(
        self,
        code: str,
        *,
        before: str = "",
        timeout: float = 240,
        home_from_env: bool = True,
        **env: str,
    ) -> Any:
        """Runs ``code`` (which must call ``answer(obj)``) after the prelude in a fresh
        process with this home; ``before`` runs before the prelude (before any
        Hermes or snip import). With ``home_from_env=False`` the process gets no
        ``HERMES_HOME`` (Hermes then uses ``~/.hermes``: pass ``HOME``). Returns the
        answer."""
        program = (
            f"MARK = {ANSWER_MARK!r}\n" + textwrap.dedent(before) + PRELUDE + textwrap.dedent(code)
        )
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
        full_env.update(self.env)
        full_env.update(env)
        full_env.pop("HERMES_HOME", None)
        if home_from_env:
            full_env["HERMES_HOME"] = str(self.path)
        proc = subprocess.run(
            [sys.executable, "-c", program],
            env=full_env,
            cwd=str(self.path),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if ANSWER_MARK not in proc.stdout:
            raise AssertionError(
                f"scenario failed (exit {proc.returncode})\n"
                f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-8000:]}"
            )
        return json.loads(proc.stdout.rsplit(ANSWER_MARK, 1)[1].strip())


def hermes_cli(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs Hermes's own CLI (``hermes ...``) with ``HERMES_HOME=home`` (or, when
    ``env`` is given, with exactly that environment on top of this one's, minus
    ``HERMES_HOME``)."""
    if env is None:
        full_env = {**os.environ, "HERMES_HOME": str(home)}
    else:
        full_env = {k: v for k, v in os.environ.items() if k != "HERMES_HOME"}
        full_env.update(env)
    proc = subprocess.run(
        [str(HERMES), *args],
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"hermes {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
    return proc


def _base_env(home: Path) -> dict[str, str]:
    # Scenarios never inherit the developer's SNIP_* settings (see Home.run).
    return {"PYTHONDONTWRITEBYTECODE": "1", "HERMES_PLUGINS_DEBUG": ""}


@pytest.fixture(scope="session")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Home]:
    """Fresh Hermes homes:

    - ``plain``: Hermes without the plugin;
    - ``pip``: the pip-installed plugin (entry point) enabled with
      ``hermes plugins enable snip``;
    - ``folder``: the plugin folder installed and enabled with
      ``hermes plugins install <git url>#python/hermes-plugin --enable`` (the
      command docs/hermes.md gives; Hermes copies it to ``plugins/snip/``);
    - ``wide``: like ``pip``, with Hermes's ``tool_output.max_bytes`` raised to
      1,000,000 (set with ``hermes config set``) so snip sees whole outputs.
    """
    root = tmp_path_factory.mktemp("hermes")
    out: dict[str, Home] = {}
    for name in ("plain", "pip", "folder", "wide"):
        path = root / name
        path.mkdir()
        out[name] = Home(path, _base_env(path))

    hermes_cli(out["pip"].path, "plugins", "enable", "snip", "--no-allow-tool-override")
    hermes_cli(out["wide"].path, "plugins", "enable", "snip", "--no-allow-tool-override")
    hermes_cli(out["wide"].path, "config", "set", "tool_output.max_bytes", "1000000")

    # The plugin folder, served from a git repository as `hermes plugins install`
    # expects (it clones), at its path in snip's repository.
    repo = root / "plugin-repo"
    shutil.copytree(REPO / "python" / "hermes-plugin", repo / "python" / "hermes-plugin")
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "plugin"], check=True)
    hermes_cli(
        out["folder"].path, "plugins", "install", f"file://{repo}#python/hermes-plugin", "--enable"
    )
    # Where docs/hermes.md says Hermes puts it.
    installed = out["folder"].path / "plugins" / "snip"
    assert (installed / "plugin.yaml").is_file() and (installed / "__init__.py").is_file()
    return out
