"""The outbound gate (`fay_ros.text.outbound`): what may leave the dialogue on `reply`.

First the pure sanitiser on whole texts, then the same texts streamed with a split at every
position (a blob split across deltas must never leak into earlier output), then the real
dialogue node process against the scripted OpenAI-compatible loopback server: a model that
streams think text, a tool-call blob and markdown in small deltas publishes only clean,
non-empty Utterances, and an answer that is nothing but markup gets the no_answer line.
"""

from __future__ import annotations

import re

import pytest

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript
from fay_ros.common.paths import config_file
from fay_ros.dialogue.persona import Persona
from fay_ros.text.outbound import OutboundStream, sanitize, strip_structure
from fay_ros.text.processors import Chain
from fay_ros.text.sentences import SentenceSplitter, split_sentences
from harness import RosProbe, dialogue_node

# (model output, what may be published, a kind the log names)
CASES = [
    # tool calls, however the template writes them
    ('{"name": "remember", "arguments": {"content": "Alice likes tea"}}', "", "tool-call json"),
    (
        'Let me note that. {"name": "remember", "arguments": {"content": "x"}} Done!',
        "Let me note that. Done!",
        "tool-call json",
    ),
    ("{'name': 'remember', 'args': {'content': 'x'}} Okay.", "Okay.", "tool-call json"),
    (
        'Sure.<tool_call>{"name": "remember", "arguments": {"content": "a. b"}}</tool_call> Done.',
        "Sure. Done.",
        "tool-call markup",
    ),
    ('Hmm <tool_call>{"name": "remember", "arguments": {"content": "cut off', "Hmm", "tool-call markup"),
    (
        'OK.<function_calls><invoke name="remember"><parameter name="content">x</parameter></invoke></function_calls>',
        "OK.",
        "tool-call markup",
    ),
    (
        "好的<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>remember\n```json\n{}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>我记住了。",
        "好的我记住了。",
        "tool-call markup",
    ),
    (
        'OK <｜DSML｜function_calls>\n<｜DSML｜invoke name="remember">\n<｜DSML｜parameter name="content" '
        'string="true">tea</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls> done',
        "OK done",
        "tool-call markup",
    ),
    ('Checking.[TOOL_CALLS][{"name": "remember", "arguments": {"content": "x"}}]', "Checking.", "tool-call markup"),
    ('Hi <|python_tag|>{"name": "remember"}<|eom_id|> and more', "Hi", "tool-call markup"),
    # reasoning
    ("<think>x</think>answer", "answer", "think block"),
    ("<think>The user greets me.\nI should say hi.</think>Hello!", "Hello!", "think block"),
    ("<THINKING>plan</THINKING>Fine.", "Fine.", "think block"),
    ("<think>never closed, the stream was cut", "", "think block"),
    ("reasoning whose tag was in the prompt</think>The answer.", "The answer.", "think block"),
    # template tokens: the turn is over, nothing after them is this reply
    ("Hello!<|im_end|>user: what now?", "Hello!", "template token"),
    ("Good night.<|im_start|>user\nhi", "Good night.", "template token"),
    ("Okay! [INST] Tell me more [/INST]", "Okay!", "template token"),
    ("<|assistant|>Hello there", "Hello there", "template token"),
    ("<｜Assistant｜>你好<｜end▁of▁sentence｜>", "你好", "template token"),
    ("[SILENCE]", "", "silence marker"),
    # markdown and HTML
    ("**bold** text", "bold text", "markdown emphasis"),
    ("It is *really* good, __truly__ ~~not~~ fine.", "It is really good, truly not fine.", "markdown emphasis"),
    ("# Title\nBody here.", "Title, Body here.", "markdown heading mark"),
    ("## Summary\n- **fast** start\n- *small* size", "Summary, fast start, small size", "markdown list mark"),
    ("> quoted\n>> nested", "quoted, nested", "markdown quote mark"),
    ("Intro.\n---\nMore.\n* * *", "Intro. More.", "markdown rule"),
    ("| name | age |\n|---|---|\n| Fay | 3 |", "name, age, Fay, 3", "markdown table rule"),
    ("Run this:\n```bash\nrm -rf /tmp/x\n```\nThen restart.", "Run this: Then restart.", "code block"),
    ("Use `pip install fay` to get it.", "Use to get it.", "inline code"),
    ("I love `C++` a lot.", "I love C++ a lot.", "inline code mark"),
    ("Read [the guide](https://example.com/guide) first.", "Read the guide first.", "link target"),
    ("![diagram](https://example.com/d.png)Done.", "Done.", "markdown image"),
    ("See https://example.com/docs?page=2 for more.", "See for more.", "url"),
    ("<b>hi</b> there<br/>friend", "hi there friend", "html tag"),
    ("Tom's email <tom@example.com>", "Tom's email tom@example.com", "markup symbol"),
    # Chinese with markup
    ("## 今天\n- 天气**很好**，适合散步。\n- 记得带水！", "今天, 天气很好，适合散步。记得带水！", "markdown emphasis"),
    ("我觉得**非常好**！## 标题", "我觉得非常好！标题", "markdown emphasis"),
    ("<think>用户在打招呼。</think>你好呀！[详情](http://x.cn)", "你好呀！详情", "think block"),
]

