"""Tool results through ``model_tools.handle_function_call`` (``transform_tool_result``):
background output (``terminal(background=True)`` then the ``process`` tool's ``wait``)
and a result over the budget from another tool (``read_file``)."""

from __future__ import annotations

import json
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


READ = """
answer({"raw": model_tools.handle_function_call("read_file", {"path": PATH}, task_id="rf")})
"""


def test_large_result_of_another_tool_keeps_every_key(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    log = tmp_path / "service.log"
    log.write_text(
        "".join(
            f"2026-11-30 12:{i // 60 % 60:02d}:{i % 60:02d} INFO worker-{i % 7} "
            f"processed batch {i} in {i % 97} ms\n"
            for i in range(3000)
        )
    )
    plain_raw = homes["plain"].run(f"PATH = {str(log)!r}\n" + READ)["raw"]
    raw = homes["pip"].run(f"PATH = {str(log)!r}\n" + READ)["raw"]
    plain, got = json.loads(plain_raw), json.loads(raw)
    assert len(plain_raw.encode()) > 24_576  # over snip's default budget
    assert len(raw.encode()) < len(plain_raw.encode())
    assert list(got) == list(plain)
    for key in plain:
        if key != "content":
            assert got[key] == plain[key], key
    content, original = got["content"], plain["content"]
    assert any(line.startswith("[snip:") for line in content.splitlines())
    first, last = original.splitlines()[0], original.splitlines()[-1]
    assert content.startswith(first) and content.rstrip().endswith(last)
