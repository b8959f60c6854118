"""DialogueEngine: Fay's qa → chat judge → tool loop → final reply flow (no ROS in here).

Two flows, chosen by the model profile (`profiles.py`): `capable` is Fay's flow below;
`tiny` (the embedded 135M model) makes one streamed call per turn with everything resolved
before it (see `ReplyAssembly.tiny_turn`). In both, what the user says about themselves ("my name is
Tom", "I like hiking") is known to the next turn at once (per-user short-term facts) and
written to memory as confirmed keyed observations after the reply, and every model answer
passes the reply guard (`guard.py`) sentence by sentence before it is published.

One user turn (capable):
1. qa.csv first: a fuzzy hit is spoken verbatim (source "qa"); its script column may name
   an allow-listed tool, never anything that is executed as code.
2. Context: confirmed memories and active rules of THIS user (memory gateway, short
   timeout, skipped when absent), prestart tools with `{{question}}` arguments, and the
   knowledge base's passages with their sources (`knowledge_talk.py`; with the tiny profile
   a question about the place is answered from the documents instead, before the model).
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

The engine orchestrates a turn (`run_turn`: routing, qa, context, which answer); the parts
are modules of their own, each with one reason to change:
- `session.py`: what the engine knows of each user (one `UserSession` per user);
- `turn_flow.py`: when a turn starts and what cancels, joins or replaces it (speculation,
  the unheard-turn join, interrupts, what was said outside the engine);
- `reply_assembly.py`: how an answer becomes reply pieces (the judge's stream and format, the
  guard, sentences, the tiny profile's answers, whole texts);
- `task_turns.py`: background tasks in a conversation (start, delivery, five-way routing);
- `turn_context.py`: what a turn knows of its user (memories, rules, profile, prestart
  results, the user's own facts);
- `settings.py`: the settings and their defaults, written once.
A model stream is a `Chain` of text processors (`processors.py`: think stripping, the
judge's message, the outbound gate, sentence splitting); `reply.py` numbers and gates what
goes out; `prompts.py` builds every call's messages; `history.py` keeps each user's
exchanges; `tool_loop.py` runs the tools; `trace.py` records what happened.

Background tasks (Fay's ExecutionManager, setting `background_tasks`; `task_turns.py`): a
judge verdict `tool` may hand the tool loop to a background task of the user, whose result
comes later as a new stream of the same conversation; while it runs, the user's messages are
routed five ways. `interrupt()` cuts what is being spoken, never a running task.

Callers that hold a turn themselves (the dialogue node's `chat` action) start it with
`start`: the returned `Turn` names the reply's conversation id before anything is said, its
task ends with the turn (cancelled when interrupted or replaced), and an observer given to
`start` sees each piece of that reply as it is emitted. `submit` is the fire-and-forget form.
What the companion said outside the engine (the tts node's `say` action and `broadcast`
topic) is recorded with `record_said`, so the next prompt knows it.

Concurrency: the engine lives on one asyncio loop. Each user has at most one running turn;
a new input from the same user cancels the old one (joined with it when its answer has not
reached the user), and `interrupt()` cancels all of them (`turn_flow.py`).
LLM failures of any kind end the turn with a spoken apology (source "fallback"). A model
that answered but whose answer the guard dropped entirely gets the persona's plain
`no_answer` line instead (source "fallback"): a reply, and a filler, is never left empty."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from ..common import reply_sources
from ..llm.client import ChatClient, LlmError, LlmUnreachable
from ..llm.profiles import TINY
from ..memory.self_facts import SelfFact, deaths_by_name, safety_facts
from ..text.outbound import sanitize
from ..text.when import format_date
from ..text.words import has_cjk
from . import fact_answers, prompts, social_moves
from .history import Histories
from .judge import FINISH, TOOL
from .knowledge_talk import KnowledgeDesk
from .people import People
from .persona import Persona
from .prompts import PromptContext
from .qa import QaMatch, QaTable, script_tool_name
from .reminder_talk import ReminderTalk
from .reminder_tools import REMINDER_TOOLS
from .reply import Reply, ReplyPiece
from .reply_assembly import ReplyAssembly
from .session import Sessions
from .settings import TASK_MODES, EngineSettings
from .speculation import park, probing
from .style import GUEST, OWNER, StyleTable
from .task_turns import TaskTurns
from .tasks import TaskManager, TaskProgress
from .tool_loop import ToolLoop
from .tools import MemoryGateway, MemoryUnavailable, NoMemory, ReminderAccess, ToolContext, ToolError, ToolRegistry
from .trace import TurnTrace
from .turn_context import TurnContext
from .turn_flow import CHAT, OBSERVATION, Opened, Turn, TurnFlow

__all__ = ["CHAT", "OBSERVATION", "SAY_SOURCE", "DialogueEngine", "EngineSettings", "Turn"]

log = logging.getLogger("fay_ros.dialogue")

SAY_SOURCE = reply_sources.SAY  # what the tts node spoke verbatim (its say action, the broadcast topic)
# The instruction of a proactive prompt: the model speaks first, to the user, in its own words.
PROACTIVE_INSTRUCTION = "Speak to me first, in one or two short sentences: {prompt}"


# A rule of the turn whose user's profile could not be read (the model must not take the
# missing facts for facts never told)
MEMORY_OUT_OF_REACH = (
    "Your memory of this user cannot be read just now: never say they have not told you something; "
    "say you cannot check it right now."
)


class DialogueEngine:
    def __init__(
        self,
        persona: Persona,
        small: ChatClient | None,
        emit: Callable[[ReplyPiece], None],
        *,
        big: ChatClient | None = None,
        qa: QaTable | None = None,
        tools: ToolRegistry | None = None,
        memory: MemoryGateway | None = None,
        settings: EngineSettings | None = None,
        progress: Callable[[TaskProgress], None] | None = None,
    ) -> None:
        # the wiring every part reads (wiring.Wiring): replaced while running by the node and tests
        self.persona = persona
        self.small = small
        self.big = big
        self.emit = emit
        self.qa = qa
        self.tools = tools or ToolRegistry()
        self.memory = memory or NoMemory()
        # Reminders and commitments said in words (issue 36; dialogue.reminder_talk): set by the
        # node on the memory's reminders; None = no reminders (the turn goes to the model).
        self.reminder_talk: ReminderTalk | None = None
        # The shared knowledge base (issue 41; dialogue.knowledge_talk): set by the node when it
        # has documents; None = no knowledge (no extractive answers, no prestart passages).
        self.knowledge: KnowledgeDesk | None = None
        # Who is who (dialogue.people, the people file): each speaker's tool set by role, bound
        # to the server-side identity; None = every speaker may use every tool.
        self.people: People | None = None
        # The voice examples by scene and relation (issue 39; style.py): set by the node from
        # config/voice_examples.yaml; None = no examples in the prompts.
        self.style: StyleTable | None = None
        # user id -> relation (owner, adult, child, guest): who may correct the tone, which
        # examples fit (`relation_from_people`; tests may set their own)
        self.relation_of: Callable[[str], str] = self.relation_from_people
        self.settings = settings or EngineSettings()
        self.histories = Histories(self.settings.history_turns)
        self.traces: deque[TurnTrace] = deque(maxlen=50)
        if self.settings.background_tasks not in TASK_MODES:
            raise ValueError(f"background_tasks must be one of {TASK_MODES}, not {self.settings.background_tasks!r}")
        self.tasks = TaskManager(progress)  # background tasks (Fay's ExecutionManager)
        self._background: set[asyncio.Task] = set()  # memory writes and task results (settle)
        self.sessions = Sessions()
        self.flow = TurnFlow(self, self.sessions, self.tasks, self.run_turn, self._proactive_turn)
        self.assembly = ReplyAssembly(self, self.flow.stop_if_cancelled)
        self.task_turns = TaskTurns(self, self.tasks, self.sessions, self.assembly, self._spawn)
        self.context = TurnContext(self, self.sessions, self._spawn)
        self._check_persona(persona)

    def _check_persona(self, persona: Persona) -> None:
        """What a persona file cannot tell alone: its prestart tools exist here, and its stock
        lines (said when nothing else can be) survive the outbound gate. ValueError if not."""
        for spec in persona.prestart:
            if self.tools.get(spec.tool) is None:
                raise ValueError(f"persona prestart names unknown tool {spec.tool!r}; registered: {self.tools.names()}")
        for kind, table in (
            ("fillers", persona.fillers),
            ("apologies", persona.apologies),
            ("no_answer", persona.no_answer),
            ("unsupported_language", persona.unsupported_language),
            ("memory_unreachable", persona.memory_unreachable),
            ("task_busy", persona.task_busy),
            ("task_progress", persona.task_progress),
            ("task_cancelled", persona.task_cancelled),
            ("task_updated", persona.task_updated),
        ):
            for language, lines in table.items():
                for line in lines:
                    if not sanitize(line).text:
                        raise ValueError(
                            f"persona {kind} line for {language!r} has nothing speakable once markup "
                            f"is removed: {line!r}"
                        )

    def set_persona(self, persona: Persona) -> None:
        """A new persona (the file was edited): checked as at start (ValueError keeps the old
        one); turns that start from now on use it (call on the engine's loop)."""
        self._check_persona(persona)
        self.persona = persona

    def _qa_hit(self, text: str, language: str) -> QaMatch | None:
        """The qa table's row for the words; with the tiny profile also for a turn that is only a
        social move in other words ("right, I'm off to bed, night Fay": its good-night row)."""
        assert self.qa is not None
        hit = self.qa.match(text)
        if hit is None and self.settings.profile == TINY and (phrase := social_moves.qa_phrasing(text, language)):
            hit = self.qa.match(phrase)
        return hit

    def set_qa(self, qa: QaTable | None) -> None:
        """A new qa table (the file was edited): the next lookup uses it (call on the loop)."""
        self.qa = qa

    @property
    def voice(self) -> bool:
        """A voice speaks the replies: a spoken input's answer counts once heard (`heard`)."""
        return self.flow.voice

    @voice.setter
    def voice(self, value: bool) -> None:
        self.flow.voice = value

    # -- entry points (call on the engine's loop) ---------------------------------------
    def submit(
        self, user_id: str, text: str, language: str = "", kind: str = CHAT, *, spoken: bool = False
    ) -> asyncio.Task | None:
        """Start a turn (an observation is only recorded) and return its task; None for an
        empty text. The user's running turn (if any) is cancelled first."""
        if kind == OBSERVATION:
            text = text.strip()
            return asyncio.ensure_future(self._observe(user_id, text)) if text else None
        turn = self.start(user_id, text, language, kind, spoken=spoken)
        return turn.task if turn is not None else None

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
        user's running turn (if any) is cancelled first (`TurnFlow.start`)."""
        return self.flow.start(user_id, text, language, kind, observer, spoken=spoken)

    def heard(self, conversation_id: str) -> None:
        """The voice began a sentence of this reply: its answer has reached the user."""
        self.flow.heard(conversation_id)

    def speculate(self, user_id: str, text: str, language: str = "") -> asyncio.Task | None:
        """Start the model on what the user has probably finished saying (speculation.py); an
        empty text withdraws the guess (the user went on). Returns the probe's task, or None
        when nothing is speculated: the model client does not speculate, or the user has a
        background task (routing a message to it acts at once)."""
        return self.flow.speculate(user_id, text, language)

    def record_said(self, user_id: str, conversation_id: str, text: str, is_end: bool) -> None:
        """One sentence the companion said outside the engine (the tts node's `say` action or
        `broadcast` topic, on `reply` with source "say"): at the reply's `is_end` its sentences
        become one companion message of that user's history (no user words), so the next
        prompt knows what was said. A reply without an owner ("") is not recorded."""
        self.flow.record_said(user_id, conversation_id, text, is_end)

    def speak_first(self, user_id: str, *, line: str = "", prompt: str = "", language: str = "") -> Turn | None:
        """Proactive talk (the schedule's triggers): the companion speaks first, to `user_id`:
        the fixed `line` verbatim, or what the model says for `prompt` (an instruction, never
        shown to anyone as the user's words). Every piece has source "proactive"; what was said
        joins the user's history as the companion's words. It never talks over the user: while
        the user's turn runs, nothing is said (None). The user's next input cancels it like any
        turn. A model that fails or says nothing usable leaves it unsaid: nobody asked, so no
        apology and no stock line."""
        return self.flow.speak_first(user_id, line=line, prompt=prompt, language=language)

    def turn_running(self, user_id: str) -> bool:
        """Whether the user's turn is running now (speak_first would say nothing)."""
        session = self.sessions.get(user_id)
        return session is not None and session.running_turn() is not None

    def interrupt(self) -> int:
        """Cancel every running turn; the next reply replaces whatever is being spoken."""
        return self.flow.interrupt()

    def cancel(self, turn: asyncio.Task) -> bool:
        """Cancel this one turn (a `Turn`'s task) only: a `chat` goal's cancel. Other users'
        turns go on and the next reply replaces nothing; False when it had already ended."""
        return self.flow.cancel(turn)

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
        messages = prompts.tiny_messages(self.assembly.tiny_system({}), [], [], "Hello.")
        try:
            async with contextlib.aclosing(self.small.stream(messages, max_tokens=1, temperature=0.0)) as events:
                async for _event in events:
                    pass
        except LlmError as exc:
            log.warning("warm-up of the model failed (%s): %s", exc.kind, exc.reason)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task:
        """Run work that outlives the turn (a memory write, a task's result); settle() waits."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- one turn -----------------------------------------------------------------------
    async def run_turn(
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
    ) -> TurnTrace:
        """One turn; `opened` is the (turn number, conversation id) `start` chose, `observer`
        sees each piece of the reply after `emit`; `replaces`: the conversation id of an unheard
        reply whose words this turn answers too (ReplyPiece.replaces)."""
        language = language or self._guess_language(text)
        turn, conversation_id = opened or self.flow.open_turn(user_id)
        no_answer = self.persona.line("no_answer", language, turn)
        probe = probing()
        emit = _park if probe else self.emit if observer is None else _emit_and_observe(self.emit, observer)
        reply = Reply(emit, user_id, conversation_id, replace, no_answer, replaces=replaces)
        trace = TurnTrace(conversation_id)
        if not probe:
            self.traces.append(trace)
        ctx = ToolContext(
            user_id,
            text,
            conversation_id,
            turn,
            language,
            self.memory,
            reminders=self._reminder_access(),
            knowledge=self.knowledge,
            allowed_tools=self.tools_for(user_id),
        )
        history_note = ""
        learned: list[SelfFact] = []
        try:
            learned = self.context.learn_facts(ctx)
            relation = self.relation_of(user_id)
            if kind == CHAT:
                self.context.learn_tone(ctx, relation)
            if (
                kind == CHAT
                and (task := self.tasks.running(user_id)) is not None
                and await self.task_turns.route(reply, ctx, trace, task)
            ):
                self.histories.remember_turn(user_id, text, " ".join(reply.spoken))
                return trace
            if kind == CHAT and self.reminder_talk is not None and await self._reminder_turn(reply, ctx, trace):
                self.flow.remember_exchange(user_id, conversation_id, text, reply)
                return trace
            if self.qa is not None and (hit := self._qa_hit(text, language)) is not None:
                if probe:
                    park()  # a qa answer needs no model, and its tool must not run twice
                trace.path = "qa"
                answer = await self._qa_answer(hit.entry.answer, hit.entry.script, ctx, trace)
                self.assembly.speak_text(reply, answer, "qa")
                self.flow.remember_exchange(user_id, conversation_id, text, reply)
                return trace
            if kind == CHAT and self.knowledge is not None and await self._knowledge_turn(reply, ctx, trace):
                self.flow.remember_exchange(user_id, conversation_id, text, reply)
                return trace
            if self.small is None:
                raise LlmUnreachable("no LLM endpoint configured")
            started = time.monotonic()
            memories, rules, prestart, history_note, profile = await self.context.gather(ctx)
            if self.knowledge is not None and self.knowledge.settings.prestart and self.settings.profile != TINY:
                # Fay's route: the passages and their sources in the prompt of the one model call
                if passages := await self._knowledge_prestart(ctx, record=not probe):
                    prestart.append(passages)
            trace.context_seconds = time.monotonic() - started
            facts = self._with_person(
                user_id, self.context.known_facts(user_id, profile, memories, learned if probe else ())
            )
            if not probe and user_id:
                # relatives named in earlier sessions, by name alone, now that the profile is known
                self.context.learn_by_known_names(ctx, facts, learned)
                # a death told by the name alone, likewise
                for fact in deaths_by_name(text, facts):
                    if fact.key not in facts:
                        learned.append(fact)
                        facts[fact.key] = self.context.sessions.of(user_id).facts[fact.key] = fact.content
            ctx.user_name = fact_answers.user_name(facts)
            ctx.safety_facts = safety_facts(facts)
            ctx.facts = facts
            ctx.gone_plans = self.context.gone_plans(profile)
            ctx.addressing = self.context.addressing(ctx, facts, relation)
            if not ctx.profile_read and self.settings.profile != TINY:
                # (the tiny flow answers such questions itself, without the model)
                rules = [*rules, MEMORY_OUT_OF_REACH]
            context = PromptContext(
                self.context.with_facts(memories, facts),
                rules,
                prestart,
                prompts.core_for(ctx.core_memory, self.settings.core_memory_tokens),
                today=format_date(datetime.date.today(), False),
                addressing=ctx.addressing,
            )
            if self.settings.profile == TINY:
                await self.assembly.tiny_turn(reply, ctx, trace, facts, memories, rules, prestart, learned)
            elif self.settings.judge:
                await self._judged_turn(reply, ctx, trace, context)
            else:
                trace.path = "direct"
                await self.assembly.direct_reply(reply, ctx, trace, context)
            self.flow.remember_exchange(user_id, conversation_id, self._history_user_text(text, history_note), reply)
        except asyncio.CancelledError:
            trace.cancelled = True
            reply.cut()  # close the interrupted reply so consumers do not wait for it
            if reply.spoken and not probe and not self.flow.merged(asyncio.current_task()):
                # the next turn (the interruption) knows what was asked and what had been said
                # (a turn whose answer did not reach the user is joined to their next input: start)
                self.histories.remember_turn(
                    user_id, self._history_user_text(text, history_note), " ".join(reply.spoken)
                )
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            trace.path = trace.path or "fallback"
            log.error(
                "LLM failed for conversation %s (%s): %s; speaking the apology", conversation_id, exc.kind, exc.reason
            )
            reply.end(self.persona.line("apology", language), "fallback")
        except Exception as exc:  # noqa: BLE001 - a bug in one turn must not take the node down
            trace.error = f"{type(exc).__name__}: {exc}"
            log.exception("dialogue turn %s failed", conversation_id)
            reply.end(self.persona.line("apology", language), "fallback")
        finally:
            # what the user said about themselves stands however the reply went (answered,
            # failed, or cut by an interrupt): the session already knows it, so memory must too
            if not probe:
                self.context.store_facts(ctx, learned)
            if reply.dropped:
                trace.outbound = reply.dropped.summary()
                log.info("outbound sanitiser for %s: removed %s", conversation_id, trace.outbound)
        return trace

    async def _reminder_turn(self, reply: Reply, ctx: ToolContext, trace: TurnTrace) -> bool:
        """A turn about reminders or commitments (set, list, cancel, snooze, "ok", "I'll call the
        dentist tomorrow"): answered without the model; False when the words are about neither."""
        assert self.reminder_talk is not None
        if ctx.owner and ctx.allowed_tools is not None and not set(REMINDER_TOOLS) <= set(ctx.allowed_tools):
            # reminders in words are the reminder tools' work: not this speaker's (the model
            # answers with the tools they have). The guest "" still gets reminder_talk's own
            # honest refusal, which keeps nothing for them.
            return False
        if probing():  # a guess at the words: never set or cancel anything on it
            if self.reminder_talk.wants(ctx.owner, ctx.question):
                park()
            return False
        answer = await self.reminder_talk.answer(ctx.owner, ctx.question, ctx.language, ctx.conversation_id)
        if answer is None:
            return False
        trace.path = f"reminders:{answer.action}"
        if answer.clear_history:
            self.histories.clear(ctx.owner)
        self.assembly.speak_text(reply, answer.text, reply_sources.REMINDERS)
        return True

    async def _knowledge_turn(self, reply: Reply, ctx: ToolContext, trace: TurnTrace) -> bool:
        """A turn the documents answer without the model: "where does that come from?" (any
        profile) and, with the tiny profile, a question about the place (the best sentence of the
        best passage, or the don't-know line); False when the turn is not theirs."""
        assert self.knowledge is not None
        probe = probing()
        try:
            answer = await self.knowledge.answer(
                ctx.owner, ctx.question, ctx.language, extractive=self.settings.profile == TINY, record=not probe
            )
        except Exception as exc:  # noqa: BLE001 - a broken store must not cost the turn its answer
            log.warning("knowledge base not searched for %s: %s: %s", ctx.conversation_id, type(exc).__name__, exc)
            return False
        if answer is None:
            return False
        if probe:
            park()  # said without a model: nothing to run ahead
        trace.path = answer.path
        self.assembly.speak_text(reply, answer.text, reply_sources.KNOWLEDGE)
        return True

    async def _knowledge_prestart(self, ctx: ToolContext, *, record: bool) -> str:
        """The passages for the prompt ("" when the store cannot be searched: logged, not fatal)."""
        assert self.knowledge is not None
        try:
            return await self.knowledge.prestart(ctx.owner, ctx.question, record=record)
        except Exception as exc:  # noqa: BLE001 - the model still answers, without the documents
            log.warning("knowledge prestart skipped for %s: %s: %s", ctx.conversation_id, type(exc).__name__, exc)
            return ""

    async def _judged_turn(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext) -> None:
        """The capable flow: the judge's verdict decides between its own message, the tools
        (in this turn, or as a background task) and a direct reply."""
        tool_loop = self._tool_loop(ctx)
        judged = await self.assembly.judge(reply, ctx, trace, context, tool_loop)
        verdict = judged.verdict
        if judged.stopped or verdict.action == FINISH or verdict.mode == "text":
            trace.path = "finish" if verdict.mode == "json" or judged.stopped else "text"
            if reply.seq == 0 and not judged.rest and not reply.silenced:
                trace.path = "direct"
                await self.assembly.direct_reply(reply, ctx, trace, context)
                return
            self.assembly.end_guarded(reply, judged.guard, judged.rest, trace, ctx)
            return
        if verdict.action == TOOL:
            trace.path = "tool"
            if self.task_turns.enabled():
                self.task_turns.start(reply, ctx, trace, context, verdict.keyword, tool_loop)
                return
            reply.say(self.persona.line("filler", ctx.language, ctx.turn), "filler")
            results = await tool_loop.run(
                ctx, trace, self.persona.system_prompt, context, self.history(ctx.owner), verdict.keyword
            )
            await self.assembly.final_reply(reply, ctx, trace, results)
            return
        log.warning("judge answer unusable (%s, action %r); answering directly", verdict.mode, verdict.action)
        trace.path = "direct"
        await self.assembly.direct_reply(reply, ctx, trace, context)

    def _tool_loop(self, ctx: ToolContext) -> ToolLoop:
        """The tool loop of a turn, on the big model in dual-model mode (else the small one),
        offering the configured tools this speaker may use."""
        s = self.settings
        client = self.big or self.small
        if client is None:
            raise LlmUnreachable("no LLM endpoint configured")
        allowed = s.llm_tools
        if ctx.allowed_tools is not None:
            allowed = tuple(
                t for t in (allowed if allowed is not None else self.tools.names()) if t in ctx.allowed_tools
            )
        return ToolLoop(
            client,
            self.tools,
            allowed=allowed,
            max_steps=s.max_tool_steps,
            tool_timeout=s.tool_timeout,
            native_tools=s.native_tools,
            sampling={
                "max_tokens": s.max_tokens,
                "temperature": s.temperature,
                "frequency_penalty": s.frequency_penalty,
            },
        )

    def tools_for(self, user_id: str, *, scheduled: bool = False) -> tuple[str, ...] | None:
        """The registered tools this speaker may use (their role's set in the people file; a
        scheduled turn sets no new schedule); None without a people file (no limit)."""
        if self.people is None:
            return None
        return self.people.tool_names(user_id, tuple(self.tools.names()), scheduled=scheduled)

    def relation_from_people(self, user_id: str) -> str:
        """owner | adult | child | guest: a listed person's relation in the people file; an
        unlisted speaker's follows their role (owner, user → adult, guest). Without a people
        file every identified user is an owner (a one-person companion), "" a guest."""
        if not user_id:
            return GUEST
        if self.people is None:
            return OWNER
        person = self.people.find(user_id)
        if person is not None:
            return person.relation
        return {OWNER: OWNER, GUEST: GUEST}.get(self.people.role_of(user_id), "adult")

    def _with_person(self, user_id: str, facts: dict[str, str]) -> dict[str, str]:
        """The speaker's name from the people file when they have not told one themselves:
        the companion knows whom it answers (the identity is the server's, never the words)."""
        person = self.people.find(user_id) if self.people is not None else None
        if person is not None and person.name and "name" not in facts:
            facts = {"name": f"User's name is {person.name}.", **facts}
        return facts

    def _reminder_access(self) -> ReminderAccess | None:
        """The reminder tools' port, zone and clock: those of `reminder_talk` (None: no reminders)."""
        talk = self.reminder_talk
        return None if talk is None else ReminderAccess(talk.reminders, talk.tz, talk.clock)

    async def _proactive_turn(self, user_id: str, line: str, prompt: str, language: str, opened: Opened) -> TurnTrace:
        turn, conversation_id = opened
        language = language or (self._guess_language(line or prompt))
        reply = Reply(self.emit, user_id, conversation_id, False, "", source=reply_sources.PROACTIVE)
        trace = TurnTrace(conversation_id)
        trace.path = "proactive"
        self.traces.append(trace)
        try:
            if line:
                self.assembly.speak_text(reply, line, reply_sources.PROACTIVE)
            else:
                # a proactive turn (nobody asked) may read reminders, never set or cancel one
                ctx = ToolContext(
                    user_id,
                    prompt,
                    conversation_id,
                    turn,
                    language,
                    self.memory,
                    reminders=self._reminder_access(),
                    scheduled=True,
                    allowed_tools=self.tools_for(user_id, scheduled=True),
                )
                await self._proactive_reply(reply, ctx, trace)
            if reply.spoken:
                self.histories.remember_turn(user_id, None, " ".join(reply.spoken))
        except asyncio.CancelledError:
            trace.cancelled = True
            reply.cut()
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            log.warning(
                "proactive line for %s not said: the LLM failed (%s): %s", conversation_id, exc.kind, exc.reason
            )
            reply.cut()
        except Exception as exc:  # noqa: BLE001 - a bug in one line must not take the node down
            trace.error = f"{type(exc).__name__}: {exc}"
            log.exception("proactive line %s failed", conversation_id)
            reply.cut()
        return trace

    async def _proactive_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace) -> None:
        """The model's own words for a proactive prompt, with the user's context; streamed
        through the same outbound gate and guard as any answer."""
        if self.small is None:
            raise LlmUnreachable("no LLM endpoint configured")
        started = time.monotonic()
        memories, rules, prestart, _note, profile = await self.context.gather(ctx)
        trace.context_seconds = time.monotonic() - started
        facts = self._with_person(ctx.owner, self.context.known_facts(ctx.owner, profile, memories))
        ctx.user_name = fact_answers.user_name(facts)
        ctx.safety_facts = safety_facts(facts)
        ctx.facts = facts
        await self.assembly.proactive_reply(
            reply,
            ctx,
            trace,
            PROACTIVE_INSTRUCTION.format(prompt=ctx.question),
            self.context.with_facts(memories, facts),
            memories,
            rules,
            prestart,
            facts,
        )

    # -- context of a turn --------------------------------------------------------------------------
    async def _qa_answer(self, answer: str, script: str, ctx: ToolContext, trace: TurnTrace) -> str:
        if not script:
            return answer
        name = script_tool_name(script)
        if not name or name not in self.settings.qa_script_tools or self.tools.get(name) is None:
            log.warning(
                "qa.csv script %r ignored: scripts are never executed, and it names no allow-listed tool (allowed: %s)",
                script,
                ", ".join(self.settings.qa_script_tools) or "none",
            )
            return answer.replace("{{result}}", "")
        try:
            result = await self.tools.run(name, {"question": ctx.question}, ctx, self.settings.tool_timeout)
        except (ToolError, Exception) as exc:  # noqa: BLE001 - the fixed answer still stands
            log.warning("qa.csv tool %s failed: %s", name, exc)
            result = ""
        trace.tool_calls.append(prompts.describe_call(name, {}))
        return answer.replace("{{result}}", result) if "{{result}}" in answer else answer

    async def _observe(self, user_id: str, text: str) -> None:
        """Observation mode: record, do not reply."""
        self.histories.append(user_id, {"role": "user", "content": f"(observation, no reply needed) {text}"})
        trace = TurnTrace("", path="observation")
        self.traces.append(trace)
        if user_id:
            try:
                await asyncio.wait_for(
                    self.memory.remember(user_id, text, node_type="observation"), self.settings.memory_timeout * 4
                )
            except (TimeoutError, MemoryUnavailable) as exc:
                log.debug("observation not stored in memory: %s", exc or "timeout")
            except Exception as exc:  # noqa: BLE001
                log.warning("observation not stored in memory: %s", exc)

    def _guess_language(self, text: str) -> str:
        return "zh" if has_cjk(text) else self.settings.default_language

    @staticmethod
    def _history_user_text(text: str, note: str) -> str:
        return f"{text}\n(context: {note})" if note else text


def _park(_piece: ReplyPiece) -> None:
    """A probe's emit: it would say something without a model call (a memory, clock or
    stock answer), so there is nothing to run ahead."""
    park()


def _emit_and_observe(
    emit: Callable[[ReplyPiece], None], observer: Callable[[ReplyPiece], None]
) -> Callable[[ReplyPiece], None]:
    def both(piece: ReplyPiece) -> None:
        emit(piece)
        observer(piece)

    return both
