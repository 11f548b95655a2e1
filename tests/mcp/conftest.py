"""Fixtures for the `snip mcp` end-to-end tests: the real binary, a temporary store
holding real originals (put there by the real `snip hook claude-code`)."""

import json
import os
import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"


def snip_bin() -> str:
    path = os.environ.get("SNIP_BIN") or str(REPO / "target" / "debug" / "snip")
    if not os.access(path, os.X_OK):
        pytest.fail(f"snip binary not found at {path}; build it or set SNIP_BIN")
    return path


# Markers inside JSON string values have their quotes escaped (`id=\\"sn_…\\"`).
MARKER_ID = re.compile(r'\[snip: [^\n]*?id=\\?"(sn_[0-9a-f]+)')


def store_original(store: pathlib.Path, tool: str, response: dict) -> tuple[str, dict]:
    """Runs the hook on a payload; returns the store id and the hook's reply."""
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": {},
        "tool_response": response,
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNIP_")}
    env["SNIP_STORE_DIR"] = str(store)
    out = subprocess.run(
        [snip_bin(), "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        check=True,
    )
    reply = json.loads(out.stdout)
    ids = MARKER_ID.findall(reply["hookSpecificOutput"]["updatedToolOutput"]["stdout"])
    assert ids, "the hook elided nothing"
    return ids[0], reply


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    """A store with two originals: a failing cargo test log and a JSON document."""
    root = tmp_path_factory.mktemp("snip-store")
    log = (CORPUS / "cargo-test-fail-notty.txt").read_bytes()
    log_id, _ = store_original(
        root, "Bash", {"stdout": log.decode(), "stderr": "", "interrupted": False}
    )
    doc = (CORPUS / "pip-inspect-json-notty.txt").read_bytes()
    doc_id, _ = store_original(root, "Bash", {"stdout": doc.decode(), "stderr": "", "interrupted": False})
    return {"dir": root, "log_id": log_id, "log": log, "doc_id": doc_id, "doc": doc}
