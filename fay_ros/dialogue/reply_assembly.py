"""Reply assembly: how a model's answer (or a whole text) becomes the pieces of a reply.

A model stream is a `Chain` of text processors (the judge's reader, the outbound gate,
sentence splitting) whose sentences pass the reply guard (`guard.py`) one by one before they
are published; a reply whose answer was dropped entirely says the persona's no_answer line
(`reply.Reply`). Here too: the messages and sampling of each kind of answer (judge, direct,
final, fact-checked, tiny, proactive), the judge's structured-output format, and the tiny
profile's answers decided before any model call (facts, clock, language).

What to say is decided by the engine (`engine.py`); when and for whom by the turn flow
(`turn_flow.py`). Pure Python, no ROS.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import logging
import re
import time
import zlib
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..llm.client import ChatClient, LlmError, LlmUnreachable
from ..llm.model_json import first_object
from ..llm.profiles import TINY
from ..memory import health
from ..memory.self_facts import SelfFact, asks_something
from ..text.processors import Chain
from ..text.sentences import SentenceSplitter, split_sentences
from ..text.think import ThinkStripper, strip_think
from ..text.when import format_date
from ..text.words import has_cjk
from . import fact_answers, food_ideas, prompts, when_answers
from .guard import GuardPolicy, ReplyGuard
from .judge import JudgeStreamParser, JudgeVerdict
from .prompts import Message, PromptContext
from .reply import Reply
from .tool_loop import ToolLoop
from .tools import Memory, ToolContext
from .trace import TurnTrace
from .wiring import Wiring

log = logging.getLogger("fay_ros.dialogue")
# A request for made-up words: "tell me a story", "make up a poem", "讲个故事"
_FICTION_ASKED = re.compile(
    r"\b(?:tell|make up|read|write|invent|give) (?:me |us )?(?:a |an |another )?(?:short |little |funny |bedtime )?"
    r"(?:story|stories|fairy ?tale|tale|joke|poem|rhyme|limerick)\b|"
    r"讲(?:个|一个)?(?:故事|笑话)|说(?:个|一个)?笑话|编(?:个|一个)?故事|"
    # a title asked for names its makers and people too: "what's a good film to watch?"
    r"\b(?:good|nice|decent|funny|classic|old) (?:films?|movies?|books?|novels?|songs?|shows?|programmes?|series)\b|"
    r"\b(?:recommend|suggest)(?: me)? (?:a |an |some )?(?:good )?"
    r"(?:films?|movies?|books?|novels?|songs?|shows?|music)\b",
    re.I,
)

FACT_CHECK = """You check a reply against tool results. Output ONLY one JSON object:
{"ok": true} when every fact in the reply is supported by the results, else
{"ok": false, "reply": "<the reply corrected to match the results, same language, same length or shorter>"}

