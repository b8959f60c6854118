"""DialogueEngine: Fay's qa → chat judge → tool loop → final reply flow (no ROS in here).

Two flows, chosen by the model profile (`profiles.py`): `capable` is Fay's flow below;
`tiny` (the embedded 135M model) makes one streamed call per turn with everything resolved
before it (see `_tiny_turn`). In both, what the user says about themselves ("my name is
Tom", "I like hiking") is known to the next turn at once (per-user short-term facts) and
written to memory as confirmed keyed observations after the reply, and every model answer
passes the reply guard (`guard.py`) sentence by sentence before it is published.

One user turn (capable):
1. qa.csv first: a fuzzy hit is spoken verbatim (source "qa"); its script column may name
   an allow-listed tool, never anything that is executed as code.
2. Context: confirmed memories and active rules of THIS user (memory gateway, short
   timeout, skipped when absent), prestart tools with `{{question}}` arguments.
3. Chat judge (small model, streamed JSON). `finish`: its message streams straight out.
   `tool`: a filler line is spoken, then the tool loop runs (big model in dual-model mode,
   the small one otherwise) for at most `max_tool_steps`, never running the same call
   (name + arguments) twice; then the final reply streams from the small model.
   A judge that answers in plain text instead of JSON is taken as the reply; one that
   produces nothing usable falls back to a direct persona reply.
4. Output: `ReplyPiece`s, one per sentence as soon as it is complete, all sharing a
   conversation id with seq 0, 1, ...; `is_end` on the last one (an empty closing piece
   when the stream ended on a complete sentence, so no sentence waits for the next).

Outbound sanitising (`outbound.py`) happens here, once, for every source: a model stream
passes the structural stage on its tokens (think text, tool calls, template tokens, JSON,
code, line-start markdown) before it is split into sentences, so nothing of a blob leaks
into an earlier sentence; every piece, whatever its source (llm, qa, memory, broadcast,
fallback, filler), passes the whole gate as it is published (`reply.Reply`). A piece with
nothing left is not published; a reply with nothing left says the no_answer line.

The engine orchestrates; the parts are modules of their own: a model stream is a `Chain` of
text processors (`processors.py`: think stripping, the judge's message, the outbound gate,
sentence splitting) whose sentences pass the guard; `reply.py` numbers and gates what goes
out; `prompts.py` builds every call's messages; `history.py` keeps each user's exchanges;
`tool_loop.py` runs the tools; `trace.py` records what happened.

Background tasks (Fay's ExecutionManager, `tasks.py`; setting `background_tasks`): in
"dual" (Fay: only with a big model) or "always" mode, a judge verdict `tool` says the filler
and hands the tool loop to a background task of that user; the turn ends there and the user
talks on. When the task completes, the final reply streams into the original conversation
as a new stream (seq continues, source "task"). At most one running task per user. While it
runs, each new chat message of that user is routed five ways (`routing.py`: the small model
classifies, keyword rules decide when it fails or is unsure): update_task (the next tool-loop
step sees the words), query_progress, cancel_task (the asyncio task is cancelled; tools see
CancelledError), new_task (refused with the persona's task_busy line, as Fay's submit
refuses a second task) or normal_chat (the usual flow; a tool verdict is refused the same
way). `interrupt()` cuts what is being spoken, never a running task.

Callers that hold a turn themselves (the dialogue node's `chat` action) start it with
`start`: the returned `Turn` names the reply's conversation id before anything is said, its
task ends with the turn (cancelled when interrupted or replaced), and an observer given to
`start` sees each piece of that reply as it is emitted. `submit` is the fire-and-forget form.
What the companion said outside the engine (the tts node's `say` action and `broadcast`
topic) is recorded with `record_said`, so the next prompt knows it.

Concurrency: the engine lives on one asyncio loop. Each user has at most one running turn;
a new input from the same user cancels the old turn (if the old turn's answer has not reached
the user yet, the new one answers both inputs, joined: the user went on after a pause the
recogniser took for the end of their turn; "reached" is said, or with a voice (`voice`, and a
spoken input) heard: `heard`), and `interrupt()` cancels all of
them (LLM streams are closed, the tool loop stops). The next reply then has `replace`.
LLM failures of any kind end the turn with a spoken apology (source "fallback"). A model
that answered but whose answer the guard dropped entirely gets the persona's plain
`no_answer` line instead (source "fallback"): a reply, and a filler, is never left empty.
"""
from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import time
import uuid
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from ..common import reply_sources
from ..text.words import has_cjk
from ..memory.self_facts import SelfFact, extract_self_facts
from . import fact_answers, prompts, routing
from .guard import GuardPolicy, ReplyGuard
from .history import Histories
from .judge import FINISH, TOOL, JudgeStreamParser
from ..llm.client import ChatClient, LlmError, LlmUnreachable
from ..llm.model_json import first_object
from ..text.outbound import sanitize
from .persona import Persona
from ..text.processors import Chain
from ..llm.profiles import CAPABLE, TINY
from .prompts import PromptContext
from .qa import QaTable, script_tool_name
from .settings import TASK_MODES, EngineSettings
from .speculation import SpeculativeClient, enter_probe, park, probing
from .reply import Reply, ReplyPiece
from ..text.sentences import SentenceSplitter, split_sentences
from .tasks import CANCELLED, COMPLETED, BackgroundTask, TaskBusy, TaskManager, TaskProgress
from ..text.think import ThinkStripper, strip_think
from .tool_loop import ToolLoop
from .tools import Memory, MemoryGateway, MemoryUnavailable, NoMemory, ToolContext, ToolError, ToolRegistry
from .trace import TurnTrace

log = logging.getLogger("fay_ros.dialogue")

CHAT, OBSERVATION = "chat", "observation"
SAY_SOURCE = reply_sources.SAY  # what the tts node spoke verbatim (its say action, the broadcast topic)
# The instruction of a proactive prompt: the model speaks first, to the user, in its own words.
PROACTIVE_INSTRUCTION = "Speak to me first, in one or two short sentences: {prompt}"
PENDING_SAID_REPLIES = 16  # said replies still waiting for their is_end piece (oldest recorded first)

FACT_CHECK = """You check a reply against tool results. Output ONLY one JSON object:
{"ok": true} when every fact in the reply is supported by the results, else
{"ok": false, "reply": "<the reply corrected to match the results, same language, same length or shorter>"}

Tool results:
{results}"""


@dataclass(frozen=True)
class Turn:
    """A reply turn started by `DialogueEngine.start`: the conversation id every piece of its
    reply carries, and the task running it (result: the TurnTrace; cancelled when the turn was
    interrupted or replaced by the user's next input)."""
    conversation_id: str
    task: asyncio.Task


@dataclass
class _Unanswered:
    """A chat turn whose answer has not reached its user yet (DialogueEngine.start)."""
    task: asyncio.Task
    text: str
    conversation_id: str


