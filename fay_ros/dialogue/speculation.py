"""Speculative reply: the model starts on what the person has probably finished saying.

When the recogniser judges an utterance probably complete it decodes it early and publishes
that text on `speech/speculative` before the final (fay_ros.hearing.asr_core). The engine
then runs the turn as a *probe* (`DialogueEngine.speculate`): the same code as a real turn,
with the same context (stateless memory recall, the facts the text states), up to its first
model call. There the probe parks: `SpeculativeClient` starts that call's stream into a
buffer and the probe ends, having said, stored and recorded nothing.

When the final arrives, the real turn builds its messages the same way. If its first model
call asks for exactly the parked request (same messages, same options), it is served from
the buffer (the tokens that already came, then the rest as they arrive): the model's time
to the first token was spent while the recogniser was still waiting for silence. Any other
request, a withdrawn speculation (the person went on), a newer speculation or an unclaimed
one older than `max_age_s` cancels the parked stream, so a discarded guess costs only the
model's work, never a word said.

No ROS in here; the dialogue node wires `speech/speculative` to `DialogueEngine.speculate`.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from ..llm.client import ChatClient, ChatEvent, Endpoint, LlmError
from ..turns.speculative_reply import SpeculativeReply

log = logging.getLogger("fay_ros.dialogue")

# Set inside a probe's task (and the tasks it starts): a model call parks instead of running.
_PROBING: contextvars.ContextVar[bool] = contextvars.ContextVar("fay_speculative_probe", default=False)


def park() -> NoReturn:
    """End a probe here: it reached its first model call (now running ahead), or it would say
    something without one. Raised as asyncio.CancelledError, which the turn's error handling
    lets through untouched (a cancelled turn ends the same way, saying nothing more);
    `DialogueEngine._probe_turn` tells it from a real cancellation of its task."""
    raise asyncio.CancelledError("speculative probe parked")


def probing() -> bool:
    """True inside a speculative probe: callers with side effects must not have them."""
    return _PROBING.get()


def enter_probe() -> None:
    """Mark the current task (and those it starts from now on) as a probe."""
    _PROBING.set(True)


def request_key(messages: list[dict[str, Any]], options: dict[str, Any]) -> str:
    """What makes two model requests the same request."""
    return json.dumps([messages, options], sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class SpeculationStats:
    started: int = 0  # model streams started on a speculative transcript
    used: int = 0  # ... that a real turn then took over
    discarded: int = 0  # ... cancelled: the person went on, the request differed, or too old
    head_start_s: float = 0.0  # summed: claimed minus started, over the used ones

    def as_dict(self) -> dict[str, float]:
        return {
            "started": self.started,
            "used": self.used,
            "discarded": self.discarded,
            "mean_head_start_ms": round(1000 * self.head_start_s / self.used) if self.used else 0,
        }


class _Parked:
    """One model stream running ahead into a buffer."""

    def __init__(self, key: str, source: AsyncGenerator[ChatEvent, None], started: float) -> None:
        self.key = key
        self.started = started
        self.events: list[ChatEvent] = []
        self.error: BaseException | None = None
        self.finished = False
        self._changed = asyncio.Event()
        self.task = asyncio.ensure_future(self._pump(source))

    async def _pump(self, source: AsyncGenerator[ChatEvent, None]) -> None:
        try:
            async for event in source:
                self.events.append(event)
                self._changed.set()
        except LlmError as exc:  # handed to the turn that claims it, as a live stream would raise it
            self.error = exc
        finally:
            self.finished = True
            self._changed.set()
            await source.aclose()

    async def replay(self) -> AsyncGenerator[ChatEvent, None]:
        """Every event, those already buffered first; the stream's error at its place."""
        sent = 0
        try:
            while True:
                while sent < len(self.events):
                    sent += 1
                    yield self.events[sent - 1]
                if self.finished:
                    if self.error is not None:
                        raise self.error
                    return
                self._changed.clear()
                await self._changed.wait()
        finally:
            if not self.task.done():  # the turn stopped reading (guard, interrupt): stop the model
                self.task.cancel()


class SpeculativeClient(ChatClient):
    """A chat client that can run one request ahead (see the module docstring)."""

    def __init__(
        self, endpoint: Endpoint, max_age_s: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(endpoint)
        self.clock = clock
        self.stats = SpeculationStats()
        self._guess: SpeculativeReply[_Parked] = SpeculativeReply(max_age_s)  # (fay_ros.turns.speculative_reply)

    def __repr__(self) -> str:
        return f"SpeculativeClient({self.endpoint.where})"

    @property
    def max_age_s(self) -> float:
        return self._guess.max_age_s

    @max_age_s.setter
    def max_age_s(self, value: float) -> None:
        self._guess.max_age_s = value

    @property
    def _parked(self) -> _Parked | None:
        return self._guess.parked.payload if self._guess.parked is not None else None

    @property
    def parked(self) -> bool:
        """A speculative stream is waiting for its turn."""
        return self._guess.parked is not None

    def discard(self, why: str = "") -> bool:
        """Cancel the parked stream, if any; True if there was one."""
        parked = self._guess.discard()
        if parked is None:
            return False
        parked.task.cancel()
        self.stats.discarded += 1
        log.debug("speculative reply discarded%s", f": {why}" if why else "")
        return True

    def stream(self, messages: list[dict[str, Any]], **options: Any) -> AsyncGenerator[ChatEvent, None]:
        key = request_key(messages, options)
        if probing():
            self.discard("a newer speculation")
            now = self.clock()
            self._guess.park(key, _Parked(key, super().stream(messages, **options), now), now)
            self.stats.started += 1
            park()
        now = self.clock()
        claimed = self._guess.claim(key, now)
        if claimed is not None:
            self.stats.used += 1
            self.stats.head_start_s += now - claimed.started
            return claimed.payload.replay()
        self.discard("the turn asked for another request, or the guess was too old")
        return super().stream(messages, **options)

    async def close(self) -> None:
        self.discard("closing")
        await super().close()
