"""LED mapper core: affect (or, when the affect is unknown, sentiment) → colour and pattern.

The table (config/led_map.yaml) maps each affect to a colour and a pattern (steady, pulse,
blink); the cue's intensity sets the brightness linearly between the table's `at_0` and
`at_1`. An unknown affect is resolved through the cue's sentiment (positive / negative /
neutral fallback affects), so a new affect word never leaves the light blank. After `hold`
seconds without a cue the light returns to the table's idle look.

Output for drivers (the node publishes both):
- `led/color` (std_msgs/ColorRGBA): r, g, b are the drive levels at full pattern level,
  i.e. the table colour already multiplied by the brightness (0..1, no gamma applied);
  a = that brightness, so a driver that wants hue and brightness apart divides by it.
- `led/pattern` (std_msgs/String, latched): one line of `key=value` pairs separated by `;`,
  ASCII, always the same keys in the same order, numbers with 3 decimals:

      pattern=pulse;r=0.800;g=0.640;b=0.240;period=2.000;low=0.200;duty=0.500;affect=smile

  A driver sets each channel to (r, g, b) × level(t), t = seconds since the line arrived:
      steady: level = 1
      pulse:  level = low + (1 - low) × (1 - cos(2π t / period)) / 2   (starts at low)
      blink:  level = 1 while (t mod period) < duty × period, else low
  Unknown keys must be ignored by drivers (the format may grow); `affect` is informative
  (a screen face may use it). `parse_pattern` and `LedState.level_at` are the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..common.vocabulary import AFFECTS
from ..common.yaml_loader import load_model
from .body_cue import Cue
from .map_tables import finite, unit

TABLE_FILE = "led_map.yaml"
PATTERNS = ("steady", "pulse", "blink")
PATTERN_KEYS = ("pattern", "r", "g", "b", "period", "low", "duty", "affect")


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


def _parse_color(value: object) -> tuple[float, float, float]:
    if value is None:
        raise ValueError("missing colour; write it as '#RRGGBB' in quotes (an unquoted # starts a YAML comment)")
    if isinstance(value, str):
        text = value.strip()
        if len(text) == 7 and text.startswith("#"):
            try:
                r, g, b = (int(text[i : i + 2], 16) / 255.0 for i in (1, 3, 5))
                return r, g, b
            except ValueError:
                pass
        raise ValueError("colour must be '#RRGGBB' (hex) or [r, g, b] with 0..255 integers")
    if (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value)
    ):
        r, g, b = (c / 255.0 for c in value)
        return r, g, b
    raise ValueError("colour must be '#RRGGBB' (hex) or [r, g, b] with 0..255 integers")


class Look(_Strict):
    """How the light looks for one affect."""

    color: tuple[float, float, float] = Field(description="'#RRGGBB' or [r, g, b] 0..255.")
    pattern: Literal["steady", "pulse", "blink"] = "steady"
    period: float = Field(2.0, gt=0.0, description="Seconds per pulse / blink cycle.")
    low: float = Field(0.2, ge=0.0, le=1.0, description="Level at the bottom of a pulse / between blinks.")
    duty: float = Field(0.5, gt=0.0, lt=1.0, description="Share of a blink period that is on.")

    @field_validator("color", mode="before")
    @classmethod
    def _color(cls, value: object) -> tuple[float, float, float]:
        return _parse_color(value)


class Brightness(_Strict):
    at_0: float = Field(ge=0.0, le=1.0)
    at_1: float = Field(ge=0.0, le=1.0)

    def at(self, intensity: float) -> float:
        return self.at_0 + (self.at_1 - self.at_0) * intensity


class SentimentFallback(_Strict):
    """Affects to use when a cue's affect is not in the table, chosen by its sentiment."""

    positive_above: float = Field(0.25, ge=-1.0, le=1.0)
    positive: str
    negative_below: float = Field(-0.25, ge=-1.0, le=1.0)
    negative: str
    neutral: str


class Idle(_Strict):
    affect: str
    brightness: float = Field(ge=0.0, le=1.0)


class LedTable(_Strict):
    brightness: Brightness
    hold: float = Field(ge=0.0, description="Seconds a cue's look stays before idle returns (0 = forever).")
    idle: Idle
    sentiment_fallback: SentimentFallback
    affects: dict[str, Look] = Field(min_length=1)

    def cross_check(self) -> list[tuple[str, str]]:
        problems = []
        for key in ("positive", "negative", "neutral"):
            name = getattr(self.sentiment_fallback, key)
            if name not in self.affects:
                problems.append((f"sentiment_fallback.{key}", f"{name!r} is not a key of affects"))
        if self.sentiment_fallback.negative_below > self.sentiment_fallback.positive_above:
            problems.append(("sentiment_fallback.negative_below", "must not be above positive_above"))
        if self.idle.affect not in self.affects:
            problems.append(("idle.affect", f"{self.idle.affect!r} is not a key of affects"))
        return problems

    def unmapped_affects(self) -> list[str]:
        return [a for a in AFFECTS if a not in self.affects]


