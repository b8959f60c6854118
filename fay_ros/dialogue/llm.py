"""Streaming chat client for any OpenAI-compatible endpoint, with failures made uniform.

`ChatClient.stream()` yields `ChatEvent`s: content deltas as they arrive, then one final
event with the tool calls the model made (OpenAI `tool_calls` deltas, accumulated) and the
finish reason. Every failure — refused connection, timeout before the first token or between
tokens, HTTP 4xx/5xx, a stream that is not valid SSE/JSON, an empty answer — is raised as
`LlmError` with a `kind` and a one-line reason that never contains the API key.

The key comes from the environment (the variable named by the node's `api_key_env`) and is
held only inside the client; `repr()` and errors show it as "***".
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

NO_KEY = "no-key"  # local servers ignore the key, but the OpenAI client insists on one


class LlmError(Exception):
    """kind: 'unreachable', 'timeout', 'http', 'malformed', 'empty'."""

    def __init__(self, kind: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason
        self.status = status


@dataclass
class ToolCall:
    name: str
    arguments: str  # JSON text as the model produced it
    id: str = ""

    def parsed_arguments(self) -> dict[str, Any]:
        if not self.arguments.strip():
            return {}
        value = json.loads(self.arguments)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


@dataclass
class ChatEvent:
    content: str = ""
    done: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = ""
    # time.monotonic() when this event's data arrived from the network
    received_at: float = 0.0


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    connect_timeout: float = 3.0
    first_token_timeout: float = 20.0
    idle_timeout: float = 10.0

    def __repr__(self) -> str:
        return f"Endpoint(base_url={self.base_url!r}, model={self.model!r}, api_key={'***' if self.api_key else ''!r})"


class ChatClient:
    """One endpoint + model. Safe to share between concurrent conversations."""

    def __init__(self, endpoint: Endpoint) -> None:
        import httpx2
        from openai import AsyncOpenAI

        self.endpoint = endpoint
        self._client = AsyncOpenAI(
            api_key=endpoint.api_key or NO_KEY,
            base_url=endpoint.base_url,
            max_retries=0,  # a retry would push the spoken apology past its budget
            timeout=httpx2.Timeout(connect=endpoint.connect_timeout, read=endpoint.idle_timeout,
                                   write=endpoint.connect_timeout, pool=endpoint.connect_timeout),
        )

    def __repr__(self) -> str:
        return f"ChatClient({self.endpoint!r})"

    def scrub(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    async def close(self) -> None:
        await self._client.close()

    async def stream(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                     response_format: dict[str, Any] | None = None, max_tokens: int | None = None,
                     temperature: float | None = None, frequency_penalty: float | None = None,
                     stop: list[str] | None = None, extra_body: dict[str, Any] | None = None,
                     ) -> AsyncIterator[ChatEvent]:
        """`extra_body`: fields the OpenAI API does not define, sent as they are (e.g.
        llama.cpp's `repeat_penalty`); only for servers known to accept them."""
        import openai

        kwargs: dict[str, Any] = {"model": self.endpoint.model, "messages": messages, "stream": True}
        if stop:
            kwargs["stop"] = list(stop)
        if extra_body:
            kwargs["extra_body"] = dict(extra_body)
        if tools:
            kwargs["tools"] = tools
        if response_format:
            kwargs["response_format"] = response_format
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if temperature is not None:
            kwargs["temperature"] = temperature
        if frequency_penalty:
            kwargs["frequency_penalty"] = frequency_penalty
        calls: dict[int, dict[str, str]] = {}
        finish_reason = ""
        got_anything = False
        try:
            stream = await self._open(kwargs)
            async with stream:
                iterator = stream.__aiter__()
                deadline = self.endpoint.first_token_timeout
                while True:
                    try:
                        chunk = await asyncio.wait_for(iterator.__anext__(), deadline)
                    except StopAsyncIteration:
                        break
                    deadline = self.endpoint.idle_timeout
                    now = time.monotonic()
                    for choice in chunk.choices or []:
                        delta = choice.delta
                        if choice.finish_reason:
                            finish_reason = choice.finish_reason
                        if delta is None:
                            continue
                        for tc in delta.tool_calls or []:
                            got_anything = True
                            slot = calls.setdefault(tc.index or 0, {"id": "", "name": "", "arguments": ""})
                            slot["id"] = tc.id or slot["id"]
                            if tc.function is not None:
                                slot["name"] += tc.function.name or ""
                                slot["arguments"] += tc.function.arguments or ""
                        if delta.content:
                            got_anything = True
                            yield ChatEvent(content=delta.content, received_at=now)
        except LlmError:
            raise
        except (asyncio.TimeoutError, openai.APITimeoutError):
            raise LlmError("timeout", f"no answer from {self.endpoint.base_url} in time "
                                      f"(first token {self.endpoint.first_token_timeout:g}s, "
                                      f"between tokens {self.endpoint.idle_timeout:g}s)") from None
        except openai.APIConnectionError as exc:
            raise LlmError("unreachable", f"cannot reach {self.endpoint.base_url}: "
                                          f"{self.scrub(str(exc.__cause__ or exc))}") from None
        except openai.APIStatusError as exc:
            raise LlmError("http", f"HTTP {exc.status_code} from {self.endpoint.base_url}: "
                                   f"{self.scrub(_short(exc.message))}", exc.status_code) from None
        except openai.APIError as exc:
            raise LlmError("malformed", f"bad stream from {self.endpoint.base_url}: {self.scrub(_short(str(exc)))}") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken stream must never kill the node
            raise LlmError("malformed", f"bad stream from {self.endpoint.base_url}: "
                                        f"{type(exc).__name__}: {self.scrub(_short(str(exc)))}") from None
        if not got_anything:
            raise LlmError("empty", f"{self.endpoint.base_url} returned an empty answer")
        yield ChatEvent(done=True, finish_reason=finish_reason, received_at=time.monotonic(),
                        tool_calls=[ToolCall(c["name"], c["arguments"], c["id"])
                                    for _i, c in sorted(calls.items()) if c["name"]])


    async def _open(self, kwargs: dict[str, Any]) -> Any:
        """Start the request. A connection dropped before any response is retried once at
        once: llama.cpp's server may close a pooled keep-alive connection just as it is
        reused. A refused connection fails twice fast, so the apology is not delayed."""
        import openai

        for attempt in (1, 2):
            try:
                return await asyncio.wait_for(self._client.chat.completions.create(**kwargs),
                                              self.endpoint.first_token_timeout)
            except openai.APITimeoutError:
                raise
            except openai.APIConnectionError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
