"""ChatTurn: what the chat action learns of the turn it holds (sentences, cues, how it ended)."""

from __future__ import annotations

import asyncio
import time

from fay_ros.dialogue.chat_turn import CANCELLED, COMPLETED, INTERRUPTED, ChatTurn
from fay_ros.dialogue.reply import ReplyPiece
from fay_ros.dialogue.trace import TurnTrace


def piece(seq: int, text: str, cid: str = "bob-1-abc", is_end: bool = False) -> ReplyPiece:
    return ReplyPiece("bob", cid, seq, text, seq == 0, is_end, False, "llm")


async def ended(value: TurnTrace | None = None, *, cancel: bool = False) -> asyncio.Task:
    """A turn's task that has ended: with `value`, or cancelled while it ran."""
    running = asyncio.Event()

    async def turn() -> TurnTrace | None:
        running.set()
        if cancel:
            await asyncio.Event().wait()  # until cancelled
        return value

    task = asyncio.ensure_future(turn())
    await running.wait()
    if cancel:
        task.cancel()
    await asyncio.wait({task})
    return task


def test_sentences_are_reported_and_joined_and_cues_kept_in_sentence_order():
    async def scenario():
        held = ChatTurn()
        assert held.on_piece(piece(0, "Hello.")) == (0, "Hello.")
        assert held.on_piece(piece(1, "How are you?")) == (1, "How are you?")
        assert held.on_piece(piece(2, "", is_end=True)) is None, "a closing marker is no sentence"
        assert held.reply == "Hello. How are you?"
        assert not held.add_cue("someone-else-1:0", "other"), "another turn's cue is not kept"
        assert not held.add_cue("bob-1-abc:2", "marker"), "the closing marker gets no cue"
        assert held.add_cue("bob-1-abc:1", "cue1") and held.add_cue("bob-1-abc:0", "cue0")
        held.finish(await ended(TurnTrace("bob-1-abc")))
        started = time.monotonic()
        await held.cues_in(5.0)
        assert time.monotonic() - started < 1.0, "every cue is in: no wait for the grace"
        assert held.cues == ["cue0", "cue1"]
        assert held.outcome is not None and held.outcome.completed and held.outcome.reason == COMPLETED

    asyncio.run(scenario())


def test_missing_cues_are_waited_for_only_the_grace():
    async def scenario():
        held = ChatTurn()
        held.on_piece(piece(0, "Hello."))
        held.on_piece(piece(1, "Bye."))
        held.add_cue("bob-1-abc:0", "cue0")
        held.finish(await ended(TurnTrace("bob-1-abc")))
        started = time.monotonic()
        await held.cues_in(0.2)
        assert 0.15 < time.monotonic() - started < 2.0
        assert held.cues == ["cue0"], "what came is returned"

    asyncio.run(scenario())


def test_outcomes_cancelled_interrupted_failed():
    async def scenario():
        cancelled = ChatTurn()
        cancelled.cancel_requested = True
        assert cancelled.finish(await ended(cancel=True)).reason == CANCELLED
        interrupted = ChatTurn()
        outcome = interrupted.finish(await ended(cancel=True))
        assert outcome.reason == INTERRUPTED and not outcome.completed and not outcome.achieved
        failed = ChatTurn()
        outcome = failed.finish(await ended(TurnTrace("c", error="http: HTTP 502 bad gateway")))
        assert outcome.reason == "failed: http: HTTP 502 bad gateway"
        assert outcome.completed and not outcome.achieved, "the apology was said whole; the goal failed"
        early = ChatTurn()
        assert early.cancel_before_start().reason == CANCELLED

    asyncio.run(scenario())
