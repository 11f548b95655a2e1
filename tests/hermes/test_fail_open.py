"""With the native module missing or raising, Hermes's output is unchanged."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import Home
from test_terminal import PROGRESS
from test_tool_results import SCRIPT as BACKGROUND

SCENARIO = """
progress = json.loads(terminal_tool(command=PROGRESS_CMD, timeout=120))
started = json.loads(model_tools.handle_function_call(
    "terminal", {"command": BG_CMD, "background": True}, task_id="fo"))
waited = json.loads(model_tools.handle_function_call(
    "process", {"action": "wait", "session_id": started["session_id"], "timeout": 60},
    task_id="fo"))
waited.pop("session_id", None)
from tools.registry import registry
defs = registry.get_definitions({"snip_restore"}, quiet=True)
answer({"progress": progress, "waited": waited,
        "restore_offered": bool(defs), "plugin": loaded_snip()})
"""

# Replace the native core with one that raises, after the plugin loaded.
RAISING = """
import snip._native as _n
class PanicException(BaseException):
    pass
def _boom(*a, **k):
    raise {exc}("native core failure injected by the test")
for _name in ("compress", "compress_parts", "compress_json_fields", "compress_messages",
              "restore", "restore_call", "config"):
    setattr(_n, _name, _boom)
"""


def scenario(home: Home, scripts: Path, before: str = "", after: str = "") -> dict:
    progress = scripts / "progress.py"
    bg = scripts / "bg.py"
    head = (
        f"PROGRESS_CMD = {f'{sys.executable} {progress}'!r}\n"
        f"BG_CMD = {f'{sys.executable} {bg}'!r}\n"
    )
    return home.run(head + after + SCENARIO, before=before)


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The commands' scripts, at one path for every scenario (results name them)."""
    path = tmp_path_factory.mktemp("scripts")
    (path / "progress.py").write_text(PROGRESS)
    (path / "bg.py").write_text(BACKGROUND)
    return path


@pytest.fixture(scope="module")
def baseline(homes: dict[str, Home], scripts: Path) -> dict:
    return scenario(homes["plain"], scripts)


def test_native_module_missing(homes: dict[str, Home], scripts: Path, baseline: dict) -> None:
    got = scenario(homes["pip"], scripts, before="import sys\nsys.modules['snip._native'] = None\n")
    assert got["plugin"]["enabled"], got["plugin"]  # loaded, but with nothing to run
    assert got["progress"] == baseline["progress"]
    assert got["waited"] == baseline["waited"]
    assert got["restore_offered"] is False


@pytest.mark.parametrize("exc", ["RuntimeError", "PanicException", "MemoryError"])
def test_native_module_raising(
    homes: dict[str, Home], scripts: Path, baseline: dict, exc: str
) -> None:
    got = scenario(homes["pip"], scripts, after=RAISING.format(exc=exc))
    assert got["progress"] == baseline["progress"]
    assert got["waited"] == baseline["waited"]


def test_baseline_differs_from_working_plugin(
    homes: dict[str, Home], scripts: Path, baseline: dict
) -> None:
    """The scenarios above can fail: with a working core the output does change."""
    got = scenario(homes["pip"], scripts)
    assert got["progress"]["output"] != baseline["progress"]["output"]
    assert got["waited"]["output"] != baseline["waited"]["output"]
    assert got["restore_offered"] is True
    assert json.dumps(got["waited"]["exit_code"]) == json.dumps(baseline["waited"]["exit_code"])
