"""The body's YAML tables: the shipped ones map the whole vocabulary; every kind of bad edit
gives an error naming the file and the key (or line); reloading keeps the last good table."""

from __future__ import annotations

import re

import pytest

from fay_ros.body import led, servo
from fay_ros.body.map_tables import default_table_path
from fay_ros.common.errors import TableError
from fay_ros.common.reloading import ReloadingTable
from fay_ros.common.vocabulary import AFFECTS, BEHAVIORS
from fay_ros.common.yaml_loader import load_model

SERVO_YAML = default_table_path(servo.TABLE_FILE).read_text(encoding="utf-8")
LED_YAML = default_table_path(led.TABLE_FILE).read_text(encoding="utf-8")


def test_shipped_tables_map_every_vocabulary_word_and_have_a_default():
    servo_table = servo.load_servo_table(default_table_path(servo.TABLE_FILE))
    led_table = led.load_led_table(default_table_path(led.TABLE_FILE))
    assert set(BEHAVIORS) <= set(servo_table.behaviors) and servo_table.unmapped_behaviors() == []
    assert servo_table.default in servo_table.behaviors
    assert set(AFFECTS) <= set(led_table.affects) and led_table.unmapped_affects() == []
    assert led_table.idle.affect in led_table.affects


def edited(text: str, old: str, new: str) -> str:
    assert old in text, f"test edit: {old!r} not in the shipped table"
    return text.replace(old, new, 1)


SERVO_CASES = [
    (
        "unknown joint in a pose",
        lambda t: edited(t, "right_elbow: 0.3, head_pan: -0.35", "right_wrist: 0.3, head_pan: -0.35"),
        ["behaviors.invite.keyframes[0].pose.right_wrist", "unknown joint"],
    ),
    ("missing required key", lambda t: edited(t, "return_to_idle: 0.8\n", ""), ["return_to_idle", "required"]),
    (
        "misspelt key",
        lambda t: edited(
            t,
            "    keyframes:\n      - {at: 0.25, pose: {head_tilt: 0.35}}",
            "    keyframs:\n      - {at: 0.25, pose: {head_tilt: 0.35}}",
        ),
        ["behaviors.nod.keyframs", "unknown key"],
    ),
    (
        "wrong type",
        lambda t: edited(
            t,
            "head_pan:             {min: -1.0, max: 1.0, max_velocity: 3.0",
            "head_pan:             {min: -1.0, max: 1.0, max_velocity: fast",
        ),
        ["joints.head_pan.max_velocity", "'fast'"],
    ),
    (
        "non-positive velocity",
        lambda t: edited(t, "max_velocity: 2.5, idle: 0.0}", "max_velocity: 0, idle: 0.0}"),
        ["joints.head_tilt.max_velocity", "greater than 0"],
    ),
    (
        "keyframe times not increasing",
        lambda t: edited(t, "{at: 0.5, pose: {head_tilt: -0.05}}", "{at: 0.2, pose: {head_tilt: -0.05}}"),
        ["behaviors.nod.keyframes[1].at", "not after"],
    ),
    (
        "default not a behavior",
        lambda t: edited(t, "default: idle", "default: dance"),
        ["default", "'dance' is not a key of behaviors"],
    ),
    (
        "idle outside the limits",
        lambda t: edited(
            t,
            "{min: -0.5, max: 0.5, max_velocity: 2.5, idle: 0.0}",
            "{min: -0.5, max: 0.5, max_velocity: 2.5, idle: 0.9}",
        ),
        ["joints.head_tilt.idle", "outside"],
    ),
    (
        "NaN amplitude",
        lambda t: edited(t, "amplitude: {at_0: 0.35", "amplitude: {at_0: .nan"),
        ["amplitude.at_0", "finite"],
    ),
    ("zero speed", lambda t: edited(t, "speed: {at_0: 0.75", "speed: {at_0: 0.0"), ["speed", "greater than 0"]),
    ("YAML syntax error", lambda t: edited(t, "  nod:\n", "  nod: [\n"), [re.compile(r"line \d+ column \d+")]),
    (
        "duplicate key",
        lambda t: edited(t, "  shake:\n", "  nod:\n"),
        ["duplicate key 'nod'", re.compile(r"first defined on line \d+")],
    ),
    ("not a mapping", lambda t: "- just\n- a list\n", ["(top level)", "mapping"]),
]


