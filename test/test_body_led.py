"""LED mapper core: affect → colour and pattern by the table, intensity → brightness,
sentiment fallback, the pattern line a driver parses, and the return to idle."""

from __future__ import annotations

import math

import pytest
import yaml

from fay_ros.body.body_cue import Cue
from fay_ros.body.led import (
    PATTERN_KEYS,
    TABLE_FILE,
    LedMapper,
    load_led_table,
    parse_pattern,
    pattern_level,
    with_hold,
)
from fay_ros.body.map_tables import default_table_path
from fay_ros.common.vocabulary import AFFECTS

SHIPPED = default_table_path(TABLE_FILE)


@pytest.fixture(scope="module")
def table():
    return load_led_table(SHIPPED)


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def table_color(raw, affect):
    text = raw["affects"][affect]["color"]
    return tuple(int(text[i : i + 2], 16) / 255 for i in (1, 3, 5))


def brightness(raw, intensity):
    return raw["brightness"]["at_0"] + (raw["brightness"]["at_1"] - raw["brightness"]["at_0"]) * intensity


@pytest.mark.parametrize("affect", AFFECTS)
def test_every_affect_shows_its_table_colour_and_pattern(table, raw, affect):
    state = LedMapper(table).handle(Cue("nod", affect, intensity=0.9), now=0.0)
    assert state.affect == affect and state.reason == "affect"
    want = [c * brightness(raw, 0.9) for c in table_color(raw, affect)]
    assert (state.r, state.g, state.b) == pytest.approx(want)
    assert state.brightness == pytest.approx(brightness(raw, 0.9))
    assert state.pattern == raw["affects"][affect].get("pattern", "steady")


def test_intensity_sets_the_brightness(table, raw):
    mapper = LedMapper(table)
    dim, bright = mapper.handle(Cue("nod", "warm", 0.3), 0.0), mapper.handle(Cue("nod", "warm", 0.9), 0.0)
    assert dim.brightness == pytest.approx(brightness(raw, 0.3))
    assert bright.brightness == pytest.approx(brightness(raw, 0.9))
    assert bright.r / dim.r == pytest.approx(brightness(raw, 0.9) / brightness(raw, 0.3))
    assert mapper.handle(Cue("nod", "warm", math.nan), 0.0).brightness == pytest.approx(brightness(raw, 0.5))
    assert mapper.handle(Cue("nod", "warm", 3.0), 0.0).brightness == pytest.approx(brightness(raw, 1.0))


@pytest.mark.parametrize(
    "sentiment,key", [(0.8, "positive"), (-0.8, "negative"), (0.0, "neutral"), (math.nan, "neutral")]
)
def test_unknown_affect_falls_back_by_sentiment(table, raw, sentiment, key):
    state = LedMapper(table).handle(Cue("nod", "bewildered", 0.5, sentiment=sentiment), 0.0)
    assert state.affect == raw["sentiment_fallback"][key]
    assert state.requested == "bewildered" and "unknown affect" in state.reason


def test_pattern_line_is_fixed_format_and_parses_back(table):
    state = LedMapper(table).handle(Cue("nod", "excited", 0.7), 0.0)
    line = state.pattern_line()
    assert [item.split("=")[0] for item in line.split(";")] == list(PATTERN_KEYS)
    assert line.isascii() and "\n" not in line
    parsed = parse_pattern(line)
    assert parsed.pattern == "blink" and parsed.affect == "excited"
    assert (parsed.r, parsed.g, parsed.b) == pytest.approx((state.r, state.g, state.b), abs=5e-4)
    assert (parsed.period, parsed.duty, parsed.low) == pytest.approx((state.period, state.duty, state.low))
    assert parse_pattern(line + ";future_key=1").pattern == "blink", "unknown keys are ignored"


@pytest.mark.parametrize(
    "line", ["pattern=pulse", "pattern=strobe;r=1;g=1;b=1;period=1;low=0;duty=0.5;affect=x", "garbage"]
)
def test_malformed_pattern_lines_are_refused(line):
    with pytest.raises(ValueError, match="led pattern"):
        parse_pattern(line)


def test_pattern_levels():
    assert pattern_level("steady", 2.0, 0.2, 0.5, 0.7) == 1.0
    assert pattern_level("pulse", 2.0, 0.2, 0.5, 0.0) == pytest.approx(0.2)
    assert pattern_level("pulse", 2.0, 0.2, 0.5, 1.0) == pytest.approx(1.0)
    assert pattern_level("pulse", 2.0, 0.2, 0.5, 2.0) == pytest.approx(0.2)
    levels = [pattern_level("pulse", 2.0, 0.2, 0.5, t / 100) for t in range(201)]
    assert min(levels) >= 0.2 - 1e-12 and max(levels) <= 1.0 + 1e-12
    assert pattern_level("blink", 1.0, 0.1, 0.3, 0.29) == 1.0
    assert pattern_level("blink", 1.0, 0.1, 0.3, 0.31) == 0.1
    assert pattern_level("blink", 1.0, 0.1, 0.3, 1.1) == 1.0


def test_the_light_returns_to_idle_after_hold(table, raw):
    mapper = LedMapper(table)
    assert mapper.tick(0.0) is None, "idle already"
    mapper.handle(Cue("nod", "sad", 0.5), now=10.0)
    assert mapper.tick(10.0 + raw["hold"] - 0.01) is None
    idle = mapper.tick(10.0 + raw["hold"])
    assert idle.affect == raw["idle"]["affect"] and idle.brightness == raw["idle"]["brightness"]
    assert mapper.tick(100.0) is None, "idle is published once"


def test_hold_zero_keeps_the_look(tmp_path):
    text = SHIPPED.read_text(encoding="utf-8").replace("hold: 8.0", "hold: 0")
    path = tmp_path / "led_map.yaml"
    path.write_text(text, encoding="utf-8")
    mapper = LedMapper(load_led_table(path))
    mapper.handle(Cue("nod", "sad", 0.5), now=0.0)
    assert mapper.tick(1e6) is None


def test_colour_as_a_list_of_bytes(tmp_path):
    text = SHIPPED.read_text(encoding="utf-8").replace("color: '#FFFFFF'", "color: [255, 0, 51]")
    path = tmp_path / "led_map.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_led_table(path).affects["neutral"].color == pytest.approx((1.0, 0.0, 0.2))


def test_the_live_hold_overrides_the_table_and_idle_ends_a_look_at_once(table, raw):
    assert with_hold(table, None) is table
    short = with_hold(table, 0.5)
    assert short.hold == 0.5 and table.hold == raw["hold"], "the loaded table is not changed"
    mapper = LedMapper(short)
    mapper.handle(Cue("nod", "sad", 0.5), now=10.0)
    assert mapper.tick(10.4) is None and mapper.tick(10.5).affect == raw["idle"]["affect"]
    mapper.handle(Cue("nod", "sad", 0.5), now=20.0)
    assert mapper.idle().reason == "idle"
    assert mapper.tick(100.0) is None, "the look ended by idle() is not ended again"
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="hold"):
            with_hold(table, bad)
