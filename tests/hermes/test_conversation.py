"""A full ``AIAgent`` conversation against a scripted OpenAI-compatible streaming
endpoint on 127.0.0.1 (``fake_llm``). The model runs a command, runs a big command,
then calls ``snip_restore`` on a marker of the big output. The recorded requests
show the compressed result, the restored slice, and (the ``llm_request``
middleware) the older tool results summarised, while the agent's stored history
still holds the originals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import Home, hermes_cli
from fake_llm import FakeLLM, tool_call
from test_restore import CALL, ERROR_LINE, GENERATOR

AGENT = """
from run_agent import AIAgent
agent = AIAgent(
    base_url=BASE_URL, api_key="sk-test-not-a-key", provider="custom", model="fake-model",
    quiet_mode=True, enabled_toolsets=["terminal", "snip"], skip_context_files=True,
    skip_memory=True, max_iterations=8,
)
result = agent.run_conversation("Build the project and tell me what failed.")
answer({"final": result.get("final_response"), "messages": result.get("messages"),
        "error": result.get("error")})
"""

# The conversation pass with small numbers, so that a short scripted conversation
# crosses them: keep 1 result whole, summarise from 4 messages on, one at a time.
CONTEXT_ENV = {
    "SNIP_CONTEXT_KEEP_LAST": "1",
    "SNIP_CONTEXT_MIN_MESSAGES": "4",
    "SNIP_CONTEXT_BATCH": "1",
}


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m.get("role") == "tool"]


def run_agent(home: Home, script: list, **env: str) -> tuple[dict, list[dict]]:
    with FakeLLM(script) as llm:
        got = home.run(f"BASE_URL = {llm.base_url!r}\n" + AGENT, **env)
    assert not llm.errors, llm.errors
    return got, llm.requests


def test_agent_conversation_compresses_restores_and_summarises(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    big = tmp_path / "big.py"
    big.write_text(GENERATOR)
    seq = "seq 1 400"
    restore_args: dict[str, Any] = {}

    def restore_step(request: dict[str, Any]) -> dict[str, Any]:
        # The model reads the last tool result and copies a marker's restore call.
        content = json.loads(tool_messages(request)[-1]["content"])
        call = CALL.search(content["output"]).groupdict()
        restore_args.update(
            id=call["id"],
            mode=call["mode"],
            start=int(call["start"]),
            end=min(int(call["end"]), int(call["start"]) + 40),
        )
        return tool_call("call_3", "snip_restore", **restore_args)

    script = [
        tool_call("call_1", "terminal", command=seq),
        tool_call("call_2", "terminal", command=f"{sys.executable} {big}"),
        restore_step,
        {"content": "The build hit a disk quota error."},
    ]
    got, requests = run_agent(homes["wide"], script, **CONTEXT_ENV)
    assert got["error"] is None, got
    assert got["final"] == "The build hit a disk quota error."
    assert len(requests) == 4
    assert all(r.get("stream") is True for r in requests)

    # Request 3 carries the big result as compressed by transform_terminal_output.
    big_result = json.loads(tool_messages(requests[2])[-1]["content"])
    assert big_result["exit_code"] == 0
    assert ERROR_LINE in big_result["output"]
    assert len(big_result["output"].encode()) < 30_000
    assert CALL.search(big_result["output"])

    # Request 4 carries the restored slice: the exact original lines.
    restored = json.loads(tool_messages(requests[3])[-1]["content"])
    assert restored["status"] == "ok"
    original = subprocess.run(
        [sys.executable, str(big)], capture_output=True, text=True, check=True
    ).stdout
    lines = original.splitlines(keepends=True)
    if restore_args["mode"] == "lines":
        want = "".join(lines[restore_args["start"] - 1 : restore_args["end"]])
    else:
        want = original.encode()[restore_args["start"] : restore_args["end"]].decode()
    assert restored["content"] == want

    # The conversation pass: older results summarised in the outgoing requests ...
    first_in_r3 = tool_messages(requests[2])[0]["content"]
    first_in_r4 = tool_messages(requests[3])[0]["content"]
    assert first_in_r3.startswith("[snip:") and "\n" not in first_in_r3
    assert "sn_" in first_in_r3 and "seq 1 400" in first_in_r3
    assert first_in_r4 == first_in_r3  # byte-stable across calls (prompt cache)
    second_in_r4 = tool_messages(requests[3])[1]["content"]
    assert second_in_r4.startswith("[snip:") and "\n" not in second_in_r4
    # ... the newest result stays whole, and system/user text is untouched.
    assert tool_messages(requests[3])[-1]["content"] != first_in_r4
    for a, b in zip(requests[2]["messages"], requests[3]["messages"], strict=False):
        if a.get("role") in ("system", "user"):
            assert a == b

    # ... while the agent's stored history still holds the originals.
    history = [m for m in got["messages"] if m.get("role") == "tool"]
    assert len(history) == 3
    first = json.loads(history[0]["content"])
    assert first["output"] == "\n".join(str(i) for i in range(1, 401))
    assert ERROR_LINE in json.loads(history[1]["content"])["output"]
    assert not any(m["content"].startswith("[snip:") for m in history)


def test_middleware_off_when_hermes_compression_disabled(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    home = Home(tmp_path / "nocompress", homes["pip"].env)
    shutil.copytree(homes["pip"].path, home.path)
    hermes_cli(home.path, "config", "set", "compression.enabled", "false")
    script = [
        tool_call("call_1", "terminal", command="seq 1 400"),
        tool_call("call_2", "terminal", command="seq 401 800"),
        {"content": "ok"},
    ]
    got, requests = run_agent(home, script, **CONTEXT_ENV)
    assert got["error"] is None and len(requests) == 3
    first = tool_messages(requests[2])[0]["content"]
    assert json.loads(first)["output"].startswith("1\n2\n3\n")

    # The same conversation with compression on does summarise (the test can fail).
    _, on = run_agent(
        homes["pip"], [dict(s) if isinstance(s, dict) else s for s in script], **CONTEXT_ENV
    )
    assert tool_messages(on[2])[0]["content"].startswith("[snip:")


MIDDLEWARE = """
from hermes_cli.middleware import apply_llm_request_middleware
messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
for i in range(4):
    messages.append({"role": "assistant", "content": None, "tool_calls": [{
        "id": f"c{i}", "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": f"make {i}"})}}]})
    out = "".join(f"step {i}.{j} compiled\\n" for j in range(60))
    messages.append({"role": "tool", "tool_call_id": f"c{i}",
                     "content": json.dumps({"output": out, "exit_code": 0})})
