"""Pure text pieces of the dialogue: think stripping, sentence splitting, the streaming judge
parser, JSON from a model, text processor chains, qa.csv loading/matching, persona files, the
tool registry."""

from __future__ import annotations

import asyncio
import json

import pytest

from fay_ros.dialogue.guard import ReplyGuard
from fay_ros.dialogue.judge import JudgeStreamParser
from fay_ros.dialogue.persona import Persona, PersonaError
from fay_ros.dialogue.qa import QaTable, QaTableError, script_tool_name
from fay_ros.dialogue.reply import Reply
from fay_ros.dialogue.tools import Tool, ToolContext, ToolRegistry, canonical_call
from fay_ros.llm.client import Endpoint
from fay_ros.llm.model_json import first_object
from fay_ros.text.outbound import OutboundStream
from fay_ros.text.processors import Chain
from fay_ros.text.sentences import SentenceSplitter, split_sentences
from fay_ros.text.think import ThinkStripper, strip_think
from fay_ros.text.words import has_cjk


def feed_all(feeder, text: str, size: int) -> str:
    """The text a processor gives back, fed `size` characters at a time."""
    return "".join(piece for i in range(0, len(text), size) for piece in feeder.feed(text[i : i + size]))


# -- think -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_think_blocks_are_removed_whatever_the_chunking(size):
    text = "<think>step 1\nstep 2 <b>x</b></think>Hello <there>! <think>again</think>Bye."
    stripper = ThinkStripper()
    out = feed_all(stripper, text, size) + "".join(stripper.flush())
    assert out == "Hello <there>! Bye."


def test_think_edge_cases():
    assert strip_think("reasoning only, no opening tag</think>The answer.") == "The answer."
    assert strip_think("<think>never closed, all reasoning") == ""
    assert strip_think("a < b and c <thin") == "a < b and c <thin"  # a partial tag at the end is text
    stripper = ThinkStripper()  # once answer text went out, a stray closing tag is only dropped
    assert (
        "".join(stripper.feed("Answer first. ") + stripper.feed("Stray </think>tag.") + stripper.flush())
        == "Answer first. Stray tag."
    )


@pytest.mark.parametrize("size", [1, 2, 4, 100])
def test_thinking_tags_in_any_case_are_removed_and_counted(size):
    text = "<THINK>plan</THINK>Hi. <thinking>more plan</thinking>Bye."
    stripper = ThinkStripper()
    assert feed_all(stripper, text, size) + "".join(stripper.flush()) == "Hi. Bye."
    assert stripper.blocks == 2 and stripper.dropped_chars == len(text) - len("Hi. Bye.")


# -- sentences ------------------------------------------------------------------------------------


def test_sentences_split_as_soon_as_complete():
    splitter = SentenceSplitter()
    got = [splitter.feed(c) for c in ["今天天气很好", "。我们去", "公园吧！Pi is 3", ".14 today. OK"]]
    assert got == [[], ["今天天气很好。"], ["我们去公园吧！"], ["Pi is 3.14 today."]]
    assert splitter.flush() == ["OK"]


def test_sentence_rules():
    assert split_sentences("Wait... what?! Really.") == ["Wait...", "what?!", "Really."]
    assert split_sentences("好。我们走吧。") == ["好。我们走吧。"], "a tiny sentence is merged with the next"
    assert split_sentences('He said "hi." Then left.') == ['He said "hi."', "Then left."]
    assert split_sentences("line one\nline two") == ["line one", "line two"]
    assert split_sentences("e.g.this stays together") == ["e.g.this stays together"]


# -- judge parser ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_judge_finish_message_streams_decoded(size):
    message = 'Hi "friend"\n你好😀 — 50% off!'
    raw = "```json\n" + json.dumps({"action": "finish", "message": message}) + "\n```"
    parser = JudgeStreamParser()
    assert feed_all(parser, raw, size) == message
    verdict = parser.close()
    assert verdict.valid and verdict.action == "finish" and verdict.complete and verdict.text == message


def test_judge_message_before_action_is_held_until_the_action_is_known():
    parser = JudgeStreamParser()
    assert parser.feed('{"message": "Hello there", ') == []
    assert parser.feed('"action": "finish"}') == ["Hello there"]
    parser = JudgeStreamParser()
    assert parser.feed('{"message": "hidden", "action": "tool", "keyword": "k"}') == []
    verdict = parser.close()
    assert verdict.action == "tool" and verdict.keyword == "k"


def test_judge_nested_values_and_plain_text_and_garbage():
    parser = JudgeStreamParser()
    parser.feed('{"action": "tool", "extra": {"a": ["}", 1]}, "keyword": "课程A"}')
    assert parser.close().fields == {"action": "tool", "extra": {"a": ["}", 1]}, "keyword": "课程A"}
    parser = JudgeStreamParser()
    assert parser.feed("  Sure! I'm here.") == ["Sure! I'm here."]
    assert parser.close().mode == "text"
    parser = JudgeStreamParser()
    parser.feed('{"action": "dance", "message": "x"}')
    assert not parser.close().valid
    assert JudgeStreamParser().close().mode == "empty"


