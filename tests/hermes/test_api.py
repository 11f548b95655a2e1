"""The ``snip`` Python package on its own: compress, restore, config,
compress_messages, with a real store in a temp directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import snip

PROGRESS = "".join(f"\rcopying {i:3d}%" for i in range(101)) + "\ndone\n"
BIG = "".join(f"row {i:06d} ok\n" for i in range(20_000)).replace(
    "row 010000 ok", "ERROR: disk full at row 10000"
)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k in [k for k in __import__("os").environ if k.startswith("SNIP_")]:
        monkeypatch.delenv(k)
    path = tmp_path / "store"
    monkeypatch.setenv("SNIP_STORE_DIR", str(path))
    return path


def test_compress_receipt_str_and_bytes(store: Path) -> None:
    r = snip.compress(PROGRESS)
    assert r["changed"] and isinstance(r["output"], str)
    assert r["output"].startswith("copying 100%\ndone\n")
    assert r["original_bytes"] == len(PROGRESS.encode())
    assert r["output_bytes"] == len(r["output"].encode())
    assert r["rules"] == [{"id": "terminal-render", "frames_removed": 100}]
    assert r["retention"] == "retained" and r["id"].startswith("sn_") and r["retained"]
    assert r["failed_open"] is None and r["lossy"] is False
    b = snip.compress(PROGRESS.encode())
    assert isinstance(b["output"], bytes) and b["output"] == r["output"].encode()
    # Invalid UTF-8 is fine as bytes.
    raw = b"\xff\xfe" + BIG.encode()
    assert snip.compress(raw)["changed"]


def test_unchanged_returns_the_same_object(store: Path) -> None:
    text = "hello\n"
    r = snip.compress(text)
    assert r["changed"] is False and r["output"] is text and r["rules"] == []


def test_options_override_variables(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert snip.compress(BIG)["output_bytes"] < 24_576 + 1024
    small = snip.compress(BIG, max_bytes=4096)
    assert small["output_bytes"] < 4096 + 1024
    off = snip.compress(PROGRESS, store=False)
    assert off["retention"] == "off" and off["id"] is None and off["retained"] is False
    monkeypatch.setenv("SNIP_ENABLED", "0")
    assert snip.compress(PROGRESS)["changed"] is False
    assert snip.compress(PROGRESS, enabled=True)["changed"] is True
    with pytest.raises(TypeError, match="unknown option"):
        snip.compress(PROGRESS, max_byte=1)
    with pytest.raises(TypeError):
        snip.compress(12345)  # type: ignore[arg-type]


def test_bad_variable_fails_open(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNIP_MAX_BYTES", "lots")
    r = snip.compress(PROGRESS)
    assert r["changed"] is False and r["output"] == PROGRESS
    assert "SNIP_MAX_BYTES" in r["failed_open"]
    with pytest.raises(ValueError, match="SNIP_MAX_BYTES"):
        snip.config()


def test_restore_round_trip(store: Path) -> None:
    r = snip.compress(BIG)
    assert "ERROR: disk full at row 10000" in r["output"]
    assert r["lossy"] and r["retention"] == "retained"
    parts, start = [], 0
    while start is not None:
        page = snip.restore(r["id"], "bytes", start=start, max_bytes=65536)
        assert page["status"] == "ok"
        parts.append(page["content"])
        start = page["next"]
    assert "".join(parts) == BIG
    lines = snip.restore(r["id"], "lines", start=2, end=3)
    assert lines["content"] == "row 000001 ok\nrow 000002 ok\n"
    found = snip.restore(r["id"], "search", query="disk full")
    assert found["status"] == "ok" and found["matches"][0]["line"] == 10001
    assert snip.restore("sn_" + "0" * 24)["status"] == "not_found"
    assert snip.restore("../x")["status"] == "invalid"
    assert snip.restore(r["id"], "sideways")["status"] == "invalid"
    # An int past 64 bits is a bad request too, not an exception.
    for big in ({"start": 2**64}, {"end": 2**70}, {"max_bytes": -(2**70)}):
        answer = snip.restore(r["id"], **big)
        assert answer["status"] == "invalid", answer
        assert "out of range" in answer["note"], answer
    # Written by the module's own thread after the call; flush() waits for it.
    snip.flush()
    assert (store / "objects" / r["id"]).is_file()


def test_a_kept_original_restores_at_once_and_after_the_process_exits(store: Path) -> None:
    """The module may return before the original is on disk (write-behind): this
    process restores it at once, and a process that exits without calling flush()
    leaves it written for the next process (the `snip` binary restores it). Whether
    the module's writer thread or the exit handler wrote it is not observable here;
    crates/snip-store/tests/write_behind.rs checks the held state itself."""
    import os
    import subprocess
    import sys

    r = snip.compress(BIG)
    assert r["retained"]
    assert snip.restore(r["id"], "lines", start=10001, end=10001)["content"] == (
        "ERROR: disk full at row 10000\n"
    )
    child = (
        "import snip, sys\n"
        "text = ''.join(f'job {i:06d} done\\n' for i in range(30_000))\n"
        "r = snip.compress(text)\n"
        "assert r['retained'], r\n"
        "print(r['id'])\n"
    )
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True
    )
    sid = out.stdout.strip()
    assert (store / "objects" / sid).is_file(), "written before the child exited"
    snip_bin = os.environ.get("SNIP_BIN") or str(
        Path(__file__).resolve().parents[2] / "target" / "debug" / "snip"
    )
    got = subprocess.run(
        [snip_bin, "restore", sid, "--lines", "29999:30000", "--raw"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert got.stdout == "job 029998 done\njob 029999 done\n", got


def test_config_lists_every_setting(store: Path) -> None:
    c = snip.config()
    assert c["SNIP_MAX_BYTES"] == "24576"
    assert c["SNIP_CONTEXT_KEEP_LAST"] == "6"
    assert c["SNIP_STORE_DIR"] == str(store)  # a path, usable as one
    assert snip.config(max_bytes=4096)["SNIP_MAX_BYTES"] == "4096"


def openai_conversation(results: int) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for i in range(results):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {
                            "name": "terminal",
                            "arguments": json.dumps({"command": f"make {i}"}),
                        },
                    }
                ],
            }
        )
        body = "".join(f"step {i}.{j} compiled\n" for j in range(60))
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"c{i}",
                "content": json.dumps({"output": body, "exit_code": 0}),
            }
        )
    return messages


def test_compress_messages(store: Path) -> None:
    messages = openai_conversation(6)
    before = json.dumps(messages)
    out = snip.compress_messages(messages, keep_last=2, min_messages=4, batch=2)
    assert json.dumps(messages) == before  # the input is not modified
    tools = [m for m in out if m["role"] == "tool"]
    assert [t["content"].startswith("[snip:") for t in tools] == [True] * 4 + [False] * 2
    assert out[:2] == messages[:2]
    assert snip.compress_messages(messages, keep_last=2, min_messages=4, batch=2) == out
    assert snip.compress_messages(messages) is messages  # defaults: too short
    assert snip.compress_messages(messages, enabled=False, min_messages=4) is messages
    with pytest.raises(TypeError):
        snip.compress_messages(messages, keep_latest=2)
    with pytest.raises(TypeError):
        snip.compress_messages(messages, format="xml")
    # A summarised result restores to its original text.
    sid = tools[0]["content"].split('id="', 1)[1].split('"', 1)[0]
    page = snip.restore(sid, "full")
    assert page["status"] == "ok" and page["content"] == messages[3]["content"]
    # Not JSON-serialisable: passes through.
    odd = messages + [{"role": "user", "content": object()}]
    assert snip.compress_messages(odd, keep_last=2, min_messages=4) is odd


def busy_while(call) -> tuple[float, float, list[float]]:
    """Runs ``call`` in a thread while this thread records timestamps as fast as it
    can; returns the call's start and end times and the timestamps."""
    import threading
    import time

    span: list[float] = []

    def worker() -> None:
        span.append(time.perf_counter())
        call()
        span.append(time.perf_counter())

    thread = threading.Thread(target=worker)
    stamps = [time.perf_counter()]
    thread.start()
    while thread.is_alive():
        stamps.append(time.perf_counter())
    thread.join()
    return span[0], span[1], stamps


