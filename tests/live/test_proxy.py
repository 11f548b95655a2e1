"""Real hosts through `snip wrap` (the proxy) to the scripted model on 127.0.0.1.

No hook is installed: whatever is compressed or summarised was done by the proxy on
the request, and the assertions read the requests the scripted model recorded (what
the provider would have received). scripts/test-proxy.sh installs the hosts
(scripts/install-host.sh), builds snip and sets SNIP_BIN, CLAUDE, CODEX and OPENCODE.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Env, ScriptedModel, restore_calls, tool_results

ERROR_LINE = "2026-11-30T12:00:00Z ERROR db: connection refused (code=57P01) while saving order 4242"
#: Settings that make a short session release older results: the newest two stay
#: whole, the release rule expects 50 more calls, and cache reads are priced as
#: writes (a provider without a cache discount), so a release pays for itself on the
#: call that makes it.
CONTEXT = {"SNIP_CONTEXT_KEEP_LAST": "2", "SNIP_CONTEXT_MIN_MESSAGES": "6",
           "SNIP_CONTEXT_EXPECTED_CALLS": "50", "SNIP_CONTEXT_CACHE_WRITE_PCT": "100",
           "SNIP_CONTEXT_CACHE_READ_PCT": "100", "SNIP_MAX_BYTES": "4096"}


def host(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"{name} is not set (run scripts/test-proxy.sh)")
    return value


def make_log(project: Path) -> Path:
    """A 250-line log (~25 KB, under the hosts' own output caps) with one error line."""
    lines = [f"2026-11-30T11:{i // 60 % 60:02d}:{i % 60:02d}Z INFO worker-{i % 8}: "
             f"processed batch {i} in {i % 97} ms (queue depth {i % 13})" for i in range(250)]
    lines.insert(120, ERROR_LINE)
    log = project / "app.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def check_restore(env: Env, text: str, log: Path) -> None:
    """The first line-range restore call quoted in `text`, run through `snip restore`,
    returns exactly that many whole lines of the log (the original is the result as the
    host sent it: a host may put a header before the command's output, so the line
    numbers are the result's, not the file's)."""
    calls = [c for c in restore_calls(text) if c[1].get("mode") == "lines"]
    assert calls, text[:500]
    a = calls[0][1]
    call = f'snip_restore(id="{a["id"]}", mode="lines", start={a["start"]}, end={a["end"]})'
    r = env.snip_run("restore", call, "--raw", "--max-bytes", "65536")
    assert r.returncode == 0, r.stderr
    got = r.stdout
    assert got.count("\n") == a["end"] - a["start"] + 1 or not got.endswith("\n")
    assert len(got.splitlines()) == a["end"] - a["start"] + 1
    full = log.read_text()
    at = full.find(got.rstrip("\n"))
    assert at >= 0 and (at == 0 or full[at - 1] == "\n"), got[:300]


def anthropic_valid(body: dict[str, Any]) -> None:
    """Tool calls paired with results in the next message, at most 4 cache_control
    blocks, thinking blocks with their signature."""
    msgs = body["messages"]
    for i, m in enumerate(msgs):
        blocks = m["content"] if isinstance(m["content"], list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if uses:
            nxt = msgs[i + 1]["content"]
            assert [b["tool_use_id"] for b in nxt if b.get("type") == "tool_result"] == uses
        for b in blocks:
            if b.get("type") == "thinking":
                assert b.get("signature")
    assert json.dumps(body).count('"cache_control"') <= 4


def test_claude_code_through_the_proxy(env: Env) -> None:
    claude = host("CLAUDE")
    log = make_log(env.project)

    def bash(cmd: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "Bash", "arguments": {"command": cmd, "description": "run"}}]}

    turns = [
        bash(f"cat {log}"),
        bash("for i in $(seq 1 300); do printf 'step %d/300 building\\r' $i; done; echo; echo built"),
        bash("seq 1 2000"),
        bash(f"grep -n worker {log}"),
        bash("seq 5000 7000"),
        bash("echo small"),
        {"text": "finished"},
    ]
    with ScriptedModel(turns, record=str(env.root / "requests.jsonl")) as model:
        run = subprocess.run(
            [env.snip, "wrap", "claude", "--program", claude, "--upstream", model.base_url, "--",
             "-p", "work through the script", "--allowedTools", "Bash", "--output-format", "json"],
            cwd=env.project, capture_output=True, text=True, timeout=240,
            env={**env.vars, **CONTEXT, "ANTHROPIC_API_KEY": "sk-scripted", "DISABLE_AUTOUPDATER": "1"},
        )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not model.errors, model.errors
    out = json.loads(run.stdout)
    assert out["is_error"] is False and out["result"] == "finished"  # the stream reached it
    turns_seen = [r for r in model.turns() if r["api"] == "anthropic"]
    assert len(turns_seen) == len(turns)
    for r in model.requests:
        if r["api"] in ("anthropic", "count_tokens"):
            anthropic_valid(r["body"])
    # The log, compressed by the proxy as soon as it appeared (error line kept).
    second = tool_results(turns_seen[1]["body"])
    first_result = second["toolu_0_0"]
    assert ERROR_LINE in first_result and "restore: snip_restore(id=" in first_result
    assert len(first_result) < len(log.read_text()) // 2
    # Older results summarised once the release paid, the newest two whole.
    last = tool_results(turns_seen[-1]["body"])
    summarised = [k for k, v in last.items() if v.startswith("[snip: ")]
    assert summarised, {k: v[:80] for k, v in last.items()}
    assert "toolu_5_0" not in summarised and last["toolu_5_0"].strip() == "small"
    # Between two requests, a compressed result is byte-identical (same marker).
    assert tool_results(turns_seen[2]["body"])["toolu_0_0"] == first_result
    check_restore(env, first_result, log)
    # One ledger row per rewritten request, with the proxy as its source.
    stats = env.snip_run("stats", "--json")
    assert stats.returncode == 0 and "proxy:anthropic" in stats.stdout


