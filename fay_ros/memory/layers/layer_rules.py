"""The rule-based updaters of every layer: no model. The default, and the fallback when the
configured LLM cannot be reached. Each returns the changes it made (changelog rows); none
when evidence is thin (no_change)."""

from __future__ import annotations

import re
from collections import Counter

from ...text.words import has_cjk
from .layer_config import LayersConfig
from .layer_signals import STATEMENT, ProfileSignal, Taste
from .layer_state import (
    ACTIVE,
    CANDIDATE,
    CURRENT,
    REMOVED,
    RETRACTED,
    SUPERSEDED,
    Change,
    OwnerLayers,
    day_of,
    describe_preference,
    effective_weight,
    item_id,
    merge_ids,
)


# -- preferences ------------------------------------------------------------------------------
def apply_explicit(layers: OwnerLayers, signal: ProfileSignal, config: LayersConfig) -> list[Change]:
    """The fast path: what the owner states about their tastes applies at once. A statement of
    the other polarity supersedes the current item (kept as history, never current again)."""
    changes = []
    for taste in signal.tastes:
        if taste.explicit:
            changes += _set_preference(layers, taste, signal.turn_id, signal.time, config, explicit=True)
    return changes


def _set_preference(
    layers: OwnerLayers, taste: Taste, turn_id: str, t: float, config: LayersConfig, explicit: bool
) -> list[Change]:
    old = layers.current_preference(taste.thing)
    day = day_of(t)
    if old is not None and old["likes"] == taste.likes:
        before = effective_weight(old, t, config.decay_per_week)
        base = max(before + config.reinforce_step, config.explicit_weight if explicit else 0.0)
        old.update(
            weight=round(min(1.0, base), 4),
            last_seen=t,
            explicit=old["explicit"] or explicit,
            evidence=merge_ids(old["evidence"], [turn_id]),
            days=merge_ids(old.get("days", []), [day]),
        )
        if explicit and not old["explicit"]:
            return [Change(t, "preferences", old["id"], f"{before:.2f}", describe_preference(old), "stated", [turn_id])]
        return []  # a reinforcement is not a change worth a changelog row
    if old is not None and not explicit and old["explicit"]:
        return []  # an inference never overrides what the owner said
    new: dict = {
        "id": item_id(layers.owner, "pref", taste.thing, taste.likes, turn_id),
        "thing": taste.thing,
        "likes": taste.likes,
        "weight": config.explicit_weight if explicit else config.inferred_weight,
        "first_seen": t,
        "last_seen": t,
        "explicit": explicit,
        "evidence": [turn_id],
        "days": [day],
        "status": CURRENT,
        "replaced_by": "",
        "ended": 0.0,
    }
    changes = []
    if old is not None:
        old.update(status=SUPERSEDED, replaced_by=new["id"], ended=t)
        changes.append(
            Change(
                t,
                "preferences",
                old["id"],
                describe_preference(old),
                describe_preference(new),
                "superseded by a statement" if explicit else "superseded",
                [turn_id],
            )
        )
    else:
        changes.append(
            Change(
                t,
                "preferences",
                new["id"],
                "",
                describe_preference(new),
                "stated" if explicit else "inferred",
                [turn_id],
            )
        )
    layers.preferences.append(new)
    return changes


def decay_preferences(layers: OwnerLayers, now: float, config: LayersConfig) -> list[Change]:
    """Remove the current preferences whose decayed weight fell below remove_below."""
    changes = []
    for pref in layers.current_preferences():
        weight = effective_weight(pref, now, config.decay_per_week)
        if weight < config.remove_below:
            pref.update(status=REMOVED, ended=now)
            changes.append(
                Change(
                    now,
                    "preferences",
                    pref["id"],
                    describe_preference(pref),
                    "",
                    f"decayed to {weight:.3f}",
                    list(pref["evidence"]),
                )
            )
    return changes


def mentioned(layers: OwnerLayers, signal: ProfileSignal) -> list[Taste]:
    """The inferred tastes of a signal, plus the owner's current preferences it mentions."""
    tastes = [t for t in signal.tastes if not t.explicit]
    said = {t.thing for t in signal.tastes}
    low = signal.text.lower()
    for pref in layers.current_preferences():
        if pref["thing"] not in said and _names(low, pref["thing"]):
            tastes.append(Taste(pref["thing"], pref["likes"], False))
    return tastes


