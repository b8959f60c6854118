"""Streaming reader of the chat judge's JSON verdict.

The judge (Fay's 闲聊判断器) answers with one JSON object:
    {"action": "finish", "message": "..."}   small talk: the message IS the reply
    {"action": "tool", "keyword": "..."}     needs tools: say a filler, run the tool loop
The message must reach the speaker while it is still being generated, so the parser re-reads
the object as it grows (`model_json.read_partial`, pydantic_core's partial JSON parser) and
releases the message text that is new since the last chunk, once `action` is known to be
"finish" (message text that precedes the action is held; with any other action it is never
released).

Models do not always obey. A reply that does not start with `{` (after an optional ```json
fence) is taken as plain text: the model answered directly, and that text is streamed as
the reply. A JSON object that breaks off (or stops being JSON) keeps what was read up to
there; one with an unknown action is reported as invalid, so the engine can fall back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..llm.model_json import PartialObject, read_partial

FINISH = "finish"
TOOL = "tool"
_WS = " \t\r\n"


@dataclass
class JudgeVerdict:
    mode: str  # "json", "text" or "empty"
    action: str = ""
    fields: dict[str, object] = field(default_factory=dict)
    text: str = ""  # plain-text mode: the whole text; json mode: the message
    complete: bool = False  # the JSON object was closed

    @property
    def valid(self) -> bool:
        if self.mode == "text":
            return bool(self.text.strip())
        return self.mode == "json" and self.action in (FINISH, TOOL)

    @property
    def keyword(self) -> str:
        value = self.fields.get("keyword", "")
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class JudgeStreamParser:
    """A text processor (`processors.TextProcessor`): feed the judge's answer chunk by chunk,
    get back the reply text that can be spoken now; `flush()` at the end of the stream, then
    `close()` for the verdict."""

    def __init__(self, stream_key: str = "message") -> None:
        self.stream_key = stream_key
        self.mode = "unknown"
        self._raw = ""  # everything fed so far (for the prefix decision and plain text)
        self._released = 0  # text mode: characters of _raw released
        self._json_start = 0  # json mode: where the object starts in _raw
        self._read = PartialObject()
        self._spoken = ""  # json mode: the part of the message released so far

    def feed(self, chunk: str) -> list[str]:
        self._raw += chunk
        if self.mode == "unknown":
            self._decide_mode()
        if self.mode == "text":
            out = self._raw[self._released :]
            self._released = len(self._raw)
            return [out] if out else []
        if self.mode == "json":
            return self._read_json()
        return []

    def flush(self) -> list[str]:
        """End of the stream: an answer too short to tell JSON from text (nothing of it went
        out yet) is text after all, released now."""
        undecided = self.mode == "unknown"
        verdict = self.close()
        return [verdict.text] if undecided and verdict.mode == "text" else []

    def close(self) -> JudgeVerdict:
        if self.mode == "unknown":
            stripped = self._raw.strip()
            if not stripped:
                return JudgeVerdict("empty")
            self.mode = "text"
            return JudgeVerdict("text", text=stripped)
        if self.mode == "text":
            return JudgeVerdict("text", text=self._raw.strip())
        fields: dict[str, object] = dict(self._read.values)
        message = self._message_so_far()
        if message is not None:
            fields[self.stream_key] = message  # when cut off mid-message: the part that came
        action = fields.get("action")
        return JudgeVerdict(
            "json",
            action if isinstance(action, str) else "",
            fields,
            message if isinstance(message, str) else "",
            self._read.complete,
        )

    def _message_so_far(self) -> object:
        """The message: its finished value, or the part of it written so far (None before it)."""
        if self.stream_key in self._read.values:
            return self._read.values[self.stream_key]
        open_string = self._read.open_string
        return open_string[1] if open_string is not None and open_string[0] == self.stream_key else None

    # -- internals ----------------------------------------------------------------------
    def _decide_mode(self) -> None:
        text = self._raw.lstrip(_WS)
        if not text:
            return
        if text.startswith("`"):
            if len(text) < 3 and "```".startswith(text):
                return
            if text.startswith("```"):
                newline = text.find("\n")
                if newline < 0:
                    return
                body = text[newline + 1 :].lstrip(_WS)
                if not body:
                    return
                if body.startswith("{"):
                    self.mode = "json"
                    self._json_start = len(self._raw) - len(body)
                    return
        if text.startswith("{"):
            self.mode = "json"
            self._json_start = len(self._raw) - len(text)
        else:
            self.mode = "text"
            self._released = len(self._raw) - len(text)

    def _read_json(self) -> list[str]:
        if self._read.complete or self._read.broken:
            return []  # nothing after the closed object (or after the point it broke) belongs to the verdict
        self._read = read_partial(self._raw[self._json_start :])
        if self._read.values.get("action") != FINISH:
            return []  # held until the action is known, never released for another action
        message = self._message_so_far()
        if not isinstance(message, str) or not message.startswith(self._spoken):
            return []
        new, self._spoken = message[len(self._spoken) :], message
        return [new] if new else []
