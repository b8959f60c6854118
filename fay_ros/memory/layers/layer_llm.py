"""The LLM updaters of the upper layers: the configured OpenAI-compatible endpoint (never the
small embedded model) answers one JSON object per update, with the owner's core memory and
the buffered turns (with their ids) in the prompt.

- `no_change: true` is honoured: nothing is written.
- An answer that fails validation (no JSON, wrong fields) is ignored: no change, the
  buffer is spent.
- Evidence must name buffered turn ids; an item without valid evidence is dropped.
- The soul takes at most ONE trait change, ONE value change and ONE deep-need change per
  update (a removal first); anything more the model proposes is dropped.
- An unreachable or failing endpoint (LlmError) returns None: the caller falls back to rules.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...llm.client import ChatClient, LlmError, LlmMalformed
from .layer_config import LayersConfig
from .layer_rules import _set_preference, add_note, propose_insight, set_portrait
from .layer_signals import ProfileSignal, Taste, thing_key
from .layer_state import Change, OwnerLayers, item_id, merge_ids

log = logging.getLogger(__name__)

SYSTEM = (
    "You maintain one layer of a companion robot's long-term profile of one person. Work only "
    "from the evidence given (turns with their ids); never guess. If the evidence is not enough "
    'to change the layer, answer {"no_change": true}. Answer with one JSON object only.'
)
_HEDGED = re.compile(r"^(seems|maybe|might|may|perhaps|possibly|probably|似乎|可能|好像|也许)", re.I)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")
    no_change: bool = False


class _Thing(BaseModel):
    thing: str = Field(min_length=1, max_length=60)
    evidence: list[str] = Field(min_length=1)


class _Preferences(_Model):
    likes: list[_Thing] = []
    dislikes: list[_Thing] = []


class _Awareness(_Model):
    note: str = Field("", max_length=400)
    evidence: list[str] = []


class _Hypothesis(BaseModel):
    text: str = Field(min_length=3, max_length=300)
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str] = Field(min_length=1)


class _Insights(_Model):
    hypotheses: list[_Hypothesis] = []


class _Soul(_Model):
    add_traits: list[str] = []
    remove_traits: list[str] = []
    add_values: list[str] = []
    remove_values: list[str] = []
    add_needs: list[str] = []
    remove_needs: list[str] = []
    life_stage: str = Field("", max_length=200)
    portrait: str = Field("", max_length=1200)
    evidence: list[str] = []


SCHEMAS: dict[str, tuple[type[_Model], str]] = {
    "preferences": (
        _Preferences,
        "Which things does the person like or dislike, judging by these turns? "
        '{"no_change": bool, "likes": [{"thing": str, "evidence": [turn ids]}], "dislikes": [...]}',
    ),
    "awareness": (
        _Awareness,
        "Write one short dated observation note about what happened with the person in these turns "
        '(an observation, not a label). {"no_change": bool, "note": str, "evidence": [turn ids]}',
    ),
    "insights": (
        _Insights,
        'Propose hypotheses about why the person behaves this way, hedged ("Seems to ..."), each '
        'with a confidence 0..1. {"no_change": bool, "hypotheses": [{"text": str, "confidence": '
        'float, "evidence": [turn ids]}]}',
    ),
    "soul": (
        _Soul,
        "Does the evidence change who the person is? Change at most ONE core trait (add or remove) and ONE "
        'value; rewrite the portrait only if a trait or value changes. {"no_change": bool, '
        '"add_traits": [str], "remove_traits": [str], "add_values": [str], "remove_values": [str], '
        '"add_needs": [str], "remove_needs": [str], "life_stage": str, "portrait": str, "evidence": [turn ids]}',
    ),
}


def llm_update(
    layer: str,
    layers: OwnerLayers,
    signals: list[ProfileSignal],
    config: LayersConfig,
    llm: ChatClient,
    core_text: str,
) -> list[Change] | None:
    """The changes the LLM's answer makes to `layer`; [] for no_change or an invalid answer;
    None when the LLM failed (fall back to the rules)."""
    model, ask = SCHEMAS[layer]
    turns = "\n".join(f"[{s.turn_id}] {s.text}" for s in signals)
    current = json.dumps(_current(layer, layers), ensure_ascii=False)[:4000]
    user = (
        f"What you know of the person (core memory):\n{core_text or '(nothing yet)'}\n\n"
        f"The {layer} layer now:\n{current}\n\nNew turns:\n{turns}\n\n{ask}"
    )
    try:
        raw = llm.complete_json(SYSTEM, user)
    except LlmMalformed as exc:
        log.warning("profile %s update: an answer without JSON ignored (%s)", layer, exc)
        return []
    except LlmError as exc:
        log.warning("profile %s update: the LLM failed (%s); using the rules", layer, exc)
        return None
    try:
        answer = model.model_validate(raw)
    except ValidationError as exc:
        log.warning("profile %s update: invalid LLM answer ignored (%s)", layer, exc.errors()[:1])
        return []
    if answer.no_change:
        return []
    ids = {s.turn_id for s in signals}
    t = signals[-1].time
    return _APPLY[layer](layers, answer, ids, t, config)


def _valid(evidence: list[str], ids: set[str]) -> list[str]:
    return [e for e in (str(x) for x in evidence) if e in ids]


def _current(layer: str, layers: OwnerLayers) -> object:
    if layer == "preferences":
        return [{"thing": p["thing"], "likes": p["likes"]} for p in layers.current_preferences()]
    if layer == "awareness":
        return layers.notes[-5:]
    if layer == "insights":
        return [
            {"text": i["text"], "confidence": i["confidence"]} for i in layers.insights if i["status"] != "retracted"
        ]
    soul = layers.soul
    return {k: soul[k] for k in ("portrait", "life_stage", "values", "deep_needs")} | {
        "traits": [t["text"] for t in soul["traits"]]
    }


def _apply_preferences(layers, answer: _Preferences, ids, t, config) -> list[Change]:
    changes = []
    for likes, items in ((True, answer.likes), (False, answer.dislikes)):
        for item in items:
            evidence = _valid(item.evidence, ids)
            thing = thing_key(item.thing)
            if evidence and thing:
                changes += _set_preference(layers, Taste(thing, likes, False), evidence[-1], t, config, explicit=False)
    return changes


def _apply_awareness(layers, answer: _Awareness, ids, t, config) -> list[Change]:
    evidence = _valid(answer.evidence, ids)
    if not answer.note.strip() or not evidence:
        return []
    return add_note(layers, t, answer.note.strip(), evidence)


def _apply_insights(layers, answer: _Insights, ids, t, config) -> list[Change]:
    changes = []
    for h in answer.hypotheses:
        evidence = _valid(h.evidence, ids)
        if not evidence:
            continue
        text = h.text.strip()
        if not _HEDGED.match(text):
            text = "Seems: " + text
        key = "llm:" + " ".join(text.lower().split())[:80]
        change = propose_insight(layers, t, key, text, h.confidence, evidence, config=config)
        if change is not None:
            changes.append(change)
    return changes


def _apply_soul(layers, answer: _Soul, ids, t, config) -> list[Change]:
    evidence = _valid(answer.evidence, ids)
    if not evidence:
        return []  # a deep change without evidence is not taken
    soul = layers.soul
    changes: list[Change] = []
    names = [tr["text"] for tr in soul["traits"]]
    gone = next((x.strip() for x in answer.remove_traits if x.strip() in names), None)
    if gone:
        soul["traits"] = [tr for tr in soul["traits"] if tr["text"] != gone]
        changes.append(Change(t, "soul", f"trait:{gone}", gone, "", "LLM delta", evidence))
    new = None if gone else next((x.strip() for x in answer.add_traits if x.strip() and x.strip() not in names), None)
    if new:
        trait_id = item_id(layers.owner, "trait", new[:80])
        soul["traits"].append({"id": trait_id, "text": new[:80], "source": "", "evidence": evidence})
        changes.append(Change(t, "soul", f"trait:{new[:80]}", "", new[:80], "LLM delta", evidence))
    support = soul.setdefault("evidence", {})  # value / "life_stage" -> turn ids
    for field, prefix, add, remove in (
        ("values", "value", answer.add_values, answer.remove_values),
        ("deep_needs", "need", answer.add_needs, answer.remove_needs),
    ):
        items = soul[field]
        gone_item = next((v for v in remove if v in items), None)
        if gone_item:
            items.remove(gone_item)
            support.pop(f"{prefix}:{gone_item}", None)
            changes.append(Change(t, "soul", f"{prefix}:{gone_item}", gone_item, "", "LLM delta", evidence))
        fresh = [v.strip()[:80] for v in add if v.strip() and v.strip() not in items]
        new_item = None if gone_item else next(iter(fresh), None)
        if new_item:
            items.append(new_item)
            support[f"{prefix}:{new_item}"] = evidence
            changes.append(Change(t, "soul", f"{prefix}:{new_item}", "", new_item, "LLM delta", evidence))
    if answer.life_stage.strip() and answer.life_stage.strip() != soul["life_stage"]:
        changes.append(Change(t, "soul", "life_stage", soul["life_stage"], answer.life_stage.strip(), "LLM", evidence))
        soul["life_stage"] = answer.life_stage.strip()
        support["life_stage"] = evidence
    if changes and answer.portrait.strip():
        changes += set_portrait(layers, t, answer.portrait.strip(), "LLM rewrite after a deep change")
        soul["portrait_evidence"] = merge_ids(soul.get("portrait_evidence", []), evidence)
    return changes


_APPLY: dict[str, Callable[..., list[Change]]] = {
    "preferences": _apply_preferences,
    "awareness": _apply_awareness,
    "insights": _apply_insights,
    "soul": _apply_soul,
}
