"""The prompts of Fay's three-stage flow (see the seeds' "Prompt设计文档"), in English so a
small local model follows them; every reply is asked for in the user's language, and the
OpenAI messages of each call built from them: system prompt (instructions, persona, what is
known about the user) + the user's history + the question.

Pure Python, no ROS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..memory.evidence import tokens
from ..memory.health import english_safety_line
from ..memory.layers import split_safety, trim_core_memory, without_safety
from ..memory.self_facts import asks_something, extract_self_facts, is_safety_key, render_fact
from ..memory.turn_log import USER
from ..text.words import as_written, has_cjk
from . import when_answers
from .fact_answers import user_name
from .style import CARD, STYLE, is_card_key
from .tools import Memory, Tool

# The headings of the prompt's blocks. A model that copies its prompt starts a sentence with
# one of them ("You remember:"); the reply guard stops the answer there (guard.ReplyGuard).
REMEMBERED = "You remember"
RULES = "Rules you must follow"
USER_RULES = "Rules the user asked you to follow"
CONTEXT = "Context"
FETCHED = "Context fetched for this question"
PERSONA = "Persona"
TOOLS = "Tools"
AVAILABLE_TOOLS = "Available tools"
COMPLETED = "Completed tool calls"
BLOCK_HEADINGS = (
    REMEMBERED,
    RULES,
    USER_RULES,
    CONTEXT,
    FETCHED,
    PERSONA,
    TOOLS,
    AVAILABLE_TOOLS,
    COMPLETED,
    CARD,
    STYLE.split(" (")[0],
)

Message = dict[str, Any]

JUDGE = """You are a chat judge. Decide whether the user's message is small talk. Output ONLY one valid JSON \
object, nothing else.
Two formats only:
1. Small talk: {"action": "finish", "message": "<your reply to the user>"}
2. Not small talk: {"action": "tool", "keyword": "<search keyword>"}
Small talk (finish): greetings, feelings ("I'm tired"), thanks and goodbyes, simple confirmations.
Not small talk (tool): asking what something is, asking to look up or fetch anything, the time or date, anything \
about the user's own past facts or preferences, anything that needs a tool to answer exactly, and requests to \
remember or forget something.
When unsure, output tool.
Write the message in the user's language, in the persona's voice, short and spoken (no markdown, no emoji)."""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["finish", "tool"]},
        # bounded so a small model cannot ramble inside the JSON (servers that enforce the
        # schema, e.g. llama.cpp, stop the string there)
        "message": {"type": "string", "maxLength": 400},
        "keyword": {"type": "string", "maxLength": 80},
    },
    "required": ["action"],
}

EXECUTOR = """You are a task executor. Call tools step by step to complete the user's request. Output ONLY valid \
JSON, or use the provided function-calling interface.
Two formats only:
1. Another tool call is needed: {"action": "tool", "tool": "<tool name>", "args": {...}}
2. The task is done: {"action": "finish", "message": "<short summary of the results>"}
Rules:
- Check the user's original request: are all of its parts satisfied?
- STRICT: look at the list of completed tool calls first. Never call a tool again with the same name and the same \
arguments.
- The current user is known to the tools; never pass a user or owner argument."""

FINAL = """You already told the user "let me check, one moment"; the tools have finished now.
Answer the user based on the tool results below. Do not repeat "let me check". Speak plainly in everyday words, \
never mention tools or function calls, and answer in the user's language in 1-3 short sentences.

