#!/usr/bin/env python3
"""Benchmark of snip in-process from Python, and of the Hermes plugin's added latency.

Run in the Hermes venv (scripts/test-hermes.sh builds it):

    .venv-hermes/bin/python scripts/bench-python.py [--runs N] [--e2e-runs N]

Inputs: the tty captures of fixtures/corpus/ that are at least 50,000 bytes, cut to
their first 50,000 bytes on a line boundary (what reaches Hermes's hook under its
default 50,000-char cap). For each it prints the median (and p90) time of:

- ``snip.compress(text, store=False)``: the core through the bindings, no disk;
- ``snip.compress(text)`` with a store in a temp dir: what the plugin does;
- ``transform_terminal_output(...)``: the plugin's whole hook (the added latency of a
  terminal call);
- with ``--e2e-runs``: ``terminal_tool("cat <file>")`` with and without the plugin's
  hooks, whose difference is the added latency seen end to end (noisy: each call
  spawns a shell).

Times are per call, one call at a time, after warm-up, measured with the thread's
CPU clock (time.thread_time_ns; stable on a busy machine, where wall time also counts
the time other processes hold the core) or, with ``--clock wall``,
time.perf_counter_ns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "fixtures" / "corpus"
SIZE = 50_000


def inputs() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CORPUS.glob("*-tty.txt")):
        data = path.read_bytes()
        if len(data) < SIZE:
            continue
        # Cut after the last line ending or redraw before 50,000 bytes.
        cut = max(data.rfind(b"\n", 0, SIZE), data.rfind(b"\r", 0, SIZE)) + 1 or SIZE
        out.append((path.name, data[:cut].decode("utf-8", "replace")))
    return out


CLOCK = time.thread_time_ns


def timed(fn, runs: int) -> tuple[float, float]:
    """Median and p90 of ``fn()`` in microseconds."""
    for _ in range(min(50, runs)):
        fn()
    samples = []
    for _ in range(runs):
        t0 = CLOCK()
        fn()
        samples.append((CLOCK() - t0) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000, help="calls per measurement")
    ap.add_argument("--e2e-runs", type=int, default=0, help="terminal_tool calls per side")
    ap.add_argument("--clock", choices=("thread", "wall"), default="thread")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time_ns if args.clock == "thread" else time.perf_counter_ns

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
        f"{'core µs':>14}  {'+store µs':>14}  {'hook µs':>14}"
    )
    medians: dict[str, list[float]] = {"core": [], "store": [], "hook": []}
    for name, text in inputs():
        r = snip.compress(text)
        core = timed(lambda t=text: snip.compress(t, store=False), args.runs)
        stored = timed(lambda t=text: snip.compress(t), args.runs)
        hook = timed(
            lambda t=text: plugin.transform_terminal_output(command="x", output=t, returncode=0),
            args.runs,
        )
        for key, value in (("core", core), ("store", stored), ("hook", hook)):
            medians[key].append(value[0])
        print(
            f"{name:40} {len(text.encode()):>7} {r['output_bytes']:>6}  "
            f"{core[0]:>6.1f} (p90 {core[1]:>5.0f})  {stored[0]:>6.1f} (p90 {stored[1]:>5.0f})  "
            f"{hook[0]:>6.1f} (p90 {hook[1]:>5.0f})"
        )
    print(
        "median of the medians: "
        + ", ".join(f"{k} {statistics.median(v):.1f} µs" for k, v in medians.items())
    )

    if args.e2e_runs:
        end_to_end(args.e2e_runs)
    return 0


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
