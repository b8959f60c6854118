"""Remove `<think>…</think>` reasoning from a streamed reply, chunk by chunk.

Thinking models (DeepSeek-R1, Qwen3, ...) put their reasoning inside <think> tags in the
content stream. None of it may be spoken. Tags can be split across stream chunks, so the
stripper holds back a possible partial tag until the next chunk decides it.

Some chat templates open the block in the prompt, so the stream holds only `</think>`:
when a chunk carries reasoning and a lone `</think>` before any answer text was released,
that leading part is dropped as well. (Reasoning released in an earlier chunk before such a
lone tag cannot be recalled; servers that send reasoning in `reasoning_content` instead are
unaffected, because only `content` is read.)
"""
from __future__ import annotations

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


class ThinkStripper:
    """Feed content chunks; get back only the text outside <think> blocks."""

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False
        self._released = False  # some answer text has been returned already

    def feed(self, chunk: str) -> str:
        self._buffer += chunk
        out: list[str] = []
        while self._buffer:
            if self._inside:
                end = self._buffer.find(CLOSE_TAG)
                if end < 0:
                    keep = _partial_suffix(self._buffer, CLOSE_TAG)
                    self._buffer = self._buffer[len(self._buffer) - keep:] if keep else ""
                    break
                self._buffer = self._buffer[end + len(CLOSE_TAG):]
                self._inside = False
                continue
            start = self._buffer.find(OPEN_TAG)
            lone_close = self._buffer.find(CLOSE_TAG)
            if lone_close >= 0 and (start < 0 or lone_close < start):
                before = self._buffer[:lone_close]
                if self._released or "".join(out).strip():
                    out.append(before)  # answer already started: drop only the stray tag
                self._buffer = self._buffer[lone_close + len(CLOSE_TAG):]
                continue
            if start >= 0:
                out.append(self._buffer[:start])
                self._buffer = self._buffer[start + len(OPEN_TAG):]
                self._inside = True
                continue
            keep = max(_partial_suffix(self._buffer, OPEN_TAG), _partial_suffix(self._buffer, CLOSE_TAG))
            out.append(self._buffer[:len(self._buffer) - keep])
            self._buffer = self._buffer[len(self._buffer) - keep:]
            break
        text = "".join(out)
        if text.strip():
            self._released = True
        return text

    def flush(self) -> str:
        """End of stream: an unfinished <think> block is dropped, a partial tag is text."""
        rest = "" if self._inside else self._buffer
        self._buffer = ""
        self._inside = False
        return rest


def strip_think(text: str) -> str:
    """Whole-text version of ThinkStripper."""
    stripper = ThinkStripper()
    return stripper.feed(text) + stripper.flush()
