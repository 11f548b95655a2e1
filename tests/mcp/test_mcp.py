"""`snip mcp` end to end with the official Python MCP client (`mcp` on PyPI):
stdio_client + ClientSession, in both protocol eras:

- `legacy`: the initialize handshake at the client's newest handshake revision
  (2025-11-25);
- `legacy-2024`: the initialize handshake forced to the oldest revision, 2024-11-05;
- `modern`: 2026-07-28, no handshake (`server/discover`, then per-request `_meta`).
"""

import contextlib
import json
import os
import subprocess
import time

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from conftest import snip_bin

ERAS = ["legacy", "legacy-2024", "modern"]


@contextlib.asynccontextmanager
async def connect(store_dir, era, client_name="snip-tests"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
    env["SNIP_STORE_DIR"] = str(store_dir)
    params = StdioServerParameters(command=snip_bin(), args=["mcp"], env=env)
    info = types.Implementation(name=client_name, version="1.0")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=info) as session:
            if era == "legacy":
                result = await session.initialize()
                assert result.protocol_version == "2025-11-25"
            elif era == "legacy-2024":
                result = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version="2024-11-05",
                            capabilities=types.ClientCapabilities(),
                            client_info=info,
                        )
                    ),
                    types.InitializeResult,
                )
                assert result.protocol_version == "2024-11-05"
                session.adopt(result)
                await session.send_notification(types.InitializedNotification())
            else:
                result = await session.discover()
                assert "2026-07-28" in result.supported_versions
                assert session.protocol_version == "2026-07-28"
            yield session


def run(fn):
    return anyio.run(fn)


async def restore(session, **args):
    result = await session.call_tool("snip_restore", args)
    assert result.is_error is not True, result
    return result.structured_content


@pytest.mark.parametrize("era", ERAS)
def test_lists_both_tools_with_typed_schemas(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"snip_restore", "snip_stats"}
            props = tools["snip_restore"].input_schema["properties"]
            for field in ["id", "mode", "start", "end", "query", "field", "max_bytes"]:
                assert field in props, field
            assert tools["snip_restore"].input_schema["required"] == ["id"]
            # Only Claude Code gets its result-size hint.
            assert not (tools["snip_restore"].meta or {}).get("anthropic/maxResultSizeChars")

    run(main)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_claude_code_gets_max_result_size_meta(store, era):
    async def main():
        async with connect(store["dir"], era, client_name="claude-code") as s:
            for tool in (await s.list_tools()).tools:
                assert tool.meta["anthropic/maxResultSizeChars"] == 100000

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_bytes_pages_concatenate_to_the_original(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            got, start, pages = b"", 0, 0
            while start is not None:
                r = await restore(s, id=store["log_id"], mode="bytes", start=start, max_bytes=4096)
                assert r["status"] == "ok"
                assert r["total_bytes"] == len(store["log"])
                got += r["content"].encode()
                start, pages = r["next"], pages + 1
            assert got == store["log"]
            assert pages > 1

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_lines_search_and_full(store, era):
    lines = store["log"].decode().splitlines(keepends=True)

    async def main():
        async with connect(store["dir"], era) as s:
            r = await restore(s, id=store["log_id"], mode="lines", start=10, end=20)
            assert r["status"] == "ok"
            assert r["content"] == "".join(lines[9:20])

            needle = next(l for l in lines if "panicked at" in l).strip()
            r = await restore(s, id=store["log_id"], mode="search", query=needle, context=1)
            assert r["status"] == "ok"
            assert r["total_matches"] >= 1
            first = r["matches"][0]
            assert needle in lines[first["line"] - 1]

            r = await restore(s, id=store["log_id"], mode="full", max_bytes=65536)
            assert r["status"] == "ok"
            assert r["content"].encode() == store["log"]

    run(main)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_field_scopes_to_one_json_string(store, era):
    doc = json.loads(store["doc"])
    version = doc["pip_version"]

    async def main():
        async with connect(store["dir"], era) as s:
            r = await restore(s, id=store["doc_id"], mode="bytes", field="/pip_version")
            assert r["status"] == "ok"
            assert r["content"] == version

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_unknown_id_is_not_found(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            r = await restore(s, id="sn_" + "0" * 24, mode="full")
            assert r["status"] == "not_found"
            assert r["content"] is None

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_bad_arguments_are_tool_errors_the_model_sees(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            for args in [
                {},
                {"id": 5},
                {"id": store["log_id"], "mode": "everything"},
                {"id": store["log_id"], "start": "ten"},
                {"id": store["log_id"], "colour": "red"},
            ]:
                result = await s.call_tool("snip_restore", args)
                assert result.is_error is True, args
                assert result.content and result.content[0].text, args
                # The restore protocol's answer, as snip restore prints it.
                assert result.structured_content["status"] == "invalid", args
                assert result.structured_content["mode"] is None, args
            # A malformed id is the store's `invalid`, also a tool error.
            result = await s.call_tool("snip_restore", {"id": "../../etc/passwd"})
            assert result.is_error is True
            assert result.structured_content["status"] == "invalid"

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_unknown_tool_is_a_json_rpc_error(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            with pytest.raises(MCPError) as e:
                await s.call_tool("snip_nothing", {})
            assert e.value.code == -32602

    run(main)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_stats_reports_the_ledger(store, era):
    async def main():
        async with connect(store["dir"], era) as s:
            r = await s.call_tool("snip_stats", {})
            assert r.is_error is not True
            stats = r.structured_content
            assert stats["rewrites"] >= 2
            assert "claude-code:Bash" in stats["by_source"]

    run(main)


def test_stdout_is_protocol_only_and_eof_exits_cleanly(store):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
    env["SNIP_STORE_DIR"] = str(store["dir"])
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "snip_restore", "arguments": {"id": store["log_id"], "mode": "lines", "start": 1, "end": 2}}},
    ]
    started = time.monotonic()
    out = subprocess.run(
        [snip_bin(), "mcp"],
        input="".join(json.dumps(m) + "\n" for m in msgs).encode(),
        capture_output=True,
        env=env,
        timeout=20,
    )
    assert out.returncode == 0
    assert time.monotonic() - started < 10
    replies = [json.loads(l) for l in out.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["result"]["structuredContent"]["status"] == "ok"
