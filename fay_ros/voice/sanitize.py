"""Outbound sanitising: what a reply may contain that must never be spoken aloud.

An LLM reply can carry reasoning (`<think>`), tool-call markup or JSON, code, URLs and
markdown. None of it is speech: a voice reading "asterisk asterisk" or a URL letter by letter
is broken, and reasoning or tool arguments may hold things the user must not hear. The
sanitiser removes them (keeping the readable text of links and emphasis) and reports what it
dropped by kind, count and length only -- never the dropped content itself, which may hold
secrets (a URL with a token, tool arguments).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SILENCE_MARKER = "[SILENCE]"

# Tool-call wrappers used by common chat templates (Hermes/Qwen <tool_call>, DeepSeek DSML
# with fullwidth bars, Mistral [TOOL_CALLS], generic <|...|> special tokens).
_TOOL_BLOCKS = [
    re.compile(r"<tool_call>.*?(?:</tool_call>|\Z)", re.S | re.I),
    re.compile(r"<function_call>.*?(?:</function_call>|\Z)", re.S | re.I),
    re.compile(r"<tool_calls?>.*?(?:</tool_calls?>|\Z)", re.S | re.I),
    re.compile(r"<[|｜]tool[▁_ ]calls?[▁_ ]begin[|｜]>.*?(?:<[|｜]tool[▁_ ]calls?[▁_ ]end[|｜]>|\Z)", re.S | re.I),
    re.compile(r"\[TOOL_CALLS\].*\Z", re.S),
    re.compile(r"<[|｜][^<>]{0,60}?[|｜]>"),
]
_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_THINK_CLOSE = re.compile(r"^.*?</think(?:ing)?>", re.S | re.I)  # reasoning whose opening tag was cut off
_FENCED_CODE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]*)\)")
# A URL ends before trailing sentence punctuation ("see https://x.org/a." keeps its period).
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'，。！？、）)\]]+(?<![.,;:!?])"
                  r"|\bwww\.[^\s<>\"'，。！？、）)\]]+(?<![.,;:!?])", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.M)
_BLOCKQUOTE = re.compile(r"^\s{0,3}>\s?", re.M)
_BULLET = re.compile(r"^\s*[-*+•]\s+", re.M)
_RULE = re.compile(r"^\s*([-*_=])(?:\s*\1){2,}\s*$", re.M)
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$", re.M)
_EMPHASIS = [
    re.compile(r"\*\*(.+?)\*\*", re.S),
    re.compile(r"__(.+?)__", re.S),
    re.compile(r"~~(.+?)~~", re.S),
    re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"),
    re.compile(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])"),
]
_TOOL_KEYS = {"name", "arguments", "function", "tool", "tool_call", "tool_calls", "parameters", "args", "action",
              "action_input"}
_JSON_KEY = re.compile(r'"([A-Za-z_][\w-]*)"\s*:')
_LEFTOVER_MARKS = re.compile(r"[*#`|<>{}\[\]\\^~]+")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\s*\n\s*")


@dataclass
class SanitizeResult:
    text: str
    # kind -> [count, characters removed]
    dropped: dict[str, list[int]] = field(default_factory=dict)

    def _drop(self, kind: str, chars: int) -> None:
        entry = self.dropped.setdefault(kind, [0, 0])
        entry[0] += 1
        entry[1] += chars

    @property
    def changed(self) -> bool:
        return bool(self.dropped)

    def summary(self) -> str:
        """A log line naming what was removed, without any of the removed content."""
        if not self.dropped:
            return "nothing dropped"
        return ", ".join(f"{count} {kind} ({chars} chars)" for kind, (count, chars) in sorted(self.dropped.items()))


def sanitize_for_speech(text: str) -> SanitizeResult:
    """Return the speakable part of `text` and a record of what was removed."""
    result = SanitizeResult(text="")
    if text.strip() == SILENCE_MARKER:
        result._drop("silence marker", len(text))
        return result

    def cut(pattern: re.Pattern, kind: str, src: str, replacement: str = " ") -> str:
        def repl(match: re.Match) -> str:
            result._drop(kind, len(match.group(0)))
            return replacement
        return pattern.sub(repl, src)

    out = cut(_THINK_BLOCK, "think block", text)
    out = cut(_THINK_CLOSE, "think block", out)
    for pattern in _TOOL_BLOCKS:
        out = cut(pattern, "tool-call markup", out)
    out = cut(_FENCED_CODE, "code block", out)
    out = _drop_json_objects(out, result)
    out = cut(_INLINE_CODE, "inline code", out)
    out = cut(_IMAGE, "markdown image", out)

    def link(match: re.Match) -> str:
        result._drop("link target", len(match.group(2)) + 4)
        return match.group(1)
    out = _LINK.sub(link, out)
    out = cut(_URL, "url", out)
    out = cut(_HTML_TAG, "html tag", out)
    out = cut(_TABLE_SEPARATOR, "markdown table rule", out, "")
    out = cut(_RULE, "markdown rule", out, "")
    out = cut(_HEADING, "markdown heading mark", out, "")
    out = cut(_BLOCKQUOTE, "markdown quote mark", out, "")
    out = cut(_BULLET, "markdown list mark", out, "")
    for pattern in _EMPHASIS:
        out = _unwrap(pattern, out, result)
    if "|" in out:
        result._drop("markdown table mark", out.count("|"))
        out = out.replace("|", ", ")
    out = cut(_LEFTOVER_MARKS, "markup symbol", out)
    out = _SPACES.sub(" ", out)
    # Lines (headings, list items) become clauses, so they are not read as one run-on phrase.
    out = re.sub(r"(?<![\s,.!?;:，。！？；：、])[ ]*\n", ", ", out.strip())
    out = _BLANK_LINES.sub(" ", out).strip(" ,;")
    out = re.sub(r"\s+([,.!?;:，。！？；：、])", r"\1", out)
    out = re.sub(r"([,，、])(?:\s*[,，、])+", r"\1", out)
    result.text = out.strip()
    return result


def _unwrap(pattern: re.Pattern, src: str, result: SanitizeResult) -> str:
    def repl(match: re.Match) -> str:
        result._drop("markdown emphasis", len(match.group(0)) - len(match.group(1)))
        return match.group(1)
    return pattern.sub(repl, src)


def _drop_json_objects(src: str, result: SanitizeResult) -> str:
    """Remove balanced {...} objects with quoted keys (tool calls and other JSON)."""
    out: list[str] = []
    i = 0
    while i < len(src):
        if src[i] == "{":
            end = _matching_brace(src, i)
            if end is not None:
                body = src[i:end + 1]
                keys = set(_JSON_KEY.findall(body))
                if keys:
                    result._drop("tool-call json" if keys & _TOOL_KEYS else "json", len(body))
                    out.append(" ")
                    i = end + 1
                    continue
        out.append(src[i])
        i += 1
    return "".join(out)


def _matching_brace(src: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for j in range(start, len(src)):
        ch = src[j]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
    return None
