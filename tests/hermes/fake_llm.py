"""A scripted, OpenAI-compatible chat-completions endpoint that streams (SSE), written
with the standard library for the tests. It binds 127.0.0.1 only, records every
request body, and answers each chat-completions request with the next step of its
script: a step is a dict (``{"content": ...}`` or ``{"tool_calls": [...]}``) or a
function of the request returning one. Everything else (model listings, Ollama
probes) gets 404, which Hermes treats as "no metadata".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class FakeLLM:
    """The endpoint; use as a context manager. ``base_url`` ends in ``/v1``."""

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._empty(404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.endswith("/chat/completions"):
                    self._empty(404)
                    return
                body = json.loads(raw)
                fake.requests.append(body)
                try:
                    step = fake.script.pop(0) if fake.script else {"content": "done"}
                    if callable(step):
                        step = step(body)
                except Exception as exc:  # a broken script must show in the test
                    fake.errors.append(repr(exc))
                    step = {"content": f"script error: {exc!r}"}
                self._stream(step)

            def _empty(self, code: int) -> None:
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _stream(self, step: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {
                    "id": f"chatcmpl-{len(fake.requests)}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "fake-model",
                }

                def event(choices: list[Any], **extra: Any) -> None:
                    data = json.dumps({**base, "choices": choices, **extra})
                    self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()

                calls = step.get("tool_calls") or []
                if calls:
                    for i, call in enumerate(calls):
                        args = json.dumps(call["arguments"])
                        # Arguments arrive in two pieces, as real streams split them.
                        half = len(args) // 2
                        event(
                            [
                                {
                                    "index": 0,
                                    "finish_reason": None,
                                    "delta": {
                                        "role": "assistant",
                                        "tool_calls": [
                                            {
                                                "index": i,
                                                "id": call["id"],
                                                "type": "function",
                                                "function": {
                                                    "name": call["name"],
                                                    "arguments": args[:half],
                                                },
                                            }
                                        ],
                                    },
                                }
                            ]
                        )
                        event(
                            [
                                {
                                    "index": 0,
                                    "finish_reason": None,
                                    "delta": {
                                        "tool_calls": [
                                            {"index": i, "function": {"arguments": args[half:]}}
                                        ]
                                    },
                                }
                            ]
                        )
                    event([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])
                else:
                    event(
                        [
                            {
                                "index": 0,
                                "finish_reason": None,
                                "delta": {"role": "assistant", "content": step.get("content", "")},
                            }
                        ]
                    )
                    event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
                event([], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A script step: the model calls one tool."""
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}
