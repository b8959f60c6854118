"""JSON written by a model: the one place it is parsed, whole or while it streams.

Two readers, one parser (pydantic_core's, the Rust JSON parser pydantic itself uses):

- `first_object(text)`: the first complete JSON object in an answer, whatever is around it
  (a ```json fence, prose before or after). The tool loop (Fay's JSON actions) and the memory's
  reflection read answers this way.
- `read_partial(text)`: an object that is still arriving (the chat judge's verdict, whose
  `message` is spoken while it streams): the values finished so far, the string still being
  written, and whether the object is closed (`pydantic_core.from_json(allow_partial=...)`).
  Where the text stops being JSON, what came before that point stands (`broken`).

Models are not strict JSON writers, so before parsing, each string token is repaired the way
a lenient reader would read it: raw control characters (a newline typed inside a string)
become escapes, and an escape JSON does not define (`\\'`) becomes the character itself.
Valid JSON is not changed by this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_core import from_json

# A JSON string token, possibly unterminated at the end of a partial text. Quotes do not
# occur outside strings in JSON, so scanning for these tokens from the object's opening
# brace finds exactly its strings.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)
_JSON_ESCAPES = set('"\\/bfnrtu')
_CONTROL = re.compile(r"[\x00-\x1f]")


def _repair_string(match: re.Match[str]) -> str:
    token = _ESCAPE.sub(lambda m: m.group(0) if m.group(1) in _JSON_ESCAPES else m.group(1), match.group(0))
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", token)


def repair(text: str) -> str:
    """`text` (starting at an object's `{`) with its string tokens made valid JSON strings."""
    return _STRING.sub(_repair_string, text)


def _parse(text: str, partial: bool | Literal["trailing-strings"] = False) -> Any:
    return from_json(text, allow_partial=partial, cache_strings="keys")


def _complete_end(text: str) -> int:
    """End (exclusive) of the complete JSON object that opens `text`; 0 while it is not
    closed. A JSON object is never a prefix of a longer one, so the first closing brace where
    it parses is its end."""
    end = text.find("}")
    while end >= 0:
        try:
            _parse(text[: end + 1])
        except ValueError:
            end = text.find("}", end + 1)
            continue
        return end + 1
    return 0


def first_object(text: str) -> dict[str, Any] | None:
    """The first complete JSON object in `text` (code fences and prose around it are skipped;
    an object that does not parse is passed over for the next `{`), or None."""
    start = text.find("{")
    while start >= 0:
        body = repair(text[start:])
        end = _complete_end(body)
        if end:
            value = _parse(body[:end])
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


@dataclass
class PartialObject:
    """What a streamed JSON object holds so far."""

    # keys whose values arrived: a string once it is closed (a number or a nested value at the
    # very end of a cut-off object may be incomplete)
    values: dict[str, Any] = field(default_factory=dict)
    open_string: tuple[str, str] | None = None  # (key, text so far) of a string value still being written
    complete: bool = False  # the object is closed; nothing after it belongs to it
    broken: bool = False  # the text stopped being JSON: this is what came before that point


def read_partial(text: str) -> PartialObject:
    """Read an object that starts at `text[0]` (a `{`) and may still be arriving. Where the
    text stops being JSON, what came before that point is the result (`broken`): a model that
    derails in the middle of its verdict keeps the part it got right."""
    body = repair(text)
    try:
        return _read(body)
    except ValueError:
        pass
    # the longest prefix that is still the start of a JSON object: any prefix of such a prefix
    # is one too, so a binary search finds it
    good, bad = 0, len(body)
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            _read(body[:middle])
        except ValueError:
            bad = middle
        else:
            good = middle
    read = _read(body[:good]) if good else PartialObject()
    read.broken = True
    return read


def _read(body: str) -> PartialObject:
    end = _complete_end(body)
    if end:
        value = _parse(body[:end])
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        return PartialObject(value, None, complete=True)
    finished = _parse(body, partial=True)  # strings only when closed, so a value is never half a word
    growing = _parse(body, partial="trailing-strings")
    if not isinstance(finished, dict) or not isinstance(growing, dict):
        raise ValueError("not a JSON object")
    open_string = None
    for key, value in growing.items():
        if key not in finished and isinstance(value, str):
            open_string = (key, value)
    return PartialObject(finished, open_string)