def released_gil(call) -> bool:
    """Whether this thread kept running during ``call``: many timestamps fall inside
    the call and no pause covers half of it (with the GIL held through the call, no
    timestamp falls inside it)."""
    start, end, stamps = busy_while(call)
    inside = [t for t in stamps if start < t < end]
    points = [start, *inside, end]
    longest = max(b - a for a, b in zip(points, points[1:], strict=False))
    return len(inside) > 100 and longest < (end - start) / 2


def test_gil_is_released_while_rust_works(store: Path) -> None:
    block = "".join(f"2026-11-30 worker {i % 13} processed item {i}\n" for i in range(20_000))
    data = block.encode() * 60  # about 50 MB: a call of a good fraction of a second
    assert released_gil(lambda: snip.compress(data, store=False))
    # The check can fail: a C call that holds the GIL (sorting floats) is caught.
    import random

    floats = [random.random() for _ in range(1_000_000)]
    assert not released_gil(lambda: sorted(floats))


def test_lone_surrogates_fail_open(store: Path) -> None:
    text = "\rstep 1\rstep 2\udcff" * 50 + "\n"
    r = snip.compress(text)
    assert r["changed"] is False and r["output"] is text
    assert "surrogates" in r["failed_open"]
    assert r["original_bytes"] == len(text.encode("utf-8", "surrogatepass"))
    messages = openai_conversation(6) + [{"role": "user", "content": "\udcff"}]
    assert snip.compress_messages(messages, keep_last=2, min_messages=4) is messages


