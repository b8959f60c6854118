"""What the voice must not read aloud.

Reply text is sanitised once, where it leaves the dialogue (`fay_ros.text.outbound`:
reasoning, tool calls, code, URLs and markup never reach the `reply` topic). The voice runs
the same gate again on whatever it is asked to say, so text that did not come through the
dialogue (`fay-ros say`, another `reply` publisher) is held to the same rule; on dialogue
text it finds nothing to remove. On top of it comes the one speech-specific step: symbols
a subtitle may show but a synthesizer would read out by name ("left brace", "tilde").

The result reports what was dropped by kind, count and length only, never the content.
"""

from __future__ import annotations

import re

from ..text.outbound import Dropped, SanitizeResult, sanitize

__all__ = ["SanitizeResult", "sanitize_for_speech"]

_UNSPOKEN_SYMBOLS = re.compile(r"[{}\[\]\\^~|`]+")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.!?;:，。！？；：、])")


def sanitize_for_speech(text: str) -> SanitizeResult:
    """Return the speakable part of `text` and a record of what was removed."""
    result = sanitize(text, Dropped())
    if _UNSPOKEN_SYMBOLS.search(result.text):

        def drop(m: re.Match[str]) -> str:
            result.dropped.add("symbol", len(m.group(0)))
            return " "

        spoken = _UNSPOKEN_SYMBOLS.sub(drop, result.text)
        result.text = _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", spoken)).strip()
    return result
