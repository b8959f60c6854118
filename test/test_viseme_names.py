"""One list of viseme names (fay_ros.common.viseme_names) and the three places that must agree
with it: the message contract (fay_msgs/msg/Viseme.msg constants), the shipped web face table
(web/face_map.json mouth.visemes) and the table check of `fay-ros web`."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fay_msgs.msg import Viseme
from fay_ros.common.viseme_names import VISEME_IDS, VISEME_NAMES
from fay_ros.web.face_map import validate

REPO = Path(__file__).resolve().parents[1]


def msg_constants() -> dict[str, int]:
    text = (REPO / "fay_msgs" / "msg" / "Viseme.msg").read_text(encoding="utf-8")
    return {name: int(value) for name, value in re.findall(r"^uint8 ([A-Z]+)=(\d+)\s*$", text, re.M)}


def test_names_and_ids_are_the_viseme_msg_constants():
    constants = msg_constants()
    assert len(constants) == 15
    assert {name.upper(): i for i, name in enumerate(VISEME_NAMES)} == constants
    for name, vid in VISEME_IDS.items():
        assert getattr(Viseme, name.upper()) == vid, name


def test_the_shipped_face_table_maps_exactly_these_names():
    table = json.loads((REPO / "web" / "face_map.json").read_text(encoding="utf-8"))
    assert list(table["mouth"]["visemes"]) and set(table["mouth"]["visemes"]) == set(VISEME_NAMES)


def test_the_face_table_check_refuses_a_name_not_in_the_list():
    table = json.loads((REPO / "web" / "face_map.json").read_text(encoding="utf-8"))
    assert validate(table) == []
    table["mouth"]["visemes"]["AA"] = 0.9  # the message constant's spelling, not the OVR name
    assert validate(table) == ["mouth.visemes.AA: not an OVR viseme (" + " ".join(VISEME_NAMES) + ")"]