def test_restore_arguments_of_the_wrong_type_are_answers(store: Path) -> None:
    """`restore` never raises for a bad request: an id given as bytes (or a float for a
    number) is answered `invalid`, as `None` and `5` were."""
    for args, kwargs in (((b"sn_" + b"0" * 24,), {}), (("sn_" + "0" * 24,), {"start": 1.5})):
        answer = snip.restore(*args, **kwargs)  # type: ignore[arg-type]
        assert answer["status"] == "invalid", answer
        assert answer["note"]


def test_hermes_restore_tool_refuses_unknown_arguments(store: Path) -> None:
    from snip import hermes

    answer = json.loads(hermes.snip_restore({"id": "sn_" + "0" * 24, "bogus": 1}))
    assert answer["status"] == "invalid" and "bogus" in answer["note"], answer
    known = json.loads(hermes.snip_restore({"id": "sn_" + "0" * 24, "mode": "full"}))
    assert known["status"] == "not_found", known


def test_tool_result_numbers_are_written_back_as_they_came(store: Path) -> None:
    """`transform_tool_result` compresses a JSON result's text fields in the core,
    which writes every number back as its exact text, also those Python would write
    differently (0.10000000000000000555 as 0.1, 1E5 as 100000.0, 1e400 as Infinity,
    which is not JSON)."""
    from snip import hermes

    frames = "".join(f"\rfetch {i:3d}%" for i in range(300)) + "\ndone\n"
    log = "".join(f"step {i:05d} of the build finished\n" for i in range(2000))
    for number in ("0.10000000000000000555", "1E5", "1e400", "-0.50"):
        # Under the budget: the text field shrinks, the number's text is kept.
        result = '{"output": %s, "exit_code": 7, "x": %s}' % (json.dumps(frames), number)
        out = hermes.transform_tool_result(tool_name="process", result=result)
        assert out is not None and len(out) < len(result) / 10, number
        assert out.endswith(f'"exit_code": 7, "x": {number}}}'), out[-100:]
        # Over it: the core's JSON rule elides inside the string, number text kept.
        result = '{"output": %s, "exit_code": 7, "x": %s}' % (json.dumps(log), number)
        out = hermes.transform_tool_result(tool_name="process", result=result)
        assert out is not None and len(out) < len(result), number
        assert json.loads(out)["exit_code"] == 7
        assert f'"x": {number}' in out or f'"x":{number}' in out, out[-300:]
    # Numbers that come back as they were read still let the text fields shrink.
    result = '{"output": %s, "exit_code": 7, "x": 1.5}' % json.dumps(frames)
    out = hermes.transform_tool_result(tool_name="process", result=result)
    assert out is not None and '"x": 1.5' in out and len(out) < len(result) / 10


