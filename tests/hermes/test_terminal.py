"""Foreground terminal output through ``tools.terminal_tool.terminal_tool``, with and
without the plugin (``transform_terminal_output``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Home

# A 300-step progress loop in the tqdm style: one line of `\r` frames, then a
# closing line.
PROGRESS = r"""
import sys, time
for i in range(301):
    bar = "#" * (i // 10)
    sys.stdout.write("\rtraining: %3d%%|%-30s| %d/300 [00:%02d<00:00, 97.3it/s]"
                     % (i * 100 // 300, bar, i, i % 60))
    sys.stdout.flush()
sys.stdout.write("\nfinished: 300 steps, loss 0.0123\n")
"""
FINAL_FRAME = "training: 100%|" + "#" * 30 + "| 300/300"
CLOSING = "finished: 300 steps, loss 0.0123"

RUN = """
out = json.loads(terminal_tool(command=COMMAND, timeout=120))
answer(out)
"""

# Runs COMMAND, then pages the original of its first marker back from the store.
RUN_AND_FETCH_ORIGINAL = """
import re, snip
result = json.loads(terminal_tool(command=COMMAND, timeout=120))
sid = re.search(r'snip_restore\\(id="(sn_[0-9a-f]+)"', result["output"]).group(1)
parts, start = [], 0
while start is not None:
    page = snip.restore(sid, "bytes", start=start, max_bytes=65536)
    assert page["status"] == "ok", page
    parts.append(page["content"])
    start = page["next"]
answer({"result": result, "original": "".join(parts)})
"""


def terminal(home: Home, command: str) -> dict:
    return home.run(f"COMMAND = {command!r}\n" + RUN)


def frames_marker(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("[snip:")]


def test_progress_loop_keeps_final_frame_and_is_50x_shorter(
    homes: dict[str, Home], tmp_path: Path
) -> None:
    script = tmp_path / "progress.py"
    script.write_text(PROGRESS)
    command = f"{sys.executable} {script}"
    plain = terminal(homes["plain"], command)
    snipped = terminal(homes["pip"], command)

    assert plain["output"].count("\r") >= 300  # Hermes passes the raw frames on
    out = snipped["output"]
    assert snipped["exit_code"] == plain["exit_code"] == 0
    assert FINAL_FRAME in out and CLOSING in out
    assert "\r" not in out
    assert removed_frames(frames_marker(out)) == 300, out  # 301 frames, 1 shown
    assert len(plain["output"]) >= 50 * len(out), (len(plain["output"]), len(out), out)


def make_repo(path: Path, files: int = 1200) -> None:
    """A repository of a few thousand objects, with deltas (so the clone draws every
    progress phase: counting, compressing, receiving, resolving)."""
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-C", str(path)]
    path.mkdir()
    subprocess.run([*git, "init", "-q"], check=True)
    body = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(40))
    for i in range(files):
        (path / f"f{i:04d}.txt").write_text(f"file {i}\n{body}")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    for i in range(files):
        (path / f"f{i:04d}.txt").write_text(f"file {i} changed\n{body}tail {i}\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)


def removed_frames(markers: list[str]) -> int:
    """The frame count a terminal-render marker reports ("... 207 ... frames ...")."""
    counts = [re.search(r"(\d+)[^\d\]]*frames", m) for m in markers if "terminal-render" in m]
    assert counts and counts[0], markers
    return int(counts[0].group(1))


def test_git_clone_progress(homes: dict[str, Home], tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_repo(src)
    objects = subprocess.run(
        ["git", "-C", str(src), "rev-list", "--objects", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.count("\n")
    assert objects > 2000

    command = f"cd {tmp_path} && git clone --progress --no-local file://{src} b"
    plain = terminal(homes["plain"], command.replace(" b", " a"))
    # With the plugin; the original the hook saw comes back from the store.
    got = homes["pip"].run(f"COMMAND = {command!r}\n" + RUN_AND_FETCH_ORIGINAL)
    snipped, original = got["result"], got["original"]
    assert plain["exit_code"] == snipped["exit_code"] == 0
    raw, out = plain["output"], snipped["output"]
    assert raw.count("\r") > 300 and original.count("\r") > 300
    assert "\r" not in out
    # The 'Cloning into' line and the closing line of each phase survive.
    assert "Cloning into 'b'..." in out
    phases = ("Counting objects", "Compressing objects", "Receiving objects", "Resolving deltas")
    for phase in phases:
        done = [x for x in out.splitlines() if phase in x and "100%" in x and "done." in x]
        assert done, (phase, out)
    # The marker counts the removed frames: every redraw but the few that became
    # lines of their own (text written between redraws, e.g. `remote: Total`).
    lines = [x for x in out.splitlines() if not x.startswith("[snip:")]
    frames = original.count("\r")
    assert frames - len(lines) <= removed_frames(frames_marker(out)) <= frames
    # Only removes: every line shown is a frame (or line) of the original.
    segments = set(original.replace("\r", "\n").split("\n"))
    assert all(x.rstrip() in {s.rstrip() for s in segments} for x in lines), out
    # git draws about 101 frames per phase and the last one of each is kept, so a
    # single clone cannot shrink 50x (see docs/hermes.md); it shrinks by what a
    # terminal would show, about 30x here.
    assert len(raw) >= 25 * len(out), (len(raw), len(out), out)
    assert len(original) >= 25 * len(out)


@pytest.mark.parametrize(
    "command",
    [
        "seq 1 3000",  # 13,893 bytes of distinct lines: nothing to remove
        "echo hello",
        "printf 'a\\nb\\nc\\n'; exit 3",
    ],
)
def test_plain_and_small_output_identical(homes: dict[str, Home], command: str) -> None:
    assert terminal(homes["pip"], command) == terminal(homes["plain"], command)


def test_hermes_truncation_line_survives(homes: dict[str, Home], tmp_path: Path) -> None:
    """Over Hermes's own cap (50,000 chars by default) Hermes cuts the middle and writes
    its `[OUTPUT TRUNCATED - ...]` line; snip keeps that line and compresses both
    sides of it."""
    script = tmp_path / "long.py"
    script.write_text(
        "for i in range(6000):\n"
        "    print(f'{i:05d} compiling module_{i} with flags -O2 -g -fPIC -Wall')\n"
    )
    command = f"{sys.executable} {script}"
    plain = terminal(homes["plain"], command)["output"]
    out = terminal(homes["pip"], command)["output"]
    notice = (
        r"\n\n\.\.\. \[OUTPUT TRUNCATED - [0-9,]+ chars omitted out of [0-9,]+ total\] "
        r"\.\.\.\n\n"
    )
    assert re.search(notice, plain), plain[:500]
    # (The counts differ between runs: Hermes's cwd bookkeeping is in the stream.)
    assert re.search(notice, out), out
    assert len(out.encode()) < len(plain.encode())
    assert out.startswith("00000 compiling module_0 ")
    assert out.rstrip().endswith("05999 compiling module_5999 with flags -O2 -g -fPIC -Wall")
    assert frames_marker(out)
