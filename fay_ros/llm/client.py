"""The one client for OpenAI-compatible chat endpoints, used by the dialogue and the memory.

- `ChatClient.stream()` (async, the dialogue) yields `ChatEvent`s: content deltas as they
  arrive, then one final event with the tool calls the model made (OpenAI `tool_calls`
  deltas, accumulated) and the finish reason.
- `ChatClient.complete()` / `complete_json()` (blocking, the memory's reflection and
  portrait on a worker thread) return one non-streamed answer.

Both go through the same request path, so every failure — refused connection, timeout
before the first token or between tokens, HTTP 4xx/5xx, an answer that is not valid
SSE/JSON, an empty answer — is raised as `LlmError` with a `kind` and a one-line reason.

Secrets: the key comes from the environment variable a node's configuration names
(`key_from_env`, the one key rule) and is held only inside the `Endpoint`; `repr()` shows it
as "***". Reasons and reprs show the endpoint as `safe_url(base_url)` (no userinfo, no query)
and have the key and the URL's credential parts scrubbed from any text a server or library
echoes back.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from ..common.errors import ConfigError, FayError
from ..common.urls import safe_url, url_secrets
from .model_json import first_object

# Sent when no key is configured: local servers (the embedded model, llama.cpp, Ollama)
# ignore the key, but the OpenAI client refuses to run without one.
NO_KEY = "no-key"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ApiKeyError(ConfigError, ValueError):
    """The configured key variable is unusable (a ValueError too, as this error was)."""


def key_from_env(name: str) -> str:
    """The one key rule. No variable named ('') means no key: the client sends `NO_KEY`.
    A named variable must hold the key: unset or empty raises ApiKeyError naming the variable
    (never a value), so a typo or a forgotten export stops the program at start instead of
    sending `NO_KEY` to a cloud endpoint that then refuses every turn. Something that is not
    a variable name (most likely the key itself, pasted in) raises without being repeated."""
    if not name:
        return ""
    if not _ENV_NAME.fullmatch(name):
        raise ApiKeyError("must be the NAME of an environment variable (the key itself never goes in a parameter)")
    key = os.environ.get(name, "")
    if not key:
        raise ApiKeyError(f"environment variable {name} is not set (or empty)")
    return key


# What went wrong, as `LlmError.kind`.
KINDS = (
    "unreachable",  # no endpoint configured, refused or dropped connection
    "timeout",  # no first token / no next token / no answer in time
    "http",  # the endpoint answered an HTTP error status (`status`)
    "malformed",  # an answer that is not what the protocol or the caller expects
    "empty",
)  # a well-formed answer with nothing in it


class LlmError(FayError):
    """No usable answer from the LLM. `kind` is one of KINDS (one subclass per kind: catch
    LlmError for any, a subclass for one); `reason` is one line that names the endpoint by
    its safe URL and never holds the key."""

    def __init__(self, kind: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason
        self.status = status


class LlmUnreachable(LlmError):
    """No endpoint configured, or the connection was refused or dropped."""

    def __init__(self, reason: str) -> None:
        super().__init__("unreachable", reason)


class LlmTimeout(LlmError):
    """No first token, no next token or no answer in time."""

    def __init__(self, reason: str) -> None:
        super().__init__("timeout", reason)


class LlmHttpError(LlmError):
    """The endpoint answered with an HTTP error `status`."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__("http", reason, status)


class LlmMalformed(LlmError):
    """An answer that is not what the protocol or the caller expects."""

    def __init__(self, reason: str) -> None:
        super().__init__("malformed", reason)


class LlmEmpty(LlmError):
    """A well-formed answer with nothing in it."""

    def __init__(self, reason: str) -> None:
        super().__init__("empty", reason)


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
    # time.monotonic() when the request of this stream was sent (a speculative stream's is
    # earlier than the turn that takes it over)
    requested_at: float = 0.0


