"""The core memory: what every LLM call knows of its owner, within a token budget.

Order: safety-relevant facts (allergies, medication, health) first and never trimmed, then
identity facts, then the soul (portrait, traits, values, life stage), active insights
(hedged), the top current preferences and the latest observation, trimmed to the budget.
"""

from __future__ import annotations

import re

from ...text.words import has_cjk
from ..self_facts import is_safety_key, taste_from_content
from .layer_config import LayersConfig
from .layer_state import ACTIVE, OwnerLayers, describe_preference, effective_weight

_SAFETY = re.compile(
    r"allerg|medic|medicine|insulin|diabet|asthma|epilep|health|disease|illness|pregnan|blood|heart|"
    r"过敏|药|病|健康|血压|血糖|哮喘|怀孕|心脏",
    re.I,
)
SAFETY_HEAD = "Safety (always respect):"
_IDENTITY_KEYS = ("name", "family:", "occupation", "workplace", "home", "pet", "language")


def is_safety_fact(key: str, content: str) -> bool:
    """A fact the robot must never drop from a prompt (allergy, medication, health): a safety
    key of self_facts (`health:*`), or a remembered fact without one that speaks of health
    ("User takes insulin." written by an agent)."""
    return is_safety_key(key) or bool(_SAFETY.search(content))


def estimate_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per four other characters."""
    cjk = sum(1 for ch in text if has_cjk(ch))
    return cjk + (len(text) - cjk + 3) // 4


def split_fact(line: str) -> tuple[str, str]:
    """("kind:key", content) of a profile fact line "kind:key=content"."""
    head, _, content = line.partition("=")
    return (head, content) if content else ("", line)


def fact_lines(facts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(safety, identity, other) contents of "kind:key=content" fact lines."""
    safety, identity, other = [], [], []
    for line in facts:
        head, content = split_fact(line)
        key = head.partition(":")[2]
        if is_safety_fact(key, content):
            safety.append(content)
        elif key.startswith(_IDENTITY_KEYS):
            identity.append(content)
        else:
            other.append(content)
    return safety, identity, other


def core_memory_text(
    layers: OwnerLayers | None, facts: list[str], budget_tokens: int, config: LayersConfig, portrait: str = ""
) -> str:
    safety, identity, other = fact_lines(facts)
    if layers is not None:  # the preference layer keeps the tastes current (and their history)
        other = [c for c in other if taste_from_content(c) is None]
    lines: list[str] = []
    if safety:
        lines += [SAFETY_HEAD, *(f"- {c}" for c in safety)]
    optional: list[str] = []
    if identity:
        optional += ["About them:", *(f"- {c}" for c in identity)]
    own = layers.soul["portrait"] if layers is not None else ""
    if own or portrait:
        optional.append(f"Portrait: {own or portrait}")
    if layers is not None:
        soul = layers.soul
        if soul["traits"]:
            optional.append("Traits: " + ", ".join(t["text"] for t in soul["traits"]))
        if soul["values"]:
            optional.append("Values: " + ", ".join(soul["values"]))
        if soul["life_stage"]:
            optional.append(f"Life stage: {soul['life_stage']}")
        if soul["deep_needs"]:
            optional.append("Seems to need: " + ", ".join(soul["deep_needs"]))
        insights = sorted((i for i in layers.insights if i["status"] == ACTIVE), key=lambda i: -i["confidence"])
        if insights:
            optional.append("Hypotheses (not facts):")
            optional += [f"- {i['text']} (confidence {i['confidence']:.0%})" for i in insights[:5]]
        now = layers.now
        prefs = sorted(layers.current_preferences(), key=lambda p: -effective_weight(p, now, config.decay_per_week))
        if prefs:
            optional.append("Tastes:")
            optional += [f"- {describe_preference(p)}" for p in prefs[:8]]
        if layers.notes:
            note = layers.notes[-1]
            optional.append(f"Recently [{note['date']}]: {note['text']}")
    if other:
        optional += ["Other facts:", *(f"- {c}" for c in other)]
    return _fit(lines, optional, budget_tokens)


def _fit(kept: list[str], optional: list[str], budget_tokens: int) -> str:
    lines = list(kept)
    used = estimate_tokens("\n".join(lines))
    for line in optional:
        cost = estimate_tokens(line) + 1
        if used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines)


def split_safety(text: str) -> tuple[list[str], list[str]]:
    """(the safety block's lines, the other lines) of a core memory text."""
    lines = text.split("\n") if text else []
    safety: list[str] = []
    if lines and lines[0] == SAFETY_HEAD:
        safety.append(lines.pop(0))
        while lines and lines[0].startswith("- "):
            safety.append(lines.pop(0))
    return safety, lines


def without_safety(text: str) -> str:
    """A core memory text without its safety block (for a prompt that states the safety facts
    itself, so they are not said twice)."""
    return "\n".join(split_safety(text)[1])


def trim_core_memory(text: str, budget_tokens: int) -> str:
    """A core memory text cut to `budget_tokens` (a prompt's own budget): the safety block is
    always kept whole, the other lines in order while they fit; "" for a budget of 0."""
    if budget_tokens <= 0 or not text:
        return ""
    safety, lines = split_safety(text)
    return _fit(safety, lines, budget_tokens)