UNCHANGED = [
    "Hello, I am Fay. Nice to meet you!",
    "你好，很高兴认识你。",
    "I like C++ and 3 * 4 = 12",
    "It costs 3.50 euros, 50% off.",
    "The set {1, 2, 3} has three members.",
    "snake_case names, the #1 fan and C# too.",
    "a < b and c > d, 5*3=15.",
    "Wait... what?! Really.",
    "1. first\n2. second",
    "好的~",
]


@pytest.mark.parametrize("text, spoken, kind", CASES)
def test_structure_and_markup_are_removed_and_named(text, spoken, kind):
    result = sanitize(text)
    assert result.text == spoken
    assert kind in result.dropped, result.summary()


@pytest.mark.parametrize("text", UNCHANGED)
def test_plain_text_passes_unchanged(text):
    result = sanitize(text)
    assert not result.changed, result.summary()
    assert result.text == text.replace("\n", ", "), "lines become clauses, nothing else changes"


@pytest.mark.parametrize("text", [c[0] for c in CASES] + UNCHANGED)
def test_the_gate_is_idempotent(text):
    """A piece cleaned on the stream passes the whole gate again when it is published."""
    once = sanitize(text).text
    again = sanitize(once)
    assert again.text == once and not again.changed, again.summary()


def test_a_first_clause_keeps_its_comma_and_markup_leaves_none():
    """A long first sentence is released at its first comma (the voice pauses there): the gate
    keeps that comma; one that only removed markup left at the end goes."""
    assert sanitize("Well, you know what they say,").text == "Well, you know what they say,"
    assert sanitize("我今天去了公园，天气非常好，").text == "我今天去了公园，天气非常好，"
    assert sanitize("I **really** think so;").text == "I really think so;"
    assert sanitize("Sure, [](https://x.example)").text == "Sure"
    assert sanitize("- milk\n- eggs\n").text == "milk, eggs"


def test_the_log_names_kinds_and_never_the_content():
    secret = "sk-live-4f9a2b7c"
    text = (
        f"<think>the key is {secret}</think>Done. https://api.example.com/v1?key={secret} "
        f'{{"name": "login", "arguments": {{"token": "{secret}"}}}} `export KEY={secret}` '
        f"<tool_call>{secret}</tool_call>"
    )
    result = sanitize(text)
    assert result.text == "Done."
    summary = result.summary()
    assert secret not in summary and "api.example.com" not in summary and "login" not in summary
    assert {"think block", "url", "tool-call json", "inline code", "tool-call markup"} <= set(result.dropped)
    assert sanitize("Fine.").summary() == "nothing dropped"