def test_cut_output_is_compressed_at_the_smallest_budget(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output Hermes already cut is compressed on both sides of its notice: each side
    gets at least the core's smallest budget (1024; with 256 a side under 1024 was
    refused and left whole), and a budget the core refuses passes it through, as for
    uncut output."""
    from snip import hermes

    log = "".join(f"{i:05d} compiling module_{i} with flags -O2 -g\n" for i in range(10_000))
    notice = "\n\n... [OUTPUT TRUNCATED - 123,456 chars omitted out of 500,000 total] ...\n\n"
    cut = log[:20_000] + notice + log[-30_000:]
    for budget, most in (("4096", 6_000), ("2048", 4_500), ("1024", 4_500)):
        monkeypatch.setenv("SNIP_MAX_BYTES", budget)
        out = hermes.transform_terminal_output(command="make", output=cut)
        assert out is not None and notice in out, budget
        assert len(out) <= most, (budget, len(out))
    for bad in ("garbage", "512"):
        monkeypatch.setenv("SNIP_MAX_BYTES", bad)
        assert hermes.transform_terminal_output(command="make", output=cut) is None


def test_restore_tool_pages_tile_and_keep_tokens_whole(store: Path) -> None:
    """The plugin's `snip_restore` in `bytes` mode, following `next` from 0 with small
    and odd page sizes over text of words of every length (some longer than the
    1,024-byte margin), multi-byte characters and invalid UTF-8: the pages tile the
    original exactly, and no page ends inside a token shorter than the margin."""
    import base64
    import random

    from snip import hermes

    rng = random.Random(7)
    words = ["a", "ab", "héllo", "€uro", "x" * 40, "y" * 700, "z" * 3000, "\n", "  ", "\t"]
    for trial in range(4):
        text = "".join(rng.choice(words) + rng.choice([" ", "\n", ""]) for _ in range(300))
        raw = text.encode() + (b"\xff\xfe tail" if trial % 2 else b"")
        r = snip.compress(raw, max_bytes=1024)
        assert r["changed"] and r["retention"] == "retained", r["retention"]
        # Small pages over the first 6,000 bytes only: each page reads the original
        # up to five times.
        for cap, stop in ((8, 6000), (61, 6000), (1000, len(raw)), (4096, len(raw))):
            got, start, pages = b"", 0, 0
            while start is not None:
                page = json.loads(
                    hermes.snip_restore(
                        {"id": r["id"], "start": start, "end": stop, "max_bytes": cap}
                    )
                )
                assert page["status"] == "ok" and page["start"] == start, page
                b64 = page.get("content_base64")
                chunk = base64.b64decode(b64) if b64 else page["content"].encode()
                got += chunk
                end = page["end"]
                assert end == start + len(chunk)
                if page["next"] is not None and raw[end - 1 : end + 1].strip() == raw[
                    end - 1 : end + 1
                ]:
                    # The page ends inside a token: only one longer than the margin.
                    a = max(raw.rfind(c, 0, end) for c in (b" ", b"\n", b"\t"))
                    after = [k for k in (raw.find(c, end) for c in (b" ", b"\n", b"\t")) if k >= 0]
                    z = min(after) if after else len(raw)
                    assert z - (a + 1) > 1024, (cap, end, raw[end - 20 : end + 20])
                start = page["next"]
                pages += 1
            assert got[:stop] == raw[:stop] and len(got) - stop < 1024, (trial, cap, pages)


def test_a_store_that_cannot_keep_originals_is_logged_once(
    store: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from snip import hermes

    store.mkdir(parents=True)
    store.chmod(0o777)  # refused: others can write to it
    monkeypatch.setattr(hermes, "_told_store_failure", False)
    caplog.set_level("WARNING", logger="snip.hermes")
    hermes._compress(BIG, "hermes:terminal")
    hermes._compress(BIG, "hermes:terminal")
    told = [r for r in caplog.records if "could not keep" in r.getMessage()]
    assert len(told) == 1, caplog.text
    assert "other users can write" in told[0].getMessage()


def test_restore_schema_is_the_committed_one(store: Path) -> None:
    """The plugin's tool announces the schema the core generates from its restore
    request, and that is the committed `docs/schema/snip_restore.json`."""
    from snip import hermes

    root = Path(__file__).resolve().parents[2]
    committed = json.loads((root / "docs" / "schema" / "snip_restore.json").read_text())
    assert snip._core().restore_schema() == committed
    assert hermes.restore_schema()["parameters"] == committed
    assert "align" in committed["properties"]


def test_compress_parts_shares_one_budget(store: Path) -> None:
    """A short part that fits keeps its text; the long one gets what it left; the
    receipts come back in the order given and carry the CLI receipt's keys."""
    # Distinct lines (each names a module spelled from its number in letters), so
    # shape-fold has no run to fold: the budget split is what this test checks.
    def name(i: int) -> str:
        s = ""
        while True:
            s += chr(97 + i % 26)
            i //= 26
            if i == 0:
                return s

    long = "".join(f"{i:05d} compiling module {name(i)} with flags -O2\n" for i in range(5000))
    short = "warning: unused variable\n" * 3
    r = snip._core().compress_parts([long, short], max_bytes=4096)
    assert [x["changed"] for x in r] == [True, False]
    assert r[1]["output"] == short and r[1]["output_encoding"] == "utf-8"
    assert len(r[0]["output"].encode()) + len(short) <= 4096
    assert len(r[0]["output"].encode()) > 2048, "the long part had only half"
    assert "output_base64" not in r[0]