def _names(text: str, thing: str) -> bool:
    """`text` names `thing`: as a whole word ("tea", not "steam"); anywhere for Chinese."""
    if has_cjk(thing):
        return thing in text
    return re.search(rf"(?<![a-z0-9]){re.escape(thing)}(?![a-z0-9])", text) is not None


def update_preferences(layers: OwnerLayers, signals: list[ProfileSignal], config: LayersConfig) -> list[Change]:
    changes = []
    for signal in signals:
        for taste in mentioned(layers, signal):
            changes += _set_preference(layers, taste, signal.turn_id, signal.time, config, explicit=False)
    return changes


# -- awareness --------------------------------------------------------------------------------
def update_awareness(layers: OwnerLayers, signals: list[ProfileSignal], config: LayersConfig) -> list[Change]:
    """A dated observation note of what the buffered turns were about (one note per day)."""
    if not signals:
        return []
    topics: Counter[str] = Counter()
    stated = []
    for s in signals:
        for taste in s.tastes:
            if taste.explicit:
                stated.append(f"{'like' if taste.likes else 'no longer like'} {taste.thing}")
            else:
                topics[taste.thing] += 1
    told = [_told(f.content) for s in signals for f in s.facts if f.kind != "preference"]
    parts = []
    if told:
        parts.append("told about themselves: " + "; ".join(dict.fromkeys(told)))
    if stated:
        parts.append("said they " + "; ".join(dict.fromkeys(stated)))
    if topics:
        parts.append("talked about " + ", ".join(f"{k} ({n})" for k, n in topics.most_common(5)))
    if not parts:  # small talk only: nothing worth a note ("8 turns." says nothing)
        return []
    evidence = [s.turn_id for s in signals if s.facts or s.tastes]
    return add_note(layers, signals[-1].time, _capitalised("; ".join(parts)) + ".", evidence)


def _told(content: str) -> str:
    """A stated fact as a note's phrase: "User's daughter is called Lena." → "their daughter is
    called Lena"; "User teaches chemistry." → "teaches chemistry"; Chinese as it was stored."""
    text = content.strip().rstrip(".。")
    if text.startswith("User's "):
        return "their " + text[len("User's ") :]
    return text.removeprefix("User ")


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def add_note(layers: OwnerLayers, t: float, text: str, evidence: list[str]) -> list[Change]:
    day = day_of(t)
    note = next((n for n in layers.notes if n["date"] == day), None)
    if note is not None:
        old = note["text"]
        note.update(text=text, evidence=merge_ids(note["evidence"], evidence))
        return [Change(t, "awareness", note["id"], old, text, "observation (same day)", evidence)]
    note = {"id": item_id(layers.owner, "note", day), "date": day, "text": text, "evidence": list(evidence)}
    layers.notes.append(note)
    return [Change(t, "awareness", note["id"], "", text, "observation", evidence)]


# -- insights ---------------------------------------------------------------------------------
def update_insights(layers: OwnerLayers, signals: list[ProfileSignal], config: LayersConfig) -> list[Change]:
    """Hypotheses from the preferences that recur over several days; retract those whose
    preference is no longer current."""
    t = signals[-1].time if signals else layers.now
    proposals = []
    for pref in layers.current_preferences():
        days = len(pref.get("days", []))
        if days >= 2 and pref["likes"]:
            text = f"Seems to enjoy {pref['thing']} regularly (on {days} different days)."
            proposals.append((f"enjoys:{pref['thing']}", text, min(0.95, 0.5 + 0.1 * days), pref["evidence"]))
    for pref in layers.preferences:
        if pref["status"] == SUPERSEDED and pref["likes"]:
            now = layers.current_preference(pref["thing"])
            if now is not None and not now["likes"]:
                text = f"Seems to have moved away from {pref['thing']}."
                proposals.append((f"left:{pref['thing']}", text, 0.9, merge_ids(pref["evidence"], now["evidence"])))
    proposed = [propose_insight(layers, t, *p, config=config) for p in proposals]
    changes = [c for c in proposed if c is not None]
    for insight in layers.insights:
        kind, _, thing = insight["key"].partition(":")
        if insight["status"] in (CANDIDATE, ACTIVE) and kind == "enjoys":
            held = layers.current_preference(thing)
            if held is None or not held["likes"]:
                insight["status"] = RETRACTED
                why, evidence = "no longer supported", list(insight["evidence"])
                changes.append(Change(t, "insights", insight["id"], insight["text"], "", why, evidence))
    return changes