def load_led_table(path: str | Path) -> LedTable:
    return load_model(path, LedTable)


def with_hold(table: LedTable, hold: float | None) -> LedTable:
    """`table` with its `hold` overridden (the led_mapper node's live parameter); None keeps
    the table's own."""
    if hold is None:
        return table
    if not (hold >= 0.0 and math.isfinite(hold)):
        raise ValueError(f"hold must be a finite number of seconds >= 0, got {hold!r}")
    return table.model_copy(update={"hold": hold})


@dataclass(frozen=True)
class LedState:
    """What the light shows: peak drive levels (colour × brightness) and the pattern."""

    affect: str
    requested: str
    reason: str
    r: float
    g: float
    b: float
    brightness: float
    pattern: str
    period: float
    low: float
    duty: float

    def pattern_line(self) -> str:
        return format_pattern(self)

    def level_at(self, t: float) -> float:
        """Pattern level (0..1) `t` seconds after the state was published."""
        return pattern_level(self.pattern, self.period, self.low, self.duty, t)


def pattern_level(pattern: str, period: float, low: float, duty: float, t: float) -> float:
    if pattern == "pulse":
        return low + (1.0 - low) * (1.0 - math.cos(2.0 * math.pi * t / period)) / 2.0
    if pattern == "blink":
        return 1.0 if (t % period) < duty * period else low
    return 1.0


def format_pattern(state: LedState) -> str:
    values = {
        "pattern": state.pattern,
        "r": f"{state.r:.3f}",
        "g": f"{state.g:.3f}",
        "b": f"{state.b:.3f}",
        "period": f"{state.period:.3f}",
        "low": f"{state.low:.3f}",
        "duty": f"{state.duty:.3f}",
        "affect": state.affect,
    }
    return ";".join(f"{k}={values[k]}" for k in PATTERN_KEYS)


@dataclass(frozen=True)
class ParsedPattern:
    pattern: str
    r: float
    g: float
    b: float
    period: float
    low: float
    duty: float
    affect: str

    def level_at(self, t: float) -> float:
        return pattern_level(self.pattern, self.period, self.low, self.duty, t)


def parse_pattern(line: str) -> ParsedPattern:
    """Reference parser for `led/pattern` lines (what a driver does); ignores unknown keys."""
    fields: dict[str, str] = {}
    for item in line.strip().split(";"):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"led pattern: {item!r} is not key=value")
        fields[key.strip()] = value.strip()
    missing = [k for k in PATTERN_KEYS if k not in fields]
    if missing:
        raise ValueError(f"led pattern: missing {', '.join(missing)}")
    if fields["pattern"] not in PATTERNS:
        raise ValueError(f"led pattern: unknown pattern {fields['pattern']!r}")
    nums = {k: float(fields[k]) for k in ("r", "g", "b", "period", "low", "duty")}
    return ParsedPattern(fields["pattern"], affect=fields["affect"], **nums)


class LedMapper:
    """Cue → LedState, with the return to the idle look after `hold` seconds."""

    def __init__(self, table: LedTable) -> None:
        self.table = table
        self._shown_at: float | None = None  # when the current cue look started; None = idle

    def set_table(self, table: LedTable) -> None:
        self.table = table

    def resolve_affect(self, affect: str, sentiment: float) -> tuple[str, str]:
        """The table key to show and why."""
        if affect in self.table.affects:
            return affect, "affect"
        fb = self.table.sentiment_fallback
        s = finite(sentiment, 0.0)
        if s > fb.positive_above:
            return fb.positive, f"unknown affect {affect!r}, sentiment {s:+.2f} > {fb.positive_above:+.2f}"
        if s < fb.negative_below:
            return fb.negative, f"unknown affect {affect!r}, sentiment {s:+.2f} < {fb.negative_below:+.2f}"
        return fb.neutral, f"unknown affect {affect!r}, sentiment {s:+.2f} neutral"

    def _state(self, key: str, requested: str, reason: str, brightness: float) -> LedState:
        look = self.table.affects[key]
        r, g, b = (c * brightness for c in look.color)
        return LedState(key, requested, reason, r, g, b, brightness, look.pattern, look.period, look.low, look.duty)

    def idle_state(self) -> LedState:
        idle = self.table.idle
        return self._state(idle.affect, idle.affect, "idle", idle.brightness)

    def handle(self, cue: Cue, now: float) -> LedState:
        key, reason = self.resolve_affect(cue.affect, cue.sentiment)
        self._shown_at = now
        return self._state(key, cue.affect, reason, self.table.brightness.at(unit(cue.intensity)))

    def idle(self) -> LedState:
        """The idle look at once (the node's deactivation): no cue look is held any more."""
        self._shown_at = None
        return self.idle_state()

    def tick(self, now: float) -> LedState | None:
        """The idle look once a cue's look has been held for `hold` seconds, else None."""
        if self._shown_at is None or self.table.hold <= 0 or now - self._shown_at < self.table.hold:
            return None
        self._shown_at = None
        return self.idle_state()
