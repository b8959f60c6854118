"""Validation of web/face_map.json, the web face's own mapping table.

The page does the mapping (it owns the table); this module checks the table before the page
is served, so a typo stops `fay-ros web` at start-up with the file and the JSON key instead
of a face that silently never smiles. It also checks that every behavior and affect of the
shared vocabulary is mapped (a table may map more words; unknown words at run time fall
back to the table default).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..common import vocabulary
from ..common.errors import ConfigError
from ..common.viseme_names import VISEME_NAMES

SVG_ANIMATIONS = ("nod", "shake", "tilt", "sway", "bounce", "lean", "bow", "recoil")
_EXPRESSION = re.compile(r"^F\d{2}$")


class FaceMapError(ConfigError, ValueError):
    """face_map.json is unusable; the message names the file and the key."""


def load_face_map(path: Path) -> dict[str, Any]:
    """Read and validate the table; raise FaceMapError naming file and key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FaceMapError(f"{path}: cannot read the face map: {exc.strerror or exc}") from None
    try:
        table = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FaceMapError(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}") from None
    problems = validate(table)
    if problems:
        raise FaceMapError(f"{path}: invalid face map:\n  " + "\n  ".join(problems))
    return table


def validate(table: Any) -> list[str]:
    """Every problem as 'key.path: what is wrong'; empty when the table is usable."""
    problems: list[str] = []

    def need(obj: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            problems.append(f"{where}.{key}: missing" if where else f"{key}: missing")
            return None
        value = obj[key]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            problems.append(
                f"{where}.{key}: expected {names}, got {value!r}"
                if where
                else f"{key}: expected {names}, got {value!r}"
            )
            return None
        return value

    def number(obj: Any, key: str, where: str, lo: float, hi: float) -> float | None:
        value = need(obj, key, where, (int, float))
        if value is not None and not lo <= value <= hi:
            problems.append(f"{where}.{key}: {value} is outside {lo}..{hi}")
            return None
        return value

    if not isinstance(table, dict):
        return ["(top level): expected a JSON object"]

    motion = need(table, "motion", "", dict)
    if motion is not None:
        need(motion, "group", "motion", str)
        need(motion, "idle_group", "motion", str)
        number(motion, "strong_from_intensity", "motion", 0.0, 1.0)
        number(motion, "hold_seconds", "motion", 0.1, 60.0)
        behaviors = need(motion, "behaviors", "motion", dict)
        if behaviors is not None:
            problems += _vocabulary_map(
                behaviors, vocabulary.BEHAVIORS, "motion.behaviors", "behavior", _motion_indexes
            )
        if isinstance(motion, dict) and "default" not in motion:
            problems.append("motion.default: missing")
        elif isinstance(motion, dict):
            problems += _motion_indexes(motion["default"], "motion.default")

    expression = need(table, "expression", "", dict)
    if expression is not None:
        affects = need(expression, "affects", "expression", dict)
        if affects is not None:
            problems += _vocabulary_map(affects, vocabulary.AFFECTS, "expression.affects", "affect", _expression_name)
        for key in ("default", "rest"):
            if key not in expression:
                problems.append(f"expression.{key}: missing")
            else:
                problems += _expression_name(expression[key], f"expression.{key}")
        rules = need(expression, "sentiment_fallback", "expression", list)
        for i, rule in enumerate(rules or []):
            where = f"expression.sentiment_fallback[{i}]"
            if not isinstance(rule, dict) or not ({"min", "max"} & set(rule)):
                problems.append(f"{where}: needs 'min' and/or 'max' and 'expression'")
                continue
            for bound in ("min", "max"):
                if bound in rule:
                    number(rule, bound, where, -1.0, 1.0)
            problems += _expression_name(rule.get("expression"), f"{where}.expression")

    mouth = need(table, "mouth", "", dict)
    if mouth is not None:
        need(mouth, "parameter", "mouth", str)
        number(mouth, "late_track_seconds", "mouth", 0.0, 3600.0)
        visemes = need(mouth, "visemes", "mouth", dict)
        if visemes is not None:
            for name in visemes:
                if name not in VISEME_NAMES:
                    problems.append(f"mouth.visemes.{name}: not an OVR viseme ({' '.join(VISEME_NAMES)})")
                else:
                    number(visemes, name, "mouth.visemes", 0.0, 1.0)
            if "sil" not in visemes:
                problems.append("mouth.visemes.sil: missing (silence must close the mouth)")

    blink = need(table, "blink", "", dict)
    if blink is not None:
        lo = number(blink, "min_interval_s", "blink", 0.2, 60.0)
        hi = number(blink, "max_interval_s", "blink", 0.2, 60.0)
        number(blink, "closed_s", "blink", 0.01, 2.0)
        if lo is not None and hi is not None and lo > hi:
            problems.append("blink.min_interval_s: larger than blink.max_interval_s")
    breathing = need(table, "breathing", "", dict)
    if breathing is not None:
        number(breathing, "period_s", "breathing", 0.5, 60.0)
        number(breathing, "amplitude_px", "breathing", 0.0, 50.0)
    subtitles = need(table, "subtitles", "", dict)
    if subtitles is not None:
        number(subtitles, "hold_s", "subtitles", 0.0, 600.0)

    if "live2d" in table:  # optional: without it every model is taken to follow Fay's conventions
        problems += _live2d_profiles(table["live2d"], motion)

    svg = need(table, "svg", "", dict)
    if svg is not None:
        expressions = need(svg, "expressions", "svg", dict)
        if expressions is not None:
            used: set[object] = set()  # names from the expression table, not yet checked to be strings
            if isinstance(expression, dict):
                used = {v for v in (expression.get("affects") or {}).values() if isinstance(v, str)}
                used |= {expression.get("default"), expression.get("rest")}
                used |= {r.get("expression") for r in expression.get("sentiment_fallback") or [] if isinstance(r, dict)}
            for name in sorted(n for n in used if isinstance(n, str)):
                if name not in expressions:
                    problems.append(f"svg.expressions.{name}: missing (the expression table uses it)")
            for name, look in expressions.items():
                where = f"svg.expressions.{name}"
                if not isinstance(look, dict):
                    problems.append(f"{where}: expected an object")
                    continue
                for key, lo, hi in (
                    ("brow_raise", -1, 1),
                    ("brow_tilt", -1, 1),
                    ("eye_open", 0, 1),
                    ("mouth_curve", -1, 1),
                    ("cheek", 0, 1),
                ):
                    number(look, key, where, lo, hi)
        motions = need(svg, "motions", "svg", dict)
        if motions is not None:
            for key, spec in motions.items():
                where = f"svg.motions.{key}"
                if not key.isdigit():
                    problems.append(f"{where}: keys are TapBody indexes (0, 1, ...)")
                if not isinstance(spec, dict):
                    problems.append(f"{where}: expected an object")
                    continue
                animation = need(spec, "animation", where, str)
                if animation is not None and animation not in SVG_ANIMATIONS:
                    problems.append(f"{where}.animation: {animation!r} is not one of {', '.join(SVG_ANIMATIONS)}")
                number(spec, "amplitude", where, 0.0, 2.0)
            if isinstance(motion, dict) and isinstance(motion.get("behaviors"), dict):
                for word, indexes in motion["behaviors"].items():
                    for index in indexes if isinstance(indexes, list) else []:
                        if isinstance(index, int) and str(index) not in motions:
                            problems.append(f"svg.motions.{index}: missing (motion.behaviors.{word} uses it)")
    return problems


def _vocabulary_map(
    mapping: dict[str, Any], words: Iterable[str], where: str, kind: str, check_entry: Callable[[Any, str], list[str]]
) -> list[str]:
    """Problems of a table keyed by vocabulary words: every word present, every entry valid."""
    problems = [
        f"{where}.{word}: missing (every vocabulary {kind} needs an entry)" for word in words if word not in mapping
    ]
    for word, entry in mapping.items():
        problems += check_entry(entry, f"{where}.{word}")
    return problems


def _motion_indexes(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= 2
        or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value)
    ):
        return [f"{where}: expected null, [index] or [light, strong] with indexes >= 0, got {value!r}"]
    return []


