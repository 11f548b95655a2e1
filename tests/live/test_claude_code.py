"""Live sessions in Claude Code (the real `claude` binary, pinned by
scripts/install-host.sh) driven by the scripted model on 127.0.0.1.

Each session runs `claude -p … --output-format json` under a temporary HOME with a
temporary store; the model's script calls tools, and the assertions read what Claude
Code sent back to the model (the recorded requests). The same session without snip
shows the raw outputs reaching the model, so these tests fail when the hook is not
installed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Env, ScriptedModel, by_id, restore_calls, tool_results

RESTORE = "mcp__snip__snip_restore"
#: A budget below the size at which Claude Code 2.1.332 persists a Grep result to a
#: file and shows the model a 2 KB preview instead (~20 KB, under snip's default
#: 24,576), and small enough that a restored page (~8 KB) is over it.
BUDGET = 8192
IDS = {"progress": "toolu_0_0", "failing": "toolu_1_0", "json": "toolu_2_0", "read": "toolu_3_0",
       "grep": "toolu_4_0", "log": "toolu_5_0", "mcp_restore": "toolu_7_0", "bash_restore": "toolu_8_0"}
ERROR_LINE = "2026-11-30T12:00:00Z ERROR db: connection refused (code=57P01) while saving order 4242"
PANIC_LINE = "thread 'tests::t_1717' panicked at src/lib.rs:42:5: assertion `left == right` failed"


@pytest.fixture(scope="module")
def claude() -> str:
    value = os.environ.get("CLAUDE")
    if not value:
        pytest.skip("CLAUDE is not set (run scripts/test-claude-code.sh)")
    return value


def make_files(project: Path) -> dict[str, Path]:
    """The session's inputs, written into the project (deterministic)."""
    log = project / "app.log"
    lines = []
    for i in range(3000):
        level = "WARN" if i % 4 == 3 else "INFO"
        lines.append(f"2026-11-30T11:{i // 60 % 60:02d}:{i % 60:02d}Z {level} worker-{i % 8}: "
                     f"processed batch {i} in {i % 97} ms (queue depth {i % 13})")
    lines.insert(1500, ERROR_LINE)
    log.write_text("\n".join(lines) + "\n")
    fail = project / "run_tests.py"
    fail.write_text(
        "import sys\n"
        "for i in range(3000):\n"
        "    print(f'test tests::t_{i:04d} ... ' + ('FAILED' if i == 1717 else 'ok'))\n"
        f"print({PANIC_LINE!r})\n"
        "print('test result: FAILED. 2999 passed; 1 failed; 0 ignored')\n"
        "sys.exit(101)\n"
    )
    data = project / "data.json"
    data.write_text(json.dumps({"items": [
        {"id": i, "name": f"item-{i}", "tags": ["a", "b", "c"], "price": i * 3 % 1000,
         "description": f"the item number {i}, kept in stock at warehouse {i % 7}"}
        for i in range(2000)]}, indent=2))
    src = project / "module.py"
    src.write_text("".join(f"def function_{i}(x, y, z):\n"
                           f"    return (x * {i} + y * {i % 17}) - z  # step {i} of the generated module\n\n"
                           for i in range(650)))
    return {"log": log, "fail": fail, "data": data, "src": src}


def script(files: dict[str, Path], snip_bin: str) -> list[Any]:
    def bash(cmd: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "Bash", "arguments": {"command": cmd, "description": "run"}}]}

    def restore_by_bash(body: dict[str, Any]) -> dict[str, Any]:
        # The model copies the marker's restore call into `snip restore … --raw`.
        for text in reversed(list(tool_results(body).values())):
            calls = [c for c in restore_calls(text) if c[1].get("mode") in ("lines", "bytes")]
            if calls:
                a = calls[0][1]
                call = f'snip_restore(id="{a["id"]}", mode="{a["mode"]}", start={a["start"]}, end={a["end"]})'
                return bash(f"{snip_bin} restore '{call}' --raw")
        return {"text": "no marker found"}

    return [
        bash("for i in $(seq 1 300); do printf 'step %d/300 building\\r' $i; done; echo; echo built"),
        bash(f"python3 {files['fail']}"),
        bash(f"cat {files['data']}"),
        {"tool_calls": [{"name": "Read", "arguments": {"file_path": str(files["src"])}}]},
        {"tool_calls": [{"name": "Grep", "arguments": {
            "pattern": "WARN", "path": str(files["log"]), "output_mode": "content"}}]},
        bash(f"cat {files['log']}"),
        {"tool_calls": [{"name": "ToolSearch", "arguments": {"query": f"select:{RESTORE}", "max_results": 5}}]},
        {"restore_from_marker": {"tool": RESTORE}},
        restore_by_bash,
        {"text": "finished"},
    ]


