"""Split a streamed reply into sentences as soon as each one is complete.

Speech should start on the first sentence, not the whole reply, so the splitter releases a
sentence the moment its terminator arrives. Chinese terminators (。！？；…) end a sentence
at once; Latin ones (. ! ? ;) only when followed by whitespace or the end of the stream,
so "3.14" or "e.g." inside a word does not split. Very short pieces ("OK.") are merged
with the next sentence so the voice does not stutter.

`first_clause_chars`: a long first sentence is released at its first clause boundary (a
comma, colon or semicolon, or their CJK forms) once the clause has at least that many
characters, so speech starts while the model is still writing the rest of the sentence; a
slow small model spends hundreds of ms on a 25-word first sentence. Only the first piece.

A text processor (`processors.py`) whose `flush()` always gives back exactly one piece, the
unfinished rest ("" when the stream ended on a sentence end): a reader of a chain that ends
with the splitter takes `*sentences, rest = chain.flush()`, because the rest is spoken
differently (the guard finishes it: a full stop added, or a fragment cut off by the token
limit dropped).
"""

from __future__ import annotations

import re

from .processors import run_whole

CJK_TERMINATORS = "。！？；…\n"
LATIN_TERMINATORS = ".!?;"
# Closing quotes/brackets that belong to the sentence before them.
CLOSERS = "\"'”’」』）)】]"
CLAUSE_BREAKS = ",:，：、"
_SPACE = re.compile(r"\s+")


class SentenceSplitter:
    def __init__(self, min_chars: int = 4, first_clause_chars: int = 0) -> None:
        self.min_chars = min_chars
        self.first_clause_chars = first_clause_chars
        self._buffer = ""
        self._released = False

    def feed(self, chunk: str) -> list[str]:
        self._buffer += chunk
        sentences: list[str] = []
        if not self._released and self.first_clause_chars:
            end = self._first_clause(self._buffer)
            if end:
                sentences.append(_clean(self._buffer[:end]))
                self._buffer = self._buffer[end:]
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
                piece, rest = self._buffer[: cut + nxt], rest[nxt:]
            self._buffer = rest
            text = _clean(piece)
            if text:
                sentences.append(text)
        self._released = self._released or bool(sentences)
        return sentences

    def _first_clause(self, text: str) -> int:
        """End of a long enough first clause (before any sentence end), else 0."""
        sentence_end = self._find_cut(text)
        for i, ch in enumerate(text):
            if sentence_end is not None and i >= sentence_end:
                return 0
            if ch in CLAUSE_BREAKS and i + 1 < len(text) and (text[i + 1].isspace() or ch not in ",:"):
                if len(_clean(text[:i])) >= self.first_clause_chars:
                    return i + 1
        return 0

    def flush(self) -> list[str]:
        """[whatever is left at the end of the stream] (one piece, "" when nothing is)."""
        text, self._buffer = _clean(self._buffer), ""
        return [text]

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
            while end < len(text) and (
                text[end] in CLOSERS or text[end] in CJK_TERMINATORS or text[end] in LATIN_TERMINATORS
            ):
                end += 1
            if end >= len(text) and text[end - 1] in LATIN_TERMINATORS + CLOSERS:
                return None  # "?!" may continue, wait for the next chunk
            return end
        return None


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def split_sentences(text: str, min_chars: int = 4) -> list[str]:
    """Whole-text version of SentenceSplitter."""
    return run_whole(SentenceSplitter(min_chars), text)