@dataclass(frozen=True)
class Endpoint:
    """One model at one OpenAI-compatible endpoint. No base_url = no LLM (`configured` False).
    A non-streamed answer (`complete`) arrives whole, so it gets `first_token_timeout`."""

    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)
    connect_timeout: float = 3.0
    first_token_timeout: float = 20.0
    idle_timeout: float = 10.0

    @classmethod
    def from_env(cls, base_url: str, model: str, api_key_env: str, **timeouts: float) -> Endpoint:
        """The endpoint with its key read by the one key rule (`key_from_env`)."""
        return cls(base_url, model, key_from_env(api_key_env), **timeouts)

    @property
    def configured(self) -> bool:
        return bool(self.base_url.strip())

    @property
    def where(self) -> str:
        """The endpoint as it may be shown (logs, errors, topics)."""
        return safe_url(self.base_url)

    def __repr__(self) -> str:
        return f"Endpoint(base_url={self.where!r}, model={self.model!r}, api_key={'***' if self.api_key else ''!r})"


class ChatClient:
    """One endpoint + model. `stream()` is safe to share between concurrent conversations
    on one event loop; `complete()` may be called from any thread without a running loop."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._client: Any = None  # the pooled AsyncOpenAI of stream(), made on first use in its loop
        secrets = [endpoint.api_key] if len(endpoint.api_key) >= 4 else []
        self._secrets = sorted(secrets + url_secrets(endpoint.base_url), key=len, reverse=True)

    def __repr__(self) -> str:
        return f"ChatClient({self.endpoint!r})"

    @property
    def configured(self) -> bool:
        return self.endpoint.configured

    def scrub(self, text: str) -> str:
        """`text` (e.g. a server's error message) without the key or the URL's credentials."""
        if self.endpoint.base_url:
            text = text.replace(self.endpoint.base_url, self.endpoint.where)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _new_client(self, read_timeout: float) -> Any:
        from openai import AsyncOpenAI, Timeout

        e = self.endpoint
        return AsyncOpenAI(
            api_key=e.api_key or NO_KEY,
            base_url=e.base_url,
            max_retries=0,  # a retry would push the spoken apology past its budget
            timeout=Timeout(
                connect=e.connect_timeout, read=read_timeout, write=e.connect_timeout, pool=e.connect_timeout
            ),
        )

    def _pooled(self) -> Any:
        """The pooled client of stream(), made on first use (in the loop that streams)."""
        if self._client is None:
            self._client = self._new_client(self.endpoint.idle_timeout)
        return self._client

    def prepare(self) -> None:
        """Make the pooled client now, on the loop that will stream: importing the OpenAI SDK
        and building its HTTP client takes about half a second here, which the first turn
        after start-up would otherwise wait for. Sends nothing."""
        if self.configured:
            self._pooled()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        frequency_penalty: float | None = None,
        stop: list[str] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """`extra_body`: fields the OpenAI API does not define, sent as they are (e.g.
        llama.cpp's `repeat_penalty`); only for servers known to accept them."""
        kwargs = self._request(messages, stream=True, max_tokens=max_tokens, temperature=temperature)
        if stop:
            kwargs["stop"] = list(stop)
        if extra_body:
            kwargs["extra_body"] = dict(extra_body)
        if tools:
            kwargs["tools"] = tools
        if response_format:
            kwargs["response_format"] = response_format
        if frequency_penalty:
            kwargs["frequency_penalty"] = frequency_penalty
        calls: dict[int, dict[str, str]] = {}
        finish_reason = ""
        got_anything = False
        try:
            client = self._pooled()
            requested = time.monotonic()
            stream = await self._open(client, kwargs)
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
                            yield ChatEvent(content=delta.content, received_at=now, requested_at=requested)
        except Exception as exc:  # noqa: BLE001 - a broken stream must never kill the node (CancelledError passes)
            raise self._failure(exc) from None
        if not got_anything:
            raise LlmEmpty(f"{self.endpoint.where} returned an empty answer")
        yield ChatEvent(
            done=True,
            finish_reason=finish_reason,
            received_at=time.monotonic(),
            tool_calls=[ToolCall(c["name"], c["arguments"], c["id"]) for _i, c in sorted(calls.items()) if c["name"]],
        )

    def complete(self, system: str, user: str, max_tokens: int = 800, temperature: float = 0.2) -> str:
        """One non-streamed answer, blocking (for worker threads; not inside a running loop).
        It runs on a short-lived loop with its own connection, because the pooled client of
        stream() belongs to the loop of the conversations."""
        return asyncio.run(
            self._complete(
                [{"role": "system", "content": system}, {"role": "user", "content": user}], max_tokens, temperature
            )
        )

    def complete_json(self, system: str, user: str, max_tokens: int = 800) -> dict:
        return parse_json_object(self.complete(system, user, max_tokens), self.endpoint.where)

    async def _complete(self, messages: list[dict[str, Any]], max_tokens: int, temperature: float) -> str:
        kwargs = self._request(messages, stream=False, max_tokens=max_tokens, temperature=temperature)
        try:
            client = self._new_client(self.endpoint.first_token_timeout)
            try:
                response = await self._open(client, kwargs)
            finally:
                await client.close()
            text = response.choices[0].message.content or ""
        except Exception as exc:  # noqa: BLE001 - every failure becomes one LlmError
            raise self._failure(exc) from None
        if not text.strip():
            raise LlmEmpty(f"{self.endpoint.where} returned an empty answer")
        return text

    def _request(
        self, messages: list[dict[str, Any]], *, stream: bool, max_tokens: int | None, temperature: float | None
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.endpoint.model or "default", "messages": messages, "stream": stream}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if temperature is not None:
            kwargs["temperature"] = temperature
        return kwargs

    async def _open(self, client: Any, kwargs: dict[str, Any]) -> Any:
        """Send the request. A connection dropped before any response is retried once at
        once: llama.cpp's server may close a pooled keep-alive connection just as it is
        reused. A refused connection fails twice fast, so the apology is not delayed."""
        import openai

        if not self.endpoint.configured:
            raise LlmUnreachable("no LLM endpoint configured")
        for attempt in (1, 2):
            try:
                return await asyncio.wait_for(
                    client.chat.completions.create(**kwargs), self.endpoint.first_token_timeout
                )
            except openai.APITimeoutError:
                raise
            except openai.APIConnectionError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _failure(self, exc: Exception) -> LlmError:
        """The LlmError for any exception of a request (kinds: see KINDS)."""
        import openai

        e = self.endpoint
        if isinstance(exc, LlmError):
            return exc
        if isinstance(exc, (asyncio.TimeoutError, openai.APITimeoutError)):
            return LlmTimeout(
                f"no answer from {e.where} in time (first token {e.first_token_timeout:g}s, "
                f"between tokens {e.idle_timeout:g}s)"
            )
        if isinstance(exc, openai.APIConnectionError):
            return LlmUnreachable(f"cannot reach {e.where}: {self._short(str(exc.__cause__ or exc))}")
        if isinstance(exc, openai.APIStatusError):
            return LlmHttpError(f"HTTP {exc.status_code} from {e.where}: {self._short(exc.message)}", exc.status_code)
        if isinstance(exc, openai.APIError):
            return LlmMalformed(f"bad answer from {e.where}: {self._short(str(exc))}")
        return LlmMalformed(f"bad answer from {e.where}: {type(exc).__name__}: {self._short(str(exc))}")

    def _short(self, text: str, limit: int = 200) -> str:
        text = " ".join(self.scrub(text).split())
        return text if len(text) <= limit else text[:limit] + "…"


def parse_json_object(text: str, where: str = "LLM") -> dict:
    """The first JSON object in a model answer (`model_json.first_object`: code fences and
    prose around it are skipped)."""
    value = first_object(text)
    if value is None:
        raise LlmMalformed(f"answer from {where} holds no JSON object")
    return value
