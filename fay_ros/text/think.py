"""Remove `<think>…</think>` reasoning from a streamed reply, chunk by chunk.

Thinking models (DeepSeek-R1, Qwen3, ...) put their reasoning inside <think> tags (some
write <thinking>) in the content stream. None of it may be spoken. Tags can be split across
stream chunks, so the stripper holds back a possible partial tag until the next chunk
decides it. An unfinished block at the end of the stream is dropped.

Some chat templates open the block in the prompt, so the stream holds only `</think>`:
when a chunk carries reasoning and a lone `</think>` before any answer text was released,
that leading part is dropped as well. (Reasoning released in an earlier chunk before such a
lone tag cannot be recalled; servers that send reasoning in `reasoning_content` instead are
unaffected, because only `content` is read.)

This is the one implementation of think stripping: the outbound sanitiser (`outbound.py`)
runs it first, and the judge parser and the tool loop use it on their own input. It is a
text processor (`processors.py`).
"""

from __future__ import annotations

import re

from .processors import run_whole

_OPEN = re.compile(r"<think(?:ing)?>", re.I)
_CLOSE = re.compile(r"</think(?:ing)?>", re.I)
_OPEN_TAGS = ("<think>", "<thinking>")
_CLOSE_TAGS = ("</think>", "</thinking>")


def _partial_suffix(text: str, tags: tuple[str, ...]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of one of `tags`."""
    for n in range(min(max(map(len, tags)) - 1, len(text)), 0, -1):
        tail = text[-n:].lower()
        if any(len(tag) > n and tag.startswith(tail) for tag in tags):
            return n
    return 0


class ThinkStripper:
    """Feed content chunks; get back only the text outside <think> blocks. `blocks` and
    `dropped_chars` count what was removed (for the sanitiser's log, never the content)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False
        self._released = False  # some answer text has been returned already
        self.blocks = 0
        self.dropped_chars = 0

    def feed(self, chunk: str) -> list[str]:
        self._buffer += chunk
        out: list[str] = []
        while self._buffer:
            if self._inside:
                end = _CLOSE.search(self._buffer)
                if end is None:
                    keep = _partial_suffix(self._buffer, _CLOSE_TAGS)
                    self._drop(len(self._buffer) - keep)
                    self._buffer = self._buffer[len(self._buffer) - keep :]
                    break
                self._drop(end.end())
                self._buffer = self._buffer[end.end() :]
                self._inside = False
                continue
            start = _OPEN.search(self._buffer)
            lone_close = _CLOSE.search(self._buffer)
            if lone_close is not None and (start is None or lone_close.start() < start.start()):
                before = self._buffer[: lone_close.start()]
                if self._released or "".join(out).strip():
                    out.append(before)  # answer already started: drop only the stray tag
                    self._drop(lone_close.end() - lone_close.start())
                else:
                    self._drop(lone_close.end())  # reasoning whose opening tag was in the prompt
                self._buffer = self._buffer[lone_close.end() :]
                continue
            if start is not None:
                out.append(self._buffer[: start.start()])
                self.blocks += 1
                self.dropped_chars += start.end() - start.start()
                self._buffer = self._buffer[start.end() :]
                self._inside = True
                continue
            keep = max(_partial_suffix(self._buffer, _OPEN_TAGS), _partial_suffix(self._buffer, _CLOSE_TAGS))
            out.append(self._buffer[: len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep :]
            break
        text = "".join(out)
        if text.strip():
            self._released = True
        return [text] if text else []

    def flush(self) -> list[str]:
        """End of stream: an unfinished <think> block is dropped, a partial tag is text."""
        if self._inside:
            self._drop(len(self._buffer))
            rest = ""
        else:
            rest = self._buffer
        self._buffer = ""
        self._inside = False
        return [rest] if rest else []

    def _drop(self, chars: int) -> None:
        # a block is counted once: when it opens, or at a lone closing tag
        if not self._inside:
            self.blocks += 1
        self.dropped_chars += chars


def strip_think(text: str) -> str:
    """Whole-text version of ThinkStripper."""
    return "".join(run_whole(ThinkStripper(), text))
