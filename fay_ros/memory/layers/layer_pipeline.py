"""ProfilePipeline: the one entry point that updates an owner's layers.

`ingest(signal)`:
1. record the turn in the owner's event layer (turn id, time, text);
2. the fast path: explicit statements change the preference layer at once (a statement of the
   other polarity supersedes the old preference, kept as history);
3. decay: preferences lose `decay_per_week` per inactive week (signal time) and are removed
   below `remove_below`;
4. classify the signal and append it to the per-layer buffers;
5. update only the layers whose buffer reached its threshold of count and interval (signal
   time), with the rules or the configured LLM;
6. persist the buffers, the layers, the event and the changelog in one transaction: a restart
   in the middle of a buffer loses nothing.

All times are signal times: a replay that feeds weeks of talk in minutes behaves as the weeks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ...llm.client import ChatClient
from ...llm.profiles import AUTO, TINY, resolve
from ..model import is_guest
from .core_memory import core_memory_text
from .layer_config import LAYERS, LayersConfig
from .layer_llm import llm_update
from .layer_rules import (
    apply_explicit,
    decay_preferences,
    mentioned,
    rules_portrait,
    update_awareness,
    update_insights,
    update_preferences,
    update_soul,
)
from .layer_signals import CHAT, STATEMENT, ProfileSignal
from .layer_state import Change, OwnerLayers, item_id

log = logging.getLogger(__name__)


class LayerRepository(Protocol):
    """Where the layers live (layer_tables.py: the SQLite and PostgreSQL tables)."""

    def load(self, owner: str) -> dict[str, dict]: ...

    def save(
        self,
        owner: str,
        docs: dict[str, dict],
        events: list[dict] = ...,
        changes: list[dict] = ...,
        forget_turns: list[str] = ...,
        max_events: int = ...,
    ) -> None: ...

    def events(self, owner: str, turn_ids: list[str] | None = None, limit: int = 100) -> list[dict]: ...

    def changelog(self, owner: str, limit: int = 200) -> list[dict]: ...

    def owners(self) -> list[str]: ...


@dataclass
class IngestReport:
    recorded: bool = False  # the event is new (a replayed turn id is ignored)
    updated: list[str] = field(default_factory=list)  # layers updated by their buffers
    changes: list[Change] = field(default_factory=list)


_UPDATERS = {
    "preferences": update_preferences,
    "awareness": update_awareness,
    "insights": update_insights,
    "soul": update_soul,
}


class ProfilePipeline:
    def __init__(
        self,
        repo: LayerRepository,
        config: LayersConfig | None = None,
        llm: ChatClient | None = None,
        facts: Callable[[str], list[str]] | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        """`llm`: used for the upper layers when config.updater is "llm" and it is configured.
        `facts`: the owner's confirmed fact lines ("kind:key=content"), for the core memory.
        `lock`: serialises the pipeline's read-modify-write of the layers; it is NOT the
        store's lock, so an LLM update never holds up the memory services (each repository
        call takes the store's lock for itself)."""
        self.repo = repo
        self.config = config or LayersConfig()
        # A tiny model (the embedded SmolLM2-135M) writes nonsense into a profile: the layers
        # then keep to the rules, whatever the updater setting says.
        self.llm = llm if llm is not None and llm.configured and not _tiny(llm) else None
        if self.config.updater == "llm" and llm is not None and llm.configured and self.llm is None:
            log.warning("profile layers: %s is a tiny model; the layers are updated by the rules", llm.endpoint.model)
        self.facts = facts or (lambda owner: [])
        self.lock = lock or threading.RLock()

    # ------------------------------------------------------------------ reading
    def layers(self, owner: str) -> OwnerLayers:
        return OwnerLayers(owner, {} if is_guest(owner) else self.repo.load(owner))

    def core_memory(
        self, owner: str, budget_tokens: int = 400, portrait: str = "", facts: list[str] | None = None
    ) -> str:
        """The owner's core memory for a prompt (core_memory.py); "" for the guest. `portrait`:
        shown while the soul has no portrait of its own (the profile keeper's). `facts`: the
        owner's fact lines when the caller has read them already (else they are read here)."""
        if is_guest(owner):
            return ""
        lines = self.facts(owner) if facts is None else facts
        return core_memory_text(self.layers(owner), lines, budget_tokens, self.config, portrait)

    def snapshot(self, owner: str, events: int = 50, changes: int = 100) -> dict:
        """Every layer with evidence and confidence, the latest events and changes (CLI, admin)."""
        if is_guest(owner):
            return {"owner": owner, "layers": {}, "events": [], "changelog": []}
        layers = self.layers(owner)
        docs = {k: v for k, v in layers.docs.items() if k != "pipeline"}
        buffers = {k: len(v.get("signals", [])) for k, v in layers.pipeline.get("buffers", {}).items()}
        return {
            "owner": owner,
            "now": layers.now,
            "buffered": buffers,
            "layers": docs,
            "events": self.repo.events(owner, None, events),
            "changelog": self.repo.changelog(owner, changes),
        }

    # ------------------------------------------------------------------ the entry point
    def ingest(self, signal: ProfileSignal) -> IngestReport:
        report = IngestReport()
        if is_guest(signal.owner) or not self.config.enabled:
            return report
        owner, t = signal.owner, signal.time
        with self.lock:
            if self.repo.events(owner, [signal.turn_id], 1):
                return report  # this turn was ingested already (a replay, a retry)
            layers = self.layers(owner)
            layers.pipeline["last_time"] = max(layers.now, t)
            layers.pipeline["total"] = int(layers.pipeline.get("total", 0)) + 1
            changes: list[Change] = []
            if signal.kind == STATEMENT:
                changes += apply_explicit(layers, signal, self.config)
            changes += decay_preferences(layers, layers.now, self.config)
            for layer in self.route(layers, signal):
                self._buffer(layers, layer, signal)
            for layer in LAYERS:
                if self.due(layers, layer, t):
                    changes += self._update(layers, layer, t)
                    report.updated.append(layer)
            event = {"turn_id": signal.turn_id, "time": t, "speaker": signal.speaker, "text": signal.text}
            self.repo.save(
                owner,
                layers.docs,
                events=[event],
                changes=[c.to_dict() for c in changes],
                max_events=self.config.max_events,
            )
        report.recorded, report.changes = True, changes
        return report

    def route(self, layers: OwnerLayers, signal: ProfileSignal) -> list[str]:
        """The layers whose buffers take this signal."""
        out = ["awareness"]
        if mentioned(layers, signal):
            out.append("preferences")
        if signal.kind != CHAT:
            out += ["insights", "soul"]
        return out

    def _buffer(self, layers: OwnerLayers, layer: str, signal: ProfileSignal) -> None:
        buf = layers.buffer(layer)
        buf["signals"].append(signal.to_dict())
        if buf["started"] is None:
            buf["started"] = signal.time
        limit = self.config.threshold(layer).max_buffer
        del buf["signals"][:-limit]

    def due(self, layers: OwnerLayers, layer: str, t: float) -> bool:
        """The buffer holds min_count signals and min_interval passed since the layer's last
        update (never updated: since its first buffered signal)."""
        buf = layers.buffer(layer)
        th = self.config.threshold(layer)
        since = buf["last_updated"] if buf["last_updated"] is not None else buf["started"]
        return len(buf["signals"]) >= th.min_count and since is not None and t - since >= th.min_interval

    def _update(self, layers: OwnerLayers, layer: str, t: float) -> list[Change]:
        buf = layers.buffer(layer)
        signals = [ProfileSignal.from_dict(layers.owner, d) for d in buf["signals"]]
        changes: list[Change] | None = None
        if layer != "preferences" or self.config.updater == "llm":
            if self.config.updater == "llm" and self.llm is not None:
                core = core_memory_text(layers, self.facts(layers.owner), 600, self.config)
                changes = llm_update(layer, layers, signals, self.config, self.llm, core)
        if changes is None:
            changes = _UPDATERS[layer](layers, signals, self.config)
        buf.update(signals=[], last_updated=t, updates=int(buf.get("updates", 0)) + 1)
        return changes

    # ------------------------------------------------------------------ forgetting
    def forget_evidence(self, owner: str, turn_ids: list[str]) -> list[Change]:
        """Forget these turns: their events go, items resting only on them go (history too),
        other items lose only these ids; buffered signals of them are dropped; changelog rows
        that rest only on them are deleted. The forgetting itself is recorded (item ids only)."""
        gone = {str(t) for t in turn_ids}
        if is_guest(owner) or not gone:
            return []
        with self.lock:
            layers = self.layers(owner)
            t = layers.now
            changes: list[Change] = []

            def prune(items: list[dict], layer: str) -> list[dict]:
                kept = []
                for item in items:
                    evidence = item.get("evidence", [])
                    if not gone & set(evidence):
                        kept.append(item)
                        continue
                    rest = [e for e in evidence if e not in gone]
                    if rest:
                        item["evidence"] = rest
                        kept.append(item)
                    else:
                        # named by id only: the forgetting must not repeat what was forgotten
                        label = item.get("id") or item_id(owner, layer, item.get("text", ""))
                        changes.append(Change(t, layer, label, "(forgotten)", "", "forget", []))
                return kept

            layers.docs["preferences"]["items"] = prune(layers.preferences, "preferences")
            for pref in layers.preferences:  # a replacement that was forgotten: the old one is history still
                pref["replaced_by"] = (
                    pref["replaced_by"] if any(p["id"] == pref["replaced_by"] for p in layers.preferences) else ""
                )
            layers.docs["awareness"]["notes"] = prune(layers.notes, "awareness")
            layers.docs["insights"]["items"] = prune(layers.insights, "insights")
            soul = layers.soul
            traits_before = len(soul["traits"])
            soul["traits"] = prune(soul["traits"], "soul")
            portrait_rest = [e for e in soul.get("portrait_evidence", []) if e not in gone]
            if len(soul["traits"]) < traits_before or (soul.get("portrait_evidence") and not portrait_rest):
                # the portrait was drawn from what is gone: redrawn from what remains
                soul["portrait"] = rules_portrait(layers)
                changes.append(Change(t, "soul", "portrait", "(forgotten)", soul["portrait"], "forget", []))
            soul["portrait_evidence"] = portrait_rest
            support = soul.get("evidence", {})
            for name, ids in list(support.items()):  # values and the life stage (LLM)
                rest = [e for e in ids if e not in gone]
                if rest:
                    support[name] = rest
                elif gone & set(ids):
                    del support[name]
                    if name == "life_stage":
                        soul["life_stage"] = ""
                    else:  # "value:…" or "need:…"
                        field = "values" if name.startswith("value:") else "deep_needs"
                        soul[field] = [v for v in soul[field] if name.partition(":")[2] != v]
                    changes.append(Change(t, "soul", item_id(owner, "soul", name), "(forgotten)", "", "forget", []))
            for buf in layers.pipeline.get("buffers", {}).values():
                buf["signals"] = [s for s in buf["signals"] if str(s["turn_id"]) not in gone]
            self.repo.save(owner, layers.docs, changes=[c.to_dict() for c in changes], forget_turns=sorted(gone))
        return changes


def _tiny(llm: ChatClient) -> bool:
    return resolve(AUTO, llm.endpoint.base_url, llm.endpoint.model) == TINY
