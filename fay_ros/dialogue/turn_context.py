"""What a turn knows of its user before the model is asked: the evidence for the question
(dated turns and memories, memory/search_evidence; confirmed memories by recall when the
memory does not offer it), active rules and profile facts of THIS user (memory gateway,
short timeouts, skipped when absent), prestart tool results, and what the user said about
themselves (known to the next turn at once, written to memory after the reply as confirmed
keyed observations). A speculative probe reads without changing anything (speculation.py).
Pure Python, no ROS.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..llm.profiles import TINY
from ..memory.self_facts import (
    SelfFact,
    extract_self_facts,
    name_in_fact,
    pronoun_context,
    relatives_known,
    safety_facts,
)
from ..memory.tone import TONE_KEY_PREFIX, ToneRule, tone_corrections
from . import style
from .fact_answers import plan_still_ahead
from .session import Sessions
from .speculation import probing
from .tools import Memory, MemoryUnavailable, NoMemory, ToolContext, recall_evidence
from .wiring import Wiring

log = logging.getLogger("fay_ros.dialogue")


def _profile_facts(profile: list[str]) -> dict[str, str]:
    """key -> content of memory/profile's fact lines ("kind:key=content"); a tone rule is a
    rule, not a fact."""
    facts: dict[str, str] = {}
    for line in profile:
        left, sep, content = line.partition("=")
        key = left.split(":", 1)[1] if ":" in left else left
        if sep and content.strip() and not key.startswith(TONE_KEY_PREFIX):
            facts[key] = content.strip()
    return facts


class TurnContext:
    def __init__(
        self, wiring: Wiring, sessions: Sessions, spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task]
    ) -> None:
        self.wiring = wiring
        self.sessions = sessions
        self._spawn = spawn  # runs a coroutine the engine's settle() waits for

    async def gather(self, ctx: ToolContext) -> tuple[list[Memory], list[str], list[str], str, list[str]]:
        """Recalled memories (confirmed), active rules, prestart results, the prestart text kept
        in history, and the profile facts ("kind:key=content"), all at once, each bounded.

        A probe takes the rules and the profile its user's last turn read (two memory round
        trips fewer between the speculative words and the model's start); the real turn reads
        them afresh, and if they changed meanwhile its request differs from the probe's, so the
        probe's stream is not used (speculation.py)."""
        session = self.sessions.get(ctx.owner)
        standing = session.standing if probing() and session is not None else None

        memory, settings = self.wiring.memory, self.wiring.settings

        async def memories() -> list[Memory]:
            if not ctx.owner:
                return []  # a guest has no private memory
            # the evidence for the question (dated turns and memories; one call, in place of
            # recall), or recall for a memory without it. A probe reads without marking what
            # it read as retrieved, so the real turn's recall (which does) ranks the same
            # memories the same way (the evidence search is read-only). Candidates never
            # reach a prompt, even if a gateway returned one.
            return await recall_evidence(
                memory, ctx.owner, ctx.question, settings.memory_recall_n, settings.memory_timeout, stateless=probing()
            )

        async def rules() -> list[str]:
            if not ctx.owner:
                return []
            if standing is not None:
                return standing[0]
            found = await asyncio.wait_for(memory.active_rules(ctx.owner), settings.memory_timeout)
            return [m.content for m in found if m.status == "confirmed"]

        async def profile() -> list[str]:
            if not ctx.owner:
                return []
            if standing is not None:
                ctx.core_memory = session.core_memory if session is not None else ""
                return standing[1]
            with_core = getattr(memory, "profile_with_core", None)
            if with_core is None:  # a gateway without the layered profile
                return await asyncio.wait_for(memory.profile(ctx.owner), settings.memory_timeout)
            facts, ctx.core_memory = await asyncio.wait_for(with_core(ctx.owner), settings.memory_timeout)
            return facts

        async def prestart(spec) -> str:
            if ctx.allowed_tools is not None and spec.tool not in ctx.allowed_tools:
                return ""  # not this speaker's tool (their role): nothing to prestart, no fault
            result = await self.wiring.tools.run(
                spec.tool, spec.render_args(ctx.question), ctx, settings.prestart_timeout
            )
            return f"[{spec.tool}] {result}"

        specs = self.wiring.persona.prestart
        fixed = ["memory recall", "active rules", "profile"]
        outcomes = await asyncio.gather(
            memories(), rules(), profile(), *(prestart(s) for s in specs), return_exceptions=True
        )
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
        session_of_owner = self.sessions.get(ctx.owner) if ctx.owner else None
        _recall_outcome, rules_outcome, profile_outcome, *_ = outcomes
        rules_failed, profile_failed = (isinstance(o, BaseException) for o in (rules_outcome, profile_outcome))
        if ctx.owner and (rules_failed or profile_failed) and not isinstance(memory, NoMemory):
            # memory out of reach this turn: what this session last read stands in (the user's
            # allergies still reach the guard); with no such read, the turn knows it (a probe
            # too, so its request is the real turn's)
            if session_of_owner is not None and session_of_owner.standing is not None:
                if rules_failed:
                    active_rules = session_of_owner.standing[0]
                if profile_failed:
                    profile_facts = session_of_owner.standing[1]
                    ctx.core_memory = session_of_owner.core_memory
            elif profile_failed:
                ctx.profile_read = False
        if session_of_owner is not None and session_of_owner.tone_rules:
            # the owner's corrections of tone apply at once, before memory has them as rules
            active_rules = list(dict.fromkeys([*active_rules, *session_of_owner.tone_rules.values()]))
        read_both = not rules_failed and not profile_failed
        if ctx.owner and not probing() and read_both:
            self.sessions.of(ctx.owner).standing = (active_rules, profile_facts)
            self.sessions.of(ctx.owner).core_memory = ctx.core_memory
        prestart_results = [r for r in results if r]
        keep = "\n".join(r for r, s in zip(results, specs) if r and s.include_history)
        return recalled, active_rules, prestart_results, keep, profile_facts

    # -- how to talk to this person (issue 39) ----------------------------------------------
    def addressing(self, ctx: ToolContext, facts: dict[str, str], relation: str) -> tuple[str, ...]:
        """The speaker card (from the person's own statements) and the voice examples of the
        turn's scene for their relation, as prompt blocks (style.py)."""
        table = self.wiring.style
        card = style.speaker_card(facts)
        if self.wiring.settings.profile == TINY:
            # the 135M model copies openings, not a voice: with examples it began more answers
            # with "I'm sorry for the confusion" (docs/style_and_cards.md); its card stays, less
            # the name, which the tiny head says already ("You are talking with Tom.",
            # prompts.tiny_system): read again after the history on every turn, it cost ~15
            # prompt tokens a turn
            table = None
            card = dataclasses.replace(card, name="")
        hour = datetime.datetime.now().astimezone().hour
        scene = style.scene_of(ctx.question, hour, table.default_scene if table is not None else "")
        examples = style.voice_examples(table, scene, relation, ctx.language, ctx.turn)
        return style.addressing_blocks(card, examples)

    def learn_tone(self, ctx: ToolContext, relation: str) -> list[ToneRule]:
        """The owner's corrections of tone in this turn's words: in the prompt from this turn
        on, and stored as rules of the owner (memory.tone). Only the robot's owner sets its
        tone: a guest's or another person's words change nothing."""
        if relation != style.OWNER or not ctx.owner or probing():
            return []
        corrections = tone_corrections(ctx.question)
        if not corrections:
            return []
        rules = self.sessions.of(ctx.owner).tone_rules
        for rule in corrections:
            rules[rule.key] = rule.content

        self.store_own_words(ctx, "tone rule", [(r.key, r.content, r.tags) for r in corrections])
        return corrections

    # -- the user's own facts --------------------------------------------------------------
    def learn_facts(self, ctx: ToolContext) -> list[SelfFact]:
        """What the user just said about themselves: known to the next turn at once (stored
        in memory after the reply). Guests get no private memory, short-term included."""
        if not ctx.owner or not self.wiring.settings.learn_facts:
            return []
        session = self.sessions.of(ctx.owner)
        learned = extract_self_facts(ctx.question, before=session.said_before, known=relatives_known(session.facts))
        if not probing():
            session.said_before = pronoun_context(session.said_before, ctx.question)
        if learned and not probing():  # a probe's guess must not change what the session knows
            facts = session.facts
            for fact in learned:
                before = facts.pop(fact.key, None)
                facts[fact.key] = fact.content
                old_name = name_in_fact(fact.key, before or "")
                if old_name and old_name != name_in_fact(fact.key, fact.content):
                    self.wiring.histories.retire(ctx.owner, old_name)  # a corrected name
        return learned

    def learn_by_known_names(self, ctx: ToolContext, facts: dict[str, str], learned: list[SelfFact]) -> None:
        """What the words say of relatives named in earlier sessions, by name alone ("Claire is
        getting married in June", a week after "my daughter Claire is a nurse"), once the
        profile's facts are known: added to `learned`, to `facts` and to the session."""
        known = relatives_known(facts)
        said = ctx.question.lower()
        # (most turns name no one known: the words are read a second time only when one does)
        if not ctx.owner or not any(name.lower() in said for _relation, name in known):
            return
        if not self.wiring.settings.learn_facts or probing():
            return
        session = self.sessions.of(ctx.owner)
        seen = {fact.key for fact in learned}
        for fact in extract_self_facts(ctx.question, before=session.said_before, known=known):
            if fact.key not in seen and facts.get(fact.key) != fact.content:
                learned.append(fact)
                facts[fact.key] = session.facts[fact.key] = fact.content

    def store_facts(self, ctx: ToolContext, learned: list[SelfFact]) -> None:
        """Write the statements to memory in the background: confirmed (the user's own words,
        which the memory node checks against what it heard), keyed, so a change supersedes."""
        if learned and ctx.owner:
            self.store_own_words(ctx, "self-fact", [(f.key, f.content, f.tags) for f in learned])

    def store_own_words(self, ctx: ToolContext, what: str, writes: list[tuple[str, str, tuple[str, ...]]]) -> None:
        """Write (key, content, tags) that the speaker said of themselves or asked for to
        their memory in the background, flagged confirmed (the memory node checks that
        against what it heard) and keyed, so a change supersedes; `what` names them in logs."""

        async def write() -> None:
            for key, content, tags in writes:
                try:
                    result = await self.wiring.memory.remember(
                        ctx.owner,
                        content,
                        node_type="observation",
                        user_confirmed=True,
                        tags=tags,
                        key=key,
                        source_session=ctx.conversation_id,
                        source_turn=ctx.turn,
                    )
                    log.info("%s %s for %s: %s", what, key, ctx.conversation_id, result.message or "stored")
                except MemoryUnavailable as exc:
                    log.debug("%s %s kept for this session only: %s", what, key, exc)
                    return
                except Exception as exc:  # noqa: BLE001 - memory trouble never breaks a conversation
                    log.warning("%s %s not stored: %s", what, key, exc)

        self._spawn(write())

    @staticmethod
    def gone_plans(profile: list[str]) -> dict[str, str]:
        """key -> content: the profile's plans whose days have gone by, for the answers about
        them ("where did Michael go?", "the plans you told me about have all gone by"); never a
        prompt's facts (`known_facts` leaves them out: the model took one for a coming plan)."""
        today = datetime.date.today()
        return {
            k: v for k, v in _profile_facts(profile).items() if k.startswith("plan:") and not plan_still_ahead(v, today)
        }

    def known_facts(
        self, user_id: str, profile: list[str], memories: list[Memory], just_said: Sequence[SelfFact] = ()
    ) -> dict[str, str]:
        """key -> content: the profile's keyed facts, keyed memories that were recalled, and
        (newest, winning) what the user said in this session; `just_said`: a probe's facts of
        this turn, which it did not learn."""
        facts = _profile_facts(profile)
        # a plan whose days have gone by is no fact of the present ("is going to Leeds on the
        # weekend of …", a month on): the model took one for a coming plan
        today = datetime.date.today()
        facts = {k: v for k, v in facts.items() if not k.startswith("plan:") or plan_still_ahead(v, today)}
        for memory in memories:
            # an evidence item is a dated line, not a fact's words (and may be history)
            if memory.key and memory.node_type != "conversation" and not memory.is_evidence:
                facts.setdefault(memory.key, memory.content)
        if user_id:
            known = self.sessions.get(user_id)
            said = dict(known.facts) if known is not None else {}
            for fact in just_said:  # as learn_facts would have put them
                said.pop(fact.key, None)
                said[fact.key] = fact.content
            facts.update(said)
        return facts

    @staticmethod
    def with_facts(memories: list[Memory], facts: dict[str, str]) -> list[str]:
        """The capable flow's memory lines: safety facts (allergies, medication, conditions)
        first, then the other facts, then other recalled memories."""
        safety = safety_facts(facts)
        said = [content for key, content in facts.items() if not style.is_card_key(key)]  # the card says those
        lines = list(dict.fromkeys([*safety.values(), *said]))
        return lines + [m.content for m in memories if m.content not in lines]
