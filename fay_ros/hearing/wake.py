"""Wake-word gating of final transcripts, as in Fay.

Modes:
- "always": every utterance is forwarded (no wake word needed).
- "prefix": Fay's front wake word (前置词唤醒): only utterances that START with a wake word are
  forwarded, with the wake word removed ("Fay, what time is it" -> "what time is it").
- "window": Fay's ordinary wake-up (普通唤醒): a wake word opens an awake window of
  `awake_window_s` seconds; while it is open every utterance is forwarded as is. Each
  forwarded utterance and each end of the robot's own speech extends the window, so a
  conversation flows without repeating the wake word. An utterance that is only the wake
  word opens the window and forwards nothing.

Matching ignores case, spaces and punctuation, so "Hey, Fay!" matches the wake word "hey fay"
and "菲菲，" matches "菲菲".
"""

from __future__ import annotations

import unicodedata

WAKE_MODES = ("always", "prefix", "window")


def _is_text_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN"  # letters and digits; not punctuation/space/symbols


def normalize(text: str) -> str:
    return "".join(ch for ch in text.casefold() if _is_text_char(ch))


def strip_prefix(text: str, normalized_len: int) -> str:
    """Remove the first `normalized_len` text characters (and the punctuation around them)."""
    seen = 0
    for i, ch in enumerate(text):
        if seen >= normalized_len:
            rest = text[i:]
            break
        if _is_text_char(ch):
            seen += len(ch.casefold())
    else:
        rest = ""
    return rest.lstrip(" \t,，.。!！?？:：;；、-—~")


class WakeWordGate:
    def __init__(
        self, mode: str = "always", wake_words: list[str] | tuple[str, ...] = (), awake_window_s: float = 20.0
    ) -> None:
        if mode not in WAKE_MODES:
            raise ValueError(f"wake mode must be one of {WAKE_MODES} (got {mode!r})")
        self.mode = mode
        self.wake_words = sorted({normalize(w) for w in wake_words if normalize(w)}, key=len, reverse=True)
        if mode != "always" and not self.wake_words:
            raise ValueError(f"wake mode {mode!r} needs at least one non-empty wake word")
        if awake_window_s <= 0:
            raise ValueError("awake_window_s must be > 0")
        self.awake_window = awake_window_s
        self.awake_until = float("-inf")

    def _wake_prefix(self, text: str) -> int:
        norm = normalize(text)
        for word in self.wake_words:
            if norm.startswith(word):
                return len(word)
        return 0

    def awake(self, now: float) -> bool:
        return self.mode == "always" or (self.mode == "window" and now <= self.awake_until)

    def peek(self, text: str, now: float) -> bool:
        """Would this (partial) text be forwarded? Changes nothing."""
        return self.awake(now) or self._wake_prefix(text) > 0

    def admit(self, text: str, now: float) -> str | None:
        """The text to forward for a final utterance, or None to drop it."""
        if self.mode == "always":
            return text
        prefix = self._wake_prefix(text)
        if self.mode == "prefix":
            return strip_prefix(text, prefix) or None if prefix else None
        # window mode
        if prefix:
            self.awake_until = now + self.awake_window
            return strip_prefix(text, prefix) or None
        if now <= self.awake_until:
            self.awake_until = now + self.awake_window
            return text
        return None

    def preview(self, text: str, now: float) -> str | None:
        """What `admit` would forward for this final text now; changes nothing."""
        awake_until = self.awake_until
        try:
            return self.admit(text, now)
        finally:
            self.awake_until = awake_until

    def extend(self, now: float) -> None:
        """Keep an open window open (the robot just finished speaking to the person)."""
        if self.mode == "window" and now <= self.awake_until:
            self.awake_until = now + self.awake_window