User message: {request}
What was done: {calls}
Tool results:
{results}"""

CORE_MEMORY_HEAD = "Who this user is (your long-term memory; hypotheses are not facts; safety comes first):"

MEMORY_HEAD = "What you remember about this user (confirmed):"
MEMORY_HEAD_DATED = (
    "What you remember about this user. A line starting with [date] is what was said or noted then: the day it "
    "is about first, then (said …) when it was said. A line marked superseded is an earlier value, history, not "
    "the current one. Answer a question about when from these dates, and say so when none fits."
)
_DATED = re.compile(r"\[\d{4}-\d{2}-\d{2}")

TINY_LANGUAGE = "Always answer in the language the user writes in."
DIRECT = "Answer in the user's language, briefly and conversationally, as spoken words (no markdown, no emoji)."


@dataclass(frozen=True)
class PromptContext:
    """What a capable-flow prompt knows beyond the conversation."""

    memories: list[str] = field(default_factory=list)  # the user's facts first, then other recalled memories
    rules: list[str] = field(default_factory=list)  # active rules the user asked for
    prestart: list[str] = field(default_factory=list)  # prestart tool results for this question
    core: str = ""  # the user's core memory (layered profile), already within its budget
    today: str = ""  # "Friday, 4 December 2026": the day the dated memory lines are read against
    addressing: tuple[str, ...] = ()  # the speaker card and voice examples (style.addressing_blocks)

    def block(self, tools: list[str] | None = None) -> str:
        parts = list(self.addressing)
        if self.core:
            parts.append(CORE_MEMORY_HEAD + "\n" + self.core)
        if self.rules:
            parts.append(USER_RULES + ":\n" + "\n".join(f"- {r}" for r in self.rules))
        if self.memories:
            dated = any(_DATED.match(m) for m in self.memories)
            head = MEMORY_HEAD_DATED + (f" Today is {self.today}." if self.today else "") if dated else MEMORY_HEAD
            parts.append(head + "\n" + "\n".join(f"- {m}" for m in self.memories))
        if self.prestart:
            parts.append(FETCHED + ":\n" + "\n".join(self.prestart))
        if tools is not None:
            parts.append(AVAILABLE_TOOLS + ": " + (", ".join(tools) if tools else "none"))
        return "\n\n".join(parts)


def core_for(core_memory: str, budget_tokens: int) -> str:
    """The turn's core memory within a prompt's budget (safety facts are never cut)."""
    return trim_core_memory(core_memory, budget_tokens)


def _chat(system: str, history: list[Message], question: str) -> list[Message]:
    return [{"role": "system", "content": system}, *history, {"role": "user", "content": question}]


def judge_messages(
    persona: str, context: PromptContext, tool_names: list[str], history: list[Message], question: str
) -> list[Message]:
    """The chat judge's call (small model, JSON verdict)."""
    system = "\n\n".join(filter(None, [JUDGE, PERSONA + ":\n" + persona, context.block(tool_names)]))
    return _chat(system, history, question)


def executor_messages(
    persona: str,
    context: PromptContext,
    tools: list[Tool],
    results: list[tuple[str, str]],
    history: list[Message],
    request: str,
) -> list[Message]:
    """One step of the tool loop: the tools, and the calls completed so far with their results."""
    completed = "\n".join(f"- {call} -> {result[:300]}" for call, result in results) or "(none yet)"
    system = "\n\n".join(
        filter(
            None,
            [
                EXECUTOR,
                PERSONA + ":\n" + persona,
                context.block(),
                TOOLS
                + ":\n"
                + "\n".join(
                    f"- {t.name}: {t.description} args {json.dumps(t.parameters, ensure_ascii=False)}" for t in tools
                ),
                COMPLETED + ":\n" + completed,
            ],
        )
    )
    return _chat(system, history, request)


SAFETY = "The user's health (never suggest or offer anything against it):"


def final_messages(
    persona: str,
    results: list[tuple[str, str]],
    history: list[Message],
    question: str,
    core: str = "",
    safety: Sequence[str] = (),
) -> list[Message]:
    """The final reply after the tool loop, from the tool results; `core`: the core memory;
    `safety`: the user's safety facts, which every prompt carries (said once: the core
    memory's own safety block is left out then)."""
    if safety:
        core = without_safety(core)
    system = "\n\n".join(
        [
            PERSONA + ":\n" + persona,
            *([SAFETY + "\n" + "\n".join(f"- {line}" for line in safety)] if safety else []),
            *([CORE_MEMORY_HEAD + "\n" + core] if core else []),
            FINAL.format(
                request=question,
                calls=", ".join(c for c, _r in results) or "nothing (no tool was needed)",
                results="\n".join(f"- {c}: {r[:1000]}" for c, r in results) or "(none)",
            ),
        ]
    )
    return _chat(system, history, question)


def direct_messages(persona: str, context: PromptContext, history: list[Message], question: str) -> list[Message]:
    """A direct answer (no judge, or a judge answer that was unusable)."""
    return _chat("\n\n".join(filter(None, [persona, DIRECT, context.block()])), history, question)


def tiny_system(persona: str, facts: dict[str, str], max_fact_lines: int) -> str:
    """The stable head of every tiny prompt: the persona with the user named, then the
    user's facts as plain sentences ("Tom likes hiking."). A 135M model keeps talking TO
    the person this way; bullet lists and "what Tom told you" headers make it talk ABOUT
    them in the third person."""
    name = user_name(facts)
    persona = persona.strip()
    if name:
        persona = re.sub(r"\bthe user\b", name, persona)
        persona += f"\nYou are talking with {name}."
    # safety facts (allergies, medication, conditions) are always there, whatever the limit:
    # the newest other facts fill what is left of it; the safety lines come last, nearest to
    # the conversation, where a tiny model heeds them most
    # (the tiny model reads English only: a safety fact said in Chinese is put in English)
    safety = [
        render_fact(english_safety_line(key) if has_cjk(content) else content, name) or render_fact(content, name)
        for key, content in facts.items()
        if is_safety_key(key)
    ]
    safety = list(dict.fromkeys(safety))  # (the facts of one diet all say the whole diet)
    other = [
        render_fact(content, name)
        for key, content in facts.items()
        if key != "name" and not is_safety_key(key) and not is_card_key(key)  # the card says those
    ]
    room = max(0, max_fact_lines - len(safety))
    return "\n".join([persona, *(other[-room:] if room else []), *safety])


