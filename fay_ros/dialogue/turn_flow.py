"""The turn flow: when a turn starts, for whom, what it replaces and what cancels it.

Each user has at most one running turn (`UserSession.running`); a new input from the same
user cancels the old turn. If the old turn's answer has not reached the user yet, the new one
answers both inputs, joined: the user went on after a pause the recogniser took for the end
of their turn ("reached" is said, or with a voice (`voice`, and a spoken input) heard:
`heard`). `interrupt()` cancels every running turn, and the next reply has `replace`.
A speculative probe (`speculate`, speculation.py) runs the user's probable next turn up to
its model call; the real turn on the same words takes that stream over. What the companion
said outside the engine (`record_said`) becomes the companion's words in the history.

What a turn says is the engine's (`run_turn`) and proactive talk's (`proactive_turn`), both
given to `TurnFlow`. Lives on the engine's loop. Pure Python, no ROS.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from ..turns.unheard_turn import Join, join_unheard, joined_text
from .reply import Reply, ReplyPiece
from .session import Sessions, Unanswered
from .speculation import SpeculativeClient, enter_probe
from .tasks import TaskManager
from .trace import TurnTrace
from .wiring import Wiring

CHAT, OBSERVATION = "chat", "observation"
PENDING_SAID_REPLIES = 16  # said replies still waiting for their is_end piece (oldest recorded first)

Opened = tuple[int, str]  # a turn's number and the conversation id of its reply


@dataclass(frozen=True)
class Turn:
    """A reply turn started by `DialogueEngine.start`: the conversation id every piece of its
    reply carries, and the task running it (result: the TurnTrace; cancelled when the turn was
    interrupted or replaced by the user's next input)."""

    conversation_id: str
    task: asyncio.Task


class RunTurn(Protocol):
    def __call__(
        self,
        user_id: str,
        text: str,
        language: str = "",
        kind: str = CHAT,
        replace: bool = False,
        *,
        opened: Opened | None = None,
        observer: Callable[[ReplyPiece], None] | None = None,
        replaces: str = "",
    ) -> Awaitable[TurnTrace]: ...


ProactiveTurn = Callable[[str, str, str, str, Opened], Coroutine[Any, Any, TurnTrace]]


class TurnFlow:
    def __init__(
        self, wiring: Wiring, sessions: Sessions, tasks: TaskManager, run_turn: RunTurn, proactive_turn: ProactiveTurn
    ) -> None:
        self.wiring = wiring
        self.sessions = sessions
        self.tasks = tasks
        self._run_turn = run_turn
        self._proactive_turn = proactive_turn
        # A voice speaks the replies (the dialogue node saw robot_speaking): a spoken input's
        # answer counts once it is heard, not once it is said (the tts may drop it unheard: the
        # user went on after a pause).
        self.voice = False
        # Turns cancelled because the user's next input took their words over: what they said
        # was never heard and joins no history.
        self._merged_turns: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()
        # Turns cancelled by an input or an interrupt. The HTTP client can swallow a cancel that
        # comes as the model's response headers do (seen with openai over httpx/anyio), and the
        # turn would talk on: its model stream checks this and stops.
        self._cancelled_turns: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()
        self._probe: asyncio.Task | None = None  # the speculative probe (speculation.py), if running
        self._probe_for: tuple[str, str] = ("", "")  # (user, text) the probe runs on
        self._interrupted = False
        # sentences of replies said outside the engine, by conversation id, until their is_end
        self._said: dict[str, tuple[str, list[str]]] = {}

    # -- starting a turn ------------------------------------------------------------------
    def start(
        self,
        user_id: str,
        text: str,
        language: str = "",
        kind: str = CHAT,
        observer: Callable[[ReplyPiece], None] | None = None,
        *,
        spoken: bool = False,
    ) -> Turn | None:
        """Start a reply turn (CHAT) and return its handle (None for an empty text); `observer`
        sees each piece of this turn's reply right after `emit` published it; `spoken`: the
        words were heard by the recogniser (their answer is heard by the voice, if any). The
        user's running turn (if any) is cancelled first."""
        if kind != CHAT:
            raise ValueError(f"start() runs a chat turn, not {kind!r}")
        text = text.strip()
        if not text:
            return None
        session = self.sessions.of(user_id)
        previous = session.running
        unanswered, session.unanswered = session.unanswered, None
        unheard_answer = False
        replaces = ""  # the conversation whose answer this turn's answers in its place
        if unanswered is not None:
            # The user went on before their turn's answer reached them (turns.unheard_turn): a
            # turn still running is cancelled below; one that has finished (its whole answer
            # waits unheard in the tts while the person talks) leaves the history again.
            task = unanswered.task
            join = join_unheard(
                is_running_turn=task is previous, done=task.done(), cancelled=task.done() and task.cancelled()
            )
            if join is Join.RUNNING:
                self._merged_turns.add(task)
                replaces = unanswered.conversation_id
            elif join is Join.FINISHED and self._unsay(user_id, unanswered.conversation_id):
                unheard_answer = True
                replaces = unanswered.conversation_id
            if replaces:
                text = joined_text(unanswered.text, text)
        probe = self._probe if self._probe is not None and not self._probe.done() else None
        if probe is not None and self._probe_for != (user_id, text):
            probe.cancel()  # a guess at other words: the real turn gathers its own context
            probe = None
        self._record_pending_said(user_id)  # a said reply whose end never came: the next prompt knows it
        replace = self._interrupted or unheard_answer  # (the unheard answer goes, should it be queued still)
        if previous is not None and not previous.done():
            self._cancel_turn(previous)
            replace = True
        self._interrupted = False
        opened = self.open_turn(user_id)

        heard_by_voice = spoken and self.voice

        def said(piece: ReplyPiece) -> None:
            if (
                piece.text
                and not heard_by_voice
                and (entry := session.unanswered) is not None
                and entry.task is started.task
            ):
                session.unanswered = None
            if observer is not None:
                observer(piece)

        async def turn() -> TurnTrace:
            if probe is not None:
                await self._let_probe_park(probe)
            return await self._run_turn(
                user_id, text, language, kind, replace=replace, opened=opened, observer=said, replaces=replaces
            )

        started = self._run(user_id, opened, turn())
        session.unanswered = Unanswered(started.task, text, started.conversation_id)
        return started

    def speak_first(self, user_id: str, *, line: str = "", prompt: str = "", language: str = "") -> Turn | None:
        """Proactive talk (DialogueEngine.speak_first): never over the user's running turn."""
        if not (line.strip() or prompt.strip()):
            return None
        session = self.sessions.get(user_id)
        if session is not None and session.running_turn() is not None:
            return None
        opened = self.open_turn(user_id)
        return self._run(user_id, opened, self._proactive_turn(user_id, line.strip(), prompt.strip(), language, opened))

    def open_turn(self, user_id: str) -> Opened:
        """The user's next turn number and the conversation id of its reply."""
        session = self.sessions.of(user_id)
        session.turns += 1
        return session.turns, f"{user_id or 'guest'}-{session.turns}-{uuid.uuid4().hex[:8]}"

    def _run(self, user_id: str, opened: Opened, turn: Coroutine[Any, Any, TurnTrace]) -> Turn:
        """Run a turn's coroutine as the user's running turn (the one an input or an interrupt
        cancels) until it ends."""
        task = asyncio.ensure_future(turn)
        session = self.sessions.of(user_id)
        session.running = task

        def finished(done: asyncio.Task) -> None:
            if session.running is done:
                session.running = None

        task.add_done_callback(finished)
        return Turn(opened[1], task)

    # -- answers that did not reach the user --------------------------------------------------
    def remember_exchange(self, user_id: str, conversation_id: str, user_text: str, reply: Reply) -> None:
        """A finished chat turn into the history, kept as the user's last exchange (`_unsay`)."""
        self.sessions.of(user_id).last_exchange = (
            conversation_id,
            self.wiring.histories.remember_turn(user_id, user_text, " ".join(reply.spoken)),
        )

    def _unsay(self, user_id: str, conversation_id: str) -> bool:
        """Take the user's last exchange out of their history if it is this conversation's."""
        session = self.sessions.of(user_id)
        last, session.last_exchange = session.last_exchange, None
        if last is None or last[0] != conversation_id:
            return False
        return self.wiring.histories.forget(user_id, last[1])

    def heard(self, conversation_id: str) -> None:
        """The voice began a sentence of this reply: its answer has reached the user."""
        for session in self.sessions.all():
            if session.unanswered is not None and session.unanswered.conversation_id == conversation_id:
                session.unanswered = None

    def merged(self, task: asyncio.Task | None) -> bool:
        """The turn was cancelled because the user's next input took its words over."""
        return task in self._merged_turns

    # -- speculation ------------------------------------------------------------------------
    def speculate(self, user_id: str, text: str, language: str = "") -> asyncio.Task | None:
        """Start the model on what the user has probably finished saying (speculation.py); an
        empty text withdraws the guess (the user went on). Returns the probe's task, or None
        when nothing is speculated: the model client does not speculate, or the user has a
        background task (routing a message to it acts at once)."""
        client = self.wiring.small
        if not isinstance(client, SpeculativeClient):
            return None
        if self._probe is not None and not self._probe.done():
            self._probe.cancel()
        text = text.strip()
        if not text:
            client.discard("the user went on")
            return None
        if self.tasks.running(user_id) is not None:
            return None
        self._probe = asyncio.ensure_future(self._probe_turn(user_id, text, language))
        self._probe_for = (user_id, text)
        return self._probe

    async def _probe_turn(self, user_id: str, text: str, language: str) -> None:
        """The user's next turn up to its first model call, which parks (speculation.py)."""
        enter_probe()
        session = self.sessions.get(user_id)
        try:
            await self._run_turn(
                user_id, text, language, CHAT, opened=((session.turns if session else 0) + 1, "speculative")
            )
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # cancelled from outside: a newer guess, or the real turn started first
            # parked (speculation.park): the model call runs ahead, or nothing needs one

    async def _let_probe_park(self, probe: asyncio.Task) -> None:
        """The final came while the probe on the same words was still gathering context: let it
        reach its model call (it parks there, and this turn's identical request takes that
        stream over) instead of cancelling it and starting the model later. Bounded by the
        probe's own context timeouts; a turn cancelled meanwhile takes the probe with it."""
        settings = self.wiring.settings
        try:
            await asyncio.wait({probe}, timeout=settings.memory_timeout + settings.prestart_timeout)
        finally:
            if not probe.done():
                probe.cancel()

    # -- what was said outside the engine -------------------------------------------------------
    def record_said(self, user_id: str, conversation_id: str, text: str, is_end: bool) -> None:
        """One sentence said outside the engine (DialogueEngine.record_said)."""
        if not user_id:
            return
        _owner, sentences = self._said.setdefault(conversation_id, (user_id, []))
        if text.strip():
            sentences.append(text.strip())
        if is_end:
            self._record_said(conversation_id)
        while len(self._said) > PENDING_SAID_REPLIES:  # an end that never comes: keep what was said
            self._record_said(next(iter(self._said)))

    def _record_said(self, conversation_id: str) -> None:
        user_id, sentences = self._said.pop(conversation_id)
        self.wiring.histories.remember_turn(user_id, None, " ".join(sentences))

    def _record_pending_said(self, user_id: str) -> None:
        for conversation_id in [c for c, (owner, _s) in self._said.items() if owner == user_id]:
            self._record_said(conversation_id)

    # -- cancelling ---------------------------------------------------------------------------
    def interrupt(self) -> int:
        """Cancel every running turn; the next reply replaces whatever is being spoken."""
        self._interrupted = True
        cancelled = 0
        for session in self.sessions.all():
            task = session.running
            if task is not None and not task.done():
                self._cancel_turn(task)
                cancelled += 1
        return cancelled

    def cancel(self, task: asyncio.Task) -> bool:
        """Cancel this one turn (a client cancelled its request): other users' turns go on and
        the next reply replaces nothing, unlike `interrupt`. False when it had already ended."""
        if task.done():
            return False
        self._cancel_turn(task)
        return True

    def _cancel_turn(self, task: asyncio.Task) -> None:
        task.cancel()
        self._cancelled_turns.add(task)

    def stop_if_cancelled(self) -> None:
        """Raise the cancel of this turn that the HTTP client swallowed (see _cancelled_turns)."""
        if asyncio.current_task() in self._cancelled_turns:
            raise asyncio.CancelledError
