"""A Fay user's own action table loads as it is and gives the cues Fay documents.

test/data/fay/action_rules.csv is written for these tests in the layout of Fay's shipped
config/action_rules.csv: the same header and codes, Fay's behaviors and affects outside
fay_ros' original vocabulary, sentimentHint values beyond -1..1 (1.6, -1.2), and the rule Fay's
"standard action" doc gives as its example ("这边请" -> guidance.invite, invite, warm, 0.74, 82).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from fay_ros.action import LEXICON_FILE, CueEngine, default_table_path, load_lexicon, load_rules
from fay_ros.action.rules import RULE_COLUMNS
from fay_ros.common.vocabulary import AFFECTS, BEHAVIORS

FAY_RULES = Path(__file__).parent / "data" / "fay" / "action_rules.csv"
FAY_BEHAVIORS = {"reject", "question", "recommend", "summary", "wait", "remind", "thanks", "apology", "care", "sad"}
FAY_AFFECTS = {"curious", "sorry"}


@pytest.fixture(scope="module")
def fay_engine() -> CueEngine:
    return CueEngine(
        load_rules(FAY_RULES), load_lexicon(default_table_path(LEXICON_FILE)), policy="fay", no_match="none"
    )


def fay_reference(rows: list[dict[str, str]], text: str) -> str | None:
    """Fay's own ranking as its docs and resolve_action_signal describe it: every keyword is a
    case-insensitive substring; rank by keywords found, then longest one, then priority; on a
    tie the earlier row. Used only to show where the fay policy agrees and where word
    boundaries and negation make it differ."""
    best, best_key = None, (-1, -1, -1)
    for row in rows:
        found = [k for k in row["keywords"].split("|") if k and k.lower() in text.lower()]
        if found:
            key = (len(found), max(len(k) for k in found), int(row["priority"]))
            if key > best_key:
                best, best_key = row["code"], key
    return best


def test_the_fixture_has_fays_layout_and_every_problem_the_old_loader_refused():
    with FAY_RULES.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0].keys()) == RULE_COLUMNS
    assert {r["behavior"] for r in rows} >= FAY_BEHAVIORS
    assert {r["affect"] for r in rows} >= FAY_AFFECTS
    assert {r["sentimentHint"] for r in rows} >= {"1.6", "-1.2"}
    old_problems = (
        len(FAY_BEHAVIORS) + len(FAY_AFFECTS) + sum(1 for r in rows if not -1 <= float(r["sentimentHint"]) <= 1)
    )
    assert old_problems == 14, "the 14 problems of issue 21"


def test_fays_table_loads_with_no_problem_and_no_warning():
    table = load_rules(FAY_RULES)
    assert len(table.rules) == 20 and table.warnings == ()
    assert FAY_BEHAVIORS <= set(BEHAVIORS) and FAY_AFFECTS <= set(AFFECTS)
    hints = {r.code: r.sentiment_hint for r in table.rules}
    assert (hints["emotion.celebrate"], hints["emotion.sad"]) == (1.6, -1.2)


@pytest.mark.parametrize("text", ["这边请", "请进", "跟我来", "请往这边走"])
def test_fays_documented_example_comes_out_as_documented(fay_engine, text):
    # Fay's doc: these phrases all become {"code": "guidance.invite", "behavior": "invite", "affect": "warm",
    # "intensity": 0.74, "priority": 82}.
    cue = fay_engine.cue(text)
    assert (cue.code, cue.behavior, cue.affect, cue.intensity, cue.priority) == (
        "guidance.invite",
        "invite",
        "warm",
        0.74,
        82,
    )
    assert cue.sentiment_hint == 0.7


# (sentence, the rule Fay's own matcher picks from this table)
FAY_PHRASES = [
    ("你好呀", "greeting.hello"),
    ("你好，欢迎光临！", "greeting.welcome"),  # more keywords (欢迎, 欢迎光临) in Fay; longer here
    ("拜拜，回头见", "farewell.goodbye"),
    ("没错，当然可以", "dialogue.confirm"),
    ("不是的，不对", "dialogue.reject"),  # not dialogue.confirm's 是的
    ("让我想想", "dialogue.think"),
    ("这是为什么呢？", "dialogue.question"),
    ("换句话说，比如这样", "dialogue.explain"),
    ("我建议你可以试试这个", "dialogue.recommend"),
    ("总结一下，总之就是这样", "dialogue.summary"),
    ("请稍等，马上就好", "guidance.wait"),
    ("记得带伞，别忘了", "guidance.remind"),
    ("注意安全，小心台阶", "guidance.warn"),
    ("谢谢你的帮助", "social.thanks"),
    ("对不起，请原谅我", "social.apology"),
    ("你还好吗？别担心", "social.care"),
    ("太好了，我们成功了", "emotion.celebrate"),
    ("天啊，竟然是真的", "emotion.surprise"),
    ("真遗憾，太可惜了", "emotion.sad"),
    ("Hello, thank you!", "social.thanks"),  # 9 characters beat 5
    ("没错，当然可以，小心", "dialogue.confirm"),  # three keywords beat priority 84
]


def test_fays_phrases_get_the_rule_fays_own_matcher_picks(fay_engine):
    with FAY_RULES.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for text, code in FAY_PHRASES:
        assert fay_reference(rows, text) == code, f"the expectation agrees with Fay's ranking: {text}"
        cue = fay_engine.cue(text)
        assert cue is not None and cue.code == code, (text, fay_engine.analyse(text).match.explain())


@pytest.mark.parametrize(
    "text, fay_picks, expected",
    [
        ("This is the history of it.", "greeting.hello", None),  # "hi" inside "this", "history"
        ("I know the way.", "dialogue.reject", None),  # "no" inside "know"
        ("Ship it now.", "dialogue.reject", None),  # "hi" in "ship", "no" in "now"
        ("我一点也不难过", "emotion.sad", None),  # negated
    ],
)
def test_word_boundaries_and_negation_are_kept_under_the_fay_policy(fay_engine, text, fay_picks, expected):
    with FAY_RULES.open(encoding="utf-8", newline="") as f:
        assert fay_reference(list(csv.DictReader(f)), text) == fay_picks
    cue = fay_engine.cue(text)
    assert (cue.code if cue else None) == expected


def test_the_priority_policy_reads_the_same_table_by_priority():
    engine = CueEngine(load_rules(FAY_RULES), load_lexicon(default_table_path(LEXICON_FILE)))
    assert engine.cue("没错，当然可以，小心").code == "guidance.warn"
    assert engine.cue("今天星期三").code == "default.neutral"
