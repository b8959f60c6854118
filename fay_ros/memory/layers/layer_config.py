"""The layered profile's settings, validated with pydantic; the defaults are seed 001's values."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

LAYERS = ("preferences", "awareness", "insights", "soul")
WEEK = 7 * 86400.0


class LayerThreshold(BaseModel):
    """A layer is updated when its buffer holds `min_count` signals and `min_interval` seconds
    (signal time) have passed since its last update (or, never updated, since its first
    buffered signal). `max_buffer`: the oldest signals are dropped beyond it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_count: int = Field(ge=1)
    min_interval: float = Field(ge=0.0)
    max_buffer: int = Field(ge=1)


class LayersConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(default=True, description="Keep the layered profile of every owner.")
    updater: Literal["rules", "llm"] = Field(
        default="rules",
        description="Who updates the upper layers: rules (no model), or the configured cloud LLM "
        "(llm_base_url; never the small embedded model). An unreachable LLM falls back to the rules.",
    )
    preferences: LayerThreshold = LayerThreshold(min_count=3, min_interval=600.0, max_buffer=200)
    awareness: LayerThreshold = LayerThreshold(min_count=3, min_interval=86400.0, max_buffer=200)
    insights: LayerThreshold = LayerThreshold(min_count=5, min_interval=86400.0, max_buffer=50)
    soul: LayerThreshold = LayerThreshold(min_count=8, min_interval=2 * 86400.0, max_buffer=30)
    decay_per_week: float = Field(default=0.9, gt=0.0, le=1.0, description="Preference weight kept per inactive week.")
    remove_below: float = Field(default=0.05, ge=0.0, lt=1.0, description="A preference below this weight is removed.")
    explicit_weight: float = Field(default=0.8, gt=0.0, le=1.0, description="Weight of a preference the owner stated.")
    inferred_weight: float = Field(default=0.3, gt=0.0, le=1.0, description="Weight of a preference first inferred.")
    reinforce_step: float = Field(default=0.1, ge=0.0, le=1.0, description="Weight added by a repeated mention.")
    candidate_min_confidence: float = Field(default=0.8, ge=0.0, le=1.0, description="An insight is active from here.")
    candidate_min_occurrences: int = Field(default=2, ge=1, description="... and after proposed this many times.")
    soul_trait_min_days: int = Field(default=3, ge=1, description="Rules: a trait needs that many days.")
    soul_trait_min_weight: float = Field(default=0.6, ge=0.0, le=1.0, description="... of at least this weight.")
    max_events: int = Field(default=2000, ge=10, description="Event records kept per owner (the oldest go first).")

    def threshold(self, layer: str) -> LayerThreshold:
        return getattr(self, layer)
