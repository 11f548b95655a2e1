"""A generated build log for the big-input test and scripts/bench-python.py (one
generator, so the bench measures the input the test checks)."""

from __future__ import annotations


def mixed_log(size: int) -> bytes:
    """A build log of ``size`` bytes or a little more: coloured lines, progress
    frames redrawn with ``\\r``, runs of one repeated line, and an error now and then
    (salient lines the stream keeps)."""
    parts: list[bytes] = []
    total = 0
    i = 0
    while total < size:
        block = (
            f"\x1b[32m   Compiling\x1b[0m crate-{i} v0.{i % 7}.{i % 13} (/src/crate-{i})\n"
            + "".join(f"\rfetching {p:3d}%" for p in range(0, 101, 10))
            + "\n"
            + "warning: unused import\n" * (i % 4)
            + (f"error[E0{i % 900:03d}]: mismatched types in crate-{i}\n" if i % 97 == 0 else "")
            + f"test module_{i}::case_{i % 31} ... ok\n"
        ).encode()
        parts.append(block)
        total += len(block)
        i += 1
    return b"".join(parts)
