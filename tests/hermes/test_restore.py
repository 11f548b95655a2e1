"""A 300 KB output with one error line in the middle: the error line is visible, and
``snip_restore`` through ``model_tools.handle_function_call`` gives back the exact
elided bytes (in a later process, from the store under ``$HERMES_HOME/cache/snip``).

Runs in the ``wide`` home (``tool_output.max_bytes: 1000000``): with Hermes's default
50,000-char cap, Hermes itself drops the middle before any plugin sees it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO, Home, hermes_cli

ERROR_LINE = "ERROR: disk quota exceeded while writing shard 4711 (errno 122)"
SECRET = "sk-proj-" + "Q7f3Kx9Lm2Np8Rt5Vw1Yz4Bc6Df0Gh3Jk7Mn9Pq2St5Uv8Wx"
LINES = 6600

# Distinct rows (each carries two words spelled in letters from its number), so no
# run of same-shape lines folds (one varying word is a name column, and shape-fold
# folds those): the secret line sits inside an elided gap, as in a real log of
# distinct lines.
GENERATOR = f"""
def word(i):
    s = ""
    while True:
        s += chr(97 + i % 26)
        i //= 26
        if i == 0:
            return s
for i in range({LINES}):
    if i == {LINES // 2}:
        print({ERROR_LINE!r})
    elif i == {LINES // 3}:
        print("export OPENAI_API_KEY=" + {SECRET!r})
    else:
        print(f"row {{i:06d}} {{word(i)}} {{word(i * 7919 + 11)}} checksum={{i * 7919 % 100003:06d}} status=ok bytes={{i * 37}}")
"""

CALL = re.compile(
    r'snip_restore\(id="(?P<id>sn_[0-9a-f]+)", mode="(?P<mode>lines|bytes)", '
    r"start=(?P<start>\d+), end=(?P<end>\d+)\)"
)

RUN = """
answer(json.loads(model_tools.handle_function_call(
    "terminal", {"command": COMMAND, "timeout": 120}, task_id="big")))
"""

RESTORE = """
pages = []  # one list of pages per call
for call in CALLS:
    args, mine = dict(call), []
    while True:
        raw = model_tools.handle_function_call("snip_restore", args, task_id="big")
        resp = json.loads(raw)
        mine.append(resp)
        if resp.get("status") != "ok" or resp.get("next") is None:
            break
        args = dict(args, start=resp["next"])
    pages.append(mine)
answer(pages)
"""


def original_text(script: Path) -> str:
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True
    ).stdout


def test_error_line_visible_and_elided_bytes_restored(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    script = tmp_path / "big.py"
    script.write_text(GENERATOR)
    home = homes["wide"]
    result = home.run(f"COMMAND = {f'{sys.executable} {script}'!r}\n" + RUN)
    out = result["output"]
    original = original_text(script)
    assert len(original) > 300_000
    assert result["exit_code"] == 0
    assert ERROR_LINE in out
    assert len(out.encode()) < 30_000
    assert SECRET not in out

    calls = [m.groupdict() for m in CALL.finditer(out)]
    assert calls, out[:2000]
    requests = [
        {
            "id": c["id"],
            "mode": c["mode"],
            "start": int(c["start"]),
            "end": int(c["end"]),
            "max_bytes": 65536,
        }
        for c in calls
    ]
    pages = home.run(f"CALLS = {requests!r}\n" + RESTORE)
    assert all(p["status"] == "ok" for mine in pages for p in mine), pages[0][:1]

    lines = original.splitlines(keepends=True)
    data = original.encode()
    restored_any_secret = False
    for req, mine in zip(requests, pages, strict=True):
        got = "".join(p["content"] for p in mine)
        if req["mode"] == "lines":
            want = "".join(lines[req["start"] - 1 : req["end"]])
        else:
            want = data[req["start"] : req["end"]].decode()
        if SECRET in want:
            # The stored original holds the raw key; the tool redacts it on the way
            # out (Hermes does not redact plugin tools' results itself).
            restored_any_secret = True
            assert SECRET not in got
            assert got.replace("\n", "") != want.replace("\n", "")
            masked = [x for x in got.splitlines() if x.startswith("export OPENAI_API_KEY=")]
            assert masked and SECRET not in masked[0]
            want_lines = [x for x in want.splitlines() if SECRET not in x]
            got_lines = [x for x in got.splitlines() if not x.startswith("export OPENAI_API_KEY=")]
            assert got_lines == want_lines
        else:
            assert got == want, (req, len(got), len(want))
    assert restored_any_secret

    # Small byte pages around the key: redaction reads one page at a time, and a key
    # cut across pages matched no pattern (it came back whole over a few pages). Page
    # ends now move off the inside of a token, so no piece of the key shows.
    at = data.index(SECRET.encode())
    small = [
        {"id": calls[0]["id"], "mode": "bytes", "start": at - s, "end": at + 300, "max_bytes": m}
        for m, s in ((8, 0), (8, 5), (37, 100), (100, 23), (4096, 30))
    ]
    small.append(dict(small[0], start=at + 20))  # starting inside the key
    paged = home.run(f"CALLS = {small!r}\n" + RESTORE)
    pieces = {SECRET[k : k + 12] for k in range(len(SECRET) - 11)}
    for req, mine in zip(small, paged, strict=True):
        assert all(p["status"] == "ok" for p in mine), mine[:1]
        got = "".join(p["content"] for p in mine)
        leaked = [x for x in pieces if x in got]
        assert not leaked, (req, leaked, got[:400])
        # Following `next` reads on from each page's real end: the text around the
        # key is all there, once.
        assert mine[0]["start"] <= req["start"] and mine[-1]["end"] >= req["end"]
        for p, q in zip(mine, mine[1:]):
            assert q["start"] == p["end"], (p["start"], p["end"], q["start"])
    tail = data[at + len(SECRET) : at + 300].decode()
    assert all(tail in "".join(p["content"] for p in mine) for mine in paged[:-1])


def test_restore_errors_are_answers_not_exceptions(homes: dict[str, Home]) -> None:
    pages = homes["pip"].run(
        "CALLS = [{'id': 'sn_0123456789abcdef01234567', 'mode': 'full'},"
        " {'id': '../../etc/passwd'}]\n" + RESTORE
    )
    assert [mine[0]["status"] for mine in pages] == ["not_found", "invalid"]
    assert all(isinstance(mine[0]["note"], str) and mine[0]["note"] for mine in pages)


STORE_CHECK = """
import re, stat
from pathlib import Path
out = json.loads(terminal_tool(command=COMMAND, timeout=60))["output"]
sid = re.search(r'id="(sn_[0-9a-f]+)"', out).group(1)
answer({"id": sid, "output": out})
"""


def stored_files(store: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o777 for p in (store / "objects").iterdir()}


def test_originals_go_to_hermes_home_cache(homes: dict[str, Home], tmp_path: Path) -> None:
    command = "for i in $(seq 1 200); do printf '\\rstep %d of 200' $i; done; echo; echo done"
    # HERMES_HOME set: $HERMES_HOME/cache/snip.
    home = Home(tmp_path / "h", homes["pip"].env)
    home.path.mkdir()
    hermes_cli(home.path, "plugins", "enable", "snip", "--no-allow-tool-override")
    got = home.run(f"COMMAND = {command!r}\n" + STORE_CHECK)
    store = home.path / "cache" / "snip"
    assert "step 200 of 200" in got["output"] and "step 2 of" not in got["output"]
    assert stored_files(store).get(got["id"]) == 0o600
    assert store.stat().st_mode & 0o777 == 0o700

    # No HERMES_HOME: Hermes uses ~/.hermes, and so does the store.
    user = tmp_path / "user"
    user.mkdir()
    hermes_cli(
        user, "plugins", "enable", "snip", "--no-allow-tool-override", env={"HOME": str(user)}
    )
    default = Home(user / ".hermes", homes["pip"].env)
    got = default.run(
        f"COMMAND = {command!r}\n" + STORE_CHECK,
        home_from_env=False,
        HOME=str(user),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
    )
    assert got["id"] in stored_files(user / ".hermes" / "cache" / "snip")
    assert not (tmp_path / "xdg").exists()


def test_snip_restore_through_the_terminal_is_not_compressed_again(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    """`snip restore … --raw` run through Hermes's terminal tool: the restored lines
    reach the model whole (over the budget, no new marker); the same bytes from
    another command are compressed (so the check can fail)."""
    snip_bin = os.environ.get("SNIP_BIN") or str(REPO / "target" / "debug" / "snip")
    assert Path(snip_bin).is_file(), f"{snip_bin}: run scripts/test-hermes.sh (it builds it)"
    script = tmp_path / "big.py"
    script.write_text(GENERATOR)
    home = homes["wide"]
    store = str(home.path / "cache" / "snip")
    first = home.run(f"COMMAND = {f'{sys.executable} {script}'!r}\n" + RUN, SNIP_STORE_DIR=store)
    sid = CALL.search(first["output"]).group("id")
    # One page holds the whole range (`--raw` prints one page of at most
    # SNIP_RECOVERY_MAX_BYTES), which is over the budget (24,576 bytes).
    call = f'snip_restore(id="{sid}", mode="lines", start=1, end=800)'
    cmd = f"SNIP_RECOVERY_MAX_BYTES=65536 {snip_bin} restore '{call}' --raw"
    restored = home.run(f"COMMAND = {cmd!r}\n" + RUN, SNIP_STORE_DIR=store)
    want = "".join(original_text(script).splitlines(keepends=True)[:800])
    assert 30_000 < len(want.encode()) < 65_536
    assert restored["exit_code"] == 0, restored
    got = restored["output"]
    assert "[snip: " not in got, got[-600:]
    # A bool, not `==` in the assert: pytest's diff of two 38 KB strings takes minutes.
    same = got.rstrip("\n") == want.rstrip("\n")
    assert same, (len(got), len(want), got[-300:])

    same = tmp_path / "same.txt"
    same.write_text(want)
    cat = home.run(f"COMMAND = {f'cat {same}'!r}\n" + RUN, SNIP_STORE_DIR=store)
    compressed = cat["output"]
    assert "[snip: " in compressed and len(compressed.encode()) < len(want.encode()) - 10_000
