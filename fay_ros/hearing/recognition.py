"""The one interface both ASR backends implement, and what it returns.

Its own module so the backends (whisper_backend, vosk_backend) and the factory that imports
them (recognizer.create_recognizer) never import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass
class Word:
    word: str
    start: float  # seconds from the start of the utterance audio
    end: float
    confidence: float  # 0..1 (0 when the backend gives none)


@dataclass
class Recognition:
    text: str
    language: str = ""
    confidence: float = 0.0
    words: list[Word] = field(default_factory=list)
    # A peek may leave the word timings for later (their alignment is a second pass over the
    # decoder): `align()` computes them when the early decode becomes the final.
    align: Callable[[], list[Word]] | None = field(default=None, repr=False, compare=False)

    def with_words(self) -> Recognition:
        """This recognition with its word timings computed, if they were left for later."""
        if self.align is not None and not self.words:
            self.words, self.align = self.align(), None
        return self


class Recognizer(Protocol):
    """One utterance at a time: start(), accept() audio (may return a partial), finish()."""

    sample_rate: int
    streaming: bool  # True when accept() yields partial hypotheses

    def start(self) -> None: ...

    def accept(self, samples: np.ndarray) -> str | None:
        """Take int16 mono samples; return a new partial hypothesis, or None."""

    def finish(self) -> Recognition: ...

    def peek(self) -> Recognition | None:
        """Recognise the audio so far without ending the utterance (None: not supported); the
        word timings may be left to `Recognition.with_words()`. Its `confidence` feeds the
        turn judgement, which trusts an open ending only from a fairly sure decode
        (turn.OPEN_CONFIDENCE): a backend with no confidence of its own should say 1.0 here,
        not leave the default 0.0."""
