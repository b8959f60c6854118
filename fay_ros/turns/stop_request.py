"""Is what a person said over the robot a request to stop? ("Stop!", "Wait", "No, stop", 停, 等一下)

A short interruption is as short as a backchannel ("yeah", 嗯): the duplex gate holds the
robot's voice for both but barges in on neither (fay_ros.turns.duplex_gate). So the mic hands the
held words to the recogniser when the hold ends, and only these phrases, at the start of what
was said, stop the robot. A fixed list, not "any words": a recogniser turns a cough or a hum
into words now and then, and that must not stop the robot.
"""

from __future__ import annotations

from ..text.words import spoken_words

# Words (common.text.spoken_words) joined by single spaces; matched at the start of the transcript.
STOP_PHRASES = (
    "stop",
    "wait",
    "hold on",
    "hang on",
    "no stop",
    "no no",
    "no wait",
    "please stop",
    "be quiet",
    "quiet",
    "shut up",
    "enough",
    "pause",
    "excuse me",
    "one moment",
    "one second",
    "just a moment",
    "just a second",
    "停",
    "等等",
    "等一下",
    "等一等",
    "别说了",
    "不要说了",
    "闭嘴",
    "安静",
    "打住",
    "够了",
    "暂停",
    "不对",
)


# A word that stops the robot anywhere in a clip of at most SHORT_CLIP_WORDS words: the clip may
# begin with the robot's own residue, which a recogniser writes as a word before it ("I stop",
# "Oh, stop!"); not after a word that turns it round ("don't stop", "can't wait")
STOP_WORDS = frozenset({"stop", "wait", "quiet", "enough", "pause", "停"})
SHORT_CLIP_WORDS = 3
_TURNED_ROUND = frozenset({"dont", "not", "never", "cant", "wont", "didnt", "bus", "no"})


def is_stop_request(text: str) -> bool:
    """True when `text` begins with a stop phrase ("Stop.", "Wait, please", "停！", "等一下"), or is a
    few words with a stop word among them ("I stop", "好，停")."""
    words = spoken_words(text)
    said = " ".join(words)
    for phrase in STOP_PHRASES:
        if said == phrase or said.startswith(phrase + " ") or (not phrase.isascii() and said.startswith(phrase)):
            return True
    return len(words) <= SHORT_CLIP_WORDS and any(
        word in STOP_WORDS and (i == 0 or words[i - 1] not in _TURNED_ROUND) for i, word in enumerate(words)
    )
