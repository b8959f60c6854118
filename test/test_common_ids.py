"""The utterance id that ties a reply sentence to its cue, viseme track and speech events."""

from __future__ import annotations

import pytest

from fay_ros.common.ids import conversation_of, split_utterance_id, utterance_id


@pytest.mark.parametrize("conversation, seq", [("tom-3-1a2b3c4d", 0), ("say:goal:ab", 12), ("", 7)])
def test_an_utterance_id_splits_back_into_its_conversation_and_seq(conversation, seq):
    made = utterance_id(conversation, seq)
    assert split_utterance_id(made) == (conversation, seq)
    assert conversation_of(made) == conversation


@pytest.mark.parametrize(
    "text, expected", [("tom-3", ("", None)), ("tom-3:x", ("tom-3", None)), ("", ("", None)), ("c:-1", ("c", None))]
)
def test_an_id_without_a_seq_has_none(text, expected):
    assert split_utterance_id(text) == expected
