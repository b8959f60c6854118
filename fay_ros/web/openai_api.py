"""The companion as an OpenAI-compatible chat endpoint (`fay-ros openai`): request parsing, the
answers' JSON and SSE chunks, and the Starlette app. No ROS here: the app talks to the
dialogue through a `Companion` (fay_ros.ros_side.openai_chat holds the ROS one).

- `POST /v1/chat/completions`: the last `user` message is one turn of the dialogue's `chat`
  action, held for the token's owner (the dialogue keeps its own history per user, so earlier
  messages of the request are not replayed). `stream: true` answers `chat.completion.chunk`
  SSE events, one per reply sentence, then `data: [DONE]`; otherwise one `chat.completion`.
  The client hanging up cancels the turn.
- `GET /v1/models`: one model, the companion (`fay`).
- `GET /health`: the process (pid, uptime, versions), the dialogue's chat action, the model,
  the memory services, the memory database (backend, location with credentials masked,
  whether it answers a read now) and the ROS graph (domain, namespace, the nodes seen).

Identity is the bearer token's (the web door's access file, fay_ros.web.access): a `user`
field or a message naming someone changes nothing. One user's requests are answered one after
the other (the dialogue replaces a user's running turn by their next one); different users'
turns run side by side. Errors are OpenAI-shaped (`{"error": {message, type, param, code}}`);
no error or log line carries a token or the user's words.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import platform
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..common.errors import FayError

MODEL_ID = "fay"
OWNED_BY = "fay_ros"
log = logging.getLogger(__name__)


class RequestError(FayError, ValueError):
    """A malformed request body (400); `param` names the field."""

    def __init__(self, param: str | None, message: str) -> None:
        super().__init__(message)
        self.param = param


class DialogueUnavailable(FayError, RuntimeError):
    """The dialogue cannot take the turn (503)."""


@dataclass(frozen=True)
class ChatRequest:
    text: str  # the last user message
    stream: bool
    model: str


@dataclass(frozen=True)
class TurnEnd:
    """How a turn ended: the whole reply as said, and the action's reason."""

    reply: str
    completed: bool
    reason: str


class Companion(Protocol):
    def turn(self, text: str, user_id: str) -> AsyncGenerator[str | TurnEnd, None]:
        """The reply's sentences as they are said, then one TurnEnd. Closing the iterator early
        (the HTTP client left) cancels the turn. Raises DialogueUnavailable before any."""
        ...

    async def health(self) -> dict[str, Any]: ...


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones, joined
        texts = []
        for i, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise RequestError(f"{where}.content.{i}", "a content part is an object with a 'type'")
            if part["type"] == "text":
                if not isinstance(part.get("text"), str):
                    raise RequestError(f"{where}.content.{i}.text", "a text part needs a string 'text'")
                texts.append(part["text"])
        return "\n".join(texts)
    if content is None:
        return ""
    raise RequestError(f"{where}.content", "expected a string or a list of content parts")


