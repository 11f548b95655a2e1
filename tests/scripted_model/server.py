"""A scripted model on 127.0.0.1 for live tests of real hosts (standard library only).

It speaks three provider APIs, answers from a script, and records every request.

Endpoints (any path prefix; matched on the path's end):

- ``POST …/messages``                Anthropic Messages, streaming SSE when the body
                                     has ``"stream": true``, else one JSON message.
- ``POST …/messages/count_tokens``   Anthropic token count: ``{"input_tokens": N}``
                                     with N = request body bytes / 4 (no turn used).
- ``POST …/chat/completions``        OpenAI Chat Completions, streaming or not.
- ``POST …/responses``               OpenAI Responses, streaming SSE
                                     (``response.created``, ``response.in_progress``,
                                     ``response.output_item.added``/``.done``, text and
                                     function-call argument deltas,
                                     ``response.completed``) or one JSON response.
- anything else                      404 with an empty body.

The script is a list of turns, used in order. A request *takes a turn* only when it
offers tools (a non-empty ``tools`` list): the hosts' side requests (titles, quota
probes, summaries) get the text ``"ok"`` and leave the script where it was. When the
script is used up, every further turn is the text ``"done"``. A turn is one of:

- ``{"text": "…"}``                                 the model answers in text
- ``{"tool_calls": [{"name": "Bash", "arguments": {…}, "id": "…"?}, …]}``
- ``{"restore_from_marker": {"tool": "mcp__snip__snip_restore", "nth": 0}}``
  a computed turn: the request's tool results (Anthropic ``tool_result`` blocks,
  Chat ``role: "tool"`` messages, Responses ``function_call_output`` items) are
  searched, newest first, for the first one quoting a marker's restore call
  (``restore: NAME(id="sn_…", mode="lines", start=1, end=2)``, any NAME); its
  ``nth`` call (0-based; negative counts from the end) becomes a call of ``tool``
  with the call's ``key=value`` pairs as arguments (numbers as integers).
  With no marker anywhere, the turn is the text ``"no marker found"``.
- (Python only) a function ``f(request_body) -> turn``.

Recording: every request is appended, as it arrives, to a JSONL file (when given) and
to ``ScriptedModel.requests``: ``{"api": "anthropic"|"chat"|"responses"|
"count_tokens"|"other", "path": str, "turn": int|null, "body": <request JSON>}``;
``turn`` is the 0-based index of the script turn it took (null for side requests).

Use from Python::

    with ScriptedModel(turns, record="requests.jsonl") as m:
        m.base_url      # "http://127.0.0.1:PORT" (add "/v1" for OpenAI clients)
        ...             # run the host
        m.requests      # what it received

Use as a script (prints the port on stdout, serves until killed)::

    python3 server.py --script turns.json [--record requests.jsonl] [--port 0]

Helpers: ``tool_results(body)`` maps tool-call id to result text for every tool
result in a request (any of the three APIs, in conversation order);
``restore_calls(text)`` lists the restore calls quoted in markers as
``(name, arguments)``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Turn = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

#: A restore call inside a marker: ``restore: NAME(args)`` up to the closing ``)]``.
_CALL = re.compile(r"restore: ([A-Za-z0-9_]+)\((.*?)\)\]")
_ARG = re.compile(r'(\w+)=(?:"((?:[^"\\]|\\.)*)"|(-?\d+))')


def restore_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The restore calls quoted in the markers of ``text``, as (tool name, arguments)."""
    out = []
    for m in _CALL.finditer(text):
        args: dict[str, Any] = {}
        for a in _ARG.finditer(m.group(2)):
            if a.group(3) is not None:
                args[a.group(1)] = int(a.group(3))
            else:
                args[a.group(1)] = json.loads('"' + a.group(2) + '"')
        out.append((m.group(1), args))
    return out


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    out.append(block["text"])
                elif "content" in block:
                    out.extend(_texts(block["content"]))
            elif isinstance(block, str):
                out.append(block)
        return out
    return []


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """Every tool result of the request, tool-call id → text, in conversation order."""
    out: dict[str, str] = {}
    if isinstance(body.get("input"), list):  # Responses
        for item in body["input"]:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out[str(item.get("call_id"))] = "\n".join(_texts(item.get("output")))
        return out
    for m in body.get("messages") or []:
        if m.get("role") == "tool":  # Chat
            out[str(m.get("tool_call_id"))] = "\n".join(_texts(m.get("content")))
        elif m.get("role") == "user" and isinstance(m.get("content"), list):  # Anthropic
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out[str(b.get("tool_use_id"))] = "\n".join(_texts(b.get("content")))
    return out