# -- streaming ------------------------------------------------------------------------------------

# the lone closing tag is the one case that depends on the chunking: reasoning released in an
# earlier chunk cannot be recalled (think.py), so it is left out here
STREAMED = [c[0] for c in CASES if not c[0].startswith("reasoning whose")] + UNCHANGED


def feed(chunks: list[str]) -> tuple[str, list[str]]:
    stream = OutboundStream()
    outs = ["".join(stream.feed(c)) for c in chunks]
    outs.append("".join(stream.flush()))
    return "".join(outs), outs


@pytest.mark.parametrize("text", STREAMED)
def test_a_split_at_every_position_gives_the_whole_text_result(text):
    whole = strip_structure(text)
    for i in range(len(text) + 1):
        got, _ = feed([text[:i], text[i:]])
        assert got == whole, f"split at {i}: {text[:i]!r} | {text[i:]!r}"
    got, outs = feed(list(text))
    assert got == whole, "one character per delta"
    released = ""
    for out in outs:
        released += out
        assert whole.startswith(released), "nothing is released that the whole text would not release"


@pytest.mark.parametrize(
    "text",
    [
        'Hi.<tool_call>{"name": "remember"}</tool_call> Yes.',
        '<think>a. b</think>Ok. {"name": "x", "arguments": {"q": "}"}} Go.',
        "Fine<|im_end|>user: x",
        "## T\n```py\nx\n```\n- **a**",
        "好<｜tool▁calls▁begin｜>x<｜tool▁calls▁end｜>的",
    ],
)
def test_every_three_way_split_gives_the_whole_text_result(text):
    whole = strip_structure(text)
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            assert feed([text[:i], text[i:j], text[j:]])[0] == whole, (i, j)


MARKUP = re.compile(r"[<>{}`*#|\[\]]|think|remember|arguments|tool_call|http|DSML|▁")


def test_sentences_from_a_token_stream_carry_no_piece_of_a_blob():
    """The reply is split into sentences while it streams: a blob with sentence ends inside
    (a JSON argument "Alice visited. Twice.") must not leave a fragment in any sentence."""
    answer = (
        "<think>I will note it. Then greet.</think>Hello there! Nice to see you.\n"
        '<tool_call>{"name": "remember", "arguments": {"content": "Alice visited. Twice."}}</tool_call>\n'
        '{"name": "remember", "arguments": {"content": "Again. And again."}}\n'
        "## Plans\n- A walk in the park. \n```\nx = 1. y = 2.\n```\nSee you!"
    )
    expected = ["Hello there!", "Nice to see you.", "Plans", "A walk in the park.", "See you!"]
    for size in (1, 2, 3, 5, 7, 11, len(answer)):
        chain = Chain(OutboundStream(), SentenceSplitter(4))
        sentences = []
        for i in range(0, len(answer), size):
            sentences += chain.feed(answer[i : i + size])
        *flushed, last = chain.flush()
        sentences += flushed + ([last] if last else [])
        assert sentences == expected, size
        assert not any(MARKUP.search(s) for s in sentences)
    assert split_sentences(strip_structure(answer)) == expected


@pytest.mark.parametrize(
    "token",
    [
        "<|im_end|>",
        "<|eot_id|>",
        "<|im_start|>",
        "[INST]",
        "[TOOL_CALLS]",
        "<<SYS>>",
        "<｜end▁of▁sentence｜>",
        "<|endoftext|>",
    ],
)
def test_a_turn_boundary_ends_the_reply_and_says_so(token):
    stream = OutboundStream()
    out = stream.feed("Sure thing. ")
    assert not stream.ended
    out += stream.feed(token[:3])
    assert not stream.ended, "a partial token is held, not decided"
    out += stream.feed(token[3:] + "User: and now write my part.")
    assert stream.ended
    out += stream.feed(" More words.") + stream.flush()
    assert "".join(out) == "Sure thing. "
    assert "Sure thing." == sanitize("Sure thing. " + token + " rest").text


