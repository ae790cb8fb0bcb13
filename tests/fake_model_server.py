"""A fake OpenAI- and Anthropic-compatible HTTP server on 127.0.0.1, scripted per test.

It speaks the real wire protocol (`POST /v1/chat/completions`, `POST /v1/messages`) so the official
SDKs run unmodified against it. Each test queues responses (status, JSON or raw body, delay,
headers); the server answers requests in order and records what it received. With nothing queued
it answers 500 with an OpenAI-style error body, so a missing script fails loudly.

Use it from a test module with `pytest_plugins = ["fake_model_server"]` and the `fake_server`
fixture. The module has no asserts, so it opts out of assert rewriting (PYTEST_DONT_REWRITE), which
also keeps pytest from warning that test modules imported it before registering it as a plugin.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class FakeResponse:
    """One scripted answer: a dict body is sent as JSON, a str body as-is (for malformed JSON)."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any


class FakeModelServer:
    """Serves queued FakeResponses in order; `requests` holds every request received."""

    def __init__(self) -> None:
        self.queue: deque[FakeResponse] = deque()
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """Root URL: the Anthropic SDK's base_url (it appends /v1/messages)."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI SDK's base_url (it appends /chat/completions)."""
        return f"{self.url}/v1"

    def push(self, *responses: FakeResponse) -> None:
        with self.lock:
            self.queue.extend(responses)

    def start(self) -> FakeModelServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def next_response(self, request: RecordedRequest) -> FakeResponse:
        with self.lock:
            self.requests.append(request)
            if self.queue:
                return self.queue.popleft()
        return openai_error(500, "fake server: no response queued", type_="server_error")


def _handler_for(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            request = RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
            response = server.next_response(request)
            if response.delay:
                time.sleep(response.delay)
            payload = response.body
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            try:
                self.send_response(response.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout); nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the per-request log lines."""

    return Handler


def openai_completion(
    content: str | None,
    *,
    tool_calls: Sequence[tuple[str, str, dict[str, Any] | str]] = (),
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int = 0,
    model: str = "fake-model",
) -> FakeResponse:
    """A /v1/chat/completions answer; tool calls as (id, name, arguments dict or raw JSON)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for call_id, name, args in tool_calls
        ]
    return FakeResponse(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1700000000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }
    )


def openai_error(
    status: int, message: str, code: str | None = None, type_: str = "invalid_request_error"
) -> FakeResponse:
    return FakeResponse(
        status=status,
        body={"error": {"message": message, "type": type_, "param": None, "code": code}},
    )


def anthropic_message(
    text: str | None,
    *,
    tool_uses: Sequence[tuple[str, str, dict[str, Any]]] = (),
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_creation: int = 0,
    model: str = "claude-fake",
) -> FakeResponse:
    """A /v1/messages answer; tool uses as (id, name, input)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text is not None else []
    content += [
        {"type": "tool_use", "id": use_id, "name": name, "input": arguments}
        for use_id, name, arguments in tool_uses
    ]
    return FakeResponse(
        body={
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if tool_uses else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_creation,
            },
        }
    )


def anthropic_error(status: int, type_: str, message: str) -> FakeResponse:
    return FakeResponse(
        status=status, body={"type": "error", "error": {"type": type_, "message": message}}
    )


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    server = FakeModelServer().start()
    try:
        yield server
    finally:
        server.stop()