def tiny_volatile(
    rules: list[str],
    memories: list[Memory],
    facts: dict[str, str],
    prestart: list[str],
    user: str,
    core: str = "",
    question: str = "",
    history: Sequence[Message] = (),
    addressing: Sequence[str] = (),
) -> list[str]:
    """What changes from turn to turn in a tiny prompt: rules, up to two recalled memories that
    are not facts already, prestart results. Recorded exchanges ("User: …\nFay: …") are left
    out: they would teach a tiny model to write role labels; a heard turn of the evidence is a
    plain dated sentence ('On 3 November 2026, Tom said: "…"', when_answers.tiny_line), and
    only one that tells something new about the question (`_tells_more`); a memory says when
    it was noted and whether it is current."""
    said_before = {str(m.get("content") or "") for m in history if m.get("role") == "user"}
    recalled = [
        when_answers.tiny_line(m, user) if m.is_evidence else render_fact(m.content, user)
        for m in memories
        if m.node_type != "conversation" and _tells_more(m, facts, question, said_before)
    ][:2]
    core = _tiny_core(_unsaid_core(core, facts), facts, user)
    volatile = [f"About {user or 'the user'}:\n{core}"] if core else []
    volatile += addressing
    if rules:
        volatile.append(RULES + ":\n" + "\n".join(f"- {r}" for r in rules))
    if recalled:
        volatile.append(REMEMBERED + ":\n" + "\n".join(f"- {line}" for line in recalled))
    if prestart:
        volatile.append(CONTEXT + ":\n" + "\n".join(prestart))
    return volatile


def _tells_more(m: Memory, facts: dict[str, str], question: str, said_before: set[str]) -> bool:
    """A recalled item a tiny prompt may carry: not a fact it states already; for a heard turn,
    the user's own statement (not the companion's words, not a question), not in the history
    window, not only facts already known, and sharing a word with the question (a tiny model
    follows whatever it is shown)."""
    known = set(facts.values())
    if (m.text or m.content) in known:
        return False
    if m.status == "superseded":
        return False  # an earlier value: a tiny model takes it for the current one ("lives in Bristol")
    if m.node_type != "turn":
        return True
    text = m.text.strip()
    if m.speaker != USER or not text or text in said_before or asks_something(text):
        return False
    stated = extract_self_facts(text)
    if stated and all(fact.content in known for fact in stated):
        return False
    if any(fact.key in facts and facts[fact.key] != fact.content for fact in stated):
        return False  # "I live in Bristol." said before they moved: the facts say where they live now
    return not question or bool(set(tokens(text)) & set(tokens(question)))


def _tiny_core(core: str, facts: dict[str, str], user: str) -> str:
    """The core memory as a tiny prompt reads it: under the one "About <name>:" heading (not a
    second "About them:"), each line with the user's name for "User" (as the head says it), and
    without the lines the head states already."""
    stated = set(facts.values())
    lines = []
    about_them = False  # in the identity block: its lines may repeat the head's
    for line in core.splitlines():
        if not line.startswith("- "):
            about_them = line.strip() == "About them:"
            if about_them:
                continue
        elif about_them and line[2:] in stated:
            continue
        else:
            line = "- " + render_fact(line[2:], user)
        lines.append(line)
    return "\n".join(lines).strip()


def _unsaid_core(core: str, facts: dict[str, str]) -> str:
    """The core memory less the safety lines the tiny head states already (tiny_system keeps
    every safety-keyed fact, whatever its limit), so they are not said twice."""
    stated = {content for key, content in facts.items() if is_safety_key(key)}
    safety, rest = split_safety(core)
    unsaid = [line for line in safety[1:] if line.removeprefix("- ") not in stated]
    return "\n".join([*(safety[:1] + unsaid if unsaid else []), *rest])


def tiny_messages(system: str, history: list[Message], volatile: list[str], question: str) -> list[Message]:
    """The tiny profile's one call: the stable head, the history window, then what changes
    (just before the question, so the cached prefix stays the same)."""
    # the person's words as written, not as a recogniser heard them: the model read "i like um
    # knitting and er gardening" as news of a loss ("I'm sorry for your loss")
    said = [{**m, "content": as_written(str(m["content"]))} if m.get("role") == "user" else m for m in history]
    messages: list[Message] = [{"role": "system", "content": system}, *said]
    if volatile:
        messages.append({"role": "system", "content": "\n".join(volatile)})
    messages.append({"role": "user", "content": as_written(question)})
    return messages


def describe_call(name: str, args: dict) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