def _resolve(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    if callable(turn):
        return turn(body)
    spec = turn.get("restore_from_marker")
    if spec is None:
        return turn
    calls: list[tuple[str, dict[str, Any]]] = []
    for text in reversed(list(tool_results(body).values())):
        calls = restore_calls(text)
        if calls:
            break
    nth = int(spec.get("nth", 0))
    if not calls or not -len(calls) <= nth < len(calls):
        return {"text": "no marker found"}
    return {"tool_calls": [{"name": spec["tool"], "arguments": calls[nth][1]}]}


class ScriptedModel:
    """The server; a context manager. ``base_url`` has no path."""

    def __init__(self, script: list[Turn], record: str | None = None, port: int = 0) -> None:
        self.script = list(script)
        self.next_turn = 0
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.record = record
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                model._note("other", self.path, None, None)
                self._send(404, b"", "text/plain")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                path = self.path.split("?")[0].rstrip("/")
                if path.endswith("/count_tokens"):
                    model._note("count_tokens", path, None, body)
                    self._json({"input_tokens": max(1, len(raw) // 4)})
                    return
                api = (
                    "anthropic" if path.endswith("/messages")
                    else "chat" if path.endswith("/chat/completions")
                    else "responses" if path.endswith("/responses")
                    else None
                )
                if api is None:
                    model._note("other", path, None, body)
                    self._send(404, b"", "text/plain")
                    return
                turn_no, turn = model._take(api, path, body)
                stream = bool(body.get("stream"))
                usage_in = max(1, len(raw) // 4)
                if api == "anthropic":
                    self._anthropic(turn, stream, usage_in, turn_no)
                elif api == "chat":
                    self._chat(turn, stream, usage_in, turn_no)
                else:
                    self._responses(turn, stream, usage_in, turn_no)

            # -- plumbing ------------------------------------------------------
            def _send(self, code: int, data: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, obj: Any) -> None:
                self._send(200, json.dumps(obj).encode(), "application/json")

            def _sse_start(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

            def _event(self, name: str | None, obj: Any) -> None:
                head = f"event: {name}\n" if name else ""
                self.wfile.write(f"{head}data: {json.dumps(obj)}\n\n".encode())
                self.wfile.flush()

            # -- Anthropic Messages -------------------------------------------
            def _anthropic(self, turn: dict[str, Any], stream: bool, usage_in: int, n: Any) -> None:
                blocks: list[dict[str, Any]] = []
                if turn.get("text") is not None:
                    blocks.append({"type": "text", "text": turn["text"]})
                for i, c in enumerate(turn.get("tool_calls") or []):
                    blocks.append({
                        "type": "tool_use",
                        "id": c.get("id") or f"toolu_{n}_{i}",
                        "name": c["name"],
                        "input": c.get("arguments") or {},
                    })
                stop = "tool_use" if turn.get("tool_calls") else "end_turn"
                msg = {
                    "id": f"msg_{len(model.requests)}", "type": "message", "role": "assistant",
                    "model": "scripted", "content": blocks, "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": usage_in, "output_tokens": 5},
                }
                if not stream:
                    self._json(msg)
                    return
                self._sse_start()
                self._event("message_start", {"type": "message_start", "message": {
                    **msg, "content": [], "stop_reason": None,
                    "usage": {"input_tokens": usage_in, "output_tokens": 1}}})
                for i, b in enumerate(blocks):
                    if b["type"] == "text":
                        self._event("content_block_start", {"type": "content_block_start", "index": i,
                                                            "content_block": {"type": "text", "text": ""}})
                        self._event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                            "delta": {"type": "text_delta", "text": b["text"]}})
                    else:
                        self._event("content_block_start", {"type": "content_block_start", "index": i,
                                                            "content_block": {**b, "input": {}}})
                        args = json.dumps(b["input"])
                        half = len(args) // 2  # arguments arrive in two pieces
                        for part in (args[:half], args[half:]):
                            self._event("content_block_delta", {
                                "type": "content_block_delta", "index": i,
                                "delta": {"type": "input_json_delta", "partial_json": part}})
                    self._event("content_block_stop", {"type": "content_block_stop", "index": i})
                self._event("message_delta", {"type": "message_delta",
                                              "delta": {"stop_reason": stop, "stop_sequence": None},
                                              "usage": {"output_tokens": 5}})
                self._event("message_stop", {"type": "message_stop"})

            # -- OpenAI Chat Completions --------------------------------------
            def _chat(self, turn: dict[str, Any], stream: bool, usage_in: int, n: Any) -> None:
                calls = [
                    {"id": c.get("id") or f"call_{n}_{i}", "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})}}
                    for i, c in enumerate(turn.get("tool_calls") or [])
                ]
                text = turn.get("text")
                finish = "tool_calls" if calls else "stop"
                usage = {"prompt_tokens": usage_in, "completion_tokens": 5, "total_tokens": usage_in + 5}
                base = {"id": f"chatcmpl-{len(model.requests)}", "created": 0, "model": "scripted"}
                if not stream:
                    message: dict[str, Any] = {"role": "assistant", "content": text}
                    if calls:
                        message["tool_calls"] = calls
                    self._json({**base, "object": "chat.completion", "usage": usage,
                                "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
                    return
                self._sse_start()

                def chunk(choices: list[Any], **extra: Any) -> None:
                    self._event(None, {**base, "object": "chat.completion.chunk", "choices": choices, **extra})

                if text is not None:
                    chunk([{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": text}}])
                for i, c in enumerate(calls):
                    args = c["function"]["arguments"]
                    half = len(args) // 2
                    chunk([{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "tool_calls": [
                        {"index": i, "id": c["id"], "type": "function",
                         "function": {"name": c["function"]["name"], "arguments": args[:half]}}]}}])
                    chunk([{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                        {"index": i, "function": {"arguments": args[half:]}}]}}])
                chunk([{"index": 0, "delta": {}, "finish_reason": finish}])
                chunk([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            # -- OpenAI Responses ---------------------------------------------
            def _responses(self, turn: dict[str, Any], stream: bool, usage_in: int, n: Any) -> None:
                rid = f"resp_{len(model.requests)}"
                items: list[dict[str, Any]] = []
                if turn.get("text") is not None:
                    items.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                                  "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]})
                for i, c in enumerate(turn.get("tool_calls") or []):
                    items.append({"type": "function_call", "id": f"fc_{n}_{i}",
                                  "call_id": c.get("id") or f"call_{n}_{i}", "name": c["name"],
                                  "arguments": json.dumps(c.get("arguments") or {}), "status": "completed"})
                usage = {"input_tokens": usage_in, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": usage_in + 5}
                done = {"id": rid, "object": "response", "created_at": 0, "status": "completed",
                        "model": "scripted", "output": items, "usage": usage}
                if not stream:
                    self._json(done)
                    return
                self._sse_start()
                seq = iter(range(1_000_000))

                def ev(kind: str, **fields: Any) -> None:
                    self._event(kind, {"type": kind, "sequence_number": next(seq), **fields})

                pending = {**done, "status": "in_progress", "output": [], "usage": None}
                ev("response.created", response=pending)
                ev("response.in_progress", response=pending)
                for idx, item in enumerate(items):
                    if item["type"] == "message":
                        text = item["content"][0]["text"]
                        ev("response.output_item.added", output_index=idx,
                           item={**item, "status": "in_progress", "content": []})
                        part = {"type": "output_text", "text": "", "annotations": []}
                        ev("response.content_part.added", item_id=item["id"], output_index=idx,
                           content_index=0, part=part)
                        ev("response.output_text.delta", item_id=item["id"], output_index=idx,
                           content_index=0, delta=text)
                        ev("response.output_text.done", item_id=item["id"], output_index=idx,
                           content_index=0, text=text)
                        ev("response.content_part.done", item_id=item["id"], output_index=idx,
                           content_index=0, part={**part, "text": text})
                    else:
                        ev("response.output_item.added", output_index=idx,
                           item={**item, "status": "in_progress", "arguments": ""})
                        ev("response.function_call_arguments.delta", item_id=item["id"], output_index=idx,
                           delta=item["arguments"])
                        ev("response.function_call_arguments.done", item_id=item["id"], output_index=idx,
                           arguments=item["arguments"])
                    ev("response.output_item.done", output_index=idx, item=item)
                ev("response.completed", response=done)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _note(self, api: str, path: str, turn: int | None, body: Any) -> None:
        row = {"api": api, "path": path, "turn": turn, "body": body}
        self.requests.append(row)
        if self.record:
            with open(self.record, "a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")

    def _take(self, api: str, path: str, body: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
        with self._lock:
            if not body.get("tools"):
                self._note(api, path, None, body)
                return None, {"text": "ok"}
            n = self.next_turn
            self.next_turn += 1
            self._note(api, path, n, body)
            if n >= len(self.script):
                return n, {"text": "done"}
            try:
                return n, _resolve(self.script[n], body)
            except Exception as exc:  # a broken script must show in the test
                self.errors.append(f"turn {n}: {exc!r}")
                return n, {"text": f"script error: {exc!r}"}

    def turns(self) -> list[dict[str, Any]]:
        """The recorded requests that took a turn, in order."""
        return [r for r in self.requests if r["turn"] is not None]

    def start(self) -> ScriptedModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--script", required=True, help="JSON file: a list of turns")
    p.add_argument("--record", help="append every request to this JSONL file")
    p.add_argument("--port", type=int, default=0)
    a = p.parse_args()
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    model = ScriptedModel(script, record=a.record, port=a.port)
    print(model.port, flush=True)
    try:
        model._server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
