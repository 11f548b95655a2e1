"""Shared set-up of the live sessions: real hosts, the real `snip` binary, a scripted
model on 127.0.0.1 (tests/scripted_model/server.py), a temporary HOME and store.

scripts/test-claude-code.sh and scripts/test-opencode.sh install the hosts
(scripts/install-host.sh), build snip and set CLAUDE, OPENCODE and SNIP_BIN.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "scripted_model"))

from server import ScriptedModel, restore_calls, tool_results  # noqa: E402

__all__ = ["ScriptedModel", "restore_calls", "tool_results", "Env", "REPO"]


def _env_path(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set (run the scripts/test-*.sh that sets it)")
    return value


@pytest.fixture(scope="session")
def snip_bin() -> str:
    return _env_path("SNIP_BIN")


@dataclass
class Env:
    """A temporary HOME, XDG directories, store and project for one session."""

    root: Path
    snip: str
    vars: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def store(self) -> Path:
        return self.root / "store"

    def snip_run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.snip, *args], cwd=cwd or self.project, env=self.vars,
            capture_output=True, text=True, timeout=60,
        )


@pytest.fixture
def env(tmp_path: Path, snip_bin: str) -> Env:
    e = Env(tmp_path, snip_bin)
    for d in (e.home, e.project, e.store):
        d.mkdir()
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    e.vars = {
        **keep,
        "HOME": str(e.home),
        "XDG_CONFIG_HOME": str(e.home / ".config"),
        "XDG_DATA_HOME": str(e.home / ".local/share"),
        "XDG_CACHE_HOME": str(e.home / ".cache"),
        "XDG_STATE_HOME": str(e.home / ".local/state"),
        "SNIP_STORE_DIR": str(e.store),
        "NO_COLOR": "1",
    }
    return e


def by_id(model: ScriptedModel) -> dict[str, str]:
    """Every tool result the model received, by tool-call id (the last request wins)."""
    out: dict[str, str] = {}
    for r in model.turns():
        out.update(tool_results(r["body"]))
    return out


