"""WER/CER scoring (fay_ros.hearing.scoring) and the text guards of the whisper backend
(repeated-phrase filter, Chinese script): pure text, no model."""

from __future__ import annotations

import pytest

from fay_ros.hearing.scoring import (
    Score,
    chinese_number,
    is_chinese,
    max_repeats,
    normalize_chinese,
    normalize_english,
    number_words,
    score,
)
from fay_ros.hearing.whisper_backend import collapse_repeats, convert_script


def test_english_normalisation_forgives_case_punctuation_numbers_and_spellings():
    assert normalize_english("Go forward 10 metres!") == ["go", "forward", "ten", "meters"]
    assert normalize_english("And Mr. John Dashwood, cold-hearted") == [
        "and",
        "mister",
        "john",
        "dashwood",
        "cold",
        "hearted",
    ]
    assert normalize_english("It's 9 o'clock on the 21st.") == "its nine oclock on the twenty first".split()
    assert score("go forward ten meters", "Go forward, 10 meters.") == Score(0, 4, "word")
    # a LibriVox reference in Project Gutenberg's British spelling, heard in Whisper's American
    reference = "HER FAVOURITE COLOUR WAS GREY AND SHE LOVED THE THEATRE"
    assert score(reference, "Her favorite color was gray, and she loved the theater.") == Score(0, 10, "word")
    assert score("the colour", "the collar").errors == 1  # (a different word stays one)


def test_english_numbers_read_out():
    assert number_words("1961") == "nineteen sixty one"
    assert number_words("2005") == "two thousand five"
    assert number_words("342") == "three hundred forty two"
    assert number_words("007") == "zero zero seven"
    assert normalize_english("10,000 and 2.5") == "ten thousand and two point five".split()


def test_wer_counts_substitutions_deletions_and_insertions():
    s = score("ask what you can do for your country", "as but you can do it")
    assert s.unit == "word" and s.length == 8
    assert s.errors == 5  # ask->as, what->but, for->it, your and country deleted
    assert s.rate == pytest.approx(5 / 8)
    assert score("hello there", "hello there there there").errors == 2
    assert (Score(1, 4) + Score(2, 6)).rate == pytest.approx(0.3)


def test_chinese_cer_folds_script_numerals_and_punctuation():
    assert is_chinese("今天天气很好。") and not is_chinese("good morning")
    assert normalize_chinese("我們今天說話，好嗎？") == list("我们今天说话好吗")
    assert score("我们今天说话", "我們今天說話。") == Score(0, 6, "char")
    assert score("明天早上九点提醒我", "明天早上9点提醒我。") == Score(0, 9, "char")
    assert score("我有两个苹果", "我有2个苹果") == Score(0, 6, "char")
    assert score("今天天气很好", "今天天汽很好").errors == 1
    assert chinese_number("15") == "十五" and chinese_number("105") == "一百零五"
    assert chinese_number("2024", "年") == "二零二四"
    assert normalize_chinese("打开Wi Fi") == ["打", "开", "wi", "fi"]


def test_max_repeats_finds_a_loop():
    looped = "Try again. Fail again. Fail again. Fail again. Fail again. Fail better."
    assert max_repeats(looped) == 5  # "again fail" five times
    assert max_repeats("Try again. Fail again. Fail better.") == 2
    assert max_repeats("谢谢你谢谢你谢谢你") == 3
    assert max_repeats("no no no") == 1  # single words repeat in real speech


def test_collapse_repeats_keeps_a_looped_phrase_once():
    looped = "Try again. Fail again. Fail again. Fail again. Fail again. Fail better."
    assert collapse_repeats(looped) == "Try again. Fail again. Fail better."
    assert collapse_repeats("我想去我想去我想去公园。") == "我想去公园。"
    for said in ("no no no, not that one", "Fail again, fail again.", "对对对对", "哈哈哈哈", "It is what it is."):
        assert collapse_repeats(said) == said


def test_chinese_script_conversion():
    assert convert_script("這個軟體們說話", "simplified") == "这个软体们说话"
    assert convert_script("这个后面说话", "traditional") == "這個後面說話"
    assert convert_script("這個", "as_is") == "這個"


def test_hesitations_and_annotations_count_on_neither_side():
    # a spontaneous-speech transcript against what Whisper writes for it
    reference = "So, um, I was [laughter] going to uh the <unk> store, hmm."
    assert normalize_english(reference) == "so i was going to the store".split()
    assert score(reference, "So I was going to the store.").errors == 0
    assert normalize_chinese("嗯，我们[笑]今天，呃，去公园吧。") == list("我们今天去公园吧")
    assert score("um I think so", "I think, um, not").errors == 1  # the words still count
