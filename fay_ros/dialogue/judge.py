"""Streaming parser for the chat judge's JSON verdict.

The judge (Fay's 闲聊判断器) answers with one JSON object:
    {"action": "finish", "message": "..."}   small talk: the message IS the reply
    {"action": "tool", "keyword": "..."}     needs tools: say a filler, run the tool loop
The message must reach the speaker while it is still being generated, so this parser reads
the object character by character and releases the decoded `message` text as it arrives
(once `action` is known to be "finish"; message text that precedes the action is held).

Models do not always obey. A reply that does not start with `{` (after an optional ```json
fence) is taken as plain text: the model answered directly, and that text is streamed as
the reply. A JSON object that breaks off or has an unknown action is reported as invalid
so the engine can fall back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

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
    def __init__(self, stream_key: str = "message") -> None:
        self.stream_key = stream_key
        self.mode = "unknown"
        self._raw = ""  # everything fed so far (for the prefix decision and plain text)
        self._pos = 0  # next index of _raw to scan in json mode
        self._state = "start"
        self._key = ""
        self._value_chars: list[str] = []
        self._escape = ""
        self._depth = 0
        self._other_in_string = False
        self._other_escape = False
        self._fields: dict[str, object] = {}
        self._held: list[str] = []  # message text seen before the action was known
        self._released = 0
        self._complete = False

    # -- public -----------------------------------------------------------------------
    def feed(self, chunk: str) -> str:
        """Add a chunk; return reply text that can be spoken now."""
        self._raw += chunk
        if self.mode == "unknown":
            self._decide_mode()
        if self.mode == "text":
            out = self._raw[self._released:]
            self._released = len(self._raw)
            return out
        if self.mode == "json":
            return self._scan()
        return ""

    def close(self) -> JudgeVerdict:
        if self.mode == "unknown":
            stripped = self._raw.strip()
            if not stripped:
                return JudgeVerdict("empty")
            self.mode = "text"
            return JudgeVerdict("text", text=stripped)
        if self.mode == "text":
            return JudgeVerdict("text", text=self._raw.strip())
        if self._state == "string_value" and self._key == self.stream_key:
            self._fields.setdefault(self._key, "".join(self._value_chars))
        action = self._fields.get("action")
        message = self._fields.get(self.stream_key, "")
        return JudgeVerdict("json", action if isinstance(action, str) else "", dict(self._fields),
                            message if isinstance(message, str) else "", self._complete)

    @property
    def action(self) -> str:
        value = self._fields.get("action")
        return value if isinstance(value, str) else ""

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
                body = text[newline + 1:].lstrip(_WS)
                if not body:
                    return
                if body.startswith("{"):
                    self.mode = "json"
                    self._pos = len(self._raw) - len(body)
                    return
        if text.startswith("{"):
            self.mode = "json"
            self._pos = len(self._raw) - len(text)
        else:
            self.mode = "text"
            self._released = len(self._raw) - len(text)

    def _emit_message(self, text: str) -> str:
        if not text:
            return ""
        if self.action == FINISH:
            return text
        if "action" not in self._fields:
            self._held.append(text)
        return ""

    def _set_field(self, key: str, value: object) -> str:
        self._fields[key] = value
        if key == "action" and value == FINISH and self._held:
            held, self._held = "".join(self._held), []
            return held
        return ""

    def _scan(self) -> str:
        out: list[str] = []
        raw = self._raw
        while self._pos < len(raw) and not self._complete:
            ch = raw[self._pos]
            state = self._state
            if state == "start":
                if ch == "{":
                    self._state = "key_or_end"
                self._pos += 1
            elif state in ("key_or_end", "after_comma"):
                self._pos += 1
                if ch == '"':
                    self._state, self._value_chars = "key", []
                elif ch == "}":
                    self._complete = True
            elif state == "key":
                if ch == "\\":
                    if self._pos + 1 >= len(raw):
                        break
                    self._value_chars.append(raw[self._pos + 1])
                    self._pos += 2
                    continue
                self._pos += 1
                if ch == '"':
                    self._key, self._state = "".join(self._value_chars), "colon"
                else:
                    self._value_chars.append(ch)
            elif state == "colon":
                self._pos += 1
                if ch == ":":
                    self._state = "value"
            elif state == "value":
                if ch in _WS:
                    self._pos += 1
                elif ch == '"':
                    self._pos += 1
                    self._state, self._value_chars = "string_value", []
                else:
                    self._state, self._value_chars, self._depth = "other_value", [], 0
                    self._other_in_string = self._other_escape = False
            elif state == "string_value":
                if ch == "\\":
                    decoded, used = _decode_escape(raw, self._pos)
                    if used == 0:
                        break  # incomplete escape: wait for more
                    self._pos += used
                    self._value_chars.append(decoded)
                    if self._key == self.stream_key:
                        out.append(self._emit_message(decoded))
                    continue
                self._pos += 1
                if ch == '"':
                    out.append(self._set_field(self._key, "".join(self._value_chars)))
                    self._state = "after_value"
                else:
                    self._value_chars.append(ch)
                    if self._key == self.stream_key:
                        out.append(self._emit_message(ch))
            elif state == "other_value":
                if self._depth == 0 and not self._other_in_string and ch in ",}":
                    text = "".join(self._value_chars).strip()
                    try:
                        value: object = json.loads(text)
                    except ValueError:
                        value = text
                    out.append(self._set_field(self._key, value))
                    self._state = "after_value"
                    continue
                self._pos += 1
                self._value_chars.append(ch)
                if self._other_in_string:
                    if self._other_escape:
                        self._other_escape = False
                    elif ch == "\\":
                        self._other_escape = True
                    elif ch == '"':
                        self._other_in_string = False
                elif ch == '"':
                    self._other_in_string = True
                elif ch in "{[":
                    self._depth += 1
                elif ch in "}]":
                    self._depth -= 1
            elif state == "after_value":
                self._pos += 1
                if ch == ",":
                    self._state = "after_comma"
                elif ch == "}":
                    self._complete = True
        return "".join(out)


def _decode_escape(raw: str, pos: int) -> tuple[str, int]:
    """Decode the JSON escape at raw[pos] ('\\'); (text, chars used) or ("", 0) if incomplete."""
    if pos + 1 >= len(raw):
        return "", 0
    kind = raw[pos + 1]
    if kind != "u":
        return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(kind, kind), 2
    if pos + 6 > len(raw):
        return "", 0
    code = raw[pos + 2:pos + 6]
    try:
        value = int(code, 16)
    except ValueError:
        return code, 6
    if 0xD800 <= value < 0xDC00:  # high surrogate: needs its low half
        if pos + 12 > len(raw):
            return "", 0
        if raw[pos + 6:pos + 8] == "\\u":
            try:
                low = int(raw[pos + 8:pos + 12], 16)
                return chr(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)), 12
            except ValueError:
                pass
        return "", 6
    return chr(value), 6


def parse_action(text: str) -> dict | None:
    """Parse a whole (non-streamed) action object, tolerating fences and surrounding prose."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    start = text.find("{")
    while start >= 0:
        try:
            value, _end = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None
