"""A turn that is only a social move → the qa table's phrasing for it (fay_ros.dialogue.social_moves)."""

from __future__ import annotations

import pytest

from fay_ros.dialogue.qa import QaTable
from fay_ros.dialogue.social_moves import qa_phrasing
from harness import REPO


def _language(words: str) -> str:
    """As the recogniser tags it: Chinese when it has Chinese characters."""
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in words) else "en"


@pytest.mark.parametrize(
    ("words", "phrase"),
    [
        ("right, i'm off to bed, night fay", "good night"),
        ("Night night!", "good night"),
        ("thanks, good night", "good night"),  # several moves: the leave-taking
        ("ok bye then", "goodbye"),
        ("lovely chatting, bye for now", "goodbye"),
        ("righto, ta-ra fay", "goodbye"),
        ("see you tomorrow, Fay", "goodbye"),
        ("thank you so much", "thank you"),
        ("cheers fay", "thank you"),
        ("好了，我去睡觉了，晚安", "晚安"),
        ("晚安", "晚安"),
        ("那我先走了，拜拜", "再见"),
        ("谢谢你陪我聊天", "谢谢"),
        ("好嘞，谢谢啊", "谢谢"),
        ("好了，我去做饭了，拜拜", "再见"),
        ("我先去休息了，再见", "再见"),  # (off to rest in the day: a goodbye, not 晚安)
        ("我先休息了", "晚安"),
        ("今天有点累", "好累"),
        ("我累了", "好累"),
        ("我有点困了", "好困"),
        ("honestly i'm knackered after last night's shift", "i'm tired"),
        ("I'm exhausted", "i'm tired"),
        ("so tired from work", "i'm tired"),
    ],
)
def test_a_turn_that_is_only_a_social_move_names_its_qa_phrasing(words, phrase):
    assert qa_phrasing(words, _language(words)) == phrase


@pytest.mark.parametrize(
    "words",
    [
        "thanks fay, you're a good listener",  # more than thanks: the model answers it
        "thanks for the tip about the garden",
        "lovely chatting",  # a remark, no leave-taking
        "I had a good night",
        "i'm going to bed early tomorrow",
        "right",
        "",
        "我儿子很累",  # someone else's tiredness
        "my son is exhausted",
        "i'm tired of you",
        "i'm tired but i want to talk about my garden",
        "我去睡觉了，明天还要早起",
        "今天天气真好",
        "好的",
    ],
)
def test_anything_more_than_the_move_is_no_move(words):
    assert qa_phrasing(words, _language(words)) is None


def test_every_phrasing_is_a_row_of_the_shipped_qa_table():
    """A phrasing the table does not have would never be answered."""
    from fay_ros.dialogue import social_moves

    qa = QaTable.load(REPO / "config" / "qa.csv")
    phrases = [p for p, _ in (*social_moves._MOVES_EN, *social_moves._MOVES_ZH)]
    assert [p for p in phrases if (hit := qa.match(p)) is None or hit.score < 1.0] == []