request = {"model": "m", "messages": messages, "stream": True}
got = {}
for mode in ("chat_completions", "anthropic_messages", "codex_responses", "bedrock_converse"):
    r = apply_llm_request_middleware(request, api_mode=mode, model="m", provider="custom")
    got[mode] = {"changed": r.changed, "messages": r.payload.get("messages")}
answer({"got": got, "original": messages})
"""


def test_middleware_only_rewrites_chat_completions(homes: dict[str, Home]) -> None:
    got = homes["pip"].run(MIDDLEWARE, **CONTEXT_ENV)
    chat = got["got"].pop("chat_completions")
    assert chat["changed"] is True
    summaries = [m for m in chat["messages"] if m["role"] == "tool"]
    assert [m["content"].startswith("[snip:") for m in summaries] == [True] * 3 + [False]
    for mode, r in got["got"].items():
        assert r["changed"] is False and r["messages"] == got["original"], mode


LONG_AGENT = AGENT.replace("max_iterations=8", "max_iterations=40")

#: Tool calls of the long session: enough at the default settings (keep 6, the
#: cache-aware release rule) with an OpenAI-compatible endpoint's cache prices to
#: cross two releases.
LONG_CALLS = 22

#: The cache prices of an OpenAI-compatible endpoint (no write premium, cached input
#: at half price). At the default (Anthropic) prices the rule releases only once the
#: released results outweigh the re-written window about 12 times over (some 60
#: results: see docs/context.md), a longer session than a test should run.
LONG_PRICES = {"SNIP_CONTEXT_CACHE_WRITE_PCT": "100", "SNIP_CONTEXT_CACHE_READ_PCT": "50"}


def long_script() -> list:
    steps: list = [
        tool_call(
            f"call_{k:02d}", "terminal", command=f"seq {k * 10_000} {k * 10_000 + 1_199}"
        )
        for k in range(LONG_CALLS)
    ]
    steps.append({"content": "All steps ran."})
    return steps


def releases(requests: list[dict]) -> tuple[int, dict[str, str]]:
    """Checks every request extends the previous one except at a release (where only
    tool results become summaries); returns the releases and the summaries by id."""
    count = 0
    summaries: dict[str, str] = {}
    for prev, cur in zip(requests, requests[1:], strict=False):
        a, b = prev["messages"], cur["messages"]
        assert len(b) >= len(a)
        changed = [i for i, m in enumerate(a) if b[i] != m]
        if changed:
            count += 1
            for i in changed:
                assert b[i]["role"] == "tool" and b[i]["content"].startswith("[snip:"), b[i]
                assert not a[i]["content"].startswith("[snip:"), "a summary changed"
        for m in b:
            if m.get("role") == "tool" and m["content"].startswith("[snip:"):
                seen = summaries.setdefault(m["tool_call_id"], m["content"])
                assert seen == m["content"], "a summary changed after it was made"
    return count, summaries


def test_long_session_releases_at_the_defaults_and_keeps_the_cache(
    homes: dict[str, Home],
) -> None:
    home = homes["wide"]
    with FakeLLM(long_script()) as llm:
        got = home.run(f"BASE_URL = {llm.base_url!r}\n" + LONG_AGENT, **LONG_PRICES)
    assert not llm.errors, llm.errors
    assert got["error"] is None, got
    requests = llm.requests
    assert len(requests) == LONG_CALLS + 1
    count, summaries = releases(requests)
    assert count >= 2, f"{count} releases"
    assert len(summaries) >= 2
    # The agent's stored history keeps the originals.
    history = [m for m in got["messages"] if m.get("role") == "tool"]
    assert len(history) == LONG_CALLS
    assert not any(m["content"].startswith("[snip:") for m in history)
    assert json.loads(history[0]["content"])["output"].startswith("0\n1\n2\n")

    # A second run on the same store summarises the same results byte for byte.
    with FakeLLM(long_script()) as llm2:
        got2 = home.run(f"BASE_URL = {llm2.base_url!r}\n" + LONG_AGENT, **LONG_PRICES)
    assert got2["error"] is None, got2
    count2, summaries2 = releases(llm2.requests)
    assert count2 == count
    assert summaries2 == summaries
