#!/usr/bin/env python3
"""Benchmark of snip in-process from Python, and of the Hermes plugin's added latency.

Run in the Hermes venv (scripts/test-hermes.sh builds it):

    .venv-hermes/bin/python scripts/bench-python.py [--runs N] [--new-runs N] [--gap-ms G]
        [--big-mb N] [--e2e-runs N] [--clock thread|wall]

Inputs: the 26 captures of fixtures/corpus/, each cut to its first 50,000 bytes on a
line boundary (what reaches Hermes's hook under its default 50,000-char cap; shorter
captures whole). For each it prints the median (and p90) time of:

- ``snip.compress(text, store=False)``: the core through the bindings, no disk;
- ``snip.compress(text)`` with a store in a temp dir: what the plugin does (the same
  text each call, so after the first call the store finds the original kept);
- ``snip.compress(text)`` on a new original each call (a counter line in front): the
  store writes a new entry every time (``--new-runs`` calls, the store emptied per
  capture); also printed, the mean CPU time of the whole process per call (every
  thread: the module makes the next entry's file on a thread of its own after each
  call);
- ``transform_terminal_output(...)``: the plugin's whole hook (the added latency of a
  terminal call), on the same text and on a new output each call;

and, measured in the same run as references: ``text.encode()`` (one copy of the
text: the least any in-process pass costs) and a pure-Python carriage-return squash (each
line's last redrawn frame: the job of the progress-squash plugin, in Python).

Then, with ``--big-mb N`` (default 50; 0 skips), a generated N MB mixed log through
``snip.compress`` in a fresh process: its time (MB/s), its peak RSS against the input's
size, and, when ``SNIP_BIN`` (or target/release/snip) exists, the CLI's ``snip < FILE``
time, peak RSS and whether the outputs are the same bytes (ids masked).

- with ``--e2e-runs``: ``terminal_tool("cat <file>")`` with and without the plugin's
  hooks, whose difference is the added latency seen end to end (noisy: each call
  spawns a shell).

Times are per call, one call at a time, after warm-up, measured with the thread's
CPU clock (time.thread_time_ns; stable on a busy machine, where wall time also counts
the time other processes hold the core) or, with ``--clock wall``,
time.perf_counter_ns. With ``--gap-ms G``, every timed call follows a pause of G ms
(untimed), standing for the command that makes the next output: caches go cold, as in
a session, and the module's thread has time to make the next entry's file. The big
input is timed on the wall clock.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hermes"))
from biglog import mixed_log  # noqa: E402  (the big-input test's generator)
CORPUS = REPO / "fixtures" / "corpus"
SIZE = 50_000


def inputs() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CORPUS.glob("*.txt")):
        data = path.read_bytes()
        if len(data) > SIZE:
            # Cut after the last line ending or redraw before 50,000 bytes.
            cut = max(data.rfind(b"\n", 0, SIZE), data.rfind(b"\r", 0, SIZE)) + 1 or SIZE
            data = data[:cut]
        out.append((path.name, data.decode("utf-8", "replace")))
    return out


def squash(text: str) -> str:
    """The reference: each line's last frame after carriage-return redraws, in Python."""
    return "\n".join(
        line if "\r" not in line.rstrip("\r") else line.rstrip("\r").rsplit("\r", 1)[-1]
        for line in text.split("\n")
    )


CLOCK = time.thread_time_ns


#: The process's CPU time per call (µs, all threads) of the last :func:`timed` run.
PROCESS_CPU = 0.0


#: The pause before each timed call (seconds; ``--gap-ms``).
GAP = 0.0