def test_codex_through_the_proxy(env: Env) -> None:
    codex = host("CODEX")
    log = make_log(env.project)

    def exec_command(cmd: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd}}]}

    turns = [
        exec_command(f"cat {log}"),
        exec_command("seq 1 2000"),
        {"text": "finished"},
    ]
    codex_home = env.home / ".codex"
    codex_home.mkdir()
    with ScriptedModel(turns, record=str(env.root / "requests.jsonl")) as model:
        run = subprocess.run(
            [env.snip, "wrap", "codex", "--program", codex, "--upstream", model.base_url, "--",
             # Codex cuts a tool output to about 3 KB for an unknown model; raise it so
             # whole outputs reach the proxy, as with the real models' larger limits.
             "-c", "tool_output_token_limit=100000",
             "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
             "-m", "gpt-scripted", "work through the script"],
            cwd=env.project, capture_output=True, text=True, timeout=240,
            env={**env.vars, **CONTEXT, "OPENAI_API_KEY": "sk-scripted", "CODEX_HOME": str(codex_home)},
        )
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert not model.errors, model.errors
    assert "finished" in run.stdout  # the streamed answer reached the host
    seen = [r for r in model.requests if r["api"] == "responses" and r["turn"] is not None]
    assert len(seen) >= len(turns)
    for r in seen:
        items = r["body"]["input"]
        calls = [i["call_id"] for i in items if i.get("type") == "function_call"]
        outs = [i["call_id"] for i in items if i.get("type") == "function_call_output"]
        assert calls == outs
    results = tool_results(seen[-1]["body"])
    log_result = next(v for v in results.values() if "processed batch" in v)
    assert ERROR_LINE in log_result and "restore: snip_restore(id=" in log_result
    assert len(log_result) < len(log.read_text()) // 2
    check_restore(env, log_result, log)


def test_opencode_through_the_proxy(env: Env) -> None:
    """OpenCode's built-in anthropic provider (a model "m" declared in the project's
    opencode.json), its base URL set by `snip wrap opencode`, no plugin installed."""
    opencode = host("OPENCODE")
    log = make_log(env.project)
    subprocess.run(["git", "init", "-q", "."], cwd=env.project, check=True)

    def bash(cmd: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "bash", "arguments": {"command": cmd, "description": "run"}}]}

    turns = [
        bash(f"cat {log}"),
        bash("seq 1 2000"),
        bash(f"grep -n worker {log}"),
        bash("seq 5000 7000"),
        bash("echo small"),
        {"text": "finished"},
    ]
    (env.project / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"anthropic": {"models": {"m": {"name": "m", "tool_call": True}}}},
        "model": "anthropic/m",
    }))
    # OpenCode keeps provider packages in its cache: a cache next to the pinned binary
    # is reused across runs (as tests/live/test_opencode.py does).
    cache = Path(opencode).parents[2] / "xdg-cache"
    with ScriptedModel(turns, record=str(env.root / "requests.jsonl")) as model:
        run = subprocess.run(
            [env.snip, "wrap", "opencode", "--program", opencode, "--upstream", model.base_url, "--",
             "run", "work through the script", "--model", "anthropic/m"],
            cwd=env.project, capture_output=True, text=True, timeout=240,
            env={**env.vars, **CONTEXT, "XDG_CACHE_HOME": str(cache), "ANTHROPIC_API_KEY": "sk-scripted",
                 "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                 "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                 "OPENCODE_DISABLE_SHARE": "1"},
        )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert not model.errors, model.errors
    assert "finished" in run.stdout  # the streamed answer reached the host
    turns_seen = [r for r in model.turns() if r["api"] == "anthropic"]
    assert len(turns_seen) == len(turns), [r["api"] for r in model.requests]
    for r in turns_seen:
        anthropic_valid(r["body"])
    # The log, compressed by the proxy on the next request (error line kept).
    first_id = next(iter(tool_results(turns_seen[1]["body"])))
    first_result = tool_results(turns_seen[1]["body"])[first_id]
    assert ERROR_LINE in first_result and "restore: snip_restore(id=" in first_result
    assert len(first_result) < len(log.read_text()) // 2
    assert tool_results(turns_seen[2]["body"])[first_id] == first_result
    # Older results summarised once the release paid, the newest whole.
    last = tool_results(turns_seen[-1]["body"])
    assert [k for k, v in last.items() if v.startswith("[snip: ")], {k: v[:80] for k, v in last.items()}
    assert list(last.values())[-1].strip() == "small"
    check_restore(env, first_result, log)
    stats = env.snip_run("stats", "--json")
    assert stats.returncode == 0 and "proxy:anthropic" in stats.stdout
