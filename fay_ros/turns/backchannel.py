"""Is what a person said only an acknowledgement ("mm-hm", "yeah", 嗯, 对)? Such words over the
robot are no turn: the recogniser publishes no final for a barged-in utterance that is only
this (fay_ros.hearing.asr_core), and the voice resumes what the barge-in cut
(fay_ros.turns.resume).
"""

from __future__ import annotations

from ..text.words import spoken_words

# Short acknowledgements that are not a turn (lower case, punctuation and spaces removed;
# with Whisper's other spellings of "yeah").
BACKCHANNELS = frozenset(
    {
        "mmhm",
        "mhm",
        "mm",
        "mmm",
        "uhhuh",
        "uhuh",
        "hm",
        "hmm",
        "yeah",
        "yea",
        "ya",
        "yah",
        "yep",
        "yup",
        "yes",
        "ok",
        "okay",
        "right",
        "sure",
        "ah",
        "oh",
        "uh",
        "um",
        "嗯",
        "嗯嗯",
        "恩",
        "对",
        "对对",
        "对对对",
        "是",
        "是的",
        "好",
        "好的",
        "哦",
        "噢",
        "啊",
        "呃",
        "嗯哼",
        "行",
    }
)


def is_backchannel(text: str) -> bool:
    """True for an empty transcript or one that is only acknowledgements ("yeah, yeah", 嗯嗯)."""
    return all(w in BACKCHANNELS for w in spoken_words(text))
