"""The long-conversation benchmark's data sets are consistent: every question's evidence turns
exist, belong to its owner and were said before it was asked, and every answer that is not a
date is in the evidence's words (else recall@10 and "answer found" would measure the data)."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
SETS = ("long_memory", "long_memory_blind")
CATEGORIES = {"single-hop", "multi-hop", "temporal", "preference-current"}


def load(name: str) -> tuple[dict[str, dict], list[dict]]:
    with open(DATA / name / "conversations.jsonl", encoding="utf-8") as f:
        turns = {row["id"]: row for row in map(json.loads, f)}
    with open(DATA / name / "questions.jsonl", encoding="utf-8") as f:
        return turns, [json.loads(line) for line in f]


@pytest.mark.parametrize("name", SETS)
def test_every_question_rests_on_turns_said_before_it(name):
    turns, questions = load(name)
    assert len(questions) >= 100 and {q["category"] for q in questions} == CATEGORIES
    assert len({row["session"] for row in turns.values()}) >= 20
    for q in questions:
        asked = datetime.datetime.fromisoformat(q["now"])
        evidence = [turns[turn_id] for turn_id in q["evidence"]]  # a missing id is a KeyError
        assert evidence and all(t["owner"] == q["owner"] for t in evidence), q["id"]
        assert all(datetime.datetime.fromisoformat(t["time"]) < asked for t in evidence), q["id"]
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", q["answer"]):
            said = " ".join(t["text"] for t in evidence).lower()
            assert q["answer"].lower() in said, q["id"]
