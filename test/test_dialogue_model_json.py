"""JSON written by a model (`fay_ros.llm.model_json`, pydantic_core's parser underneath),
whole (the tool loop's actions, the memory's reflection) and while it streams (the chat
judge's verdict, `judge.JudgeStreamParser`)."""

from __future__ import annotations

import json

import pytest

from fay_ros.dialogue.judge import JudgeStreamParser
from fay_ros.llm.client import LlmError, parse_json_object
from fay_ros.llm.model_json import first_object, read_partial


def feed_all(parser: JudgeStreamParser, text: str, size: int) -> str:
    """Everything the parser releases, fed `size` characters at a time, flush included."""
    out = [piece for i in range(0, len(text), size) for piece in parser.feed(text[i : i + size])]
    return "".join(out + parser.flush())


# -- whole answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('Sure! ```json\n{"insights": []}\n``` Hope that helps.', {"insights": []}),
        ('{"broken": } and then {"ok": true}', {"ok": True}),  # an object that does not parse is passed over
        ('{"a": {"b": "}"}} {"c": 1}', {"a": {"b": "}"}}),  # the first one, braces inside strings included
        ('a list [1, 2] first, then {"k": "v"}', {"k": "v"}),
        ("no object here {", None),
        ('{"a": [1, 2]', None),  # cut off
        ('["only", "a", "list"]', None),
    ],
)
def test_first_object_finds_the_object_whatever_is_around_it(text, expected):
    assert first_object(text) == expected


def test_the_memory_and_the_tool_loop_read_answers_by_the_same_rule():
    """llm.parse_json_object (reflection, portrait) is first_object with an LlmError for none:
    the fence markers it used to cut out are just text around the object now."""
    answer = 'Here you go:\n```json\n{"insights": [{"text": "Likes tea"}]}\n```\nAnything {else}?'
    assert parse_json_object(answer) == first_object(answer) == {"insights": [{"text": "Likes tea"}]}
    with pytest.raises(LlmError, match="holds no JSON object"):
        parse_json_object("I have no insights today.")


def test_model_slips_are_read_leniently_and_valid_json_is_untouched():
    # a newline typed inside a string and a Python-style escaped apostrophe: not JSON, meant as text
    assert first_object('{"m": "two\nlines", "q": "it\\\'s"}') == {"m": "two\nlines", "q": "it's"}
    value = {"quote": 'say "hi"\\', "ctl": "\t\n\u0001", "uni": "é😀中", "n": [1, 2.5, None, True], "o": {"x": "}{"}}
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        assert first_object(f"prose {text} prose") == value


def test_a_partial_object_holds_closed_values_and_the_string_being_written():
    read = read_partial('{"action": "fin')
    assert read.values == {} and read.open_string == ("action", "fin") and not read.complete
    read = read_partial('{"action": "finish", "message": "Hi \\u00')  # an escape cut in half is not text yet
    assert read.values == {"action": "finish"} and read.open_string == ("message", "Hi ") and not read.complete
    read = read_partial('{"a": 1}\n```')
    assert read.values == {"a": 1} and read.complete and not read.broken
    read = read_partial('{"a": "x", oops "b": "y"}')
    assert read.values == {"a": "x"} and read.broken and not read.complete


# -- the judge's streamed verdict -----------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_a_judge_message_with_model_slips_streams_whole(size):
    raw = '{"action": "finish", "message": "Line one.\nIt\\\'s fine."}'
    parser = JudgeStreamParser()
    assert feed_all(parser, raw, size) == "Line one.\nIt's fine."
    verdict = parser.close()
    assert verdict.action == "finish" and verdict.complete and verdict.text == "Line one.\nIt's fine."


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_judge_that_derails_keeps_what_it_said_before(size):
    """Whatever the chunking: the part before the verdict stops being JSON stands."""
    raw = '{"action": "finish", "message": "Hello there. ", oops "message": "never said"}'
    parser = JudgeStreamParser()
    assert feed_all(parser, raw, size) == "Hello there. "
    verdict = parser.close()
    assert verdict.action == "finish" and verdict.text == "Hello there. " and not verdict.complete


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_cut_off_verdict_reports_the_message_so_far(size):
    parser = JudgeStreamParser()
    assert feed_all(parser, '{"action": "finish", "message": "Cut off he', size) == "Cut off he"
    verdict = parser.close()
    assert verdict.valid and verdict.text == "Cut off he" and not verdict.complete


def test_nothing_after_the_closed_verdict_is_released():
    parser = JudgeStreamParser()
    raw = '{"action": "finish", "message": "Done."}\nAlso {"action": "tool", "keyword": "x"} and more.'
    assert feed_all(parser, raw, 3) == "Done."
    verdict = parser.close()
    assert verdict.fields == {"action": "finish", "message": "Done."} and verdict.complete


def test_an_answer_too_short_to_decide_is_text_at_the_end():
    parser = JudgeStreamParser()
    assert parser.feed("``") == [], "may still become a ```json fence"
    assert parser.flush() == ["``"] and parser.close().mode == "text"
    blank = JudgeStreamParser()
    assert blank.feed("  \n") == [] and blank.flush() == [] and blank.close().mode == "empty"