def timed(fn, runs: int) -> tuple[float, float]:
    """Median and p90 of ``fn()`` in microseconds, each call after a pause of ``GAP``
    seconds (untimed)."""
    global PROCESS_CPU
    gap = GAP
    for _ in range(min(50, runs)):
        if gap:
            time.sleep(gap)
        fn()
    samples = []
    p0 = time.process_time_ns()
    for _ in range(runs):
        if gap:
            time.sleep(gap)
        t0 = CLOCK()
        fn()
        samples.append((CLOCK() - t0) / 1000)
    PROCESS_CPU = (time.process_time_ns() - p0) / runs / 1000
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000, help="calls per measurement")
    ap.add_argument("--new-runs", type=int, default=200, help="calls on new originals")
    ap.add_argument(
        "--gap-ms", type=float, default=0.0, help="pause before each timed call"
    )
    ap.add_argument("--big-mb", type=int, default=50, help="size of the big input (0: skip)")
    ap.add_argument("--e2e-runs", type=int, default=0, help="terminal_tool calls per side")
    ap.add_argument("--clock", choices=("thread", "wall"), default="thread")
    args = ap.parse_args()
    global CLOCK, GAP
    CLOCK = time.thread_time_ns if args.clock == "thread" else time.perf_counter_ns
    GAP = args.gap_ms / 1000

    home = tempfile.mkdtemp(prefix="snip-bench-hermes-")
    os.environ["HERMES_HOME"] = home
    for k in [k for k in os.environ if k.startswith("SNIP_")]:
        del os.environ[k]

    import snip
    import snip.hermes as plugin

    print(
        f"snip {snip.__version__}, Python {sys.version.split()[0]}, store {home}/cache/snip, "
        f"{args.clock} clock"
    )
    print(
        f"{'input (first 50,000 bytes)':40} {'bytes':>7} {'out':>6}  "
        f"{'core µs':>14}  {'+store µs':>14}  {'+new entry µs':>14}  {'hook µs':>14}  "
        f"{'hook new µs':>14}  "
        f"{'encode µs':>14}  {'py squash µs':>14}"
    )
    keys = ("core", "store", "new", "hook", "hook new", "encode", "squash")
    medians: dict[str, list[float]] = {k: [] for k in keys}
    store_dir = Path(home) / "cache" / "snip"
    new_process: list[float] = []
    for name, text in inputs():
        r = snip.compress(text)
        core = timed(lambda t=text: snip.compress(t, store=False), args.runs)
        stored = timed(lambda t=text: snip.compress(t), args.runs)
        shutil.rmtree(store_dir, ignore_errors=True)
        count = iter(range(10**9))
        new = timed(lambda t=text, c=count: snip.compress(f"{next(c)}\n{t}"), args.new_runs)
        new_process.append(PROCESS_CPU)
        shutil.rmtree(store_dir, ignore_errors=True)
        hook_new = timed(
            lambda t=text, c=count: plugin.transform_terminal_output(
                command="x", output=f"{next(c)}\n{t}", returncode=0
            ),
            args.new_runs,
        )
        shutil.rmtree(store_dir, ignore_errors=True)
        hook = timed(
            lambda t=text: plugin.transform_terminal_output(command="x", output=t, returncode=0),
            args.runs,
        )
        encode = timed(lambda t=text: t.encode(), args.runs)
        squashed = timed(lambda t=text: squash(t), args.runs)
        row = (core, stored, new, hook, hook_new, encode, squashed)
        for key, value in zip(keys, row, strict=True):
            medians[key].append(value[0])
        print(
            f"{name:40} {len(text.encode()):>7} {r['output_bytes']:>6}  "
            + "  ".join(f"{v[0]:>6.1f} (p90 {v[1]:>5.0f})" for v in row)
        )
    print(
        f"median over the {len(medians['core'])} inputs: "
        + ", ".join(f"{k} {statistics.median(v):.1f} µs" for k, v in medians.items())
    )
    print(
        f"new entry (gap {args.gap_ms:g} ms): the process's CPU per call, every thread, "
        f"median over the inputs {statistics.median(new_process):.1f} µs"
    )

    if args.big_mb:
        big(args.big_mb)
    if args.e2e_runs:
        end_to_end(args.e2e_runs)
    shutil.rmtree(home, ignore_errors=True)
    return 0


