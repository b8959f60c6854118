"""Split a streamed reply into sentences as soon as each one is complete.

Speech should start on the first sentence, not the whole reply, so the splitter releases a
sentence the moment its terminator arrives. Chinese terminators (。！？；…) end a sentence
at once; Latin ones (. ! ? ;) only when followed by whitespace or the end of the stream,
so "3.14" or "e.g." inside a word does not split. Very short pieces ("OK.") are merged
with the next sentence so the voice does not stutter.
"""
from __future__ import annotations

import re

CJK_TERMINATORS = "。！？；…\n"
LATIN_TERMINATORS = ".!?;"
# Closing quotes/brackets that belong to the sentence before them.
CLOSERS = "\"'”’」』）)】]"
_SPACE = re.compile(r"\s+")


class SentenceSplitter:
    def __init__(self, min_chars: int = 4) -> None:
        self.min_chars = min_chars
        self._buffer = ""

    def feed(self, chunk: str) -> list[str]:
        self._buffer += chunk
        sentences: list[str] = []
        while True:
            cut = self._find_cut(self._buffer)
            if cut is None:
                break
            piece, rest = self._buffer[:cut], self._buffer[cut:]
            if len(_clean(piece)) < self.min_chars and _clean(rest):
                # too short to speak alone: look for the next terminator after it
                nxt = self._find_cut(rest)
                if nxt is None:
                    break
                piece, rest = self._buffer[:cut + nxt], rest[nxt:]
            self._buffer = rest
            text = _clean(piece)
            if text:
                sentences.append(text)
        return sentences

    def flush(self) -> str:
        """Whatever is left at the end of the stream (may be "")."""
        text, self._buffer = _clean(self._buffer), ""
        return text

    @staticmethod
    def _find_cut(text: str) -> int | None:
        for i, ch in enumerate(text):
            if ch in CJK_TERMINATORS:
                end = i + 1
            elif ch in LATIN_TERMINATORS:
                if i + 1 >= len(text):
                    return None  # wait: "3." may become "3.14"
                if not text[i + 1].isspace() and text[i + 1] not in CLOSERS:
                    continue
                end = i + 1
            else:
                continue
            while end < len(text) and (text[end] in CLOSERS or text[end] in CJK_TERMINATORS
                                       or text[end] in LATIN_TERMINATORS):
                end += 1
            if end >= len(text) and text[end - 1] in LATIN_TERMINATORS + CLOSERS:
                return None  # "?!" may continue, wait for the next chunk
            return end
        return None


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def split_sentences(text: str, min_chars: int = 4) -> list[str]:
    """Whole-text version of SentenceSplitter."""
    splitter = SentenceSplitter(min_chars)
    out = splitter.feed(text)
    last = splitter.flush()
    return out + ([last] if last else [])
