"""The one reload rule (fay_ros.common.reloading.ReloadingTable), on real files: a change is a
different mtime, size or inode; a rejected edit is reported once with file and line and the
last good table stays; a bad table at start-up is a configuration error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fay_ros.action import load_rules
from fay_ros.body import servo
from fay_ros.body.map_tables import default_table_path
from fay_ros.common.errors import ConfigError, TableError
from fay_ros.common.reloading import REJECTED, ReloadingTable

HEADER = "code,behavior,affect,intensity,priority,sentimentHint,keywords"


def rules(code: str, keyword: str = "apple") -> str:
    return f"{HEADER}\n{code},nod,smile,0.5,50,0,{keyword}\n"


def write(path: Path, text: str, mtime_ns: int) -> None:
    """Write in place (same inode) and set the modification time exactly: no waiting for the
    clock to tick between two edits."""
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_an_in_place_edit_of_the_same_size_is_seen_by_its_mtime(tmp_path):
    path = tmp_path / "rules.csv"
    write(path, rules("a.one"), 1_000_000_000)
    table = ReloadingTable(path, load_rules)
    assert table.poll().changed is False

    write(path, rules("a.two"), 1_000_000_000)  # same size, same mtime, same inode
    assert table.poll().changed is False, "nothing tells this edit apart: it waits for the next save"
    write(path, rules("a.two"), 2_000_000_000)  # the save that follows: a new mtime
    result = table.poll()
    assert result.changed and table.table.rules[0].code == "a.two" and result.message == f"{path}: reloaded"
    assert table.poll().changed is False, "read once per change"


def test_a_file_renamed_over_the_old_one_is_seen_by_its_inode(tmp_path):
    path = tmp_path / "rules.csv"
    write(path, rules("a.one"), 1_000_000_000)
    table = ReloadingTable(path, load_rules)
    replacement = tmp_path / "rules.csv.new"
    write(replacement, rules("a.two"), 1_000_000_000)  # same size and mtime: only the inode differs
    os.replace(replacement, path)
    assert table.poll().changed and table.table.rules[0].code == "a.two"


def test_a_rejected_edit_is_reported_once_and_the_last_good_table_stays(tmp_path):
    path = tmp_path / "rules.csv"
    write(path, rules("a.one"), 1_000_000_000)
    table = ReloadingTable(path, load_rules)

    write(path, rules("a.two", keyword=""), 2_000_000_000)
    bad = table.poll()
    assert not bad.changed and bad.table is table.table and table.table.rules[0].code == "a.one"
    assert bad.error == f"{path}:2: no keywords"
    assert bad.message == f"{path}: {REJECTED}:\n{path}:2: no keywords"
    assert table.poll().error is None, "the same bad file is reported once"

    write(path, rules("a.three", keyword=""), 3_000_000_000)
    assert table.poll().error == f"{path}:2: no keywords", "a new bad edit is reported again"

    path.unlink()
    gone = table.poll()
    assert "file not found" in gone.error and table.table.rules[0].code == "a.one"
    write(path, rules("a.four"), 4_000_000_000)
    assert table.poll().changed and table.table.rules[0].code == "a.four"


def test_a_bad_table_at_start_up_is_a_configuration_error(tmp_path):
    path = tmp_path / "servo_map.yaml"
    path.write_text(
        default_table_path(servo.TABLE_FILE).read_text(encoding="utf-8").replace("default: idle", "default: dance"),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:  # what run_node turns into exit code 2
        ReloadingTable(path, servo.load_servo_table)
    assert isinstance(info.value, TableError)
    assert str(info.value).startswith(f"{path}: default: 'dance' is not a key of behaviors")
