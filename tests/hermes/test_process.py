"""Background output: ``terminal(background=True)`` then the ``process`` tool's
``wait``, through ``model_tools.handle_function_call`` (``transform_tool_result``)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import Home

SCRIPT = r"""
import sys, time
for i in range(201):
    sys.stdout.write("\rdownloading: %3d%% [%-20s] %d/200 MB" % (i // 2, "=" * (i // 10), i))
    sys.stdout.flush()
    time.sleep(0.002)
sys.stdout.write("\ndownload complete: 200 MB\n")
sys.exit(7)
"""

WAIT = """
started = json.loads(model_tools.handle_function_call(
    "terminal", {"command": COMMAND, "background": True}, task_id="bg"))
result = model_tools.handle_function_call(
    "process", {"action": "wait", "session_id": started["session_id"], "timeout": 60},
    task_id="bg")
answer({"started": started, "raw": result, "result": json.loads(result)})
"""


def wait_for(home: Home, command: str) -> dict:
    return home.run(f"COMMAND = {command!r}\n" + WAIT)


def test_background_progress_is_compressed_exit_code_intact(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    script = tmp_path / "bg.py"
    script.write_text(SCRIPT)
    command = f"{sys.executable} {script}"
    plain = wait_for(homes["plain"], command)["result"]
    got = wait_for(homes["pip"], command)
    snipped = got["result"]

    assert plain["status"] == snipped["status"] == "exited"
    assert plain["exit_code"] == snipped["exit_code"] == 7
    # Every key Hermes returned is still there, with the same value except output.
    assert list(snipped) == list(plain)
    for key in plain:
        if key != "output":
            assert snipped[key] == plain[key], key
    assert plain["output"].count("\r") > 10
    out = snipped["output"]
    assert "\r" not in out
    assert "downloading: 100% [====================] 200/200 MB" in out
    assert "download complete: 200 MB" in out
    assert any(line.startswith("[snip:") for line in out.splitlines())
    assert len(out) < len(plain["output"])
    # Serialized without escaping non-ASCII (the marker's middle dots stay as they are).
    assert "\\u00b7" not in got["raw"]