class DialogueEngine:
    def __init__(self, persona: Persona, small: ChatClient | None, emit: Callable[[ReplyPiece], None], *,
                 big: ChatClient | None = None, qa: QaTable | None = None, tools: ToolRegistry | None = None,
                 memory: MemoryGateway | None = None, settings: EngineSettings | None = None,
                 progress: Callable[[TaskProgress], None] | None = None) -> None:
        self.persona = persona
        self.small = small
        self.big = big
        self.emit = emit
        self.qa = qa
        self.tools = tools or ToolRegistry()
        self.memory = memory or NoMemory()
        self.settings = settings or EngineSettings()
        self.histories = Histories(self.settings.history_turns)
        # what each identified user said about themselves in this process: key -> content
        self._facts: dict[str, dict[str, str]] = {}
        self._background: set[asyncio.Task] = set()
        self._turns: dict[str, int] = {}
        self._running: dict[str, asyncio.Task] = {}
        # Each user's chat turn whose answer has not reached them yet, and the words it answers
        # (start): nothing said yet; with a voice, a spoken input's answer until a sentence of
        # it was heard (`heard`).
        self._unanswered: dict[str, _Unanswered] = {}
        # A voice speaks the replies (the dialogue node saw robot_speaking): a spoken input's
        # answer counts once it is heard, not once it is said (the tts may drop it unheard: the
        # user went on after a pause).
        self.voice = False
        # Turns cancelled because the user's next input took their words over: what they said
        # was never heard and joins no history.
        self._merged_turns: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()
        # Each user's last finished chat exchange as it went into the history (conversation id,
        # messages): taken out again if its answer turns out never to have been heard (start).
        self._last_exchange: dict[str, tuple[str, tuple[dict[str, str], ...]]] = {}
        # Turns cancelled by an input or an interrupt. The HTTP client can swallow a cancel that
        # comes as the model's response headers do (seen with openai over httpx/anyio), and the
        # turn would talk on: its model stream checks this and stops.
        self._cancelled_turns: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()
        self._probe: asyncio.Task | None = None  # the speculative probe (speculation.py), if running
        self._probe_for: tuple[str, str] = ("", "")  # (user, text) the probe runs on
        # Each user's active rules and profile facts as their last real turn read them: a probe
        # reuses them and asks memory only for what depends on the words (the recall).
        self._standing: dict[str, tuple[list[str], list[str]]] = {}
        self._interrupted = False
        # sentences of replies said outside the engine, by conversation id, until their is_end
        self._said: dict[str, tuple[str, list[str]]] = {}
        self.traces: deque[TurnTrace] = deque(maxlen=50)
        if self.settings.background_tasks not in TASK_MODES:
            raise ValueError(f"background_tasks must be one of {TASK_MODES}, not {self.settings.background_tasks!r}")
        self.tasks = TaskManager(progress)  # background tasks (Fay's ExecutionManager)
        self._check_persona(persona)

    def _check_persona(self, persona: Persona) -> None:
        """What a persona file cannot tell alone: its prestart tools exist here, and its stock
        lines (said when nothing else can be) survive the outbound gate. ValueError if not."""
        for spec in persona.prestart:
            if self.tools.get(spec.tool) is None:
                raise ValueError(f"persona prestart names unknown tool {spec.tool!r}; registered: {self.tools.names()}")
        for kind, table in (("fillers", persona.fillers), ("apologies", persona.apologies),
                            ("no_answer", persona.no_answer), ("unsupported_language", persona.unsupported_language),
                            ("task_busy", persona.task_busy), ("task_progress", persona.task_progress),
                            ("task_cancelled", persona.task_cancelled), ("task_updated", persona.task_updated)):
            for language, lines in table.items():
                for line in lines:
                    if not sanitize(line).text:
                        raise ValueError(f"persona {kind} line for {language!r} has nothing speakable once markup "
                                         f"is removed: {line!r}")

    def set_persona(self, persona: Persona) -> None:
        """A new persona (the file was edited): checked as at start (ValueError keeps the old
        one); turns that start from now on use it (call on the engine's loop)."""
        self._check_persona(persona)
        self.persona = persona

    def set_qa(self, qa: QaTable | None) -> None:
        """A new qa table (the file was edited): the next lookup uses it (call on the loop)."""
        self.qa = qa

    # -- entry points (call on the engine's loop) ---------------------------------------
    def submit(self, user_id: str, text: str, language: str = "", kind: str = CHAT, *,
               spoken: bool = False) -> asyncio.Task | None:
        """Start a turn (an observation is only recorded) and return its task; None for an
        empty text. The user's running turn (if any) is cancelled first."""
        if kind == OBSERVATION:
            text = text.strip()
            return asyncio.ensure_future(self._observe(user_id, text)) if text else None
        turn = self.start(user_id, text, language, kind, spoken=spoken)
        return turn.task if turn is not None else None

    def start(self, user_id: str, text: str, language: str = "", kind: str = CHAT,
              observer: Callable[[ReplyPiece], None] | None = None, *, spoken: bool = False) -> Turn | None:
        """Start a reply turn (CHAT) and return its handle (None for an empty text); `observer`
        sees each piece of this turn's reply right after `emit` published it; `spoken`: the
        words were heard by the recogniser (their answer is heard by the voice, if any). The
        user's running turn (if any) is cancelled first."""
        if kind != CHAT:
            raise ValueError(f"start() runs a chat turn, not {kind!r}")
        text = text.strip()
        if not text:
            return None
        previous = self._running.get(user_id)
        unanswered = self._unanswered.pop(user_id, None)
        unheard_answer = False
        replaces = ""   # the conversation whose answer this turn's answers in its place
        if unanswered is not None and (unanswered.task is previous or unanswered.task.done()):
            # The user went on before their turn's answer reached them: its end came at a pause
            # inside the sentence ("Please call me." ... "tomorrow morning."). One turn answers
            # both parts, so nothing they said is lost, and what the first said unheard joins no
            # history (the tts drops it: the answer to the new words replaces it). A turn still
            # running is cancelled below; one that has finished (its whole answer waits unheard
            # in the tts while the person talks) leaves the history again.
            if not unanswered.task.done():
                self._merged_turns.add(unanswered.task)
                replaces = unanswered.conversation_id
            elif not unanswered.task.cancelled() and self._unsay(user_id, unanswered.conversation_id):
                unheard_answer = True
                replaces = unanswered.conversation_id
            if replaces:
                text = f"{unanswered.text} {text}"
        probe = self._probe if self._probe is not None and not self._probe.done() else None
        if probe is not None and self._probe_for != (user_id, text):
            probe.cancel()  # a guess at other words: the real turn gathers its own context
            probe = None
        self._record_pending_said(user_id)  # a said reply whose end never came: the next prompt knows it
        replace = self._interrupted or unheard_answer   # (the unheard answer goes, should it be queued still)
        if previous is not None and not previous.done():
            self._cancel_turn(previous)
            replace = True
        self._interrupted = False
        opened = self._open_turn(user_id)

        heard_by_voice = spoken and self.voice

        def said(piece: ReplyPiece) -> None:
            if piece.text and not heard_by_voice and (entry := self._unanswered.get(user_id)) is not None \
                    and entry.task is started.task:
                del self._unanswered[user_id]
            if observer is not None:
                observer(piece)

        async def turn() -> TurnTrace:
            if probe is not None:
                await self._let_probe_park(probe)
            return await self.run_turn(user_id, text, language, kind, replace=replace, opened=opened,
                                       observer=said, replaces=replaces)
        started = self._run(user_id, opened, turn())
        self._unanswered[user_id] = _Unanswered(started.task, text, started.conversation_id)
        return started

    def _remember_exchange(self, user_id: str, conversation_id: str, user_text: str, reply: Reply) -> None:
        """A finished chat turn into the history, kept as the user's last exchange (`_unsay`)."""
        self._last_exchange[user_id] = (conversation_id,
                                        self.histories.remember_turn(user_id, user_text, " ".join(reply.spoken)))

    def _unsay(self, user_id: str, conversation_id: str) -> bool:
        """Take the user's last exchange out of their history if it is this conversation's."""
        last = self._last_exchange.pop(user_id, None)
        if last is None or last[0] != conversation_id:
            return False
        return self.histories.forget(user_id, last[1])

    def heard(self, conversation_id: str) -> None:
        """The voice began a sentence of this reply: its answer has reached the user."""
        for user_id, entry in list(self._unanswered.items()):
            if entry.conversation_id == conversation_id:
                del self._unanswered[user_id]

    async def _let_probe_park(self, probe: asyncio.Task) -> None:
        """The final came while the probe on the same words was still gathering context: let it
        reach its model call (it parks there, and this turn's identical request takes that
        stream over) instead of cancelling it and starting the model later. Bounded by the
        probe's own context timeouts; a turn cancelled meanwhile takes the probe with it."""
        try:
            await asyncio.wait({probe}, timeout=self.settings.memory_timeout + self.settings.prestart_timeout)
        finally:
            if not probe.done():
                probe.cancel()

    def _run(self, user_id: str, opened: tuple[int, str], turn: Any) -> Turn:
        """Run a turn's coroutine as the user's running turn (the one an input or an interrupt
        cancels) until it ends."""
        task = asyncio.ensure_future(turn)
        self._running[user_id] = task

        def finished(done: asyncio.Task) -> None:
            if self._running.get(user_id) is done:
                del self._running[user_id]

        task.add_done_callback(finished)
        return Turn(opened[1], task)

    def speculate(self, user_id: str, text: str, language: str = "") -> asyncio.Task | None:
        """Start the model on what the user has probably finished saying (speculation.py); an
        empty text withdraws the guess (the user went on). Returns the probe's task, or None
        when nothing is speculated: the model client does not speculate, or the user has a
        background task (routing a message to it acts at once)."""
        client = self.small
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
        try:
            await self.run_turn(user_id, text, language, CHAT, opened=(self._turns.get(user_id, 0) + 1, "speculative"))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # cancelled from outside: a newer guess, or the real turn started first
            # parked (speculation.park): the model call runs ahead, or nothing needs one

    def record_said(self, user_id: str, conversation_id: str, text: str, is_end: bool) -> None:
        """One sentence the companion said outside the engine (the tts node's `say` action or
        `broadcast` topic, on `reply` with source "say"): at the reply's `is_end` its sentences
        become one companion message of that user's history (no user words), so the next
        prompt knows what was said. A reply without an owner ("") is not recorded."""
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
        self.histories.remember_turn(user_id, None, " ".join(sentences))

    def _record_pending_said(self, user_id: str) -> None:
        for conversation_id in [c for c, (owner, _s) in self._said.items() if owner == user_id]:
            self._record_said(conversation_id)

    def speak_first(self, user_id: str, *, line: str = "", prompt: str = "", language: str = "") -> Turn | None:
        """Proactive talk (the schedule's triggers): the companion speaks first, to `user_id`:
        the fixed `line` verbatim, or what the model says for `prompt` (an instruction, never
        shown to anyone as the user's words). Every piece has source "proactive"; what was said
        joins the user's history as the companion's words. It never talks over the user: while
        the user's turn runs, nothing is said (None). The user's next input cancels it like any
        turn. A model that fails or says nothing usable leaves it unsaid: nobody asked, so no
        apology and no stock line."""
        if not (line.strip() or prompt.strip()):
            return None
        running = self._running.get(user_id)
        if running is not None and not running.done():
            return None
        opened = self._open_turn(user_id)
        return self._run(user_id, opened, self._proactive_turn(user_id, line.strip(), prompt.strip(), language, opened))

    async def _proactive_turn(self, user_id: str, line: str, prompt: str, language: str,
                              opened: tuple[int, str]) -> TurnTrace:
        turn, conversation_id = opened
        language = language or (self._guess_language(line or prompt))
        reply = Reply(self.emit, user_id, conversation_id, False, "", source=reply_sources.PROACTIVE)
        trace = TurnTrace(conversation_id)
        trace.path = "proactive"
        self.traces.append(trace)
        try:
            if line:
                self._speak_text(reply, line, reply_sources.PROACTIVE)
            else:
                await self._proactive_reply(reply, ToolContext(user_id, prompt, conversation_id, turn, language,
                                                               self.memory), trace)
            if reply.spoken:
                self.histories.remember_turn(user_id, None, " ".join(reply.spoken))
        except asyncio.CancelledError:
            trace.cancelled = True
            reply.cut()
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            log.warning("proactive line for %s not said: the LLM failed (%s): %s", conversation_id, exc.kind,
                        exc.reason)
            reply.cut()
        except Exception as exc:  # noqa: BLE001 - a bug in one line must not take the node down
            trace.error = f"{type(exc).__name__}: {exc}"
            log.exception("proactive line %s failed", conversation_id)
            reply.cut()
        return trace

    async def _proactive_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace) -> None:
        """The model's own words for a proactive prompt: the persona, the user's name and facts,
        the recent history, then the instruction as the last message; streamed through the same
        outbound gate and guard as any answer (the guard also drops a recital of the prompt)."""
        if self.small is None:
            raise LlmUnreachable("no LLM endpoint configured")
        started = time.monotonic()
        memories, rules, prestart, _note, profile = await self._gather_context(ctx)
        trace.context_seconds = time.monotonic() - started
        facts = self._known_facts(ctx.owner, profile, memories)
        ctx.user_name = fact_answers.user_name(facts)
        instruction = PROACTIVE_INSTRUCTION.format(prompt=ctx.question)
        guard = self._guard(ctx, extra_prompt=(instruction,))
        if self.settings.profile == TINY:
            tiny = self.settings.tiny
            volatile = prompts.tiny_volatile(rules, memories, facts, prestart, ctx.user_name)
            history = self.histories.window(ctx.owner, tiny.history_min_turns, tiny.history_max_turns)
            messages = prompts.tiny_messages(self._tiny_system(facts), history, volatile, instruction)
            await self._stream_spoken(reply, messages, trace, guard, ctx, first_clause_chars=tiny.first_clause_chars,
                                      max_tokens=min(tiny.max_tokens, self.settings.max_tokens),
                                      temperature=tiny.temperature, frequency_penalty=tiny.frequency_penalty,
                                      stop=list(tiny.stop), extra_body={"repeat_penalty": tiny.repeat_penalty})
            return
        context = PromptContext(self._with_facts(memories, facts), rules, prestart)
        messages = prompts.direct_messages(self.persona.system_prompt, context, self.history(ctx.owner), instruction)
        await self._stream_spoken(reply, messages, trace, guard, ctx)

    def interrupt(self) -> int:
        """Cancel every running turn; the next reply replaces whatever is being spoken."""
        self._interrupted = True
        cancelled = 0
        for task in list(self._running.values()):
            if not task.done():
                self._cancel_turn(task)
                cancelled += 1
        return cancelled

    def _cancel_turn(self, task: asyncio.Task) -> None:
        task.cancel()
        self._cancelled_turns.add(task)

    def _stop_if_cancelled(self) -> None:
        """Raise the cancel of this turn that the HTTP client swallowed (see _cancelled_turns)."""
        if asyncio.current_task() in self._cancelled_turns:
            raise asyncio.CancelledError

    def cancel_tasks(self) -> int:
        """Shutdown: cancel every background task (an interrupt never does)."""
        return self.tasks.cancel_all()

    def history(self, user_id: str) -> list[dict[str, str]]:
        return self.histories.of(user_id)

    async def settle(self) -> None:
        """Wait for background memory writes (tests, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def prepare_clients(self) -> None:
        """Make the model clients now (on the engine's loop), so the first user turn does not
        wait for the SDK (ChatClient.prepare). Sends nothing."""
        for client in filter(None, (self.small, self.big)):
            client.prepare()

    async def warm_up(self) -> None:
        """Make the model clients, and prime the model server with the prompt prefix every
        tiny turn starts with, so the first user turn does not pay for it (llama.cpp keeps it
        in its prompt cache)."""
        self.prepare_clients()
        if self.small is None or self.settings.profile != TINY:
            return
        messages = prompts.tiny_messages(self._tiny_system({}), [], [], "Hello.")
        try:
            async with contextlib.aclosing(self.small.stream(messages, max_tokens=1, temperature=0.0)) as events:
                async for _event in events:
                    pass
        except LlmError as exc:
            log.warning("warm-up of the model failed (%s): %s", exc.kind, exc.reason)

    # -- one turn -----------------------------------------------------------------------
    def _open_turn(self, user_id: str) -> tuple[int, str]:
        """The user's next turn number and the conversation id of its reply."""
        turn = self._turns[user_id] = self._turns.get(user_id, 0) + 1
        return turn, f"{user_id or 'guest'}-{turn}-{uuid.uuid4().hex[:8]}"

    async def run_turn(self, user_id: str, text: str, language: str = "", kind: str = CHAT,
                       replace: bool = False, *, opened: tuple[int, str] | None = None,
                       observer: Callable[[ReplyPiece], None] | None = None, replaces: str = "") -> TurnTrace:
        """One turn; `opened` is the (turn number, conversation id) `start` chose, `observer`
        sees each piece of the reply after `emit`; `replaces`: the conversation id of an unheard
        reply whose words this turn answers too (ReplyPiece.replaces)."""
        language = language or self._guess_language(text)
        turn, conversation_id = opened or self._open_turn(user_id)
        no_answer = self.persona.line("no_answer", language, turn)
        probe = probing()
        emit = _park if probe else self.emit if observer is None else _emit_and_observe(self.emit, observer)
        reply = Reply(emit, user_id, conversation_id, replace, no_answer, replaces=replaces)
        trace = TurnTrace(conversation_id)
        if not probe:
            self.traces.append(trace)
        ctx = ToolContext(user_id, text, conversation_id, turn, language, self.memory)
        history_note = ""
        learned: list[SelfFact] = []
        try:
            learned = self._learn_facts(ctx)
            if kind == CHAT and (task := self.tasks.running(user_id)) is not None \
                    and await self._route_during_task(reply, ctx, trace, task):
                self.histories.remember_turn(user_id, text, " ".join(reply.spoken))
                return trace
            if self.qa is not None and (hit := self.qa.match(text)) is not None:
                if probe:
                    park()  # a qa answer needs no model, and its tool must not run twice
                trace.path = "qa"
                answer = await self._qa_answer(hit.entry.answer, hit.entry.script, ctx, trace)
                self._speak_text(reply, answer, "qa")
                self._remember_exchange(user_id, conversation_id, text, reply)
                return trace
            if self.small is None:
                raise LlmUnreachable("no LLM endpoint configured")
            started = time.monotonic()
            memories, rules, prestart, history_note, profile = await self._gather_context(ctx)
            trace.context_seconds = time.monotonic() - started
            facts = self._known_facts(user_id, profile, memories, learned if probe else ())
            ctx.user_name = fact_answers.user_name(facts)
            if self.settings.profile == TINY:
                await self._tiny_turn(reply, ctx, trace, facts, memories, rules, prestart)
            elif self.settings.judge:
                await self._judged_turn(reply, ctx, trace, PromptContext(self._with_facts(memories, facts), rules,
                                                                         prestart))
            else:
                trace.path = "direct"
                await self._direct_reply(reply, ctx, trace, PromptContext(self._with_facts(memories, facts), rules,
                                                                          prestart))
            self._remember_exchange(user_id, conversation_id, self._history_user_text(text, history_note), reply)
        except asyncio.CancelledError:
            trace.cancelled = True
            reply.cut()  # close the interrupted reply so consumers do not wait for it
            if reply.spoken and not probe and asyncio.current_task() not in self._merged_turns:
                # the next turn (the interruption) knows what was asked and what had been said
                # (a turn whose answer did not reach the user is joined to their next input: start)
                self.histories.remember_turn(user_id, self._history_user_text(text, history_note),
                                             " ".join(reply.spoken))
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            trace.path = trace.path or "fallback"
            log.error("LLM failed for conversation %s (%s): %s; speaking the apology", conversation_id, exc.kind,
                      exc.reason)
            reply.end(self.persona.line("apology", language), "fallback")
        except Exception as exc:  # noqa: BLE001 - a bug in one turn must not take the node down
            trace.error = f"{type(exc).__name__}: {exc}"
            log.exception("dialogue turn %s failed", conversation_id)
            reply.end(self.persona.line("apology", language), "fallback")
        finally:
            # what the user said about themselves stands however the reply went (answered,
            # failed, or cut by an interrupt): the session already knows it, so memory must too
            if not probe:
                self._store_facts(ctx, learned)
            if reply.dropped:
                trace.outbound = reply.dropped.summary()
                log.info("outbound sanitiser for %s: removed %s", conversation_id, trace.outbound)
        return trace

    async def _judged_turn(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext) -> None:
        tool_loop = self._tool_loop()
        messages = prompts.judge_messages(self.persona.system_prompt, context, [t.name for t in tool_loop.offered()],
                                          self.history(ctx.owner), ctx.question)
        # reasoning is removed before the judge's parser (it must see the JSON); the message it
        # releases then passes the outbound gate like any other answer
        judge = JudgeStreamParser()
        chain = Chain(ThinkStripper(), judge, reply.stream(), SentenceSplitter(self.settings.sentence_min_chars))
        guard = self._guard(ctx)

        async with contextlib.aclosing(self._spoken_tokens(messages, trace,
                                                           response_format=self._judge_format())) as tokens:
            async for content in tokens:
                if self._say_guarded(reply, guard, chain.feed(content)) or chain.ended:
                    break  # the guard has heard enough, or the model's turn is over: close the stream
        stopped = guard.full
        rest = ""
        if not stopped:
            *sentences, rest = chain.flush()
            if self._say_guarded(reply, guard, sentences):
                rest = ""
        verdict = judge.close()
        if stopped or verdict.action == FINISH or verdict.mode == "text":
            trace.path = "finish" if verdict.mode == "json" or stopped else "text"
            if reply.seq == 0 and not rest:
                trace.path = "direct"
                await self._direct_reply(reply, ctx, trace, context)
                return
            self._end_guarded(reply, guard, rest, trace, ctx)
            return
        if verdict.action == TOOL:
            trace.path = "tool"
            if self._background_tasks():
                self._start_task(reply, ctx, trace, context, verdict.keyword, tool_loop)
                return
            reply.say(self.persona.line("filler", ctx.language, ctx.turn), "filler")
            results = await tool_loop.run(ctx, trace, self.persona.system_prompt, context, self.history(ctx.owner),
                                          verdict.keyword)
            await self._final_reply(reply, ctx, trace, results)
            return
        log.warning("judge answer unusable (%s, action %r); answering directly", verdict.mode, verdict.action)
        trace.path = "direct"
        await self._direct_reply(reply, ctx, trace, context)

    # -- background tasks (Fay's ExecutionManager) -------------------------------------------
    def _background_tasks(self) -> bool:
        mode = self.settings.background_tasks
        return self.settings.profile == CAPABLE and (mode == "always" or (mode == "dual" and self.big is not None))

    def _start_task(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext, keyword: str,
                    tool_loop: ToolLoop) -> None:
        """The tool loop as a background task: the filler ends this reply; the result comes as a
        new stream of this conversation (`_deliver`). A user with a running task is refused."""
        if self.tasks.running(ctx.owner) is not None:
            trace.path = "task_busy"
            reply.end(self.persona.line("task_busy", ctx.language, ctx.turn), "task_status")
            return
        reply.end(self.persona.line("filler", ctx.language, ctx.turn), "filler")
        history = self.history(ctx.owner)
        task_trace = TurnTrace(ctx.conversation_id, path="task")
        self.traces.append(task_trace)

        async def work(task: BackgroundTask) -> list[tuple[str, str]]:
            return await tool_loop.run(ctx, task_trace, self.persona.system_prompt, context, history, keyword,
                                       on_step=lambda steps, tool: self.tasks.step(task, steps, tool),
                                       instructions=task.instructions)

        try:
            task = self.tasks.submit(BackgroundTask(ctx.owner, ctx.conversation_id, ctx.question, ctx.language,
                                                    reply.seq), work,
                                     lambda done: self._task_done(done, ctx, task_trace))
        except TaskBusy:  # cannot happen on one loop after the check above; kept for safety
            return
        log.info("background task %s started for conversation %s", task.id, ctx.conversation_id)

    def _task_done(self, task: BackgroundTask, ctx: ToolContext, trace: TurnTrace) -> None:
        """A task ended: a completed or failed one answers in its conversation; a cancelled one
        was already answered by the cancel route."""
        log.info("background task %s of conversation %s: %s after %d step(s)", task.id, task.conversation_id,
                 task.state, task.step)
        if task.state == CANCELLED:
            trace.cancelled = True
            return
        user_id = task.user_id
        previous = self._running.get(user_id)

        async def deliver() -> None:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})  # let the reply being spoken to this user finish first
            me = asyncio.current_task()
            if me is not None:
                self._running[user_id] = me
            try:
                await self._deliver(task, ctx, trace)
            finally:
                if self._running.get(user_id) is me:
                    del self._running[user_id]

        job = asyncio.ensure_future(deliver())
        self._background.add(job)
        job.add_done_callback(self._background.discard)

    async def _deliver(self, task: BackgroundTask, ctx: ToolContext, trace: TurnTrace) -> None:
        """The task's final reply, from the small model, as a new stream (source "task") of the
        conversation that started it."""
        reply = Reply(self.emit, task.user_id, task.conversation_id, False,
                      self.persona.line("no_answer", task.language, ctx.turn), start_seq=task.next_seq, source="task")
        try:
            if task.state == COMPLETED:
                results: list[tuple[str, str]] = task.result or []
                if self.settings.fact_check and self.big is not None:
                    await self._checked_final_reply(reply, ctx, trace, results)
                else:
                    await self._final_reply(reply, ctx, trace, results)
            else:
                error = task.error
                trace.error = f"{type(error).__name__}: {error}" if error else "failed"
                if isinstance(error, LlmError):
                    log.error("background task %s: LLM failed (%s): %s; speaking the apology", task.id, error.kind,
                              error.reason)
                else:
                    log.error("background task %s failed: %s", task.id, trace.error)
                reply.end(self.persona.line("apology", task.language), "fallback")
        except asyncio.CancelledError:
            reply.cut()
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            log.error("LLM failed for the result of task %s (%s): %s; speaking the apology", task.id, exc.kind,
                      exc.reason)
            reply.end(self.persona.line("apology", task.language), "fallback")
        self.histories.remember_turn(task.user_id, None, " ".join(reply.spoken))

    async def _checked_final_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace,
                                   results: list[tuple[str, str]]) -> None:
        """Dual-model fact check: the small model writes the final reply (not spoken yet), the
        big model checks it against the tool results and may correct it; what is said passes
        the guard and the gate like any answer. The big model never speaks on its own."""
        messages = prompts.final_messages(self.persona.system_prompt, results, self.history(ctx.owner), ctx.question)
        async with contextlib.aclosing(self._spoken_tokens(messages, trace)) as tokens:
            draft = strip_think("".join([t async for t in tokens])).strip()
        text = draft
        assert self.big is not None
        check = [{"role": "system", "content": FACT_CHECK.replace("{results}", "\n".join(
                     f"- {c}: {r[:1000]}" for c, r in results) or "(none)")},
                 {"role": "user", "content": draft}]
        try:
            verdict = first_object(await self._complete(self.big, check, max_tokens=self.settings.max_tokens))
        except LlmError as exc:
            log.warning("fact check of %s skipped (%s): %s", ctx.conversation_id, exc.kind, exc.reason)
            verdict = None
        if verdict is not None and verdict.get("ok") is False and isinstance(verdict.get("reply"), str) \
                and verdict["reply"].strip():
            text = verdict["reply"].strip()
            trace.guard = "fact check corrected the reply"
            log.info("fact check corrected the reply of %s", ctx.conversation_id)
        guard = self._guard(ctx, extra_prompt=(FACT_CHECK,))
        sentences = split_sentences(text, self.settings.sentence_min_chars)
        rest = sentences.pop() if sentences else ""
        if self._say_guarded(reply, guard, sentences):
            rest = ""
        self._end_guarded(reply, guard, rest, trace, ctx)

    async def _route_during_task(self, reply: Reply, ctx: ToolContext, trace: TurnTrace,
                                 task: BackgroundTask) -> bool:
        """Five-way routing of a message while the user's task runs; True when it was answered
        here, False for normal_chat (the usual flow goes on)."""
        answer: str | None = None
        if self.small is not None:
            messages = routing.router_messages(task.question, task.step, ctx.question)
            try:
                answer = await asyncio.wait_for(self._complete(self.small, messages, max_tokens=40, temperature=0.0,
                                                               response_format=self._route_format()),
                                                self.settings.route_timeout)
            except (LlmError, asyncio.TimeoutError) as exc:
                log.warning("task routing by the model failed (%s); the keyword rules decide",
                            getattr(exc, "kind", "timeout"))
        route = routing.decide(ctx.question, answer, self.settings.route_min_confidence)
        trace.route = f"{route.intent} by {route.by}"
        log.info("message of %s during task %s routed to %s", ctx.conversation_id, task.id, trace.route)
        if route.intent == routing.NORMAL_CHAT:
            return False
        trace.path = f"task:{route.intent}"
        if route.intent == routing.UPDATE_TASK:
            line = self.persona.line("task_updated", ctx.language, ctx.turn)
            if self.tasks.update(ctx.owner, ctx.question) is None:  # it ended meanwhile
                return False
        elif route.intent == routing.QUERY_PROGRESS:
            line = self.persona.line("task_progress", ctx.language, ctx.turn).format(steps=task.step)
        elif route.intent == routing.CANCEL_TASK:
            self.tasks.cancel(ctx.owner)
            line = self.persona.line("task_cancelled", ctx.language, ctx.turn)
        elif self.settings.new_task == "replace":  # new_task: drop the running one, take this one afresh
            self.tasks.cancel(ctx.owner)
            trace.path = "task:new_task replaced"
            log.info("task %s of %s cancelled for a new request", task.id, ctx.conversation_id)
            return False
        else:  # new_task: one running task per user (Fay's ExecutionManager.submit refuses a second)
            line = self.persona.line("task_busy", ctx.language, ctx.turn)
        self._speak_text(reply, line, "task_status")
        return True

    async def _complete(self, client: ChatClient, messages: list[dict[str, Any]], **options: Any) -> str:
        """One whole (not spoken) answer of a model, reasoning removed."""
        parts: list[str] = []
        async with contextlib.aclosing(client.stream(messages, **options)) as events:
            async for event in events:
                parts.append(event.content)
        return strip_think("".join(parts)).strip()

    def _route_format(self) -> dict[str, Any] | None:
        if self.settings.judge_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "task_route", "schema": routing.ROUTER_SCHEMA}}
        if self.settings.judge_format == "json_object":
            return {"type": "json_object"}
        return None

    async def _tiny_turn(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, facts: dict[str, str],
                         memories: list[Memory], rules: list[str], prestart: list[str]) -> None:
        """The tiny profile: one streamed call, everything else decided before it.

        1. A question about the user's own facts is answered from the facts (in any language),
           one about the time or date from the clock.
        2. A language the model does not speak gets the persona's honest line, in that language.
        3. Otherwise one greedy, capped, stop-bounded call with the persona, the user's name
           and facts as plain lines (stable, so the server's prompt cache keeps them), and the
           recalled memories and prestart results just before the question."""
        tiny = self.settings.tiny
        answer = fact_answers.answer(ctx.question, facts, ctx.language)
        if answer is not None:
            trace.path = "memory"
            self._speak_text(reply, answer, "memory")
            return
        answer = fact_answers.time_answer(ctx.question, datetime.datetime.now().astimezone(), ctx.language)
        if answer is not None:
            trace.path = "clock"
            self._speak_text(reply, answer, "qa")
            return
        if tiny.languages and ctx.language.split("-")[0] not in tiny.languages:
            trace.path = "language"
            self._speak_text(reply, self.persona.line("unsupported_language", ctx.language), "fallback")
            return
        trace.path = "tiny"
        volatile = prompts.tiny_volatile(rules, memories, facts, prestart, ctx.user_name)
        history = self.histories.window(ctx.owner, tiny.history_min_turns, tiny.history_max_turns)
        messages = prompts.tiny_messages(self._tiny_system(facts), history, volatile, ctx.question)
        guard = self._guard(ctx, extra_prompt=tuple(volatile))
        await self._stream_spoken(reply, messages, trace, guard, ctx, first_clause_chars=tiny.first_clause_chars,
                                  max_tokens=min(tiny.max_tokens, self.settings.max_tokens),
                                  temperature=tiny.temperature, frequency_penalty=tiny.frequency_penalty,
                                  stop=list(tiny.stop), extra_body={"repeat_penalty": tiny.repeat_penalty})

    def _tiny_system(self, facts: dict[str, str]) -> str:
        return prompts.tiny_system(self.persona.system_prompt, facts, self.settings.tiny.max_fact_lines)

    def _tool_loop(self) -> ToolLoop:
        """The tool loop of a turn, on the big model in dual-model mode (else the small one)."""
        s = self.settings
        client = self.big or self.small
        if client is None:
            raise LlmUnreachable("no LLM endpoint configured")
        return ToolLoop(client, self.tools, allowed=s.llm_tools, max_steps=s.max_tool_steps,
                        tool_timeout=s.tool_timeout, native_tools=s.native_tools,
                        sampling={"max_tokens": s.max_tokens, "temperature": s.temperature,
                                  "frequency_penalty": s.frequency_penalty})

    async def _final_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace,
                           results: list[tuple[str, str]]) -> None:
        messages = prompts.final_messages(self.persona.system_prompt, results, self.history(ctx.owner), ctx.question)
        await self._stream_spoken(reply, messages, trace, self._guard(ctx), ctx)

    async def _direct_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext) -> None:
        messages = prompts.direct_messages(self.persona.system_prompt, context, self.history(ctx.owner), ctx.question)
        await self._stream_spoken(reply, messages, trace, self._guard(ctx), ctx)

    async def _spoken_tokens(self, messages: list[dict[str, Any]], trace: TurnTrace,
                             **options: Any) -> AsyncGenerator[str, None]:
        """Content chunks of one streamed answer of the small model; stamps the turn's LLM
        request and first-token times (the time to first token on /diagnostics) and the
        stream's finish reason."""
        trace.llm_request_at = trace.llm_request_at or time.monotonic()
        trace.finish_reason = ""
        options.setdefault("max_tokens", self.settings.max_tokens)
        options.setdefault("temperature", self.settings.temperature)
        options.setdefault("frequency_penalty", self.settings.frequency_penalty)
        if self.small is None:
            raise LlmUnreachable("no LLM endpoint configured")
        async with contextlib.aclosing(self.small.stream(messages, **options)) as events:
            async for event in events:
                self._stop_if_cancelled()
                if event.done:
                    trace.finish_reason = event.finish_reason
                    continue
                if not event.content:
                    continue
                if not trace.first_token_at:
                    if 0 < event.requested_at < trace.llm_request_at:
                        # a speculative stream: the model was asked before the final came
                        trace.llm_request_at = event.requested_at
                    trace.first_token_at = event.received_at
                yield event.content

    async def _stream_spoken(self, reply: Reply, messages: list[dict[str, Any]], trace: TurnTrace,
                             guard: ReplyGuard, ctx: ToolContext, first_clause_chars: int = 0,
                             **options: Any) -> None:
        """Stream one answer through the outbound gate, sentence splitting and the guard; the
        stream is closed as soon as the guard has heard enough or the model's turn ended (a
        template token)."""
        # A verdict in the judge's format is read here too, as in the judged turn (`_judged_turn`):
        # a model that answers with one unasked (e.g. one that the tiny flow runs while `fay-ros
        # chat`, resolving the profile without the node's default model name, runs the judged flow
        # on it) is heard saying its message, not the no_answer line for a removed JSON object.
        # Plain text passes the reader as it is; reasoning is left to the gate, which counts it.
        chain = Chain(JudgeStreamParser(), reply.stream(),
                      SentenceSplitter(self.settings.sentence_min_chars, first_clause_chars))
        stopped = False
        async with contextlib.aclosing(self._spoken_tokens(messages, trace, **options)) as tokens:
            async for content in tokens:
                if self._say_guarded(reply, guard, chain.feed(content)):
                    stopped = True
                    break
                if chain.ended:
                    break
        rest = ""
        if not stopped:
            *sentences, rest = chain.flush()
            if self._say_guarded(reply, guard, sentences):
                rest = ""
        self._end_guarded(reply, guard, rest, trace, ctx)

    @staticmethod
    def _say_guarded(reply: Reply, guard: ReplyGuard, sentences: list[str]) -> bool:
        """Publish each sentence the guard lets through (its inline markup removed by the
        reply's gate), in order; True (and the rest left unsaid) as soon as the guard says
        the stream must stop."""
        for sentence in sentences:
            verdict = guard.check(sentence)
            if verdict.text:
                reply.say(verdict.text, "llm")
            if verdict.stop:
                return True
        return False

    def _end_guarded(self, reply: Reply, guard: ReplyGuard, remainder: str, trace: TurnTrace,
                     ctx: ToolContext) -> None:
        """Close the reply with its last piece; never empty: when nothing of the model's answer
        could be published (the guard dropped it or the sanitiser left no words), the reply
        says the persona's plain no_answer line instead."""
        last = guard.finish(remainder, cut_by_limit=trace.finish_reason == "length") if not guard.full else None
        trace.guard = guard.summary()
        if guard.dropped:
            log.info("reply guard for %s: %s", ctx.conversation_id, trace.guard)
        if reply.end(last.text if last is not None and last.text else "", "llm"):
            said = "said the no_answer line" if reply.no_answer else "said nothing (nobody asked)"
            log.warning("nothing of the model's answer for %s could be spoken (guard: %s; outbound: %s); %s",
                        ctx.conversation_id, trace.guard, reply.dropped.summary(), said)

    def _guard(self, ctx: ToolContext, extra_prompt: tuple[str, ...] = ()) -> ReplyGuard:
        instructions = (prompts.JUDGE, prompts.EXECUTOR, prompts.FINAL, prompts.DIRECT)
        recent = tuple(m["content"] for m in self.history(ctx.owner)[-6:] if m["role"] == "assistant")
        return ReplyGuard(GuardPolicy(self.persona.name, self.persona.max_sentences, self.persona.emoji),
                          user_name=ctx.user_name, user_text=ctx.question, recent_replies=recent,
                          prompt_texts=(self.persona.system_prompt, *instructions, *extra_prompt),
                          tool_names=tuple(self.tools.names()))

    # -- helpers --------------------------------------------------------------------------
    async def _qa_answer(self, answer: str, script: str, ctx: ToolContext, trace: TurnTrace) -> str:
        if not script:
            return answer
        name = script_tool_name(script)
        if not name or name not in self.settings.qa_script_tools or self.tools.get(name) is None:
            log.warning("qa.csv script %r ignored: scripts are never executed, and it names no allow-listed tool "
                        "(allowed: %s)", script, ", ".join(self.settings.qa_script_tools) or "none")
            return answer.replace("{{result}}", "")
        try:
            result = await self.tools.run(name, {"question": ctx.question}, ctx, self.settings.tool_timeout)
        except (ToolError, Exception) as exc:  # noqa: BLE001 - the fixed answer still stands
            log.warning("qa.csv tool %s failed: %s", name, exc)
            result = ""
        trace.tool_calls.append(prompts.describe_call(name, {}))
        return answer.replace("{{result}}", result) if "{{result}}" in answer else answer

    async def _gather_context(self, ctx: ToolContext) -> tuple[list[Memory], list[str], list[str], str, list[str]]:
        """Recalled memories (confirmed), active rules, prestart results, the prestart text kept
        in history, and the profile facts ("kind:key=content"), all at once, each bounded.

        A probe takes the rules and the profile its user's last turn read (two memory round
        trips fewer between the speculative words and the model's start); the real turn reads
        them afresh, and if they changed meanwhile its request differs from the probe's, so the
        probe's stream is not used (speculation.py)."""
        standing = self._standing.get(ctx.owner) if probing() else None

        async def memories() -> list[Memory]:
            if not ctx.owner:
                return []  # a guest has no private memory
            # a probe reads without marking what it read as retrieved, so the real turn's recall
            # (which does) ranks the same memories the same way
            found = await asyncio.wait_for(self.memory.recall(ctx.owner, ctx.question, self.settings.memory_recall_n,
                                                              stateless=probing()),
                                           self.settings.memory_timeout)
            # candidates never reach a prompt, even if a gateway returned one
            return [m for m in found if m.status == "confirmed"]

        async def rules() -> list[str]:
            if not ctx.owner:
                return []
            if standing is not None:
                return standing[0]
            found = await asyncio.wait_for(self.memory.active_rules(ctx.owner), self.settings.memory_timeout)
            return [m.content for m in found if m.status == "confirmed"]

        async def profile() -> list[str]:
            if not ctx.owner:
                return []
            if standing is not None:
                return standing[1]
            return await asyncio.wait_for(self.memory.profile(ctx.owner), self.settings.memory_timeout)

        async def prestart(spec) -> str:
            result = await self.tools.run(spec.tool, spec.render_args(ctx.question), ctx,
                                          self.settings.prestart_timeout)
            return f"[{spec.tool}] {result}"

        specs = self.persona.prestart
        fixed = ["memory recall", "active rules", "profile"]
        outcomes = await asyncio.gather(memories(), rules(), profile(), *(prestart(s) for s in specs),
                                        return_exceptions=True)
        found: list[Any] = []
        for what, outcome in zip([*fixed, *(f"prestart {s.tool}" for s in specs)], outcomes):
            if isinstance(outcome, BaseException):
                if isinstance(outcome, asyncio.CancelledError):
                    raise outcome
                expected = isinstance(outcome, (MemoryUnavailable, asyncio.TimeoutError))
                level = logging.DEBUG if expected else logging.WARNING
                log.log(level, "%s skipped: %s", what, outcome or type(outcome).__name__)
                outcome = [] if what in fixed else ""
            found.append(outcome)
        recalled, active_rules, profile_facts, *results = found
        _recall_outcome, rules_outcome, profile_outcome, *_ = outcomes
        read_both = not isinstance(rules_outcome, BaseException) and not isinstance(profile_outcome, BaseException)
        if ctx.owner and not probing() and read_both:
            self._standing[ctx.owner] = (active_rules, profile_facts)
        prestart_results = [r for r in results if r]
        keep = "\n".join(r for r, s in zip(results, specs) if r and s.include_history)
        return recalled, active_rules, prestart_results, keep, profile_facts

    # -- the user's own facts -------------------------------------------------------------
    def _learn_facts(self, ctx: ToolContext) -> list[SelfFact]:
        """What the user just said about themselves: known to the next turn at once (stored
        in memory after the reply). Guests get no private memory, short-term included."""
        if not ctx.owner or not self.settings.learn_facts:
            return []
        learned = extract_self_facts(ctx.question)
        if learned and not probing():  # a probe's guess must not change what the session knows
            facts = self._facts.setdefault(ctx.owner, {})
            for fact in learned:
                facts.pop(fact.key, None)
                facts[fact.key] = fact.content
        return learned

    def _store_facts(self, ctx: ToolContext, learned: list[SelfFact]) -> None:
        """Write the statements to memory in the background: confirmed (the user's own words,
        which the memory node checks against what it heard), keyed, so a change supersedes."""
        if not learned or not ctx.owner:
            return

        async def write() -> None:
            for fact in learned:
                try:
                    result = await self.memory.remember(
                        ctx.owner, fact.content, node_type="observation", user_confirmed=True, tags=fact.tags,
                        key=fact.key, source_session=ctx.conversation_id, source_turn=ctx.turn)
                    log.info("self-fact %s for %s: %s", fact.key, ctx.conversation_id, result.message or "stored")
                except MemoryUnavailable as exc:
                    log.debug("self-fact %s kept for this session only: %s", fact.key, exc)
                    return
                except Exception as exc:  # noqa: BLE001 - memory trouble never breaks a conversation
                    log.warning("self-fact %s not stored: %s", fact.key, exc)

        task = asyncio.ensure_future(write())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _known_facts(self, user_id: str, profile: list[str], memories: list[Memory],
                     just_said: Sequence[SelfFact] = ()) -> dict[str, str]:
        """key -> content: the profile's keyed facts, keyed memories that were recalled, and
        (newest, winning) what the user said in this session; `just_said`: a probe's facts of
        this turn, which it did not learn."""
        facts: dict[str, str] = {}
        for line in profile:
            left, sep, content = line.partition("=")
            if sep and content.strip():
                facts[left.split(":", 1)[1] if ":" in left else left] = content.strip()
        for memory in memories:
            if memory.key and memory.node_type != "conversation":
                facts.setdefault(memory.key, memory.content)
        if user_id:
            session = dict(self._facts.get(user_id, {}))
            for fact in just_said:  # as _learn_facts would have put them
                session.pop(fact.key, None)
                session[fact.key] = fact.content
            facts.update(session)
        return facts

    @staticmethod
    def _with_facts(memories: list[Memory], facts: dict[str, str]) -> list[str]:
        """The capable flow's memory lines: facts first, then other recalled memories."""
        lines = list(dict.fromkeys(facts.values()))
        return lines + [m.content for m in memories if m.content not in lines]

    async def _observe(self, user_id: str, text: str) -> None:
        """Observation mode: record, do not reply."""
        self.histories.append(user_id, {"role": "user", "content": f"(observation, no reply needed) {text}"})
        trace = TurnTrace("", path="observation")
        self.traces.append(trace)
        if user_id:
            try:
                await asyncio.wait_for(self.memory.remember(user_id, text, node_type="observation"),
                                       self.settings.memory_timeout * 4)
            except (MemoryUnavailable, asyncio.TimeoutError) as exc:
                log.debug("observation not stored in memory: %s", exc or "timeout")
            except Exception as exc:  # noqa: BLE001
                log.warning("observation not stored in memory: %s", exc)

    def _speak_text(self, reply: Reply, text: str, source: str) -> None:
        """A whole text (qa answer, memory or clock answer, broadcast, stock line) as the reply."""
        if reply.say_whole(text, source, self.settings.sentence_min_chars) and reply.no_answer:
            log.warning("nothing of the %s text for %s could be spoken (%s); said the no_answer line", source,
                        reply.conversation_id, reply.dropped.summary())

    def _judge_format(self) -> dict[str, Any] | None:
        if self.settings.judge_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "chat_judge", "schema": prompts.JUDGE_SCHEMA}}
        if self.settings.judge_format == "json_object":
            return {"type": "json_object"}
        return None

    def _guess_language(self, text: str) -> str:
        return "zh" if has_cjk(text) else self.settings.default_language

    @staticmethod
    def _history_user_text(text: str, note: str) -> str:
        return f"{text}\n(context: {note})" if note else text


def _park(_piece: ReplyPiece) -> None:
    """A probe's emit: it would say something without a model call (a memory, clock or
    stock answer), so there is nothing to run ahead."""
    park()


def _emit_and_observe(emit: Callable[[ReplyPiece], None],
                      observer: Callable[[ReplyPiece], None]) -> Callable[[ReplyPiece], None]:
    def both(piece: ReplyPiece) -> None:
        emit(piece)
        observer(piece)
    return both
