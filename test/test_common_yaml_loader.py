"""The one strict YAML loader (fay_ros.common.yaml_loader) on the real configuration files: the
persona, the bring-up's companion.yaml and a body table each refuse a duplicate key, an
unknown key and bad syntax with the file and the line; and the loader's own rules."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from fay_ros.body import servo
from fay_ros.bringup import graph
from fay_ros.common.errors import TableError
from fay_ros.common.paths import config_file
from fay_ros.common.yaml_loader import load_model, parse_yaml, read_yaml, validate
from fay_ros.dialogue.persona import Persona, PersonaError


@dataclass(frozen=True)
class ConfigFile:
    name: str  # shipped file under config/
    load: Callable[[Path], Any]
    error: type[TableError]
    duplicate: tuple[str, str]  # edit (old, new) that repeats a key
    duplicated_key: str
    unknown: tuple[str, str]  # edit that adds a misspelt key
    unknown_key: str  # its key path in the error
    syntax: tuple[str, str]  # edit that breaks the YAML

    def text(self) -> str:
        return config_file(self.name).read_text(encoding="utf-8")


FILES = [
    ConfigFile(
        "persona.yaml",
        Persona.load,
        PersonaError,
        duplicate=("emoji: false", "emoji: false\nname: Fei"),
        duplicated_key="name",
        unknown=("emoji: false", "emoji: false\nemojis: true"),
        unknown_key="emojis",
        syntax=("emoji: false", "emoji: [false"),
    ),
    ConfigFile(
        "companion.yaml",
        graph.load_parameters,
        TableError,
        duplicate=('    engine: "espeak-ng"', '    engine: "espeak-ng"\n    engine: "pyttsx3"'),
        duplicated_key="engine",
        unknown=("/**/tts:\n", "/**/tts:\n  ros_parameters: {rate_wpm: 200}\n"),
        unknown_key="/**/tts.ros_parameters",
        syntax=('    engine: "espeak-ng"', "    engine: [espeak-ng"),
    ),
    ConfigFile(
        "servo_map.yaml",
        servo.load_servo_table,
        TableError,
        duplicate=("  shake:\n", "  nod:\n"),
        duplicated_key="nod",
        unknown=("    keyframes:\n      - {at: 0.25", "    keyframs:\n      - {at: 0.25"),
        unknown_key="behaviors.nod.keyframs",
        syntax=("  nod:\n", "  nod: [\n"),
    ),
]
IDS = [f.name for f in FILES]


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line where the `occurrence`-th `needle` starts."""
    start = -1
    for _ in range(occurrence):
        start = text.index(needle, start + 1)
    return text.count("\n", 0, start) + 1


def write_edited(tmp_path: Path, file: ConfigFile, edit: tuple[str, str]) -> tuple[Path, str]:
    original = file.text()
    assert original.count(edit[0]) >= 1, f"test edit: {edit[0]!r} not in the shipped {file.name}"
    text = original.replace(edit[0], edit[1], 1)
    path = tmp_path / file.name
    path.write_text(text, encoding="utf-8")
    return path, text


def error_of(file: ConfigFile, path: Path) -> str:
    with pytest.raises(file.error) as info:
        file.load(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


@pytest.mark.parametrize("file", FILES, ids=IDS)
def test_the_shipped_file_loads(file):
    file.load(config_file(file.name))


def test_both_shipped_personas_load_with_their_fields():
    assert Persona.load(config_file("persona.yaml")).name == "Fay"
    assert Persona.load(config_file("persona_zh.yaml")).line("apology", "zh")


@pytest.mark.parametrize("file", FILES, ids=IDS)
def test_a_duplicate_key_is_refused_naming_both_lines(tmp_path, file):
    path, text = write_edited(tmp_path, file, file.duplicate)
    first, second = [
        number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith(f"{file.duplicated_key}:")
    ][:2]
    message = error_of(file, path)
    assert f": line {second} column " in message, message
    assert f"duplicate key '{file.duplicated_key}' (first defined on line {first})" in message, message


@pytest.mark.parametrize("file", FILES, ids=IDS)
def test_an_unknown_key_is_refused_with_its_key_path_and_line(tmp_path, file):
    path, text = write_edited(tmp_path, file, file.unknown)
    misspelt = file.unknown_key.rsplit(".", 1)[-1]
    message = error_of(file, path)
    assert f"{file.unknown_key}: unknown key (misspelt?) (line {line_of(text, misspelt + ':')})" in message, message


@pytest.mark.parametrize("file", FILES, ids=IDS)
def test_bad_syntax_is_refused_with_the_line(tmp_path, file):
    path, text = write_edited(tmp_path, file, file.syntax)
    broken = line_of(text, file.syntax[1].strip())
    message = error_of(file, path)
    reported = int(re.search(r": line (\d+) column \d+: invalid YAML", message).group(1))
    assert broken <= reported <= broken + 3, message


# ------------------------------------------------------------------------ the loader's rules


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    size: int = 1


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Item] = []
    title: str = ""


class Secret(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)
    token: int


def test_list_items_are_named_by_position_with_their_line():
    text = "title: t\nitems:\n  - name: a\n  - name: b\n    size: big\n"
    with pytest.raises(TableError) as info:
        validate(parse_yaml(text, "t.yaml"), Table)
    assert (
        str(info.value) == "t.yaml: items[1].size: Input should be a valid integer, unable to parse string "
        "as an integer (got 'big') (line 5)"
    )


def test_a_missing_key_points_at_the_mapping_that_lacks_it():
    with pytest.raises(TableError) as info:
        validate(parse_yaml("items:\n  - size: 2\n", "t.yaml"), Table)
    assert str(info.value) == "t.yaml: items[0].name: missing required key (line 2)"


def test_merge_keys_and_aliases_work_and_explicit_keys_override():
    text = "base: &b {name: x, size: 2}\nitems:\n  - <<: *b\n    size: 3\n  - *b\n"
    document = parse_yaml(text, "t.yaml")
    assert document.data["items"] == [{"name": "x", "size": 3}, {"name": "x", "size": 2}]
    assert document.line_of("items[0].size") == 4


def test_an_empty_file_is_an_empty_mapping_and_other_top_levels_are_refused():
    assert validate(parse_yaml("# only a comment\n", "t.yaml"), Table) == Table()
    with pytest.raises(TableError, match=r"t\.yaml: \(top level\): expected a mapping of keys, got list"):
        validate(parse_yaml("- a\n", "t.yaml"), Table)


def test_object_tags_are_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "t.yaml"
    path.write_text(f"!!python/object/apply:os.system ['touch {marker}']\n", encoding="utf-8")
    with pytest.raises(TableError, match=r"t\.yaml: line 1 column 1: invalid YAML: could not determine a constructor"):
        load_model(path, Table)
    assert not marker.exists()


def test_files_that_cannot_be_read_are_named(tmp_path):
    with pytest.raises(TableError, match=r"nowhere\.yaml: file not found"):
        read_yaml(tmp_path / "nowhere.yaml")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("title: ok\nname: caf\xe9\n".encode("latin-1"))
    with pytest.raises(TableError, match=r"latin1\.yaml:2: not UTF-8 \(byte 0xe9\)"):
        read_yaml(latin1)


def test_a_model_can_keep_rejected_values_out_of_errors():
    with pytest.raises(TableError) as info:
        validate(parse_yaml("token: s3cr3t-value\n", "access.yaml"), Secret)
    assert "token:" in str(info.value) and "s3cr3t" not in str(info.value)
