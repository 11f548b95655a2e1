"""A live session of many tool calls, run twice by real Claude Code against the
scripted model (tests/scripted_model/server.py): once directly, once through
`snip wrap claude`. Prints, per request and cumulated, what the model received and
what it would cost with Anthropic's prompt-cache prices; writes the per-request
figures to a CSV. Run by scripts/proxy-live-session.sh (not part of CI).

Cost model (as in crates/snip-proxy/tests/session.rs): tokens are estimated as bytes / 4
of what the prompt cache matches on, as the model received it (`tools`, `system`,
`messages` in that order, compact JSON, `cache_control` markers left out); the longest
common prefix with the previous request of the session is a cache
read at 0.1x the base input price, the rest a cache write at 1.25x; the first request
is all written. Output tokens are the same on both sides (the same script) and left
out. Only the main conversation's requests count (the ones that take a script turn);
the host's side requests (titles, quota probes) are listed apart.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "scripted_model"))
from server import ScriptedModel, tool_results  # noqa: E402

READ, WRITE = 0.1, 1.25
ERROR_LINE = "2026-11-30T12:00:00Z ERROR db: connection refused (code=57P01) while saving order 4242"


def make_project(root: Path) -> None:
    """Files the session reads: a ~28 KB log with one error line (over snip's default
    24 KiB budget, under Claude Code's 30 000-character cut of a Bash output), a
    150-line source file, a small tree."""
    root.mkdir(parents=True)
    lines = [f"2026-11-30T11:{i // 60 % 60:02d}:{i % 60:02d}Z INFO worker-{i % 8}: "
             f"processed batch {i} in {i % 97} ms (queue depth {i % 13})" for i in range(280)]
    lines.insert(140, ERROR_LINE)
    (root / "app.log").write_text("\n".join(lines) + "\n")
    src = root / "src"
    src.mkdir()
    for m in range(12):
        body = [f"def handler_{m}_{i}(request):\n    return respond(request, code={200 + i % 5})\n"
                for i in range(75)]
        (src / f"module_{m}.py").write_text("".join(body))


def commands(n: int) -> list[str]:
    """n Bash commands, a cycle of the shapes an agent runs: listings, file reads,
    searches, a progress loop, a long log every 20th call, one-line statuses."""
    out = []
    for i in range(n):
        m = i % 12
        if i % 20 == 19:
            out.append("cat app.log")
        elif i % 10 == 4:
            out.append("for i in $(seq 1 300); do printf 'step %d/300 building\\r' $i; done; echo; echo built")
        elif i % 5 == 0:
            out.append(f"cat src/module_{m}.py")
        elif i % 5 == 1:
            out.append(f"grep -n 'code=20{i % 5}' src/module_{m}.py")
        elif i % 5 == 2:
            out.append(f"ls src && wc -l src/module_{m}.py")
        else:
            out.append(f"echo 'check {i} ok'")
    return out


def run(mode: str, claude: str, snip: str, calls: int, work: Path) -> list[dict[str, Any]]:
    project = work / mode / "project"
    make_project(project)
    home = work / mode / "home"
    home.mkdir()
    turns: list[Any] = [{"tool_calls": [{"name": "Bash", "arguments": {"command": c, "description": "run"}}]}
                        for c in commands(calls)]
    turns.append({"text": "finished"})
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"), "SNIP_STORE_DIR": str(work / mode / "store"),
                "ANTHROPIC_API_KEY": "sk-scripted", "DISABLE_AUTOUPDATER": "1", "NO_COLOR": "1"})
    args = ["-p", "work through the script", "--allowedTools", "Bash", "--output-format", "json",
            "--max-turns", str(calls + 10)]
    with ScriptedModel(turns, record=str(work / f"{mode}.jsonl")) as model:
        if mode == "direct":
            cmd = [claude, *args]
            env["ANTHROPIC_BASE_URL"] = model.base_url
        else:
            cmd = [snip, "wrap", "claude", "--program", claude, "--upstream", model.base_url, "--", *args]
        r = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0 or model.errors:
        sys.exit(f"{mode}: exit {r.returncode}, errors {model.errors}\n{r.stderr[-2000:]}")
    out = json.loads(r.stdout)
    if out.get("result") != "finished":
        sys.exit(f"{mode}: the session did not finish: {r.stdout[-1000:]}")
    return model.requests


def strip_cache_control(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: strip_cache_control(x) for k, x in v.items() if k != "cache_control"}
    if isinstance(v, list):
        return [strip_cache_control(x) for x in v]
    return v


def wire(body: dict[str, Any]) -> bytes:
    """What the prompt cache matches on: tools, then system, then messages (the API's
    cache order, whatever the body's key order), as compact JSON, without the
    `cache_control` markers (a host moves its last breakpoint on every request; the
    marker is not content)."""
    canon = [body.get("tools"), body.get("system"), body.get("messages")]
    return json.dumps(strip_cache_control(canon), separators=(",", ":"), ensure_ascii=False).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (bytes compare in C)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def costs(requests: list[dict[str, Any]]) -> list[dict[str, float]]:
    rows, prev = [], b""
    for r in requests:
        body = wire(r["body"])
        cached = common_prefix(prev, body)
        tokens, cached_t = len(body) / 4, cached / 4
        rows.append({"bytes": len(body), "tokens": tokens, "cached_tokens": cached_t,
                     "cost": cached_t * READ + (tokens - cached_t) * WRITE,
                     "summaries": sum(v.startswith("[snip: ") for v in tool_results(r["body"]).values()),
                     "markers": sum("restore: snip_restore(id=" in v for v in tool_results(r["body"]).values())})
        prev = body
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude")
    ap.add_argument("--snip")
    ap.add_argument("--keep", help="save the two runs' recorded requests (JSONL) in this folder")
    ap.add_argument("--recorded", help="analyse the requests saved by --keep instead of running")
    ap.add_argument("--calls", type=int, default=120)
    ap.add_argument("--csv", default="target/proxy-live-session.csv")
    a = ap.parse_args()
    if a.recorded:  # analyse the requests of an earlier run (--keep) again
        got = {mode: [json.loads(line) for line in open(Path(a.recorded) / f"{mode}.jsonl")]
               for mode in ("direct", "proxy")}
    else:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            got = {mode: run(mode, a.claude, a.snip, a.calls, work) for mode in ("direct", "proxy")}
            if a.keep:
                Path(a.keep).mkdir(parents=True, exist_ok=True)
                for mode in ("direct", "proxy"):
                    (Path(a.keep) / f"{mode}.jsonl").write_bytes((work / f"{mode}.jsonl").read_bytes())
    main_turns = {m: [r for r in rs if r["api"] == "anthropic" and r["turn"] is not None] for m, rs in got.items()}
    side = {m: len(rs) - len(main_turns[m]) for m, rs in got.items()}
    d, p = costs(main_turns["direct"]), costs(main_turns["proxy"])
    if len(d) != len(p):
        sys.exit(f"the two runs differ in length: {len(d)} vs {len(p)} requests")
    # Requests that do not extend the previous one (through the proxy: releases). The
    # previous request's closing brackets are where the next one goes on, so a prefix
    # that stops within its last 4 bytes is an extension.
    def breaks_of(rows: list[dict[str, float]]) -> list[int]:
        return [i for i, (x, y) in enumerate(zip(rows, rows[1:]), 2) if y["cached_tokens"] * 4 < x["bytes"] - 4]

    breaks, direct_breaks = breaks_of(p), breaks_of(d)
    dearer = [i for i, (x, y) in enumerate(zip(d, p), 1) if y["cost"] > x["cost"]]
    Path(a.csv).parent.mkdir(parents=True, exist_ok=True)
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["request", "direct_tokens", "direct_cached", "direct_cost", "proxy_tokens",
                    "proxy_cached", "proxy_cost", "proxy_summaries", "proxy_markers"])
        for i, (x, y) in enumerate(zip(d, p), 1):
            w.writerow([i, round(x["tokens"]), round(x["cached_tokens"]), round(x["cost"]), round(y["tokens"]),
                        round(y["cached_tokens"]), round(y["cost"]), y["summaries"], y["markers"]])
    print(f"{len(d)} main requests per run ({a.calls} tool calls); side requests: direct {side['direct']}, "
          f"proxy {side['proxy']}; per-request figures in {a.csv}")
    print(f"requests that do not extend the previous one: direct {len(direct_breaks)} ({direct_breaks}), "
          f"through the proxy {len(breaks)} ({breaks})")
    print(f"requests dearer through the proxy than direct: {len(dearer)} ({dearer})")
    print("| calls N | direct tokens (request N) | proxy tokens (request N) | direct cost, cumulative | "
          "proxy cost, cumulative | proxy / direct |")
    print("|---|---|---|---|---|---|")
    cd = cp = 0.0
    for i, (x, y) in enumerate(zip(d, p), 1):
        cd += x["cost"]
        cp += y["cost"]
        if i % 10 == 0 or i == len(d):
            print(f"| {i} | {x['tokens']:,.0f} | {y['tokens']:,.0f} | {cd / 1e6:.3f} M | {cp / 1e6:.3f} M | "
                  f"{cp / cd:.3f} |")
    worst = max((sum(y["cost"] for y in p[:i]) / sum(x["cost"] for x in d[:i]), i) for i in range(1, len(d) + 1))
    print(f"highest cumulative proxy/direct ratio: {worst[0]:.3f} after request {worst[1]}")
    print(f"per request: proxy/direct cost ranges {min(y['cost'] / x['cost'] for x, y in zip(d, p)):.3f}"
          f"..{max(y['cost'] / x['cost'] for x, y in zip(d, p)):.3f}")


if __name__ == "__main__":
    main()