def _expression_name(value: Any, where: str) -> list[str]:
    if not isinstance(value, str) or not _EXPRESSION.match(value):
        return [f"{where}: expected an expression name F01, F02, ..., got {value!r}"]
    return []


_LIVE2D_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _live2d_profiles(section: Any, motion: Any) -> list[str]:
    """Problems of the `live2d` section: per model profile, its expression names, behavior ->
    {group, indexes} map (every vocabulary behavior, like motion.behaviors) and mouth parameters."""
    if not isinstance(section, dict) or not isinstance(section.get("profiles"), dict):
        return ["live2d.profiles: missing (an object of model profiles)"]
    problems: list[str] = []
    strong = isinstance(motion, dict) and isinstance(motion.get("strong_from_intensity"), (int, float))
    for name, profile in section["profiles"].items():
        where = f"live2d.profiles.{name}"
        if not isinstance(profile, dict):
            problems.append(f"{where}: expected an object")
            continue
        for key in ("model_file", "idle_group", "mouth_open"):
            value = profile.get(key)
            if value is not None and (not isinstance(value, str) or not _LIVE2D_NAME.match(value)):
                problems.append(f"{where}.{key}: expected a file or parameter name, got {value!r}")
        expressions = profile.get("expressions", {})
        if not isinstance(expressions, dict):
            problems.append(f"{where}.expressions: expected an object (F01 -> the model's expression name)")
        else:
            for key, own in expressions.items():
                problems += _expression_name(key, f"{where}.expressions key")
                if not isinstance(own, str) or not own:
                    problems.append(f"{where}.expressions.{key}: expected the model's expression name, got {own!r}")
        behaviors = profile.get("behaviors")
        if behaviors is not None:
            if not isinstance(behaviors, dict):
                problems.append(f"{where}.behaviors: expected null (TapBody indexes of motion.behaviors) or an object")
            else:
                problems += _vocabulary_map(
                    behaviors, vocabulary.BEHAVIORS, f"{where}.behaviors", "behavior", _live2d_motion
                )
            problems += _live2d_motion(profile.get("default_behavior"), f"{where}.default_behavior")
            if not strong:
                problems.append(f"{where}.behaviors: needs motion.strong_from_intensity")
        form = profile.get("mouth_form")
        if form is not None:
            if (
                not isinstance(form, dict)
                or not isinstance(form.get("parameter"), str)
                or not isinstance(form.get("visemes"), dict)
            ):
                problems.append(f"{where}.mouth_form: expected null or {{parameter, visemes}}")
            else:
                for viseme, value in form["visemes"].items():
                    if viseme not in VISEME_NAMES:
                        problems.append(f"{where}.mouth_form.visemes.{viseme}: not an OVR viseme")
                    elif isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 <= value <= 1:
                        problems.append(
                            f"{where}.mouth_form.visemes.{viseme}: expected a number in -1..1, got {value!r}"
                        )
    if sum(1 for p in section["profiles"].values() if isinstance(p, dict) and not p.get("model_file")) > 1:
        problems.append("live2d.profiles: more than one profile without model_file (the fallback must be one)")
    return problems


def _live2d_motion(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, dict) or not isinstance(value.get("group"), str) or not value["group"]:
        return [f"{where}: expected null or {{group, indexes}}, got {value!r}"]
    return (
        _motion_indexes(value.get("indexes"), f"{where}.indexes")
        if value.get("indexes") is not None
        else [f"{where}.indexes: missing ([light] or [light, strong])"]
    )