def run_session(env: Env, claude: str, *, install: list[str] | None, allowed: str | None = None,
                turns: list[Any] | None = None) -> tuple[ScriptedModel, dict[str, Any], dict[str, Path]]:
    files = make_files(env.project)
    if install is not None:
        r = env.snip_run("install", "claude-code", *install)
        assert r.returncode == 0, r.stderr
    with ScriptedModel(turns or script(files, env.snip), record=str(env.root / "requests.jsonl")) as model:
        run = subprocess.run(
            [claude, "-p", "work through the script", "--allowedTools", allowed or f"Bash,Read,Grep,{RESTORE}",
             "--output-format", "json"],
            cwd=env.project, capture_output=True, text=True, timeout=240,
            env={**env.vars, "ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_API_KEY": "sk-scripted",
                 "SNIP_MAX_BYTES": str(BUDGET), "DISABLE_AUTOUPDATER": "1"},
        )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not model.errors, model.errors
    return model, json.loads(run.stdout), files


def report(label: str, results: dict[str, str]) -> None:
    """The size of each tool result as the model received it, in characters."""
    names = {v: k for k, v in IDS.items()}
    print(f"{label}: " + ", ".join(f"{names.get(k, k)} {len(v)}" for k, v in results.items()))


def lines_of(path: Path, start: int, end: int) -> str:
    """Lines start..=end (1-based) of a file, line endings kept."""
    return "".join(path.read_text().splitlines(keepends=True)[start - 1:end])


def test_session_with_snip(env: Env, claude: str) -> None:
    model, out, files = run_session(env, claude, install=[])
    r = by_id(model)
    report("claude-code with snip", r)
    assert out["is_error"] is False and out["result"] == "finished"
    log_text = files["log"].read_text()

    # (a) a progress loop: the final frame, one marker naming the tool as the model sees it
    assert "step 300/300 building" in r[IDS["progress"]] and "step 299/300" not in r[IDS["progress"]]
    assert f"restore: {RESTORE}(id=" in r[IDS["progress"]]
    # (b) a failing run: Claude Code reports the exit status (PostToolUse does not run
    # for a failing command; see test_wrap_bash for the wrapped form)
    assert r[IDS["failing"]].startswith("Exit code 101")
    # (c) 300 KB of log, one error line in the middle: kept, within the budget
    assert len(log_text) > 240_000
    assert ERROR_LINE in r[IDS["log"]]
    assert len(r[IDS["log"]].encode()) < BUDGET + 1024
    assert "<persisted-output>" not in r[IDS["log"]]
    # (d) a large JSON document stays valid JSON, its markers are string values
    doc = json.loads(r[IDS["json"]])
    assert any(isinstance(x, str) and f"{RESTORE}(id=" in x for x in doc["items"])
    assert len(r[IDS["json"]]) < len(files["data"].read_text()) // 50
    # (e) a Read and a Grep with many matches: compressed in their own shapes
    assert "1\tdef function_0(x, y, z):" in r[IDS["read"]] and f"{RESTORE}(id=" in r[IDS["read"]]
    assert len(r[IDS["read"]].encode()) < BUDGET + 1024
    assert f"{RESTORE}(id=" in r[IDS["grep"]] and "<persisted-output>" not in r[IDS["grep"]]
    assert "WARN" in r[IDS["grep"]]
    for key in ("progress", "json", "read", "grep", "log"):
        assert "restore: snip_restore(" not in r[IDS[key]].replace("\\", "")

    # The restore through the host's own path: ToolSearch loaded the deferred tool...
    loaded = model.turns()[7]["body"]
    assert RESTORE in [t.get("name") for t in loaded["tools"]]
    # ...and its result holds exactly the original lines the marker named.
    calls = restore_calls(r[IDS["log"]])
    assert calls and calls[0][0] == RESTORE
    answer = json.loads(r[IDS["mcp_restore"]])
    assert answer["status"] == "ok" and answer["id"] == calls[0][1]["id"]
    assert answer["content"] == lines_of(files["log"], answer["start"], answer["end"])
    assert answer["content"]

    # `snip restore … --raw` through Bash: the restored lines, not compressed again.
    raw = r[IDS["bash_restore"]]
    assert "[snip: " not in raw
    assert lines_of(files["log"], calls[0][1]["start"], calls[0][1]["start"] + 20) in raw
    assert len(raw.encode()) > BUDGET  # over the budget, yet passed through


