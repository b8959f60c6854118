"""The conversation-quality benchmark's data (bench/data/conversations/*.yaml) is well-formed:
at least ten conversations, half of them Chinese, every turn a line with known keys, and every
`recall` word stated by the user in an earlier turn of the same conversation (else the recall
check would measure the data)."""

from __future__ import annotations

from pathlib import Path

import yaml

from fay_ros.text.words import has_cjk

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "conversations"


def load() -> list[dict]:
    conversations: list[dict] = []
    for path in sorted(DATA.glob("*.yaml")):
        conversations += yaml.safe_load(path.read_text(encoding="utf-8"))
    return conversations


def test_the_conversations_are_well_formed_and_recall_only_what_was_said():
    conversations = load()
    assert len(conversations) >= 10
    assert sum(c["language"] == "zh" for c in conversations) * 2 >= len(conversations)
    assert len({c["id"] for c in conversations}) == len(conversations), "ids are unique"
    for c in conversations:
        assert set(c) == {"id", "language", "turns"} and c["language"] in ("en", "zh"), c["id"]
        assert len(c["turns"]) >= 3, c["id"]
        said: list[str] = []
        for turn in c["turns"]:
            assert set(turn) <= {"say", "recall", "answer"} and turn["say"].strip(), (c["id"], turn)
            assert has_cjk(turn["say"]) == (c["language"] == "zh"), (c["id"], turn)
            for word in turn.get("recall", []):
                assert any(word.lower() in s.lower() for s in said), (c["id"], word)
            said.append(turn["say"])
        assert any(t.get("recall") for t in c["turns"]), f"{c['id']} checks no recall"
