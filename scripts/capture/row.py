#!/usr/bin/env python3
"""Finishes one capture: replaces local paths, optionally cuts it to a prefix, checks
the clue, and writes its row into MANIFEST.tsv (rows sorted by file name; the
hand-kept `known_failures` column of an existing row is carried over).

A CLUE starting with `re:` is a regular expression: its first match in the
ANSI-stripped capture becomes the clue.

usage: row.py OUT_DIR FILE COMMAND TTY EXIT CLUE KEEP NOTES CUT_BYTES REPLACE...
REPLACE is FROM=TO pairs applied in order to the raw bytes.
"""
import re
import sys
from pathlib import Path

COLUMNS = [
    "file", "command", "tty", "bytes", "cr_count", "keep", "clue", "split", "bare_cr",
    "esc_count", "lines", "exit_code", "clue_contiguous_in_raw", "capture", "notes",
    "known_failures",
]
ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]+.|.)", re.S)


def main() -> None:
    out_dir, file, command, tty, exit_code, clue, keep, notes, cut = sys.argv[1:10]
    path = Path(out_dir) / file
    data = path.read_bytes()
    for pair in sys.argv[10:]:
        src, dst = pair.split("=", 1)
        data = data.replace(src.encode(), dst.encode())
        command = command.replace(src, dst)
    cut_n = int(cut or 0)
    if cut_n and len(data) > cut_n:
        end = data.rfind(b"\n", 0, cut_n) + 1 or cut_n
        notes = f"{notes}; cut to its first {end} bytes (of {len(data)})".lstrip("; ")
        data = data[:end]
    path.write_bytes(data)
    stripped = ANSI.sub(b"", data)
    if clue.startswith("re:"):
        # A pattern: the clue is its first match in the ANSI-stripped text.
        m = re.search(clue[3:].encode(), stripped)
        if not m:
            sys.exit(f"{file}: clue pattern not found: {clue[3:]!r}")
        clue = m.group(0).decode()
    if clue.encode() not in stripped:
        sys.exit(f"{file}: clue not found in the capture: {clue!r}")
    for field in (command, clue, keep, notes):
        if any(c in field for c in "\t\n\r"):
            sys.exit(f"{file}: a manifest field holds a tab, CR or LF")
    bare_cr = len(re.findall(rb"\r(?!\n)", data))
    row = {
        "file": file,
        "command": command,
        "tty": tty,
        "bytes": str(len(data)),
        "cr_count": str(data.count(b"\r")),
        "keep": keep,
        "clue": clue,
        "split": "new",
        "bare_cr": str(bare_cr),
        "esc_count": str(data.count(b"\x1b")),
        "lines": str(data.count(b"\n")),
        "exit_code": exit_code,
        "clue_contiguous_in_raw": "yes" if clue.encode() in data
        else "no (ANSI inside; present after stripping escapes)",
        "capture": "pty 120x40 (script -qfec, TERM=xterm-256color)" if tty == "yes"
        else "pipes (stdout+stderr merged into one pipe, stdin=/dev/null)",
        "notes": notes,
        "known_failures": "",
    }
    manifest = Path(out_dir) / "MANIFEST.tsv"
    rows = {}
    if manifest.exists():
        lines = manifest.read_text().split("\n")
        head = lines[0].split("\t")
        for line in lines[1:]:
            if line.strip():
                old = dict(zip(head, line.split("\t")))
                if (Path(out_dir) / old["file"]).exists():  # drop rows of removed files
                    rows[old["file"]] = old
    if file in rows:
        row["known_failures"] = rows[file].get("known_failures", "")
    rows[file] = row
    text = "\t".join(COLUMNS) + "\n"
    for name in sorted(rows):
        text += "\t".join(rows[name].get(c, "") for c in COLUMNS) + "\n"
    manifest.write_text(text)
    print(f"{file}: {len(data)} bytes, exit {exit_code}")


main()