@pytest.mark.parametrize("case,edit,needles", SERVO_CASES, ids=[c[0] for c in SERVO_CASES])
def test_bad_servo_yaml_names_file_and_key(tmp_path, case, edit, needles):
    path = tmp_path / "servo_map.yaml"
    path.write_text(edit(SERVO_YAML), encoding="utf-8")
    with pytest.raises(TableError) as info:
        servo.load_servo_table(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    for needle in needles:
        found = needle.search(message) if isinstance(needle, re.Pattern) else needle in message
        assert found, f"{needle!r} not in:\n{message}"


def test_yaml_syntax_error_points_at_the_right_line(tmp_path):
    lines = SERVO_YAML.splitlines()
    bad_line = next(i for i, line in enumerate(lines) if line.startswith("  nod:")) + 1
    path = tmp_path / "servo_map.yaml"
    path.write_text(edited(SERVO_YAML, "  nod:\n", "  nod: [\n"), encoding="utf-8")
    with pytest.raises(TableError) as info:
        servo.load_servo_table(path)
    reported = int(re.search(r"line (\d+)", str(info.value)).group(1))
    assert bad_line <= reported <= bad_line + 3, str(info.value)


LED_CASES = [
    (
        "unquoted hex colour in a flow mapping",
        lambda t: edited(t, "color: '#FFC83C'", "color: #FFC83C"),
        [re.compile(r"line \d+ column \d+"), "quote colours"],
    ),
    (
        "unquoted hex colour in a block mapping",
        lambda t: edited(
            t,
            "  smile:      {color: '#FFC83C', pattern: pulse, period: 2.5, low: 0.5}",
            "  smile:\n    color: #FFC83C\n    pattern: pulse",
        ),
        ["affects.smile.color", "in quotes"],
    ),
    ("bad colour", lambda t: edited(t, "color: '#FFC83C'", "color: '#FFC83'"), ["affects.smile.color", "#RRGGBB"]),
    (
        "colour out of range",
        lambda t: edited(t, "color: '#FFC83C'", "color: [255, 300, 0]"),
        ["affects.smile.color", "0..255"],
    ),
    (
        "unknown pattern",
        lambda t: edited(t, "{color: '#2846B4', pattern: pulse", "{color: '#2846B4', pattern: strobe"),
        ["affects.sad.pattern", "'strobe'"],
    ),
    (
        "fallback affect missing",
        lambda t: edited(t, "  positive: smile", "  positive: joyful"),
        ["sentiment_fallback.positive", "'joyful'"],
    ),
    (
        "brightness above 1",
        lambda t: edited(t, "at_1: 1.0}", "at_1: 2.0}"),
        ["brightness.at_1", "less than or equal to 1"],
    ),
    ("blink duty 1", lambda t: edited(t, "period: 0.5, duty: 0.6", "period: 0.5, duty: 1.0"), ["affects.excited.duty"]),
    (
        "idle affect missing",
        lambda t: edited(t, "idle: {affect: neutral", "idle: {affect: calm"),
        ["idle.affect", "'calm'"],
    ),
]


@pytest.mark.parametrize("case,edit,needles", LED_CASES, ids=[c[0] for c in LED_CASES])
def test_bad_led_yaml_names_file_and_key(tmp_path, case, edit, needles):
    path = tmp_path / "led_map.yaml"
    path.write_text(edit(LED_YAML), encoding="utf-8")
    with pytest.raises(TableError) as info:
        led.load_led_table(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    for needle in needles:
        found = needle.search(message) if isinstance(needle, re.Pattern) else needle in message
        assert found, f"{needle!r} not in:\n{message}"


def test_missing_file_is_named(tmp_path):
    with pytest.raises(TableError, match=r"nowhere\.yaml: file not found"):
        load_model(tmp_path / "nowhere.yaml", servo.ServoTable)


def test_yaml_tags_that_construct_objects_are_refused(tmp_path):
    path = tmp_path / "servo_map.yaml"
    path.write_text("!!python/object/apply:os.system ['echo pwned']\n", encoding="utf-8")
    with pytest.raises(TableError, match="servo_map.yaml"):
        servo.load_servo_table(path)


def test_reloading_keeps_the_last_good_table_and_reports_a_bad_edit_once(tmp_path):
    path = tmp_path / "servo_map.yaml"
    path.write_text(SERVO_YAML, encoding="utf-8")
    table = ReloadingTable(path, servo.load_servo_table)
    assert table.poll().changed is False

    path.write_text(edited(SERVO_YAML, "default: idle", "default: dance"), encoding="utf-8")
    bad = table.poll()
    assert not bad.changed and "servo_map.yaml: default:" in bad.error
    assert bad.table.default == "idle" and table.table.default == "idle"
    assert table.poll().error is None, "the same bad file is reported once"

    path.write_text(edited(SERVO_YAML, "default: idle", "default: nod"), encoding="utf-8")
    good = table.poll()
    assert good.changed and good.error is None and table.table.default == "nod"

    path.unlink()
    gone = table.poll()
    assert not gone.changed and "file not found" in gone.error and table.table.default == "nod"