def test_first_object_tolerates_fences_and_prose():
    assert first_object('ok: {"action": "tool", "tool": "t", "args": {"q": 1}} done') == {
        "action": "tool",
        "tool": "t",
        "args": {"q": 1},
    }
    assert first_object('```json\n{"action": "finish"}\n```') == {"action": "finish"}
    assert first_object("no json here {") is None


# -- qa.csv -----------------------------------------------------------------------------------------


def test_qa_table_loads_and_matches_fuzzily(tmp_path):
    path = tmp_path / "qa.csv"
    path.write_text(
        "问题,答案,脚本\n# a comment, with commas\n你叫什么名字|你是谁,我是Fay,\n"
        '"what is your name",I\'m Fay,\nhow is the weather,"Sunny, warm",tool:current_time\n',
        encoding="utf-8",
    )
    table = QaTable.load(path)
    assert [e.line for e in table.entries] == [3, 4, 5]
    assert table.match("你叫什么名字呀？").answer == "我是Fay"
    assert table.match("What is your name?").answer == "I'm Fay"
    assert table.match("how are you") is None
    assert table.match("你好，明天天气怎么样") is None
    assert table.match("How is the weather").entry.script == "tool:current_time"


@pytest.mark.parametrize(
    "content, where, what",
    [
        ("问题,答案\n你好,你好呀\n只有问题\n", ":3", "expected '问题,答案[,脚本]'"),
        ("a,b,c,d\n", ":1", "at most 3 columns"),
        ("你好,\n", ":1", "empty answer"),
        ("|,answer\n", ":1", "empty question"),
    ],
)
def test_malformed_qa_rows_name_file_and_line(tmp_path, content, where, what):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QaTableError) as err:
        QaTable.load(path)
    assert f"{path}{where}" in str(err.value) and what in str(err.value)


def test_qa_missing_or_binary_file(tmp_path):
    with pytest.raises(QaTableError, match="not found"):
        QaTable.load(tmp_path / "none.csv")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(QaTableError, match="not UTF-8"):
        QaTable.load(tmp_path / "bin.csv")


def test_script_cells_only_name_tools():
    assert script_tool_name("tool:current_time") == "current_time"
    assert script_tool_name("current_time") == "current_time"
    assert script_tool_name("rm -rf /") == ""
    assert script_tool_name("python -c 'import os'") == ""
    assert script_tool_name("__import__('os').system('x')") == ""


# -- persona ------------------------------------------------------------------------------------------


def test_persona_files(tmp_path):
    persona = Persona.load(__import__("pathlib").Path(__file__).parents[1] / "config" / "persona.yaml")
    assert persona.name == "Fay" and persona.line("apology", "zh").startswith("抱歉")
    assert persona.line("filler", "fr") == persona.fillers["en"][0], "unknown language falls back to English"
    bad = tmp_path / "p.yaml"
    bad.write_text("fillers: {en: []}\n", encoding="utf-8")
    with pytest.raises(PersonaError, match=r"p\.yaml: fillers"):
        Persona.load(bad)
    bad.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(PersonaError, match="invalid YAML"):
        Persona.load(bad)
    bad.write_text("prestart: [{tool: x, args: {q: '{{question}} now'}}]\n", encoding="utf-8")
    assert Persona.load(bad).prestart[0].render_args("几点") == {"q": "几点 now"}


# -- tools and secrets -----------------------------------------------------------------------------------


def test_registry_strips_identity_arguments_and_reports_bad_calls():
    registry = ToolRegistry()
    seen = []

    @registry.tool("echo", "Echo.", {"text": {"type": "string"}}, required=("text",))
    async def echo(args, ctx):
        seen.append((args, ctx.owner))
        return args["text"]

    ctx = ToolContext(owner="alice", question="q")
    assert asyncio.run(registry.run("echo", {"text": "hi", "owner": "bob", "user_id": "eve"}, ctx)) == "hi"
    assert seen == [({"text": "hi"}, "alice")]
    with pytest.raises(Exception, match="needs argument"):
        asyncio.run(registry.run("echo", {}, ctx))
    with pytest.raises(Exception, match="unknown tool 'nope'"):
        asyncio.run(registry.run("nope", {}, ctx))
    with pytest.raises(ValueError, match="already registered"):
        registry.add(Tool("echo", "again", {}, echo))
    assert canonical_call("t", {"b": 1, "a": 2, "owner": "x"}) == canonical_call("t", {"a": 2, "b": 1})


def test_api_key_never_in_repr():
    endpoint = Endpoint("https://api.example.invalid/v1", "m", "sk-VERY-SECRET")
    assert "sk-VERY-SECRET" not in repr(endpoint) and "***" in repr(endpoint)