# Run in a fresh process: reads the input as a str, resets the kernel's peak-RSS mark
# (/proc/self/clear_refs), compresses, and prints the input's size, the RSS before the
# call and the peak during it (bytes, VmRSS and VmHWM), and the call's wall and CPU
# seconds; writes the output to argv[2].
BIG_CHILD = """
import sys, time, snip
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
data = open(sys.argv[1], "rb").read()
text = data.decode()
del data
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
t0, c0 = time.perf_counter(), time.process_time()
r = snip.compress(text)
took, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = status("VmHWM")
open(sys.argv[2], "w", encoding="utf-8").write(r["output"])
print(len(text.encode()), before, peak, took, cpu)
"""


def big(mb: int) -> None:
    """``snip.compress`` on an ``mb`` MB input, next to ``snip < FILE``."""
    work = Path(tempfile.mkdtemp(prefix="snip-bench-big-"))
    try:
        big_in(work, mb)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def big_in(work: Path, mb: int) -> None:
    """:func:`big` with its files in ``work``."""
    path = work / "big.log"
    path.write_bytes(mixed_log(mb * 1_000_000))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
    env["SNIP_STORE_DIR"] = str(work / "store")
    child = subprocess.run(
        [sys.executable, "-c", BIG_CHILD, str(path), str(work / "py.out")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    size, before, peak = (int(x) for x in child[:3])
    took, cpu = float(child[3]), float(child[4])
    print(
        f"big input {size:,} bytes (str): snip.compress {took * 1000:.0f} ms wall "
        f"({size / took / 1e6:.0f} MB/s), {cpu * 1000:.0f} ms CPU ({size / cpu / 1e6:.0f} MB/s); "
        f"peak RSS during the call {peak / 2**20:.0f} MiB = {peak / size:.2f}x the input "
        f"(RSS before it {before / 2**20:.0f} MiB: the interpreter and the input)"
    )
    snip_bin = os.environ.get("SNIP_BIN") or str(REPO / "target" / "release" / "snip")
    if not os.access(snip_bin, os.X_OK):
        print(f"  CLI reference skipped: no {snip_bin} (set SNIP_BIN)")
        return
    time_bin = shutil.which("time") or "/usr/bin/time"
    t0 = time.perf_counter()
    with path.open("rb") as stdin, (work / "cli.out").open("wb") as out:
        done = subprocess.run(
            [time_bin, "-f", "%M %U %S", snip_bin],
            stdin=stdin,
            stdout=out,
            stderr=subprocess.PIPE,
            env=env,
            check=True,
        )
    cli_took = time.perf_counter() - t0
    rss_kib, user, system = done.stderr.split()[-3:]
    cli_rss, cli_cpu = int(rss_kib) * 1024, float(user) + float(system)
    mask = re.compile(rb"sn_[0-9a-f]{24}")
    same = mask.sub(b"sn_ID", (work / "py.out").read_bytes()) == mask.sub(
        b"sn_ID", (work / "cli.out").read_bytes()
    )
    print(
        f"  reference snip < FILE ({snip_bin}): {cli_took * 1000:.0f} ms wall including "
        f"start-up ({size / cli_took / 1e6:.0f} MB/s), {cli_cpu * 1000:.0f} ms CPU, "
        f"peak RSS {cli_rss / 2**20:.0f} MiB; "
        f"{(work / 'cli.out').stat().st_size:,} bytes out, "
        f"{'the same bytes' if same else 'DIFFERENT bytes'} as snip.compress (ids masked)"
    )


def end_to_end(runs: int) -> None:
    from hermes_cli.plugins import discover_plugins, get_plugin_manager

    discover_plugins()
    import snip.hermes as plugin
    from tools.terminal_tool import terminal_tool

    manager = get_plugin_manager()
    for name, text in inputs()[:2]:
        path = Path(tempfile.mkdtemp()) / name
        path.write_text(text)
        command = f"cat {path}"
        results = {}
        for label, hooked in (("without plugin", False), ("with plugin", True)):
            manager._hooks["transform_terminal_output"] = (
                [plugin.transform_terminal_output] if hooked else []
            )
            results[label] = timed(lambda c=command: terminal_tool(command=c), runs)
        print(
            f"terminal_tool('cat {name}'): "
            + ", ".join(f"{k} {v[0] / 1000:.2f} ms" for k, v in results.items())
        )


if __name__ == "__main__":
    raise SystemExit(main())