Tool results:
{results}"""


@dataclass
class JudgedAnswer:
    """What the chat judge's stream left: its verdict, the guard that heard it, the text
    after its last complete sentence, and whether the guard stopped the stream."""

    verdict: JudgeVerdict
    guard: ReplyGuard
    rest: str
    stopped: bool


class ReplyAssembly:
    def __init__(self, wiring: Wiring, stop_if_cancelled: Callable[[], None]) -> None:
        self.wiring = wiring
        # raises the cancel of the current turn that the HTTP client swallowed (TurnFlow)
        self._stop_if_cancelled = stop_if_cancelled
        # users who heard the whole unsupported_language line in this session
        self.language_hint_told: set[str] = set()
        self.jokes_told: dict[str, int] = {}  # per owner: the next of the persona's jokes

    # -- the judge ------------------------------------------------------------------------
    async def judge(
        self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext, tool_loop: ToolLoop
    ) -> JudgedAnswer:
        """Stream the chat judge's answer: a `finish` message is published sentence by sentence
        as it comes; the verdict decides the rest (the engine)."""
        w = self.wiring
        messages = prompts.judge_messages(
            w.persona.system_prompt,
            context,
            [t.name for t in tool_loop.offered()],
            w.histories.of(ctx.owner),
            ctx.question,
        )
        # reasoning is removed before the judge's parser (it must see the JSON); the message it
        # releases then passes the outbound gate like any other answer
        judge = JudgeStreamParser()
        chain = Chain(ThinkStripper(), judge, reply.stream(), SentenceSplitter(w.settings.sentence_min_chars))
        guard = self.guard(ctx)

        async with contextlib.aclosing(
            self.spoken_tokens(messages, trace, response_format=self.judge_format())
        ) as tokens:
            async for content in tokens:
                if self.say_guarded(reply, guard, chain.feed(content)) or chain.ended:
                    break  # the guard has heard enough, or the model's turn is over: close the stream
        stopped = guard.full
        rest = ""
        if not stopped:
            *sentences, rest = chain.flush()
            if self.say_guarded(reply, guard, sentences):
                rest = ""
        return JudgedAnswer(judge.close(), guard, rest, stopped)

    def judge_format(self) -> dict[str, Any] | None:
        """The structured-output request of the judge (setting judge_format)."""
        if self.wiring.settings.judge_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "chat_judge", "schema": prompts.JUDGE_SCHEMA}}
        if self.wiring.settings.judge_format == "json_object":
            return {"type": "json_object"}
        return None

    # -- answers of the small model -------------------------------------------------------
    async def direct_reply(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, context: PromptContext) -> None:
        w = self.wiring
        messages = prompts.direct_messages(w.persona.system_prompt, context, w.histories.of(ctx.owner), ctx.question)
        await self.stream_spoken(reply, messages, trace, self.guard(ctx), ctx)

    def final_messages(self, ctx: ToolContext, results: list[tuple[str, str]]) -> list[Message]:
        """The final reply's prompt: the tool results, the core memory and the safety facts."""
        w = self.wiring
        return prompts.final_messages(
            w.persona.system_prompt,
            results,
            w.histories.of(ctx.owner),
            ctx.question,
            prompts.core_for(ctx.core_memory, w.settings.core_memory_tokens),
            list(ctx.safety_facts.values()),
        )

    async def final_reply(
        self, reply: Reply, ctx: ToolContext, trace: TurnTrace, results: list[tuple[str, str]]
    ) -> None:
        messages = self.final_messages(ctx, results)
        await self.stream_spoken(reply, messages, trace, self.guard(ctx), ctx)

    async def checked_final_reply(
        self, reply: Reply, ctx: ToolContext, trace: TurnTrace, results: list[tuple[str, str]]
    ) -> None:
        """Dual-model fact check: the small model writes the final reply (not spoken yet), the
        big model checks it against the tool results and may correct it; what is said passes
        the guard and the gate like any answer. The big model never speaks on its own."""
        w = self.wiring
        messages = self.final_messages(ctx, results)
        async with contextlib.aclosing(self.spoken_tokens(messages, trace)) as tokens:
            draft = strip_think("".join([t async for t in tokens])).strip()
        text = draft
        assert w.big is not None
        check = [
            {
                "role": "system",
                "content": FACT_CHECK.replace(
                    "{results}", "\n".join(f"- {c}: {r[:1000]}" for c, r in results) or "(none)"
                ),
            },
            {"role": "user", "content": draft},
        ]
        try:
            verdict = first_object(await self.complete(w.big, check, max_tokens=w.settings.max_tokens))
        except LlmError as exc:
            log.warning("fact check of %s skipped (%s): %s", ctx.conversation_id, exc.kind, exc.reason)
            verdict = None
        if (
            verdict is not None
            and verdict.get("ok") is False
            and isinstance(verdict.get("reply"), str)
            and verdict["reply"].strip()
        ):
            text = verdict["reply"].strip()
            trace.guard = "fact check corrected the reply"
            log.info("fact check corrected the reply of %s", ctx.conversation_id)
        guard = self.guard(ctx, extra_prompt=(FACT_CHECK,))
        sentences = split_sentences(text, w.settings.sentence_min_chars)
        rest = sentences.pop() if sentences else ""
        if self.say_guarded(reply, guard, sentences):
            rest = ""
        self.end_guarded(reply, guard, rest, trace, ctx)

    async def proactive_reply(
        self,
        reply: Reply,
        ctx: ToolContext,
        trace: TurnTrace,
        instruction: str,
        memory_lines: list[str],
        memories: list[Memory],
        rules: list[str],
        prestart: list[str],
        facts: dict[str, str],
    ) -> None:
        """The model's own words for a proactive instruction: the persona, the user's name and
        facts, the recent history, then the instruction as the last message; the guard also
        drops a recital of the instruction."""
        w = self.wiring
        guard = self.guard(ctx, extra_prompt=(instruction,))
        if w.settings.profile == TINY:
            volatile = prompts.tiny_volatile(
                rules,
                memories,
                facts,
                prestart,
                ctx.user_name,
                prompts.core_for(ctx.core_memory, w.settings.core_memory_tiny_tokens),
            )
            history = self.tiny_history(ctx.owner)
            messages = prompts.tiny_messages(self.tiny_system(facts), history, volatile, instruction)
            await self.stream_spoken(reply, messages, trace, guard, ctx, **self.tiny_options())
            return
        context = PromptContext(
            memory_lines,
            rules,
            prestart,
            prompts.core_for(ctx.core_memory, w.settings.core_memory_tokens),
            today=format_date(datetime.date.today(), False),
        )
        messages = prompts.direct_messages(w.persona.system_prompt, context, w.histories.of(ctx.owner), instruction)
        await self.stream_spoken(reply, messages, trace, guard, ctx)

    # -- the tiny profile -------------------------------------------------------------------
    async def tiny_turn(
        self,
        reply: Reply,
        ctx: ToolContext,
        trace: TurnTrace,
        facts: dict[str, str],
        memories: list[Memory],
        rules: list[str],
        prestart: list[str],
        learned: Sequence[SelfFact] = (),
    ) -> None:
        """The tiny profile: one streamed call, everything else decided before it.

        1. A question about the user's own facts is answered from the facts (in any language),
           one about when they said or did something from the dated evidence (when_answers),
           one about the time or date from the clock; a statement about themselves
           (`learned`: their occupation, home, family, health) is acknowledged in their
           language, before the answer when they asked something too.
        2. A language the model does not speak gets the persona's honest line, in that language.
        3. Otherwise one greedy, capped, stop-bounded call with the persona, the user's name
           and facts as plain lines (stable, so the server's prompt cache keeps them), and the
           recalled memories and prestart results just before the question."""
        w = self.wiring
        tiny = w.settings.tiny
        now = datetime.datetime.now().astimezone()
        unspoken = bool(tiny.languages) and ctx.language.split("-")[0] not in tiny.languages
        zh = ctx.language.startswith("zh") or has_cjk(ctx.question)
        # what the user just told about themselves is acknowledged here, not left to the model
        # (which makes a reply up, or apologises for its English); a question with it is still
        # answered, after the acknowledgement
        ack = fact_answers.acknowledgement(learned, zh, every_kind=unspoken)
        # (with the plans gone by: "where did Michael go?", which no prompt may take for coming)
        answer = fact_answers.answer(ctx.question, {**ctx.gone_plans, **facts}, ctx.language, now)
        untold = answer is not None and answer == fact_answers.answer(ctx.question, {}, ctx.language, now)
        if untold and not ctx.profile_read:
            # "you haven't told me" is untrue when memory could not be read: it may well know
            answer = w.persona.line("memory_unreachable", ctx.language)
        elif untold:
            # no fact says it, but their own words may: "我原来住铁西区，今年搬到闺女那儿，在浑南"
            quoted = when_answers.told_answer(ctx.question, memories, ctx.language)
            answer = quoted if quoted is not None and quoted.startswith(when_answers.QUOTED) else answer
        if answer is not None:
            trace.path = "memory"
            self.speak_text(reply, _then(ack, answer, zh), "memory")
            return
        # "when did I go hiking?", "我上周做了什么？": the dates of the evidence, not the model's
        # (before the clock: "我几号去的长城？" asks about a day gone by, not today's date)
        answer = when_answers.answer(ctx.question, memories, ctx.language, now)
        if answer is not None:
            trace.path = "memory"
            self.speak_text(reply, _then(ack, answer, zh), "memory")
            return
        answer = fact_answers.time_answer(ctx.question, now, ctx.language)
        if answer is not None:
            trace.path = "clock"
            self.speak_text(reply, _then(ack, answer, zh), "qa")
            return
        # "what should I have for my tea?": ideas the household can eat, from the table
        answer = food_ideas.suggest(
            ctx.question, facts, zh, seed=zlib.crc32(f"{ctx.owner} {ctx.question} {now:%F}".encode())
        )
        if answer is not None:
            trace.path = "food"
            self.speak_text(reply, _then(ack, answer, zh), "qa")
            return
        # "what car do I drive?" with nothing told about a car: said so, not made up
        recalled = [t for m in memories for t in (m.content, m.text) if t]
        answer = fact_answers.not_told(ctx.question, facts, recalled, ctx.language) if ctx.profile_read else None
        if answer is not None:
            trace.path = "memory"
            self.speak_text(reply, _then(ack, answer, zh), "memory")
            return
        if ack and not asks_something(ctx.question):
            trace.path = "memory"
            self.speak_text(reply, ack, "memory")
            return
        if _FORECAST_Q.search(ctx.question) and not any("weather" in name for name in w.tools.names()):
            # "what's the weather going to do?": no forecast reaches the tiny flow, and the model
            # made one up ("it'll probably get some rain later on tomorrow"); a fixed line in
            # each language, so "今天天气怎么样？" is answered too, not apologised for
            trace.path = "forecast"
            self.speak_text(reply, _then(ack, w.persona.line("no_forecast", ctx.language), zh), "qa")
            return
        if unspoken and _JOKE_Q.search(ctx.question):
            # "讲个笑话吧": a joke from the persona, in turn, not the language apology
            trace.path = "joke"
            told = self.jokes_told.get(ctx.owner, 0)
            self.jokes_told[ctx.owner] = told + 1
            self.speak_text(reply, _then(ack, w.persona.line("jokes", ctx.language, index=told), zh), "qa")
            return
        # "我那鹦鹉叫啥？", "how much warfarin am I on now?": what they told, quoted (the tiny
        # model made a dose up; in a language it does not speak it could only apologise)
        # (the facts are the model's to answer from, when it speaks the language)
        known = [] if unspoken else list(facts.values())
        answer = when_answers.told_answer(ctx.question, memories, ctx.language, known=known)
        if answer is not None and (memories or ctx.profile_read):
            trace.path = "memory"
            self.speak_text(reply, _then(ack, answer, zh), "memory")
            return
        if unspoken:
            trace.path = "language"
            # the whole hint (with the commands) once in a session, then the short line
            told = ctx.owner in self.language_hint_told
            self.language_hint_told.add(ctx.owner)
            line = w.persona.line("unsupported_language", ctx.language, index=1 if told else 0)
            self.speak_text(reply, _then(ack, line, zh), "fallback")
            return
        trace.path = "tiny"
        history = self.tiny_history(ctx.owner)
        volatile = prompts.tiny_volatile(
            rules,
            memories,
            facts,
            prestart,
            ctx.user_name,
            prompts.core_for(ctx.core_memory, w.settings.core_memory_tiny_tokens),
            ctx.question,
            history,
            ctx.addressing,
        )
        messages = prompts.tiny_messages(self.tiny_system(facts), history, volatile, ctx.question)
        window = tuple(str(m.get("content", "")) for m in history)
        # (the last reply: a model copying its answer copies the one before the question; the same
        # question asked again may get the same answer)
        earlier = tuple(str(m.get("content", "")) for m in history if m.get("role") == "assistant")[-1:]
        asked_before = next((str(m.get("content", "")) for m in reversed(history) if m.get("role") == "user"), "")
        if difflib.SequenceMatcher(None, asked_before.lower(), ctx.question.lower()).ratio() > 0.8:
            earlier = ()
        # (a story, a joke or a poem asked for may name its people: the rule against names no one
        # told of is for what is said of the user's life; it dropped a whole asked-for story)
        fiction = bool(_FICTION_ASKED.search(ctx.question))
        guard = self.guard(
            ctx, extra_prompt=tuple(volatile), known_texts=None if fiction else window, earlier_replies=earlier
        )
        await self.stream_spoken(reply, messages, trace, guard, ctx, **self.tiny_options())

    def tiny_history(self, owner: str) -> list[Message]:
        """The tiny model's window of the owner's history, less the exchanges in a script it
        does not speak (the Chinese acknowledgements and the only-English line: an English-only
        135M model that sees them answers the next English question in broken Chinese) and the
        answers that quote the user's words (it copied their form with words of its own: 'You
        told me: "the physios are on Monday…'). The exchange is whole or left out."""
        tiny = self.wiring.settings.tiny
        history = self.wiring.histories.window(owner, tiny.history_min_turns, tiny.history_max_turns)
        english_only = bool(tiny.languages) and "zh" not in tiny.languages

        def shown(exchange: list[Message]) -> bool:
            texts = [str(m.get("content") or "") for m in exchange]
            if english_only and any(has_cjk(t) for t in texts):
                return False
            return not any(
                m.get("role") == "assistant" and str(m.get("content") or "").startswith(when_answers.QUOTED)
                for m in exchange
            )

        kept: list[Message] = []
        exchange: list[Message] = []
        for message in history:
            exchange.append(message)
            if message.get("role") == "assistant":
                if shown(exchange):
                    kept += exchange
                exchange = []
        if shown(exchange):
            kept += exchange
        return kept

    def tiny_system(self, facts: dict[str, str]) -> str:
        tiny = self.wiring.settings.tiny
        system = prompts.tiny_system(self.wiring.persona.system_prompt, facts, tiny.max_fact_lines)
        # a model of more than one language answers in the user's (a Chinese turn in Chinese)
        return system + "\n" + prompts.TINY_LANGUAGE if len(tiny.languages) > 1 else system

    def tiny_options(self) -> dict[str, Any]:
        """The tiny profile's decoding (profiles.TinyDecoding), capped by max_tokens."""
        tiny = self.wiring.settings.tiny
        return {
            "first_clause_chars": tiny.first_clause_chars,
            "max_tokens": min(tiny.max_tokens, self.wiring.settings.max_tokens),
            "temperature": tiny.temperature,
            "frequency_penalty": tiny.frequency_penalty,
            "stop": list(tiny.stop),
            "extra_body": {"repeat_penalty": tiny.repeat_penalty},
        }

    # -- streams, guard, pieces -------------------------------------------------------------
    async def stream_spoken(
        self,
        reply: Reply,
        messages: list[dict[str, Any]],
        trace: TurnTrace,
        guard: ReplyGuard,
        ctx: ToolContext,
        first_clause_chars: int = 0,
        **options: Any,
    ) -> None:
        """Stream one answer through the outbound gate, sentence splitting and the guard; the
        stream is closed as soon as the guard has heard enough or the model's turn ended (a
        template token)."""
        # A verdict in the judge's format is read here too, as in the judged turn (`judge`):
        # a model that answers with one unasked (e.g. one that the tiny flow runs while `fay-ros
        # chat`, resolving the profile without the node's default model name, runs the judged flow
        # on it) is heard saying its message, not the no_answer line for a removed JSON object.
        # Plain text passes the reader as it is; reasoning is left to the gate, which counts it.
        chain = Chain(
            JudgeStreamParser(),
            reply.stream(),
            SentenceSplitter(self.wiring.settings.sentence_min_chars, first_clause_chars),
        )
        stopped = False
        async with contextlib.aclosing(self.spoken_tokens(messages, trace, **options)) as tokens:
            async for content in tokens:
                if self.say_guarded(reply, guard, chain.feed(content)):
                    stopped = True
                    break
                if chain.ended:
                    break
        rest = ""
        if not stopped:
            *sentences, rest = chain.flush()
            if self.say_guarded(reply, guard, sentences):
                rest = ""
        self.end_guarded(reply, guard, rest, trace, ctx)

    async def spoken_tokens(
        self, messages: list[dict[str, Any]], trace: TurnTrace, **options: Any
    ) -> AsyncGenerator[str, None]:
        """Content chunks of one streamed answer of the small model; stamps the turn's LLM
        request and first-token times (the time to first token on /diagnostics) and the
        stream's finish reason."""
        w = self.wiring
        trace.llm_request_at = trace.llm_request_at or time.monotonic()
        trace.finish_reason = ""
        options.setdefault("max_tokens", w.settings.max_tokens)
        options.setdefault("temperature", w.settings.temperature)
        options.setdefault("frequency_penalty", w.settings.frequency_penalty)
        if w.small is None:
            raise LlmUnreachable("no LLM endpoint configured")
        async with contextlib.aclosing(w.small.stream(messages, **options)) as events:
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

    @staticmethod
    async def complete(client: ChatClient, messages: list[dict[str, Any]], **options: Any) -> str:
        """One whole (not spoken) answer of a model, reasoning removed."""
        parts: list[str] = []
        async with contextlib.aclosing(client.stream(messages, **options)) as events:
            async for event in events:
                parts.append(event.content)
        return strip_think("".join(parts)).strip()

    @staticmethod
    def say_guarded(reply: Reply, guard: ReplyGuard, sentences: list[str]) -> bool:
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

    def end_guarded(self, reply: Reply, guard: ReplyGuard, remainder: str, trace: TurnTrace, ctx: ToolContext) -> None:
        """Close the reply with its last piece; never empty: when nothing of the model's answer
        could be published (the guard dropped it or the sanitiser left no words), the reply
        says the persona's plain no_answer line instead."""
        last = guard.finish(remainder, cut_by_limit=trace.finish_reason == "length") if not guard.full else None
        trace.guard = guard.summary()
        if guard.dropped:
            log.info("reply guard for %s: %s", ctx.conversation_id, trace.guard)
        for food, allergen in guard.unsafe:
            # the food and the fact it went against, not the sentence (which may say more)
            log.warning(
                "reply guard for %s dropped a sentence offering %r: the user must avoid %s",
                ctx.conversation_id,
                food,
                allergen,
            )
        closing = last.text if last is not None and last.text else ""
        if not closing and guard.unsafe and guard.passed and not guard.sentences:
            # only the first clause went out ("I'm afraid I don't have any dietary restrictions,")
            # and what followed offered what must be avoided: finish the sentence safely
            closing = _safe_close(guard.unsafe[-1][1], zh=ctx.language.startswith("zh"))
        if reply.end(closing, "llm"):
            said = "said the no_answer line" if reply.no_answer else "said nothing (nobody asked)"
            log.warning(
                "nothing of the model's answer for %s could be spoken (guard: %s; outbound: %s); %s",
                ctx.conversation_id,
                trace.guard,
                reply.dropped.summary(),
                said,
            )

    def guard(
        self,
        ctx: ToolContext,
        extra_prompt: tuple[str, ...] = (),
        known_texts: tuple[str, ...] | None = None,
        earlier_replies: tuple[str, ...] = (),
    ) -> ReplyGuard:
        """The reply guard of a turn; `known_texts` (the tiny flow: its conversation window) turns
        on the rule against names no one told of, `earlier_replies` (the tiny flow: its replies in
        that window) the rule against saying one of them again."""
        w = self.wiring
        instructions = (prompts.JUDGE, prompts.EXECUTOR, prompts.FINAL, prompts.DIRECT)
        return ReplyGuard(
            GuardPolicy(w.persona.name, w.persona.max_sentences, w.persona.emoji),
            user_name=ctx.user_name,
            user_text=ctx.question,
            prompt_texts=(w.persona.system_prompt, *instructions, *extra_prompt),
            tool_names=tuple(w.tools.names()),
            avoided=health.avoided_keys(list(ctx.safety_facts), household=True),
            facts=ctx.facts,
            no_new_names=known_texts is not None,
            known_texts=known_texts or (),
            earlier_replies=earlier_replies,
        )

    def speak_text(self, reply: Reply, text: str, source: str) -> None:
        """A whole text (qa answer, memory or clock answer, broadcast, stock line) as the reply."""
        if reply.say_whole(text, source, self.wiring.settings.sentence_min_chars) and reply.no_answer:
            log.warning(
                "nothing of the %s text for %s could be spoken (%s); said the no_answer line",
                source,
                reply.conversation_id,
                reply.dropped.summary(),
            )


