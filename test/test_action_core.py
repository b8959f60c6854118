"""Pure cores of action semantics: matching rule, rule choice, sentiment, table validation,
hot reload. No ROS here; every table is a real file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fay_ros.action import LEXICON_FILE, RULES_FILE, CueEngine, TableError, default_table_path, load_lexicon, load_rules
from fay_ros.action.phrases import Negation, PhraseIndex
from fay_ros.action.rules import RULE_COLUMNS, ActionMatcher
from fay_ros.action.sentiment import SCALE_NAME, SentimentScorer
from fay_ros.action.text_to_cue import DEFAULT_CODE, default_affect
from fay_ros.action.watch import TableWatcher
from fay_ros.common.vocabulary import AFFECTS, BEHAVIORS

HEADER = ",".join(RULE_COLUMNS)
SHIPPED_RULES = default_table_path(RULES_FILE)
SHIPPED_LEXICON = default_table_path(LEXICON_FILE)


@pytest.fixture(scope="module")
def shipped_lexicon():
    return load_lexicon(SHIPPED_LEXICON)


@pytest.fixture(scope="module")
def scorer(shipped_lexicon):
    return SentimentScorer(shipped_lexicon)


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return path


def rules_file(tmp_path: Path, *rows: str, name: str = "rules.csv") -> Path:
    return write(tmp_path, name, HEADER + "\n" + "\n".join(rows) + "\n")


def found(index: PhraseIndex, text: str) -> list[tuple[str, bool]]:
    return [(hit.keyword, hit.negated) for hit in index.find(text)]


NEGATION = Negation.from_words(["不", "没", "别", "not", "no", "never"], ["很", "太", "是", "特别"])


# ---- the matching rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    "keyword, text, expected",
    [
        ("hi", "this is fine", False),
        ("hi", "Hi! Nice day.", True),
        ("hi", "say HI to her", True),
        ("no", "I know it", False),
        ("no", "no, it is not", True),
        ("ok", "the token expired", False),
        ("ok", "ＯＫ！", True),  # full-width letters fold to ASCII
        ("bye", "a byte array", False),
        ("thank you", "Thank, you!", True),  # punctuation between words is ignored
        ("thank you", "thank yourself", False),
        ("don't", "Don’t go", True),  # curly apostrophe
        ("谢谢", "谢谢你", True),  # CJK: substring
        ("你好", "大家好", False),
        ("ok啦", "OK啦，走吧", True),  # mixed keyword: substring
    ],
)
def test_latin_keywords_match_whole_words_cjk_as_substrings(keyword, text, expected):
    index = PhraseIndex.build([(keyword, 1)])
    assert bool(index.find(text)) is expected


def test_longest_match_consumes_shorter_keywords():
    index = PhraseIndex.build(
        [("是", "yes"), ("不是", "no"), ("你好", "hello"), ("好", "good"), ("no", "no"), ("no problem", "fine")]
    )
    assert found(index, "不是") == [("不是", False)]
    assert found(index, "你好") == [("你好", False)]
    assert found(index, "No problem") == [("no problem", False)]
    # Forward maximum matching: both found when they do not overlap.
    assert [h.keyword for h in index.find("你好，不是")] == ["你好", "不是"]


@pytest.mark.parametrize(
    "text, negated",
    [
        ("是的", False),
        ("不是的", True),  # 不是 must not count as 是
        ("不太是的", True),  # one degree word between
        ("不是很是的", True),  # two degree words ("是" is one too)
        ("特别是的", False),  # 特别 is a degree word: the 别 inside it is no negator
        ("别是的", True),
        ("不，是的", False),  # another clause
    ],
)
def test_cjk_negation(text, negated):
    index = PhraseIndex.build([("是的", 1)], NEGATION)
    assert found(index, text) == [("是的", negated)]


@pytest.mark.parametrize(
    "text, negated",
    [
        ("I am happy", False),
        ("I am not happy", True),
        ("not very happy", True),
        ("I don't feel happy", True),  # any word ending in n't
        ("never was I that happy", False),  # four words back: outside the window
        ("not, happy", False),  # clause break
        ("not sad but happy", False),  # 'but' ends the negation scope
    ],
)
def test_latin_negation(text, negated):
    index = PhraseIndex.build([("happy", 1)], NEGATION)
    assert found(index, text) == [("happy", negated)]


def test_overlapping_word_and_substring_keywords_keep_the_longer():
    index = PhraseIndex.build([("ok", "word"), ("ok啦", "mixed"), ("hello", "word"), ("啦啦", "cjk")])
    assert [h.payloads for h in index.find("OK啦啦, hello")] == [("mixed",), ("word",)]
    assert [h.keyword for h in index.find("ok 好, ok啦")] == ["ok", "ok啦"]


def test_a_negator_inside_an_earlier_keyword_is_used_up():
    index = PhraseIndex.build([("是不是", 0), ("累", 1), ("no problem", 2), ("thanks", 3)], NEGATION)
    assert found(index, "你是不是累了") == [("是不是", False), ("累", False)]
    assert found(index, "no problem thanks") == [("no problem", False), ("thanks", False)]
    assert found(index, "你不累") == [("累", True)]


# ---- choosing a rule -------------------------------------------------------------------


def test_priority_wins_over_match_strength(tmp_path):
    table = load_rules(
        rules_file(tmp_path, "a.weak,nod,smile,0.5,50,0,好的|没问题|可以的", "b.strong,invite,warm,0.7,80,0,这边请")
    )
    match = ActionMatcher(table).match("好的没问题，可以的，这边请")
    assert match.winner.rule.code == "b.strong"
    assert [m.rule.code for m in match.candidates] == ["b.strong", "a.weak"]


def test_equal_priority_then_strength_then_count_then_hint_then_row(tmp_path):
    table = load_rules(
        rules_file(
            tmp_path,
            "s.short,nod,smile,0.5,50,0,好的",
            "s.long,wave,warm,0.5,50,0,欢迎光临",
            "h.sad,comfort,sad,0.5,40,-0.8,天气",
            "h.happy,celebrate,excited,0.5,40,0.8,天气",
            "r.first,think,neutral,0.5,30,0,嗯嗯",
            "r.second,listen,neutral,0.5,30,0,嗯嗯",
        )
    )
    matcher = ActionMatcher(table)
    assert matcher.match("好的，欢迎光临").winner.rule.code == "s.long"  # 4 chars beat 2
    assert matcher.match("天气", sentiment=0.6).winner.rule.code == "h.happy"
    assert matcher.match("天气", sentiment=-0.6).winner.rule.code == "h.sad"
    assert matcher.match("嗯嗯").winner.rule.code == "r.first"


def test_hint_tie_break_compares_on_fays_scale(tmp_path):
    # The sentence sentiment (-1..1) is doubled onto the hint range: 0.5 -> 1.0 is nearer 1.2 than 0.4.
    table = load_rules(rules_file(tmp_path, "h.mild,nod,smile,0.5,40,0.4,天气", "h.strong,wave,warm,0.5,40,1.2,天气"))
    match = ActionMatcher(table).match("天气", sentiment=0.5)
    assert match.winner.rule.code == "h.strong"
    assert match.winner.keys("priority", 0.5)["hint_distance"] == pytest.approx(0.2)


FAY_RANKING_ROWS = (
    "a.many,nod,smile,0.5,40,0,没错|当然|可以",
    "b.high,warn,serious,0.8,90,0,小心",
    "c.long,explain,neutral,0.5,30,0,换句话说",
    "d.short,think,neutral,0.5,60,0,想想",
    "e.first,listen,neutral,0.5,50,0,嗯嗯",
    "e.second,nod,neutral,0.5,50,0,好好",
)


def test_fay_policy_ranks_by_keyword_count_then_longest_then_priority(tmp_path):
    table = load_rules(rules_file(tmp_path, *FAY_RANKING_ROWS))
    fay, ours = ActionMatcher(table, policy="fay"), ActionMatcher(table)
    text = "没错，当然可以，小心"
    assert fay.match(text).winner.rule.code == "a.many"  # 3 keywords beat priority 90
    assert ours.match(text).winner.rule.code == "b.high"  # priority first
    assert fay.match("想想，换句话说").winner.rule.code == "c.long"  # 4 characters beat priority 60
    assert fay.match("小心想想").winner.rule.code == "b.high"  # same count and length: priority
    assert fay.match("好好嗯嗯").winner.rule.code == "e.first"  # all equal: earlier row
    # Word boundaries stay: Fay's own substring test would find "hi" in "this".
    hello = load_rules(rules_file(tmp_path, "g.hello,wave,smile,0.5,50,0,hi", name="hi.csv"))
    assert ActionMatcher(hello, policy="fay").match("this is it").winner is None


def test_match_explains_every_candidate_and_why_the_winner_won(tmp_path):
    table = load_rules(rules_file(tmp_path, *FAY_RANKING_ROWS))
    result = ActionMatcher(table, policy="fay").match("没错，当然可以，小心")
    explained = result.explain()
    assert explained["policy"] == "fay" and explained["winner"] == "a.many"
    assert [c["code"] for c in explained["candidates"]] == ["a.many", "b.high"]
    assert explained["candidates"][0]["keys"] == {"keywords": 3, "longest": 2, "priority": 40, "row": 2}
    assert explained["why"] == (
        "a.many beats b.high on number of keywords found: 3 vs 1 "
        "(fay policy ranks by keywords, then longest, then priority, then row)"
    )
    by_priority = ActionMatcher(table).match("没错，当然可以，小心")
    assert by_priority.why().startswith("b.high beats a.many on priority: 90 vs 40")
    assert ActionMatcher(table).match("小心").why() == "b.high is the only rule with a keyword found"
    assert (
        ActionMatcher(table, NEGATION).match("不小心").why()
        == "no rule has a keyword in the text (found but negated: 小心)"
    )
    with pytest.raises(ValueError, match="match policy 'loudest' is not one of priority, fay"):
        ActionMatcher(table, policy="loudest")


def test_cue_carries_the_rules_sentiment_hint_and_no_match_can_give_no_cue(shipped_lexicon, tmp_path):
    table = load_rules(rules_file(tmp_path, "x.only,celebrate,excited,0.9,50,1.6,zebra"))
    idle, fay = CueEngine(table, shipped_lexicon), CueEngine(table, shipped_lexicon, policy="fay", no_match="none")
    cue = fay.cue("a zebra!")
    assert (cue.code, cue.sentiment_hint, cue.match_policy) == ("x.only", 1.6, "fay")
    assert cue.as_dict()["sentiment_hint"] == 1.6 and cue.as_dict()["sentiment_hint_scale"] == "fay:-2..2"
    default = idle.cue("今天星期三")
    assert (default.code, default.sentiment_hint) == (DEFAULT_CODE, 0.0)
    assert fay.cue("今天星期三") is None, "Fay sends no Action when no rule matches"
    analysis = fay.analyse("今天星期三")
    assert analysis.cue is None and analysis.match.winner is None and analysis.text == "今天星期三"
    assert fay.with_tables(table, shipped_lexicon).cue("今天星期三") is None, "a reload keeps the options"
    with pytest.raises(ValueError, match="no_match 'silent' is not one of idle, none"):
        CueEngine(table, shipped_lexicon, no_match="silent")


def test_match_reports_keywords_as_written_and_negated_ones(tmp_path):
    table = load_rules(rules_file(tmp_path, "x.agree,nod,smile,0.5,50,0,Of Course|Sure|是的"))
    match = ActionMatcher(table, NEGATION).match("of course, SURE, of course")
    assert match.winner.keywords == ("Of Course", "Sure")
    assert ActionMatcher(table, NEGATION).match("not sure").winner is None
    assert ActionMatcher(table, NEGATION).match("not sure").negated == ("Sure",)


# ---- sentiment -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, raw",
    [
        ("今天天气很好", 1.0),
        ("我好开心", 3.0),  # 好 +1, 开心 +2
        ("太好了", 2.0),  # longest: not also 好 +1
        ("我不开心", -2.0),  # negated: sign flips
        ("not bad", 1.0),
        ("好奇怪", 0.0),  # guard 好奇 (weight 0) stops 好
        ("好的！", 1.3),  # ! lifts by 0.3
        ("好的！！！", 1.3),  # once, however often
        ("好吧……", 0.7),  # ellipsis (… folds to ...) lowers by 0.3
        ("太糟糕了。。", -2.3),
        ("", 0.0),
    ],
)
def test_sentiment_follows_fay_lists_with_longest_match_and_negation(scorer, text, raw):
    assert scorer.score(text).raw == pytest.approx(raw)


def test_sentiment_scale_is_raw_over_four_clamped(scorer):
    from fay_msgs.msg import ActionCue

    assert SCALE_NAME == ActionCue.SENTIMENT_SCALE
    assert scorer.score("开心").value == pytest.approx(0.5)
    assert scorer.score("开心，太好了，完美，激动！").value == 1.0
    assert scorer.score("痛苦，绝望，崩溃").value == -1.0


def test_default_cue_affect_follows_sentiment(shipped_lexicon, tmp_path):
    engine = CueEngine(load_rules(rules_file(tmp_path, "x.only,nod,smile,0.5,50,0,zebra")), shipped_lexicon)
    happy, sad, flat = engine.cue("今天我很开心"), engine.cue("我好难过，好痛苦"), engine.cue("今天星期三")
    assert (happy.code, happy.behavior, happy.affect) == (DEFAULT_CODE, "idle", "smile")
    assert (sad.code, sad.affect) == (DEFAULT_CODE, "sad")
    assert (flat.code, flat.affect, flat.matched_keywords) == (DEFAULT_CODE, "neutral", ())
    assert happy.intensity > flat.intensity
    assert [default_affect(s) for s in (0.25, 0.2, -0.2, -0.25)] == ["smile", "neutral", "neutral", "sad"]


# ---- the shipped tables ----------------------------------------------------------------

REQUIRED_BEHAVIORS = {
    "wave",
    "bow",
    "invite",
    "explain",
    "think",
    "nod",
    "shake",
    "warn",
    "celebrate",
    "comfort",
    "surprise",
    "listen",
    "praise",
    "refuse",
}


def test_shipped_tables_are_valid_bilingual_and_cover_every_situation():
    table = load_rules(SHIPPED_RULES)
    assert table.warnings == ()
    codes = {r.code for r in table.rules}
    for prefix in (
        "greeting",
        "farewell",
        "social.thanks",
        "social.apology",
        "guidance.invite",
        "dialogue.explain",
        "dialogue.think",
        "response.agree",
        "response.disagree",
        "warn",
        "celebrate",
        "comfort",
        "emotion.sad",
        "surprise",
        "listen",
        "praise",
        "refuse",
    ):
        assert any(code.startswith(prefix) for code in codes), prefix
    assert REQUIRED_BEHAVIORS <= {r.behavior for r in table.rules}
    assert {r.behavior for r in table.rules} <= set(BEHAVIORS)
    assert {r.affect for r in table.rules} <= set(AFFECTS)
    for rule in table.rules:
        assert any(not k.isascii() for k in rule.keywords), f"{rule.code} has no Chinese keyword"
        assert any(k.isascii() for k in rule.keywords), f"{rule.code} has no English keyword"
    assert all(-2 <= r.sentiment_hint <= 2 for r in table.rules)
    hints = {r.code: r.sentiment_hint for r in table.rules}
    assert (hints["guidance.invite"], hints["emotion.sad"]) == (1.0, -1.4), "on Fay's -2..2 scale"
    lexicon = load_lexicon(SHIPPED_LEXICON)
    assert {w for w in lexicon.words.values()} == {-2, -1, 0, 1, 2}
    assert "不" in lexicon.negation.cjk_negators and "not" in lexicon.negation.latin_negators


# ---- table validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "row, problem",
    [
        ("Bad Code,nod,smile,0.5,50,0,好", "code 'Bad Code' must be dotted"),
        ("a.b,Nod,smile,0.5,50,0,好", "behavior 'Nod' must be one lower-case word"),
        ("a.b,nod,big grin,0.5,50,0,好", "affect 'big grin' must be one lower-case word"),
        ("a.b,,smile,0.5,50,0,好", "behavior '' must be one lower-case word"),
        ("a.b,nod,smile,1.5,50,0,好", "intensity 1.5 is outside 0..1"),
        ("a.b,nod,smile,nan,50,0,好", "intensity nan is outside 0..1"),
        ("a.b,nod,smile,high,50,0,好", "intensity 'high' is not a number"),
        ("a.b,nod,smile,0.5,101,0,好", "priority 101 is outside 0..100"),
        ("a.b,nod,smile,0.5,5.5,0,好", "priority '5.5' is not an integer"),
        ("a.b,nod,smile,0.5,50,2.5,好", "sentimentHint 2.5 is outside -2..2"),
        ("a.b,nod,smile,0.5,50,-2.01,好", "sentimentHint -2.01 is outside -2..2"),
        ("a.b,nod,smile,0.5,50,0,", "no keywords"),
        ("a.b,nod,smile,0.5,50,0,|", "no keywords"),
        ("a.b,nod,smile,0.5,50,0,好,行", "beyond the header's columns"),
        ("a.b,nod,smile,0.5", "fewer than the header"),
    ],
)
def test_a_bad_row_is_rejected_naming_file_line_and_problem(tmp_path, row, problem):
    path = rules_file(tmp_path, "ok.first,nod,smile,0.5,50,0,好的", row)
    with pytest.raises(TableError) as err:
        load_rules(path)
    assert f"{path}:3: " in str(err.value)
    assert problem in str(err.value)


def test_every_problem_is_listed_and_duplicates_name_both_lines(tmp_path):
    path = rules_file(tmp_path, "a.b,nod,smile,0.5,50,0,好", "# a comment row", "", "a.b,Nodd,smile,0.5,50,0,行")
    with pytest.raises(TableError) as err:
        load_rules(path)
    lines = str(err.value).splitlines()
    assert lines == [
        f"{path}:5: code 'a.b' repeats line 2",
        f"{path}:5: behavior 'Nodd' must be one lower-case word (letters, digits, '_'), e.g. 'nod'",
    ]


def test_file_level_problems(tmp_path):
    cases = {
        "missing.csv": (None, "file not found"),
        "header.csv": ("code,behavior,affect\na.b,nod,smile\n", ":1: header lacks column(s) keywords"),
        "empty.csv": ("\n\n", "empty table"),
        "norows.csv": (HEADER + "\n", "no rules"),
        "gbk.csv": (None, ":3: not UTF-8"),
        "semicolons.csv": (HEADER.replace(",", ";") + "\n", "the file uses ';' between cells"),
    }
    write(tmp_path, "semicolons.csv", cases["semicolons.csv"][0])
    write(tmp_path, "header.csv", cases["header.csv"][0])
    write(tmp_path, "empty.csv", cases["empty.csv"][0])
    write(tmp_path, "norows.csv", cases["norows.csv"][0])
    (tmp_path / "gbk.csv").write_bytes(
        (HEADER + "\na.b,nod,smile,0.5,50,0,ok\nc.d,nod,smile,0.5,50,0,你好\n").encode("gbk")
    )
    for name, (_text, problem) in cases.items():
        with pytest.raises(TableError) as err:
            load_rules(tmp_path / name)
        assert str(tmp_path / name) in str(err.value) and problem in str(err.value), (name, str(err.value))


def test_spreadsheet_habits_are_accepted(tmp_path):
    # BOM, CRLF, reordered and extra columns, a quoted cell with a comma, surrounding spaces.
    text = (
        "\ufeffnote,keywords,code,behavior,affect,intensity,priority,sentimentHint\r\n"
        '"for the door, mostly", 这边请 | this way ,guidance.invite,invite,warm,0.74,82,\r\n'
    )
    table = load_rules(write(tmp_path, "excel.csv", text))
    rule = table.rules[0]
    assert (rule.code, rule.keywords, rule.sentiment_hint, rule.line) == (
        "guidance.invite",
        ("这边请", "this way"),
        0.0,
        2,
    )


def test_warnings_for_shared_repeated_empty_and_punctuated_keywords(tmp_path):
    table = load_rules(
        rules_file(tmp_path, "a.b,nod,smile,0.5,50,0,好的|好的|really?", "c.d,shake,serious,0.5,50,0,好的||行|")
    )
    text = "\n".join(table.warnings)
    assert "'好的' is listed twice" in text
    assert "'好的' of c.d is also a keyword of a.b" in text
    assert "'?' is ignored" in text
    assert f"{tmp_path / 'rules.csv'}:3: empty keyword in '好的||行|' is ignored" in text
    assert table.rules[1].keywords == ("好的", "行"), "empty items are dropped, as Fay does"


def test_a_word_outside_the_vocabulary_is_accepted_with_a_warning(tmp_path):
    path = rules_file(
        tmp_path, "a.b,nodd,smile,0.5,50,0,好", "c.d,dance,grin,0.5,50,0,跳舞", "e.f,dance,smile,0.5,50,0,舞蹈"
    )
    table = load_rules(path)
    assert [(r.behavior, r.affect) for r in table.rules] == [("nodd", "smile"), ("dance", "grin"), ("dance", "smile")]
    assert table.warnings == (
        f"{path}:2: behavior 'nodd' is not in the shared vocabulary: consumers that do not map it use their "
        "default; did you mean 'nod'?",
        f"{path}:3: behavior 'dance' is not in the shared vocabulary: consumers that do not map it use their default",
        f"{path}:3: affect 'grin' is not in the shared vocabulary: consumers that do not map it use their default",
    ), "each unknown word once, with a suggestion when one is close"


def test_optional_columns_get_fay_defaults_and_a_misspelt_column_is_named(tmp_path):
    path = write(tmp_path, "short.csv", "code,behavior,affect,sentimenthint,keywords\na.b,nod,smile,1.5,好\n")
    table = load_rules(path)
    rule = table.rules[0]
    assert (rule.intensity, rule.priority, rule.sentiment_hint) == (0.5, 0, 0.0)
    assert table.warnings == (
        f"{path}:1: column 'sentimenthint' is ignored; did you mean 'sentimentHint'?",
        f"{path}:1: no intensity column: every rule gets 0.5 (Fay's default)",
        f"{path}:1: no priority column: every rule gets 0 (Fay's default)",
        f"{path}:1: no sentimentHint column: every rule gets 0 (Fay's default)",
    )


@pytest.mark.parametrize(
    "row, problem",
    [
        ("word,开心,3", "weight '3' must be one of -2, -1, 0, 1, 2"),
        ("punct,?,0.5x", "is not a number"),
        ("negator,不,1", "takes no weight"),
        ("adverb,很,", "kind 'adverb' is not one of"),
        ("word,好,1", "duplicate word '好' (first on line 2)"),
        ("word,,1", "empty term"),
    ],
)
def test_bad_lexicon_rows_are_rejected(tmp_path, row, problem):
    path = write(tmp_path, "lex.csv", f"kind,term,weight\nword,好,1\n{row}\n")
    with pytest.raises(TableError) as err:
        load_lexicon(path)
    assert f"{path}:3: " in str(err.value) and problem in str(err.value)


# ---- hot reload ------------------------------------------------------------------------


def replace_file(path: Path, text: str) -> None:
    """Save like an editor: write a new file and rename it over the old one."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_watcher_reloads_changes_and_keeps_the_last_good_table(tmp_path):
    rules = rules_file(tmp_path, "a.one,nod,smile,0.5,50,0,apple")
    lexicon = write(tmp_path, "lex.csv", SHIPPED_LEXICON.read_text(encoding="utf-8"))
    watcher = TableWatcher(rules, lexicon)
    assert watcher.poll() == []
    assert watcher.engine.cue("apple").code == "a.one"

    replace_file(rules, HEADER + "\na.two,wave,warm,0.5,50,0,apple\n")
    events = watcher.poll()
    assert [(e.path, e.ok) for e in events] == [(rules, True)]
    assert watcher.engine.cue("apple").code == "a.two"

    replace_file(rules, HEADER + "\na.three,wave,warm,0.5,50,0,apple\nbroken,row\n")
    events = watcher.poll()
    assert [(e.path, e.ok) for e in events] == [(rules, False)]
    assert f"{rules}:3: " in events[0].message and "keeping the last good table" in events[0].message
    assert watcher.engine.cue("apple").code == "a.two"
    assert watcher.poll() == []  # reported once, not on every poll

    os.remove(rules)
    assert "file not found" in watcher.poll()[0].message
    assert watcher.engine.cue("apple").code == "a.two"

    replace_file(lexicon, "kind,term,weight\nword,apple,2\n")
    assert [(e.path, e.ok) for e in watcher.poll()] == [(lexicon, True)]
    assert watcher.engine.cue("apple").sentiment == pytest.approx(0.5)


def test_watcher_refuses_a_bad_table_at_start(tmp_path):
    rules = rules_file(tmp_path, "a.one,nod,smile,0.5,50,0,")
    with pytest.raises(TableError, match=r":2: no keywords"):
        TableWatcher(rules, SHIPPED_LEXICON)