def propose_insight(
    layers: OwnerLayers, t: float, key: str, text: str, confidence: float, evidence: list[str], config: LayersConfig
) -> Change | None:
    """Record a proposed hypothesis: a candidate until confidence and occurrences reach the
    thresholds (candidate_min_confidence, candidate_min_occurrences), then active."""
    insight = next((i for i in layers.insights if i["key"] == key and i["status"] != RETRACTED), None)
    if insight is None:
        insight = {
            "id": item_id(layers.owner, "insight", key, t),
            "key": key,
            "text": text,
            "confidence": round(confidence, 3),
            "occurrences": 0,
            "evidence": [],
            "status": CANDIDATE,
            "created": t,
            "updated": t,
        }
        layers.insights.append(insight)
    before = insight["status"]
    insight.update(
        text=text,
        confidence=round(max(float(insight["confidence"]), confidence), 3),
        occurrences=int(insight["occurrences"]) + 1,
        evidence=merge_ids(insight["evidence"], evidence),
        updated=t,
    )
    if (
        insight["status"] == CANDIDATE
        and insight["confidence"] >= config.candidate_min_confidence
        and insight["occurrences"] >= config.candidate_min_occurrences
    ):
        insight["status"] = ACTIVE
    if insight["status"] != before or insight["occurrences"] == 1:
        return Change(
            t,
            "insights",
            insight["id"],
            before if insight["occurrences"] > 1 else "",
            f"{insight['status']}: {text}",
            "hypothesis",
            list(evidence),
        )
    return None


# -- soul -------------------------------------------------------------------------------------
def update_soul(layers: OwnerLayers, signals: list[ProfileSignal], config: LayersConfig) -> list[Change]:
    """At most ONE trait change per update: a trait whose preference no longer holds is
    removed, else one is added from a liked preference that held over several days; no_change
    when nothing qualifies. The portrait follows the traits."""
    t = signals[-1].time if signals else layers.now
    soul = layers.soul
    traits = soul["traits"]
    changes: list[Change] = []
    stale = [tr for tr in traits if not _trait_supported(layers, tr, t, config)]
    if stale:
        gone = stale[0]
        traits.remove(gone)
        evidence = list(gone.get("evidence", []))
        changes.append(Change(t, "soul", f"trait:{gone['text']}", gone["text"], "", "no longer supported", evidence))
    have = {tr["source"] for tr in traits}
    candidates = [
        p
        for p in layers.current_preferences()
        if p["likes"]
        and p["thing"] not in have
        and len(p.get("days", [])) >= config.soul_trait_min_days
        and effective_weight(p, t, config.decay_per_week) >= config.soul_trait_min_weight
    ]
    if candidates and not changes:
        best = max(candidates, key=lambda p: (len(p["days"]), p["weight"]))
        text = f"keen on {best['thing']}"
        trait = {"id": item_id(layers.owner, "trait", text), "text": text, "source": best["thing"]}
        trait["evidence"] = list(best["evidence"])
        traits.append(trait)
        changes.append(
            Change(t, "soul", f"trait:{trait['text']}", "", trait["text"], "held over several days", trait["evidence"])
        )
    if changes:
        changes += set_portrait(layers, t, rules_portrait(layers), "traits changed")
    return changes


def _trait_supported(layers: OwnerLayers, trait: dict, t: float, config: LayersConfig) -> bool:
    if not trait.get("source"):
        return True  # an LLM's trait: only an LLM update or a forget removes it
    pref = layers.current_preference(trait["source"])
    return (
        pref is not None
        and pref["likes"]
        and effective_weight(pref, t, config.decay_per_week) >= config.remove_below * 4
    )


def rules_portrait(layers: OwnerLayers) -> str:
    traits = [tr["text"] for tr in layers.soul["traits"]]
    if not traits:
        return ""
    return "Seems to be someone " + ", ".join(traits) + "."


def set_portrait(layers: OwnerLayers, t: float, text: str, reason: str) -> list[Change]:
    soul = layers.soul
    if text == soul["portrait"]:
        return []
    old = soul["portrait"]
    evidence = merge_ids([], [e for tr in soul["traits"] for e in tr.get("evidence", [])])
    soul.update(portrait=text, portrait_evidence=evidence, updated=t, updates=int(soul.get("updates", 0)) + 1)
    return [Change(t, "soul", "portrait", old, text, reason, evidence)]


def explicit_count(signals: list[ProfileSignal]) -> int:
    return sum(1 for s in signals if s.kind == STATEMENT)
