"""Golden set: bilingual sentences a companion says, with the behavior and affect a person
expects, run through the shipped tables (config/action_rules.csv, config/sentiment_lexicon.csv).

The set is also the workload of bench/bench_action.py, which measures both match policies on
it (`score`). Its rows expecting "idle" are traps: no rule may fire there (a keyword inside
another word, a negated keyword, no keyword at all).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from fay_ros.action import LEXICON_FILE, RULES_FILE, CueEngine, default_table_path

# (sentence, behavior, affect)
GOLDEN: list[tuple[str, str, str]] = [
    # greeting / welcome
    ("你好，很高兴见到你！", "wave", "warm"),
    ("Hello! I'm Fay.", "wave", "smile"),
    ("Hi there, how are you today?", "wave", "smile"),
    ("早上好，今天天气不错。", "wave", "smile"),
    ("Good evening, everyone.", "wave", "smile"),
    ("欢迎光临，请随便看看。", "wave", "warm"),
    ("Welcome back! I missed you.", "wave", "warm"),
    # farewell
    ("再见，路上注意安全。", "wave", "warm"),
    ("拜拜，明天见！", "wave", "warm"),
    ("Goodbye, take care of yourself.", "wave", "warm"),
    ("晚安，做个好梦。", "wave", "warm"),
    ("See you later!", "wave", "warm"),
    # thanks
    ("谢谢你的帮助。", "bow", "warm"),
    ("Thank you so much!", "bow", "warm"),
    ("Thanks for waiting.", "bow", "warm"),
    ("辛苦了，今天真的谢谢你。", "bow", "warm"),
    # apology
    ("对不起，我刚才没听清楚。", "bow", "apologetic"),
    ("不好意思，让你久等了。", "bow", "apologetic"),
    ("Sorry, I didn't catch that.", "bow", "apologetic"),
    ("My apologies for the confusion.", "bow", "apologetic"),
    # guidance / invite
    ("这边请，会议室在左手边。", "invite", "warm"),
    ("请跟我来，我带你去前台。", "invite", "warm"),
    ("Please come in and have a seat.", "invite", "warm"),
    ("Right this way, please.", "invite", "warm"),
    ("好的，这边请。", "invite", "warm"),
    # explain
    ("因为今天下雨，所以比赛推迟了。", "explain", "neutral"),
    ("也就是说，我们需要再等一周。", "explain", "neutral"),
    ("For example, you can ask me about the weather.", "explain", "neutral"),
    ("Basically, the robot listens first and then answers.", "explain", "neutral"),
    # think
    ("让我想想这个问题。", "think", "thinking"),
    ("嗯，好问题，我想一想。", "think", "thinking"),
    ("Hmm, let me think about that.", "think", "thinking"),
    ("Good question, I wonder why.", "think", "thinking"),
    ("你是不是累了？", "think", "neutral"),  # an A-not-A question, not a denial
    # agree / nod
    ("是的，没错。", "nod", "smile"),
    ("好的，没问题。", "nod", "smile"),
    ("Yes, of course.", "nod", "smile"),
    ("Sure, I can do that.", "nod", "smile"),
    ("You're right about that.", "nod", "smile"),
    # disagree / shake
    ("不是的，我没有这么说。", "shake", "serious"),  # 不是的 wins over 是的 (longest match)
    ("不对，答案是四十二。", "shake", "serious"),
    ("No, that's not what I meant.", "shake", "serious"),
    ("I don't think so.", "shake", "serious"),
    ("Nope, that's incorrect.", "shake", "serious"),
    # warn
    ("小心，地上很滑！", "warn", "serious"),
    ("注意安全，不要靠近边缘。", "warn", "serious"),
    ("Watch out, the floor is wet.", "warn", "serious"),
    ("Be careful with the hot water.", "warn", "serious"),
    ("危险！请勿触摸。", "warn", "serious"),
    # celebrate
    ("太好了，我们成功了！", "celebrate", "excited"),
    ("恭喜你考上大学！", "celebrate", "excited"),
    ("Congratulations on your new job!", "celebrate", "excited"),
    ("Happy birthday to you!", "celebrate", "excited"),
    ("Hooray, we did it!", "celebrate", "excited"),
    ("I can't wait to see it!", "celebrate", "excited"),  # not "I can't" (refuse): longest wins
    # comfort / sad
    ("别难过，一切都会好起来的。", "comfort", "warm"),
    ("没关系，我陪着你。", "comfort", "warm"),
    ("Don't worry, it's okay.", "comfort", "warm"),
    ("I'm sorry to hear that.", "comfort", "sad"),
    ("听到这个消息我很难过。", "comfort", "sad"),
    ("Unfortunately, the store is closed today.", "comfort", "sad"),
    # surprise
    ("哇，这也太神奇了吧！", "surprise", "surprised"),
    ("真的吗？我居然不知道。", "surprise", "surprised"),
    ("Wow, I didn't expect that!", "surprise", "surprised"),
    ("No way, that's unbelievable!", "surprise", "surprised"),
    # listen
    ("我在听，你继续说。", "listen", "neutral"),
    ("嗯嗯，然后呢？", "listen", "neutral"),
    ("Go on, I'm listening.", "listen", "neutral"),
    ("I see, please continue.", "listen", "neutral"),
    # praise
    ("你真棒，做得好！", "praise", "smile"),
    ("这个主意真不错。", "praise", "smile"),
    ("Great job on the presentation!", "praise", "smile"),
    ("Well done, that was impressive.", "praise", "smile"),
    ("Not bad at all!", "praise", "smile"),
    # refuse
    ("不行，这个我不能告诉你。", "refuse", "serious"),
    ("抱歉，我做不到。", "refuse", "serious"),
    ("No thanks, I'm fine.", "refuse", "serious"),
    ("I'm afraid not, that's not allowed.", "refuse", "serious"),
    ("I can't share that information.", "refuse", "serious"),
    # Latin word boundaries: no keyword fires inside another word
    ("This is the history of the city.", "idle", "neutral"),  # hi
    ("I know the answer.", "idle", "neutral"),  # no
    ("The token is hidden in the photo.", "idle", "neutral"),  # ok, hi
    ("Ship the byte array now.", "idle", "neutral"),  # hi, bye
    ("Ohio is a state.", "idle", "neutral"),  # hi
    ("HELLO FROM THE LAB", "wave", "smile"),  # case-insensitive
    ("ＯＫ，这边请！", "invite", "warm"),  # full-width letters
    # negation: a negated keyword does not count, a negated feeling flips
    ("我不是很开心。", "idle", "sad"),
    ("我一点也不难过。", "idle", "smile"),
    ("I'm not happy about this.", "idle", "sad"),
    ("It is not dangerous.", "idle", "smile"),
    ("这不太好吧。", "idle", "sad"),  # 好吧 (agree) negated
    ("I'm not sure.", "idle", "neutral"),  # sure (agree) negated
    ("他特别好。", "idle", "smile"),  # 特别 is no negation
    # no rule: the default follows sentiment
    ("今天是星期三。", "idle", "neutral"),
    ("The meeting starts at three.", "idle", "neutral"),
    ("北京是中国的首都。", "idle", "neutral"),
    ("我很开心今天能和你聊天。", "idle", "smile"),
    ("This is a wonderful day.", "idle", "smile"),
    ("我觉得有点累……", "idle", "sad"),
]


@dataclass(frozen=True)
class Score:
    correct: int  # rows whose (behavior, affect) is the expected one
    rows: int
    misfires: int  # trap rows where a rule fired
    traps: int


def score(pick: Callable[[str], tuple[str, str] | None]) -> Score:
    """How a matcher does on GOLDEN; `pick` gives (behavior, affect), None when no rule fired."""
    correct = misfires = 0
    traps = [row for row in GOLDEN if row[1] == "idle"]
    for text, behavior, affect in GOLDEN:
        picked = pick(text)
        if picked is None:
            continue
        if picked == (behavior, affect):
            correct += 1
        if behavior == "idle" and picked[0] != "idle":
            misfires += 1
    return Score(correct, len(GOLDEN), misfires, len(traps))


def engine_pick(engine: CueEngine) -> Callable[[str], tuple[str, str] | None]:
    def pick(text: str) -> tuple[str, str] | None:
        cue = engine.cue(text)
        return (cue.behavior, cue.affect) if cue else None

    return pick


@pytest.fixture(scope="module")
def engine() -> CueEngine:
    return CueEngine.from_files(default_table_path(RULES_FILE), default_table_path(LEXICON_FILE))


def test_golden_set_is_large_and_bilingual():
    assert len(GOLDEN) >= 60
    assert len({text for text, _, _ in GOLDEN}) == len(GOLDEN)
    chinese = sum(1 for text, _, _ in GOLDEN if not text.isascii())
    assert 25 <= chinese <= len(GOLDEN) - 25


@pytest.mark.parametrize("text, behavior, affect", GOLDEN, ids=[t for t, _, _ in GOLDEN])
def test_golden_sentence(engine, text, behavior, affect):
    cue = engine.cue(text)
    assert (cue.behavior, cue.affect) == (behavior, affect), cue.as_dict()
    if behavior == "idle":
        assert cue.code == "default.neutral" and cue.matched_keywords == ()
    else:
        assert cue.matched_keywords, cue.as_dict()


def test_negation_cases_report_what_was_negated(engine):
    assert engine.cue("这不太好吧。").negated_keywords == ("好吧",)
    assert engine.cue("I'm not sure.").negated_keywords == ("sure",)
    cue = engine.cue("不是的")
    assert (cue.code, cue.matched_keywords) == ("response.disagree", ("不是的",))


def test_cue_explains_its_choice(engine):
    cue = engine.cue("好的，这边请！")
    assert (cue.code, cue.priority, cue.intensity) == ("guidance.invite", 82, 0.74)
    assert cue.matched_keywords == ("这边请",)
    assert cue.other_rules == ("response.agree",)
    assert cue.sentiment_raw == pytest.approx(1.3)
    assert cue.sentiment == pytest.approx(1.3 / 4)


def test_both_policies_are_scored_and_neither_misfires_on_a_trap(engine):
    ours = score(engine_pick(engine))
    assert (ours.correct, ours.misfires) == (ours.rows, 0)
    fay = score(engine_pick(CueEngine(engine.rules, engine.lexicon, policy="fay")))
    assert fay.misfires == 0, "word boundaries and negation are kept under the fay policy"
    assert fay.rows == ours.rows and fay.traps == ours.traps >= 15
