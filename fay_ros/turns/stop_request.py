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


def is_stop_request(text: str) -> bool:
    """True when `text` begins with a stop phrase ("Stop.", "Wait, please", "停！", "等一下")."""
    said = " ".join(spoken_words(text))
    for phrase in STOP_PHRASES:
        if said == phrase or said.startswith(phrase + " ") or (not phrase.isascii() and said.startswith(phrase)):
            return True
    return False