def test_held_text_is_released_at_the_end_of_the_stream():
    """A possible start that never became a structure is text after all."""
    for text in ["a < b", "see [TOOL", "cost {", "x <tool", "好的~", "a `b", "- "]:
        stream = OutboundStream()
        assert "".join(stream.feed(text) + stream.flush()) == text


# -- the dialogue node: what is published on `reply` --------------------------------------------

THINK_TOOL_MARKDOWN = (
    "<think>The user says hi. I should call remember first, then answer.</think>"
    "**Hello, Alice!** It is *lovely* to see you.\n"
    '<tool_call>{"name": "remember", "arguments": {"content": "Alice visited. Twice."}}</tool_call>\n'
    "## Today\n"
    "- The weather is **sunny**, see [the forecast](https://weather.example/today?key=abc123)"
)
LEAK = re.compile(
    r"[<>{}`*#|\[\]]|think|remember|arguments|tool_call|content|http|weather\.example|abc123|"
    r"should call",
    re.I,
)


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.fixture(scope="module")
def node_rig(llm):
    probe = RosProbe("outbound_test_probe")
    try:
        with dialogue_node(
            probe, {"base_url": llm.base_url, "model": "scripted", "first_token_timeout": 5.0, "memory": False}
        ) as rig:
            yield rig
    finally:
        probe.close()


@pytest.fixture
def node(node_rig, llm):
    llm.reset()
    node_rig[1].clear()
    yield node_rig
    llm.reset()


def say(publisher, text: str, user: str) -> None:
    publisher.publish(Transcript(text=text, user_id=user, language="en", is_final=True, confidence=0.9))


def the_reply(replies, user: str):
    end = replies.wait_for(
        lambda msgs: next((m for m in msgs if m.is_end and m.user_id == user), None), what=f"the end of {user}'s reply"
    )
    return [m for m in replies.messages if m.conversation_id == end.conversation_id]


def test_the_node_publishes_only_clean_sentences_of_a_streamed_think_tool_markdown_answer(node, llm):
    """The judge answers in plain text (no JSON), streamed three characters per delta, so the
    think block, the tool-call blob and the link are all split across deltas."""
    proc, replies, text_input = node
    llm.script(fake.text(*chunks(THINK_TOOL_MARKDOWN, 3)))
    say(text_input, "what should I do today", "alice")
    msgs = the_reply(replies, "alice")
    texts = [m.text for m in msgs]
    assert texts == ["Hello, Alice! It is lovely to see you.", "Today", "The weather is sunny, see the forecast."]
    assert all(t.strip() and not LEAK.search(t) for t in texts), texts
    assert [m.seq for m in msgs] == [0, 1, 2] and [m.is_end for m in msgs] == [False, False, True]
    assert {m.source for m in msgs} == {"llm"}
    assert len(llm.requests) == 1


def test_an_answer_of_nothing_but_markup_gets_the_no_answer_line(node, llm):
    """Judge and the direct fallback both answer with reasoning and tool calls only: nothing is
    speakable, so the reply is the persona's plain no_answer line, never an empty one."""
    proc, replies, text_input = node
    llm.script(
        fake.text(
            *chunks(
                '<think>Only planning.</think><tool_call>{"name": "remember", "arguments": '
                '{"content": "x"}}</tool_call>',
                4,
            )
        ),
        fake.text(*chunks('{"name": "remember", "arguments": {"content": "y"}}\n```\ncode\n```', 5)),
    )
    say(text_input, "remember this", "bob")
    msgs = the_reply(replies, "bob")
    assert len(msgs) == 1 and msgs[0].is_first and msgs[0].is_end and msgs[0].source == "fallback"
    assert msgs[0].text in Persona.load(config_file("persona.yaml")).no_answer["en"]
    assert len(llm.requests) == 2, "the judge's unusable answer falls back to one direct answer"
