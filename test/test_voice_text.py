"""Voice text handling: outbound sanitising and splitting mixed Chinese/English into runs."""

from __future__ import annotations

import pytest

from fay_ros.text.outbound import sanitize
from fay_ros.voice.language_runs import Run, split_runs
from fay_ros.voice.sanitize import sanitize_for_speech


@pytest.mark.parametrize(
    "text, spoken, kind",
    [
        (
            "<think>The user wants the weather. Call the tool.</think>It is sunny today.",
            "It is sunny today.",
            "think block",
        ),
        ("<think>still reasoning, the stream was cut", "", "think block"),
        ("model reasoning without an opening tag</think>Here you go.", "Here you go.", "think block"),
        (
            'Let me check. {"name": "get_weather", "arguments": {"city": "Paris"}} One moment.',
            "Let me check. One moment.",
            "tool-call json",
        ),
        ('Sure.<tool_call>{"name": "remember"}</tool_call>', "Sure.", "tool-call markup"),
        (
            "好的<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search<｜tool▁call▁end｜>"
            "<｜tool▁calls▁end｜>",
            "好的",
            "tool-call markup",
        ),
        ("Run this:\n```bash\nrm -rf /tmp/x\n```\nThen restart.", "Run this: Then restart.", "code block"),
        ("Use `pip install fay` to get it.", "Use to get it.", "inline code"),
        ("See https://example.com/docs?page=2 for more.", "See for more.", "url"),
        ("详见 www.example.cn/help 。", "详见。", "url"),
        ("Read [the guide](https://example.com/guide) first.", "Read the guide first.", "link target"),
        ("![diagram](https://example.com/d.png)Done.", "Done.", "markdown image"),
        ("## Summary\n- **fast** start\n- *small* size", "Summary, fast start, small size", "markdown emphasis"),
        ("我觉得**非常好**！", "我觉得非常好！", "markdown emphasis"),
        ("| name | age |\n|---|---|\n| Fay | 3 |", "name, age, Fay, 3", "markdown table rule"),
        ("[SILENCE]", "", "silence marker"),
    ],
)
def test_unspeakable_parts_are_dropped_and_named(text, spoken, kind):
    result = sanitize_for_speech(text)
    assert result.text == spoken
    assert kind in result.dropped, result.summary()
    assert kind in result.summary()


def test_plain_sentences_pass_unchanged():
    for text in ["Hello, I am Fay. Nice to meet you!", "你好，很高兴认识你。", "It costs 3.50 euros, 50% off."]:
        result = sanitize_for_speech(text)
        assert result.text == text
        assert not result.changed
        assert result.summary() == "nothing dropped"


def test_summary_never_repeats_dropped_content():
    secret = "sk-live-4f9a2b7c"
    text = (
        f"<think>the key is {secret}</think>Done. https://api.example.com/v1?key={secret} "
        f'{{"name": "login", "arguments": {{"token": "{secret}"}}}} `export KEY={secret}`'
    )
    result = sanitize_for_speech(text)
    assert result.text == "Done."
    summary = result.summary()
    assert secret not in summary and "api.example.com" not in summary
    assert {"think block", "url", "tool-call json", "inline code"} <= set(result.dropped)


def test_json_without_keys_and_braces_in_prose_are_kept_as_words():
    result = sanitize_for_speech("The set {1, 2, 3} has three members.")
    assert result.text == "The set 1, 2, 3 has three members."
    assert "json" not in result.dropped
    assert "symbol" in result.dropped, "braces are kept on the reply, but not read out as 'left brace'"


@pytest.mark.parametrize(
    "text",
    [
        "Hello **there**, see https://example.com/x. 我喜欢Python。",
        '<think>plan</think>Sure. {"name": "remember", "arguments": {}} Done!',
        "## Plan\n- a *quiet* walk\n- tea at `five`",
        "I like C++ and 3 * 4 = 12",
    ],
)
def test_the_voice_runs_the_dialogue_gate_and_finds_nothing_left_in_what_the_dialogue_published(text):
    """One implementation: the voice's cleaning is the dialogue's outbound gate (plus symbols
    a synthesizer would name), so text that already passed the gate passes it unchanged."""
    published = sanitize(text).text
    assert sanitize_for_speech(text).text == published
    again = sanitize_for_speech(published)
    assert again.text == published and not again.changed


@pytest.mark.parametrize(
    "text, runs",
    [
        ("我喜欢用Python编程。", [Run("zh", "我喜欢用"), Run("en", "Python"), Run("zh", "编程。")]),
        ("Hello, 你好", [Run("en", "Hello,"), Run("zh", " 你好")]),
        ("你好，Fay!", [Run("zh", "你好，"), Run("en", "Fay!")]),
        ("I have 3个苹果", [Run("en", "I have"), Run("zh", " 3个苹果")]),
        ("他有 3 apples", [Run("zh", "他有"), Run("en", " 3 apples")]),
        ("“好”", [Run("zh", "“好”")]),
        ("Just English.", [Run("en", "Just English.")]),
    ],
)
def test_mixed_sentences_split_into_runs_per_script(text, runs):
    assert split_runs(text) == runs
    assert "".join(r.text for r in split_runs(text)) == text


def test_text_without_letters_uses_the_default_language():
    assert split_runs("123", default="zh") == [Run("zh", "123")]
    assert split_runs("123") == [Run("en", "123")]
    assert split_runs("   ") == []


def test_voice_cores_import_no_ros():
    import subprocess
    import sys

    code = (
        "import sys, fay_ros.voice.pipeline, fay_ros.voice.espeak_ng, fay_ros.voice.pyttsx3_engine, "
        "fay_ros.voice.alignment, fay_ros.cli.say; "
        "print(sorted(m for m in sys.modules if m.startswith(('rclpy', 'fay_msgs'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