# A joke asked for ("讲个笑话吧", "再来一个笑话", "tell me a joke")
_JOKE_Q = re.compile(r"(?:讲|说|来|再来)(?:个|一个|一下|几个)?(?:冷)?笑话|\btell me (?:a|another) joke\b", re.I)

# A question about the weather to come (the tiny flow has no forecast to read)
_FORECAST_Q = re.compile(
    # (a tag question is a remark: "lovely weather, isn't it?")
    r"\b(?:weather|forecast)\b[^.!]*\?(?<!n't it\?)(?<!innit\?)|\bwhat(?:'s| is) the (?:weather|forecast)\b|"
    r"\bhow(?:'s| is) the weather\b|"
    r"\b(?:is it|will it) (?:going to |gonna )?(?:rain|snow|be (?:sunny|cold|warm|hot|windy|nice|wet|dry|fine))\b|"
    r"天气(?:怎么样|如何|预报|好不好)|(?:会|要)下(?:雨|雪)吗|下不下(?:雨|雪)|"
    r"(?:雾|雨|雪|风)(?:大不大|大吗|停了吗|会停吗)|(?:外[头面]|今天|明天)(?:冷不冷|热不热|冷吗|热吗)",
    re.I,
)


def _then(first: str, second: str, zh: bool) -> str:
    """Two texts said one after the other (an acknowledgement, then the answer)."""
    return (first + ("" if zh else " ") + second) if first else second


def _safe_close(allergen: str, zh: bool) -> str:
    """The end of a sentence whose first clause was spoken and whose rest offered `allergen`."""
    known = health.term(health.ALLERGENS, allergen)
    name = known.name(zh) if known is not None else allergen.replace("_", " ")
    return f"不过不含{name}的都可以。" if zh else f"but anything without {name} is a safe choice."
