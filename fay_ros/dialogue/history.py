"""Each user's recent conversation, as the OpenAI messages a prompt replays.

Kept per process and per user (a user never sees another's history): the last
`turns` exchanges. The tiny profile replays them in a window that grows by whole turns and
then drops back (`window`), so each prompt extends the previous one and the model server's
prompt cache keeps everything but the new turn.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
from collections import deque


class Histories:
    def __init__(self, turns: int) -> None:
        self.turns = turns  # exchanges kept per user (a user message and the answer)
        self._by_user: dict[str, deque[dict[str, str]]] = {}
        self._appended: dict[str, int] = {}  # messages ever added to each user's history
        self._retired: dict[str, set[str]] = {}  # names each user corrected ("my dog is Max, not Rex")

    def of(self, user_id: str) -> list[dict[str, str]]:
        return list(self._by_user.get(user_id, ()))

    def append(self, user_id: str, message: dict[str, str]) -> None:
        history = self._by_user.setdefault(user_id, deque(maxlen=max(2, self.turns * 2)))
        history.append(message)
        self._appended[user_id] = self._appended.get(user_id, 0) + 1

    def remember_turn(self, user_id: str, user_text: str | None, answer: str) -> tuple[dict[str, str], ...]:
        """One exchange: what the user said (None for a broadcast) and what was answered; the
        messages added (for `forget`)."""
        added = []
        if user_text:
            added.append({"role": "user", "content": user_text})
        if answer:
            added.append({"role": "assistant", "content": answer})
        for message in added:
            self.append(user_id, message)
        return tuple(added)

    def clear(self, user_id: str) -> None:
        """Start the user's conversation over (they asked to clear it)."""
        self._by_user.pop(user_id, None)
        self._appended.pop(user_id, None)
        self._retired.pop(user_id, None)

    def retire(self, user_id: str, name: str) -> None:
        """A name the user corrected ("actually my dog is called Max, not Rex"): the window
        replays no message that says it again, as a small model repeats what its history says
        whatever the facts above it say."""
        if name.strip():
            self._retired.setdefault(user_id, set()).add(name.strip())

    def forget(self, user_id: str, messages: tuple[dict[str, str], ...]) -> bool:
        """Take these messages (as `remember_turn` returned them) out of the user's history, if
        it still holds them all: an exchange that turned out never to have happened for the
        user (an answer they did not hear). True when they were taken out."""
        history = self._by_user.get(user_id)
        if history is None or not messages or not all(any(m is h for h in history) for m in messages):
            return False
        kept = [h for h in history if not any(h is m for m in messages)]
        history.clear()
        history.extend(kept)
        self._appended[user_id] -= len(messages)
        return True

    def window(self, user_id: str, min_turns: int, max_turns: int) -> list[dict[str, str]]:
        """The last messages, in a window that grows by whole turns from min_turns to max_turns
        and then drops back to min_turns, so consecutive prompts share everything but the new
        turn (see TinyDecoding)."""
        history = self.of(user_id)
        high = min(2 * max_turns, 2 * max(1, self.turns))  # what the history holds
        low = min(2 * min_turns, high)
        count = self._appended.get(user_id, 0)
        keep = count if count <= high else low + (count - low) % (high - low + 2)
        window = history[-keep:] if keep else []
        retired = self._retired.get(user_id)
        if not retired:
            return window
        said = re.compile("|".join(rf"(?<!\w){re.escape(name)}(?!\w)" for name in sorted(retired)), re.I)
        return [m for m in window if not said.search(m.get("content") or "")]
