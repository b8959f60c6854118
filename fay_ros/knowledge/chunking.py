"""Chunks that follow the document: a chunk never crosses a section (heading or page) and
never cuts a sentence.

Paragraphs of a section are packed into chunks of up to `max_chars` characters; a paragraph
longer than that is split between its sentences (`fay_ros.text.sentences.split_sentences`,
which knows Chinese and Latin sentence ends); a single sentence longer than `max_chars` stays
whole, because half a sentence answers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text.sentences import split_sentences
from .documents import Section


@dataclass(frozen=True)
class Chunk:
    text: str
    locator: str


def _joined(pieces: list[str]) -> str:
    return "\n".join(pieces)


def chunk_sections(sections: list[Section], max_chars: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section in sections:
        pieces: list[str] = []
        for paragraph in section.paragraphs:
            units = [paragraph] if len(paragraph) <= max_chars else _sentence_groups(paragraph, max_chars)
            for unit in units:
                if pieces and len(_joined(pieces)) + 1 + len(unit) > max_chars:
                    chunks.append(Chunk(_joined(pieces), section.locator))
                    pieces = []
                pieces.append(unit)
        if pieces:
            chunks.append(Chunk(_joined(pieces), section.locator))
    return chunks


def _sentence_groups(paragraph: str, max_chars: int) -> list[str]:
    """A long paragraph as runs of whole sentences, each at most `max_chars` (unless one
    sentence alone is longer)."""
    groups: list[str] = []
    current = ""
    for sentence in split_sentences(paragraph, min_chars=1):
        if not sentence:
            continue
        glue = "" if not current or _ends_cjk(current) else " "
        if current and len(current) + len(glue) + len(sentence) > max_chars:
            groups.append(current)
            current, glue = "", ""
        current += glue + sentence
    if current:
        groups.append(current)
    return groups


def _ends_cjk(text: str) -> bool:
    return "\u3000" <= text[-1] <= "\u9fff" or "\uff00" <= text[-1] <= "\uffef"