def test_session_without_snip_reaches_the_model_raw(env: Env, claude: str) -> None:
    """The same session with no hook: the raw outputs reach the model (so the
    assertions above fail when snip is not installed)."""
    model, out, files = run_session(env, claude, install=None)
    r = by_id(model)
    report("claude-code without snip", r)
    assert all("[snip: " not in v for v in r.values())
    assert "step 1/300 building" in r[IDS["progress"]]
    assert "<persisted-output>" in r[IDS["log"]] and ERROR_LINE not in r[IDS["log"]]
    assert "<persisted-output>" in r[IDS["json"]]
    assert "function_300" in r[IDS["read"]]


def test_wrap_bash(env: Env, claude: str) -> None:
    """--wrap-bash (PreToolUse): `snip run` sees the whole output of a failing command,
    the model gets the exit status and the error lines."""
    files = make_files(env.project)
    turns = [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": f"python3 {files['fail']}", "description": "t"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo hello; exit 3", "description": "t"}}]},
        {"text": "finished"},
    ]
    model, out, _ = run_session(env, claude, install=["--wrap-bash"], turns=turns)
    r = by_id(model)
    report("claude-code --wrap-bash", r)
    failing = r["toolu_0_0"]
    assert failing.startswith("Exit code 101")
    assert PANIC_LINE in failing and "test tests::t_1717 ... FAILED" in failing
    # `snip run` is given the host's name for the restore tool by the PreToolUse hook.
    assert "[snip: " in failing and "restore: mcp__snip__snip_restore(id=" in failing
    assert r["toolu_1_0"] == "Exit code 3\nhello"


def test_wrap_bash_never_approves(env: Env, claude: str) -> None:
    """With Bash not allowed, the wrapper does not make Claude Code run it."""
    turns = [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "touch approved.txt", "description": "t"}}]},
        {"text": "finished"},
    ]
    model, out, _ = run_session(env, claude, install=["--wrap-bash"], allowed="Read", turns=turns)
    assert not (env.project / "approved.txt").exists()
    assert [d["tool_name"] for d in out["permission_denials"]] == ["Bash"]


def test_install_uninstall_byte_identical(env: Env) -> None:
    settings = env.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    before = '{\n  "permissions": {"allow": ["Bash(ls:*)"]},\n    "zeta": 1,\n  "alpha": [1,2]\n}\n'
    settings.write_text(before)
    mcp = env.project / ".mcp.json"
    mcp_before = '{"mcpServers": {"other": {"command": "x"}}, "b": 2, "a": 1}'
    mcp.write_text(mcp_before)
    for args in (["install", "claude-code", "--scope", "project", "--wrap-bash"],
                 ["uninstall", "claude-code", "--scope", "project"]):
        r = env.snip_run(*args)
        assert r.returncode == 0, r.stderr
    assert settings.read_text() == before and mcp.read_text() == mcp_before


def test_project_scope_names_snip_on_path(env: Env) -> None:
    """Files meant to be committed name `snip`, not this machine's path, when the
    `snip` on PATH is this binary; the closing hint names the scope."""
    bindir = env.root / "bin"
    bindir.mkdir()
    (bindir / "snip").symlink_to(env.snip)
    env.vars["PATH"] = f"{bindir}:{env.vars.get('PATH', '')}"
    r = env.snip_run("install", "claude-code", "--scope", "project")
    assert r.returncode == 0, r.stderr
    settings = json.loads((env.project / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert hook == "snip hook claude-code"
    assert json.loads((env.project / ".mcp.json").read_text())["mcpServers"]["snip"]["command"] == "snip"
    assert "found on PATH" in r.stdout
    assert "`snip uninstall claude-code --scope project`" in r.stdout
