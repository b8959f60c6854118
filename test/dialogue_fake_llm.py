"""A scripted OpenAI-compatible chat server on loopback, for the dialogue tests and bench.

It is a real HTTP server (pytest-httpserver / werkzeug, threaded) speaking the chat
completions streaming protocol (SSE `data:` chunks, `data: [DONE]`). Each request takes the
next scripted response; every request body is recorded for assertions. Gated responses
wait on a threading.Event so a test can hold a stream open (interrupts, streaming order),
and `closed` is set when the client hung up on a stream.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

GATE_TIMEOUT = 30.0  # a gated stream gives up after this (so a failing test cannot hang)
logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log per request


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


@dataclass
class Scripted:
    """One scripted answer."""

    make: Callable[[Scripted], Response]
    gate: threading.Event = field(default_factory=threading.Event)  # set() to let a gated stream go on
    started: threading.Event = field(default_factory=threading.Event)  # the request arrived
    closed: threading.Event = field(default_factory=threading.Event)  # the client disconnected mid-stream
    finished: threading.Event = field(default_factory=threading.Event)  # the stream was sent to its end


def _stream(events: list[str | float | threading.Event | None], item: Scripted) -> Response:
    """events: SSE strings; None = wait for the gate (sending keep-alive comments meanwhile,
    which is also how a client that hung up is noticed), an Event = wait for that event the same
    way; a number = the model thinks that many seconds (a slow model's time to first token)."""

    def generate() -> Iterator[str]:
        try:
            for event in events:
                if isinstance(event, float):
                    time.sleep(event)
                    continue
                if event is None or isinstance(event, threading.Event):
                    gate = item.gate if event is None else event
                    waited = 0.0
                    while not gate.wait(0.05):
                        waited += 0.05
                        if waited > GATE_TIMEOUT:
                            return
                        yield ": keep-alive\n\n"
                    continue
                yield event
            item.finished.set()
        except GeneratorExit:
            item.closed.set()
            raise
        finally:
            if not item.finished.is_set():
                item.closed.set()

    return Response(generate(), status=200, mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})


def text(
    *chunks: str,
    gate_after: int | None = None,
    first_token_s: float = 0.0,
    first_token_after: threading.Event | None = None,
) -> Scripted:
    """Stream content chunks (optionally pausing at the gate after `gate_after` chunks), the
    first after `first_token_s`, and not before `first_token_after` is set (an event of the test:
    the model is ready only once something else has happened, whatever the machine's load)."""

    def make(item: Scripted) -> Response:
        events: list[str | float | threading.Event | None] = [float(first_token_s)] if first_token_s else []
        if first_token_after is not None:
            events.append(first_token_after)
        events.append(_chunk({"role": "assistant", "content": ""}))
        for i, c in enumerate(chunks):
            if gate_after is not None and i == gate_after:
                events.append(None)
            events.append(_chunk({"content": c}))
        events += [_chunk({}, "stop"), "data: [DONE]\n\n"]
        return _stream(events, item)

    return Scripted(make)


def tool_call(name: str, arguments: str, call_id: str = "call_1", pieces: int = 3) -> Scripted:
    """Stream one OpenAI tool call, its arguments split over several chunks."""

    def make(item: Scripted) -> Response:
        step = max(1, -(-len(arguments) // pieces))
        parts = [arguments[i : i + step] for i in range(0, len(arguments), step)] or [""]
        events: list[str | None] = [
            _chunk(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
                    ],
                }
            )
        ]
        events += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in parts]
        events += [_chunk({}, "tool_calls"), "data: [DONE]\n\n"]
        return _stream(events, item)

    return Scripted(make)


def completion(content: str) -> Scripted:
    """One non-streamed answer (`ChatClient.complete`: the memory node's background jobs)."""

    def make(item: Scripted) -> Response:
        item.finished.set()
        body = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return Response(json.dumps(body, ensure_ascii=False), status=200, mimetype="application/json")

    return Scripted(make)


def status(code: int, message: str = "scripted failure") -> Scripted:
    def make(item: Scripted) -> Response:
        item.finished.set()
        return Response(
            json.dumps({"error": {"message": message, "type": "test", "code": code}}),
            status=code,
            mimetype="application/json",
        )

    return Scripted(make)


def malformed() -> Scripted:
    def make(item: Scripted) -> Response:
        return _stream(
            [_chunk({"role": "assistant", "content": ""}), "data: {this is not json\n\n", "data: [DONE]\n\n"], item
        )

    return Scripted(make)


def silent() -> Scripted:
    """Accept the request, then send nothing until the gate opens (timeouts)."""

    def make(item: Scripted) -> Response:
        def generate() -> Iterator[str]:
            item.gate.wait(GATE_TIMEOUT)
            item.closed.set()
            yield "data: [DONE]\n\n"

        return Response(generate(), status=200, mimetype="text/event-stream")

    return Scripted(make)


class ScriptedLlm:
    def __init__(self) -> None:
        self.server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.server.expect_request("/v1/chat/completions", method="POST").respond_with_handler(self._handle)
        self.server.start()
        self._lock = threading.Lock()
        self._script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self.default: Callable[[], Scripted] | None = None
        # answers by request body (a scripted model that reads its prompt), after the script
        self.responder: Callable[[dict[str, Any]], Scripted] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/v1"

    def script(self, *items: Scripted) -> list[Scripted]:
        with self._lock:
            self._script.extend(items)
        return list(items)

    def reset(self) -> None:
        with self._lock:
            for item in self._script:
                item.gate.set()
            self._script.clear()
            self.requests.clear()
            self.default = None
            self.responder = None

    def _handle(self, request: Request) -> Response:
        body = request.get_json(force=True)
        with self._lock:
            self.requests.append(body)
            if self._script:
                item = self._script.pop(0)
            elif self.responder is not None:
                item = self.responder(body)
            else:
                item = self.default() if self.default else None
        if item is None:
            return Response(
                json.dumps({"error": {"message": "no scripted answer left"}}), status=500, mimetype="application/json"
            )
        item.started.set()
        return item.make(item)

    def system_prompts(self) -> list[str]:
        return [r["messages"][0]["content"] for r in self.requests]

    def close(self) -> None:
        self.reset()
        self.server.clear()
        if self.server.is_running():
            self.server.stop()


def judge_finish(message: str, pieces: int = 4, **kw: Any) -> Scripted:
    """The judge's finish verdict, streamed in `pieces` chunks."""
    raw = json.dumps({"action": "finish", "message": message}, ensure_ascii=False)
    step = max(1, -(-len(raw) // pieces))
    return text(*[raw[i : i + step] for i in range(0, len(raw), step)], **kw)


def judge_tool(keyword: str = "") -> Scripted:
    return text(json.dumps({"action": "tool", "keyword": keyword}, ensure_ascii=False))


def loop_finish(message: str = "done") -> Scripted:
    return text(json.dumps({"action": "finish", "message": message}))
