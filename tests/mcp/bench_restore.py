"""Median round-trip time of `snip_restore` over an open stdio session (Python `mcp`
client), in milliseconds. Usage: bench_restore.py SNIP_BIN STORE_DIR ID [N]."""

import os
import statistics
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(snip: str, store: str, sid: str, n: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
    env["SNIP_STORE_DIR"] = store
    params = StdioServerParameters(command=snip, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            args = {"id": sid, "mode": "lines", "start": 1, "end": 40}
            for _ in range(20):  # warm up
                await s.call_tool("snip_restore", args)
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                r = await s.call_tool("snip_restore", args)
                times.append((time.perf_counter() - t0) * 1000)
                assert r.structured_content["status"] == "ok"
    times.sort()
    print(
        f"snip_restore round trip over {n} calls: median {statistics.median(times):.3f} ms, "
        f"p90 {times[int(n * 0.9)]:.3f} ms, min {times[0]:.3f} ms"
    )


if __name__ == "__main__":
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 500
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], n)
