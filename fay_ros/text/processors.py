"""Text processors: the stages a streamed answer passes on its way to the speaker, composed.

Every stage is a small object with the same two calls (pipecat's processors over frames,
reduced to text):

    feed(text) -> list[str]   take the next chunk, give back the pieces that are ready now
    flush()    -> list[str]   the stream has ended: give back whatever was held

A character filter (think stripping, the judge's message, the outbound gate) gives back
text in pieces of any size; the sentence splitter gives back sentences. `Chain` runs stages
in order, so the engine wires a stream once:

    Chain(ThinkStripper(), JudgeStreamParser(), OutboundStream(), SentenceSplitter())

A stage may say that nothing after this point belongs to the answer (`ended`, e.g. a
template token seen by the outbound gate): `Chain.ended` tells the reader to stop reading.
"""

from __future__ import annotations

from typing import Protocol


class TextProcessor(Protocol):
    def feed(self, text: str) -> list[str]: ...

    def flush(self) -> list[str]: ...


class Chain:
    """Stages in order: what one stage gives back is fed to the next. `flush()` flushes each
    stage in turn after feeding it what the stages before it released at the end."""

    def __init__(self, *stages: TextProcessor) -> None:
        self.stages = stages

    def feed(self, text: str) -> list[str]:
        pieces = [text]
        for stage in self.stages:
            pieces = [out for piece in pieces for out in stage.feed(piece)]
        return pieces

    def flush(self) -> list[str]:
        pieces: list[str] = []
        for stage in self.stages:
            pieces = [out for piece in pieces for out in stage.feed(piece)] + stage.flush()
        return pieces

    @property
    def ended(self) -> bool:
        return any(getattr(stage, "ended", False) for stage in self.stages)


def run_whole(processor: TextProcessor, text: str) -> list[str]:
    """A whole text through a processor (or chain): every piece it gives back, none empty."""
    return [piece for piece in processor.feed(text) + processor.flush() if piece]