@pytest.mark.parametrize("size", [1, 2, 5, 80])
def test_a_long_first_sentence_is_released_at_its_first_clause(size):
    text = "Well, you know what they say, there's a lot to see in this world. But, one thing, is certain. "
    splitter = SentenceSplitter(4, first_clause_chars=24)
    out = [s for i in range(0, len(text), size) for s in splitter.feed(text[i : i + size])]
    assert out == [
        "Well, you know what they say,",
        "there's a lot to see in this world.",
        "But, one thing, is certain.",
    ], "only the first piece, only once it is long enough"
    short = SentenceSplitter(4, first_clause_chars=24)
    assert short.feed("Hello there, nice to see you. Fine, thanks. ") == [
        "Hello there, nice to see you.",
        "Fine, thanks.",
    ]
    assert SentenceSplitter(4).feed("Well, you know what they say, it is fine. ") == [
        "Well, you know what they say, it is fine."
    ], "off by default"
    assert SentenceSplitter(4, 10).feed("我今天去了公园，天气非常好，我们玩得很开心。") == [
        "我今天去了公园，天气非常好，",
        "我们玩得很开心。",
    ]
    assert SentenceSplitter(4, 10).feed("The value is 3,5 or so and more, really. ") == [
        "The value is 3,5 or so and more,",
        "really.",
    ], "a comma inside a number is no clause break"


# -- text processor chains -------------------------------------------------------------------------


def test_a_chain_feeds_each_stage_and_stops_where_a_stage_ended():
    chain = Chain(ThinkStripper(), OutboundStream(), SentenceSplitter(4))
    chunks = ["<thi", "nk>Plan. More.</think>Hello there! How", " are you? Fine", "<|im_end|>Ignored. Text"]
    got = [chain.feed(c) for c in chunks]
    assert got == [[], ["Hello there!"], ["How are you?"], []]
    assert chain.ended, "the template token ended the answer"
    *sentences, rest = chain.flush()
    assert sentences == [] and rest == "Fine", "the splitter's unfinished rest comes last"


def test_a_chain_flush_releases_what_each_stage_held_in_order():
    filters = Chain(ThinkStripper(), OutboundStream())
    assert filters.feed("a <thin") == ["a "] and filters.flush() == ["<thin"], "a partial tag was text after all"
    spoken = Chain(OutboundStream(), SentenceSplitter(4))
    assert spoken.feed("Sure. {") == ["Sure."]
    assert spoken.flush() == ["{"], "held by the gate, then the splitter's rest"
    assert spoken.feed("Done. ") == ["Done."] and spoken.flush() == [""], "ended on a sentence end: an empty rest"


# -- one reply -------------------------------------------------------------------------------------


def test_a_reply_numbers_its_pieces_and_never_ends_empty():
    pieces = []
    reply = Reply(pieces.append, "tom", "tom-1", replace=True, no_answer="Sorry, say again?")
    assert reply.say("Hello **there**!", "llm") and not reply.say("```print(1)```", "llm")
    assert not reply.end("", "llm")
    assert [(p.seq, p.text, p.is_first, p.is_end, p.replace) for p in pieces] == [
        (0, "Hello there!", True, False, True),
        (1, "", False, True, False),
    ]
    assert reply.spoken == ["Hello there!"] and "code block" in reply.dropped

    pieces.clear()
    filler_only = Reply(pieces.append, "tom", "tom-2", replace=False, no_answer="Sorry, say again?")
    filler_only.say("One moment.", "filler")
    assert filler_only.end("<tool_call>{}</tool_call>"), "nothing but the filler was said"
    assert [(p.text, p.source, p.is_end) for p in pieces] == [
        ("One moment.", "filler", False),
        ("Sorry, say again?", "fallback", True),
    ]

    pieces.clear()
    broadcast = Reply(pieces.append, "tom", "tom-3", replace=False, no_answer="")
    assert broadcast.say_whole("```secret```", "broadcast", 4) and pieces == [], "nobody asked: nothing is sent"

    cut = Reply(pieces.append, "tom", "tom-4", replace=False)
    cut.say("First.", "llm")
    cut.cut()
    assert [(p.text, p.is_end) for p in pieces] == [("First.", False), ("", True)]


# -- CJK -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "char, cjk",
    [
        ("中", True),
        ("㐀", True),
        ("豈", True),
        ("\U00020000", True),
        ("〇", True),  # main block, Ext A, compat, Ext B
        ("あ", False),
        ("한", False),
        ("。", False),
        ("䷀", False),
        ("A", False),  # kana, hangul, punctuation, hexagram
    ],
)
def test_one_definition_of_a_cjk_character(char, cjk):
    assert has_cjk(f"x{char}y") is cjk


def test_the_guard_ends_a_sentence_in_any_cjk_ideograph_with_the_chinese_stop():
    """The guard once knew only the main block (U+4E00-U+9FFF): an Extension A ending got "."."""
    assert ReplyGuard().finish("我们去看看㐀", cut_by_limit=False).text == "我们去看看㐀。"
    assert ReplyGuard().finish("See you", cut_by_limit=False).text == "See you."
