"""The names the memory knows as the recogniser's hot words (asr `hotwords_from_memory`, issue
38): which names a profile holds (read from the facts as the memory stores what people say of
themselves), when the asr asks memory/profile again, and that one user's names never stay the
hot words of another. The node on a real graph with a real memory node is in
test_hearing_nodes.py."""

from __future__ import annotations

import math

from fay_ros.hearing.hotword_names import ANSWER_WITHIN_S, MAX_NAMES, HotwordNames
from fay_ros.memory.self_facts import extract_self_facts, names_in_profile


def _profile(*said: str) -> list[str]:
    """memory/profile's fact lines for what a person said of themselves ("kind:key=content")."""
    return [f"{f.kind}:{f.key}={f.content}" for text in said for f in extract_self_facts(text)]


def _names(*said: str) -> list[str]:
    return names_in_profile(_profile(*said))


def test_the_names_in_a_profile_are_the_persons_and_their_familys():
    facts = _profile(
        "My name is Tom.",
        "My sister is called Anna.",
        "My daughter Lena turns seven on Sunday.",
        "I like hiking.",
        "我女儿叫小雨。",
    )
    assert names_in_profile(facts) == ["Tom", "Anna", "Lena", "小雨"]
    assert names_in_profile(_profile("我叫林。")) == ["林"]
    assert names_in_profile(["fact:name=User's name is Tom.", "fact:name=User's name is tom."]) == ["Tom"]  # once
    assert names_in_profile(["fact:job=I am a teacher", "rule:quiet-hours=no calls after 22:00", "garbage"]) == []
    many = [f"fact:family:cousin{chr(97 + n)}=User's cousin is called Name{chr(65 + n)}." for n in range(20)]
    assert len(names_in_profile(many)) == 20
    hot = HotwordNames()
    hot.asked("tom", 0.0)
    hot.answered("tom", names_in_profile(many), 0.1)
    assert len(hot.names) == MAX_NAMES  # (a long hot-word prompt costs decode time and accuracy)


def test_memory_is_asked_until_it_answers_then_after_a_final_once_a_minute():
    names = HotwordNames(("Fay",), refresh_s=60.0)
    assert not names.due("", 0.0)  # a guest has no private memory
    assert names.due("tom", 0.0)
    names.asked("tom", 0.0)
    assert not names.due("tom", 1.0) and not names.due("tom", 1.0, final=True)  # one call at a time
    assert names.due("tom", ANSWER_WITHIN_S)  # an unanswered call is given up, and asked again
    assert "did not answer" in names.status()[1]
    names.asked("tom", 10.0)
    assert names.answered("tom", _names("My name is Tom.", "My sister is called Anna."), 10.5) == "Fay, Tom, Anna"
    level, message, values = names.status()
    assert level == "ok" and values == {"configured": "1", "from_memory": "2"}
    assert "Tom" not in message and "Anna" not in message  # counts only, never the names
    assert not names.due("tom", 11.0) and not names.due("tom", 30.0, final=True)
    assert names.due("tom", 71.0, final=True) and not names.due("tom", 71.0)  # (a final, a minute on)
    names.asked("tom", 71.0)
    assert names.answered("tom", _names("My name is Tom.", "My sister is called Anna."), 71.2) is None  # same names
    names.asked("tom", 140.0)
    assert names.answered("tom", None, 140.1, "memory/profile: internal error") is None  # a failure keeps them
    assert names.words == "Fay, Tom, Anna" and names.status()[0] == "warning"


def test_another_users_names_are_dropped_at_once_and_their_late_answer_ignored():
    names = HotwordNames(("Fay",))
    names.asked("tom", 0.0)
    names.answered("tom", _names("My sister is called Anna."), 0.1)
    names.asked("tom", 100.0)  # a refresh still out when the user changes
    assert names.for_user("ann") == "Fay"  # Anna is no hot word for Ann
    assert names.answered("tom", _names("My sister is called Anna."), 100.2) is None  # Tom's late answer
    assert names.words == "Fay" and names.due("ann", 100.3)
    names.asked("ann", 100.3)
    assert names.answered("ann", [], 100.4) == "Fay"  # (Ann's profile names nobody)
    assert names.owner == "ann" and names.answered_at == 100.4 and not math.isinf(names.answered_at)


def test_configured_hot_words_come_first_and_are_not_repeated():
    names = HotwordNames(("Fay", "菲菲"))
    names.asked("lin", 0.0)
    facts = ["fact:name=User's name is Fay.", *_profile("我女儿叫小雨。")]
    assert names.answered("lin", names_in_profile(facts), 0.1) == "Fay, 菲菲, 小雨"