def parse_chat_request(raw: bytes) -> ChatRequest:
    """The request body, checked; RequestError names the field that is wrong."""
    try:
        body = json.loads(raw or b"")
    except (ValueError, UnicodeDecodeError):
        raise RequestError(None, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise RequestError(None, "the body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages", "'messages' must be a non-empty list of messages")
    text = None
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RequestError(f"messages.{i}", "a message must be an object")
        role = message.get("role")
        if not isinstance(role, str):
            raise RequestError(f"messages.{i}.role", "a message needs a string 'role'")
        content = _content_text(message.get("content"), f"messages.{i}")
        if role == "user":
            text = content
    if text is None:
        raise RequestError("messages", "no message with role 'user'")
    if not text.strip():
        raise RequestError("messages", "the last user message is empty")
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise RequestError("stream", "'stream' must be true or false")
    model = body.get("model", MODEL_ID)
    if not isinstance(model, str):
        raise RequestError("model", "'model' must be a string")
    return ChatRequest(text=text.strip(), stream=stream, model=model or MODEL_ID)


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def models_body(created: int = 0) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": created, "owned_by": OWNED_BY}]}


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def completion_body(cid: str, created: int, reply: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def chunk_event(cid: str, created: int, delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE_EVENT = "data: [DONE]\n\n"


def sentence_delta(sentence: str, first: bool) -> str:
    """A sentence as a delta's content: sentences after the first are joined with a space, as
    the dialogue joins its reply."""
    return sentence if first else f" {sentence}"


def finish_reason(end: TurnEnd) -> str:
    return "stop"


def bearer_token(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class UserTurns:
    """One lock per user (the access file's users: a bounded set): a user's requests take
    their turns one after the other."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def hold(self, user_id: str) -> asyncio.Lock:
        return self._locks.setdefault(user_id, asyncio.Lock())


def build_app(companion: Companion, lookup: Callable[[str | None], Any], version: str = "") -> Any:
    """The Starlette app. `lookup(token)` is the access file's client for a token (with
    `user_id`), or None; `version`: fay_ros's, for /health."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    turns = UserTurns()
    started = time.monotonic()
    _TurnStream = _turn_stream_class()

    def refused(message: str, status: int, kind: str, code: str | None = None, param: str | None = None) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return JSONResponse(error_body(message, kind, code, param), status_code=status, headers=headers)

    def who(request: Request) -> Any:
        return lookup(bearer_token(request.headers.get("authorization")))

    def unauthorized() -> Response:
        return refused(
            "a valid API key is needed: Authorization: Bearer <token> from the access file",
            401,
            "invalid_request_error",
            "invalid_api_key",
        )

    async def models(request: Request) -> Response:
        if who(request) is None:
            return unauthorized()
        return JSONResponse(models_body())

    async def health(_request: Request) -> Response:
        report = await companion.health()
        process = {
            "pid": os.getpid(),
            "uptime_seconds": round(time.monotonic() - started, 1),
            "python": platform.python_version(),
            "fay_ros": version,
        }
        return JSONResponse({"ok": True, "process": process, **report})

    async def completions(request: Request) -> Response:
        client = who(request)
        if client is None:
            return unauthorized()
        try:
            chat = parse_chat_request(await request.body())
        except RequestError as exc:
            return refused(str(exc), 400, "invalid_request_error", "invalid_request", exc.param)
        user_id = client.user_id
        cid, created = completion_id(), int(time.time())
        if chat.stream:
            return await _stream(user_id, chat.text, cid, created)
        return await _whole(request, user_id, chat.text, cid, created)

    async def _first(turn: AsyncGenerator[str | TurnEnd, None]) -> str | TurnEnd | Response:
        """The turn's first item, or the 503 answer when the dialogue cannot take it."""
        try:
            return await turn.__anext__()
        except DialogueUnavailable as exc:
            return refused(str(exc), 503, "service_unavailable", "dialogue_unavailable")

    async def _stream(user_id: str, text: str, cid: str, created: int) -> Response:
        # the user's turn is held from here to the stream's end, released by `cleanup` (also when
        # the client left before the stream began)
        held = turns.hold(user_id)
        await held.__aenter__()
        turn = companion.turn(text, user_id)
        released = False

        async def cleanup() -> None:
            nonlocal released
            if not released:
                released = True
                await turn.aclose()  # a client gone mid-stream: the turn is cancelled here
                await held.__aexit__(None, None, None)

        try:
            first = await _first(turn)
        except BaseException:
            await cleanup()
            raise
        if isinstance(first, Response):
            await cleanup()
            return first

        async def events() -> AsyncIterator[str]:
            said = 0
            end: TurnEnd | None = None
            try:
                yield chunk_event(cid, created, {"role": "assistant", "content": ""})
                item: str | TurnEnd | None = first
                while item is not None:
                    if isinstance(item, TurnEnd):
                        end = item
                        break
                    yield chunk_event(cid, created, {"content": sentence_delta(item, said == 0)})
                    said += 1
                    item = await anext(turn, None)
                yield chunk_event(cid, created, {}, finish_reason(end) if end else "stop")
                yield DONE_EVENT
            finally:
                await cleanup()
                log.info("streamed turn for %s: %s", user_id or "a guest", end.reason if end else "cut")

        return _TurnStream(events(), cleanup)

    async def _whole(request: Request, user_id: str, text: str, cid: str, created: int) -> Response:
        async def run() -> TurnEnd | Response:
            async with turns.hold(user_id):
                turn = companion.turn(text, user_id)
                try:
                    first = await _first(turn)
                    if isinstance(first, Response):
                        return first
                    item: str | TurnEnd | None = first
                    while item is not None and not isinstance(item, TurnEnd):
                        item = await anext(turn, None)
                    return item or TurnEnd("", False, "failed: no result")
                finally:
                    await turn.aclose()

        task = asyncio.ensure_future(run())
        gone = asyncio.ensure_future(_disconnected(request.receive))
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if not task.done():  # the client hung up: cancel the turn (the goal), answer nobody
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            log.info("turn for %s: the client left, cancelled", user_id or "a guest")
            return Response(status_code=499)
        end = task.result()
        if isinstance(end, Response):
            return end
        log.info("turn for %s: %s", user_id or "a guest", end.reason)
        if end.reason.startswith("failed") and not end.reply:
            return refused("the dialogue could not answer this turn", 502, "server_error", "turn_failed")
        return JSONResponse(completion_body(cid, created, end.reply, finish_reason(end)))

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def _turn_stream_class() -> Any:
    from starlette.responses import StreamingResponse

    class TurnStream(StreamingResponse):
        """SSE whose `cleanup` runs however the response ends (also never started)."""

        def __init__(self, content: AsyncIterator[str], cleanup: Callable[[], Awaitable[None]]) -> None:
            super().__init__(content, media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
            self._cleanup = cleanup

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await super().__call__(scope, receive, send)
            finally:
                await self._cleanup()

    return TurnStream


async def _disconnected(receive: Callable[[], Awaitable[Any]]) -> None:
    """Return when the HTTP client has gone (after the body was read)."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
