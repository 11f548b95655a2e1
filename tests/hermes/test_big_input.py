"""Inputs over the in-memory cap: ``snip.compress`` picks the engine the ``snip`` CLI
picks for the same bytes on stdin (a stream), gives the same bytes, and holds no more
than a fraction of the input on top of it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import snip
from biglog import mixed_log

REPO = Path(__file__).resolve().parents[2]
SNIP_BIN = os.environ.get("SNIP_BIN") or str(REPO / "target" / "debug" / "snip")

#: Just over the in-memory cap (16 MiB, the least the store's entry cap can raise it
#: to), so the test stays a few seconds long.
SIZE = 16 * 1024 * 1024 + 300_000

ID = re.compile(rb"sn_[0-9a-f]{24}")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.log"
    path.write_bytes(mixed_log(SIZE))
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for k in [k for k in os.environ if k.startswith("SNIP_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("SNIP_STORE_DIR", str(tmp_path / "store"))
    return {k: v for k, v in os.environ.items() if k != "SNIP_BIN"}


def cli(path: Path, env: dict[str, str]) -> bytes:
    """``snip < path``: what the CLI prints for the file on stdin."""
    with path.open("rb") as stdin:
        done = subprocess.run(
            [SNIP_BIN], stdin=stdin, capture_output=True, env=env, check=True, timeout=300
        )
    return done.stdout


@pytest.mark.parametrize(
    ("options", "streamed"),
    [
        # The store keeps at most 1 MiB: the in-memory cap is its floor, 16 MiB.
        ({"store_max_entry_bytes": "1048576"}, True),
        ({"store": "0"}, True),
        # The store keeps up to 32 MiB (the default): in memory, the original kept.
        ({}, False),
    ],
    ids=["store-on-stream", "store-off-stream", "store-on-in-memory"],
)
def test_big_input_gives_the_cli_bytes(
    big: Path, env: dict[str, str], options: dict[str, str], streamed: bool
) -> None:
    for k, v in options.items():
        env[f"SNIP_{k.upper()}"] = v
    data = big.read_bytes()
    expected = cli(big, env)
    assert len(expected) < len(data) // 100, "the CLI did not elide"
    r = snip.compress(data, **options)
    assert isinstance(r["output"], bytes)
    assert ID.sub(b"sn_ID", r["output"]) == ID.sub(b"sn_ID", expected)
    # The same text as a str gives the same output, as a str.
    s = snip.compress(data.decode(), **options)
    assert s["output"] == r["output"].decode()
    assert r["changed"] and r["lossy"]
    assert r["original_bytes"] == len(data) and r["output_bytes"] == len(expected)
    ids = [x["id"] for x in r["rules"]]
    assert "terminal-render" in ids and "ansi-strip" in ids, ids
    if not streamed:
        assert r["retained"] and r["id"] is not None and ID.search(expected)
        got = snip.restore(r["id"], "bytes", start=len(data) - 100, end=len(data), **options)
        assert got["content"].encode() == data[-100:], got
        return
    assert r["id"] is None and r["retained"] is False and not ID.search(expected)
    if options.get("store") == "0":
        assert r["retention"] == "off" and r["retention_error"] is None
    else:
        assert r["retention"] == "failed" and "stream" in r["retention_error"]


def test_big_input_writes_one_stream_row(big: Path, env: dict[str, str]) -> None:
    snip.compress(big.read_bytes(), source="big-test", store_max_entry_bytes=1 << 20)
    snip.flush()  # the row is appended after the call, on the module's own thread
    ledger = Path(env["SNIP_STORE_DIR"]) / "ledger.jsonl"
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [r["source"] for r in rows] == ["big-test"], rows


def test_big_input_is_not_held_twice(big: Path, env: dict[str, str]) -> None:
    """Peak memory of one call, in a fresh process: the stream adds a few MiB, not a
    multiple of the input (the whole pipeline in memory added several times it)."""
    code = (
        "import resource, sys, snip\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = snip.compress(data, store_max_entry_bytes=1 << 20)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(len(data), before * 1024, after * 1024, r['output_bytes'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(big)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    ).stdout
    size, before, after, output = (int(x) for x in out.split())
    assert output < size // 100
    assert after - before < size // 2, f"peak grew by {after - before} bytes on {size}"
