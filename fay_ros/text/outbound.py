"""Outbound sanitising: the one gate reply text passes before it leaves the dialogue.

The `reply` topic feeds the voice, the subtitles of the face, memory and action semantics,
so what is published there must be what the companion says and nothing else. A model's
answer can carry reasoning (`<think>`), tool calls (JSON, `<tool_call>` blocks, DeepSeek
DSML, Mistral `[TOOL_CALLS]`, `<|...|>` special tokens), code and markdown/HTML markup; the
seed's rule (003, "出站"): strip markdown, intercept leaked tool-call / DSML markers, and
never send an empty result as a message (the engine says a plain fallback line instead).

Two stages, both here:

- structure (`OutboundStream`, on the token stream): think blocks (`think.py`), tool-call
  blocks and markers, chat-template special tokens, JSON objects, fenced code, and the
  markdown marks that live at a line start (heading, quote, list marks, rules, table rules).
  These span sentences and stream deltas, so they are removed before the reply is split
  into sentences: a possible start (`<`, `{`, `[`, a backtick, a line start) is held back
  until the next characters decide it, so no part of a blob reaches an earlier sentence.
  A turn-boundary token (`<|im_end|>`, `<|im_start|>`, `[INST]`, ...) or `[TOOL_CALLS]` ends
  the reply: everything after it is dropped and `ended` tells the caller to stop reading.
- inline (`clean_inline`, per piece): emphasis, links and images, URLs, HTML tags and
  entities, inline code, table pipes, stray marks, spacing.

`sanitize(text)` runs both on a whole text (stock lines, qa answers, `fay-ros say`); it is
idempotent, so a piece that was cleaned on the stream passes it again unchanged except for
inline marks. What was removed is recorded by kind, count and length only (`Dropped`),
never the removed content itself, which may hold secrets (a URL with a token, tool
arguments, reasoning about the user).

Plain text stays as it is: "I like C++ and 3 * 4 = 12", "{1, 2, 3}", "snake_case", "#1".
Emoji and stage directions are the reply guard's business (a persona may allow emoji).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from .processors import run_whole
from .think import ThinkStripper

# kinds of removed text, as the log names them
THINK = "think block"
TOOL_MARKUP = "tool-call markup"
TOOL_JSON = "tool-call json"
JSON = "json"
TEMPLATE = "template token"
CODE_BLOCK = "code block"
SILENCE = "silence marker"
HEADING = "markdown heading mark"
QUOTE = "markdown quote mark"
LIST = "markdown list mark"
RULE = "markdown rule"
TABLE_RULE = "markdown table rule"


class Dropped(dict):
    """What was removed: kind -> [count, characters]. Never the content."""

    def add(self, kind: str, chars: int, count: int = 1) -> None:
        entry = self.setdefault(kind, [0, 0])
        entry[0] += count
        entry[1] += chars

    def summary(self) -> str:
        """A log line naming what was removed, without any of the removed content."""
        if not self:
            return "nothing dropped"
        return ", ".join(f"{count} {kind} ({chars} chars)" for kind, (count, chars) in sorted(self.items()))


@dataclass
class SanitizeResult:
    text: str
    dropped: Dropped = field(default_factory=Dropped)

    @property
    def changed(self) -> bool:
        return bool(self.dropped)

    def summary(self) -> str:
        return self.dropped.summary()


# -- structure ---------------------------------------------------------------------------------

# XML-style tool-call wrappers: Hermes/Qwen <tool_call>, <function_calls><invoke> blocks,
# Gemma <tool_code>, and a model writing the tool's answer itself (<tool_response>).
_TOOL_TAGS = (
    "tool_call",
    "tool_calls",
    "function_call",
    "function_calls",
    "tool_code",
    "tool_use",
    "tool_response",
    "invoke",
)
_TOOL_TAG = re.compile(
    r"<(/?)(" + "|".join(sorted(_TOOL_TAGS, key=len, reverse=True)) + r")(?=[\s/>])[^<>]{0,200}>", re.I
)
_TAG_START = re.compile(r"</?([A-Za-z_]*)")
# DeepSeek V3.2 DSML: <｜DSML｜function_calls> <｜DSML｜invoke name=..> ... </｜DSML｜function_calls>
_DSML = re.compile(r"<(/?)[|｜]DSML[|｜]([^<>]{0,200})>", re.I)
_DSML_PARTIAL = re.compile(r"</?[|｜]DSML[|｜][^<>]{0,200}", re.I)
_DSML_PREFIXES = ("<｜dsml｜", "</｜dsml｜", "<|dsml|", "</|dsml|")
_DSML_CLOSE = re.compile(r"</[|｜]DSML[|｜]function_calls\s*>", re.I)
# chat-template special tokens: <|im_end|>, <｜tool▁calls▁begin｜>, <|python_tag|>, ...
_SPECIAL = re.compile(r"<[|｜]([^<>|｜\n]{1,60})[|｜]>")
_SPECIAL_PARTIAL = re.compile(r"<(?:[|｜][^<>|｜\n]{0,60}[|｜]?)?")
# tokens that close the assistant's turn or open another one: nothing after them is this reply
_TURN_TOKENS = {
    "im_end",
    "im_start",
    "eot_id",
    "eom_id",
    "end_of_turn",
    "start_of_turn",
    "endoftext",
    "end_of_text",
    "end_of_sentence",
    "eos",
    "start_header_id",
    "end_header_id",
    "user",
    "system",
    "end",
    "return",
}
# Llama-2 style turn markers, Mistral's tool-call marker, and the group-chat "say nothing" marker
_BRACKET_TOKENS = {
    "[TOOL_CALLS]": (TOOL_MARKUP, True),
    "[INST]": (TEMPLATE, True),
    "[/INST]": (TEMPLATE, True),
}
# The group-chat "say nothing" marker (seed 003: a reply of only [SILENCE] is no reply), in
# whatever case and spacing a model writes it, with ASCII or full-width (【】) brackets: small
# models copy the marker from the prompt in the style of the surrounding text.
_SILENCE_TOKEN = re.compile(r"[\[【]\s*silence\s*[\]】]", re.I)
_SILENCE_PARTIAL = re.compile(r"[\[【]\s*(?:s(?:i(?:l(?:e(?:n(?:c(?:e\s*)?)?)?)?)?)?)?", re.I)
_ANGLE_TOKENS = {"<<SYS>>": TEMPLATE, "<</SYS>>": TEMPLATE}
_TOOL_KEYS = {
    "name",
    "arguments",
    "function",
    "tool",
    "tool_call",
    "tool_calls",
    "parameters",
    "args",
    "action",
    "action_input",
    "tool_name",
    "tool_input",
}
_INTERESTING = re.compile(r"[<{\[`~\n【]")
# line-start markdown
_RULE_CHARS = set(" \t\r-*_=|:")
_RULE_LINE = re.compile(r"[ \t]{0,3}([-*_=])(?:[ \t]*\1){2,}[ \t\r]*")
_TABLE_RULE_LINE = re.compile(r"[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t\r]*")
_HEADING_MARK = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_HEADING_PARTIAL = re.compile(r"[ \t]{0,3}#{1,6}")
_QUOTE_MARK = re.compile(r"[ \t]{0,3}(?:>[ \t]?)+")
_LIST_MARK = re.compile(r"[ \t]{0,3}[-*+•][ \t]+(?=\S)")
_LIST_PARTIAL = re.compile(r"[ \t]{0,3}[-*+•][ \t]*")

_HOLD = object()  # "the next characters decide": keep the rest in the buffer
_TEXT, _BLOCK, _REGION, _JSON, _FENCE, _ENDED = range(6)


class OutboundStream:
    """Feed content chunks, get back the text without structure (see the module doc);
    `flush()` at the end of the stream. `ended` is true once a turn boundary was seen.
    A text processor (`processors.py`)."""

    def __init__(self, dropped: Dropped | None = None) -> None:
        self.dropped = dropped if dropped is not None else Dropped()
        self._think = ThinkStripper()
        self._buf = ""
        self._mode = _TEXT
        self._kind = ""  # of the structure being dropped
        self._line_start = True
        self._close: re.Pattern[str] | None = None  # _BLOCK: the closing tag
        self._fence = ""  # _FENCE: the opening fence
        self._json = (0, 0, "", False)  # _JSON: scanned position, depth, open string's quote, escaped
        self._json_quote = '"'

    @property
    def ended(self) -> bool:
        return self._mode == _ENDED

    def feed(self, chunk: str) -> list[str]:
        return self._pieces(self._run(self._thought(self._think.feed(chunk)), final=False))

    def flush(self) -> list[str]:
        out = self._run(self._thought(self._think.flush()), final=True)
        self._buf = ""
        return self._pieces(out)

    @staticmethod
    def _pieces(text: str) -> list[str]:
        return [text] if text else []

    def _thought(self, pieces: list[str]) -> str:
        """The think stage's text; accounts what it removed since the last call."""
        blocks, chars = self._think.blocks, self._think.dropped_chars
        if blocks or chars:
            self.dropped.add(THINK, chars, blocks)
            self._think.blocks = self._think.dropped_chars = 0
        return "".join(pieces)

    # -- the scanner ------------------------------------------------------------------------
    def _run(self, text: str, final: bool) -> str:
        self._buf += text
        out: list[str] = []
        while self._buf:
            if self._mode == _TEXT:
                if not self._scan_text(out, final):
                    break
            elif self._mode == _ENDED:
                self._drop_chars(len(self._buf))
            elif self._mode == _BLOCK:
                if not self._scan_block(final):
                    break
            elif self._mode == _REGION:
                if not self._scan_region(final):
                    break
            elif self._mode == _FENCE:
                if not self._scan_fence(final):
                    break
            elif not self._scan_json(out, final):
                break
        return "".join(out)

    def _take(self, n: int) -> str:
        taken, self._buf = self._buf[:n], self._buf[n:]
        return taken

    def _drop_chars(self, n: int) -> None:
        self.dropped.add(self._kind, n, count=0)
        self._buf = self._buf[n:]

    def _start(self, mode: int, kind: str, n: int) -> None:
        """Enter a dropping mode at the start of the buffer, consuming `n` characters."""
        self._mode, self._kind = mode, kind
        self.dropped.add(kind, n)
        self._buf = self._buf[n:]

    def _drop_token(self, kind: str, n: int) -> None:
        self.dropped.add(kind, n)
        self._buf = self._buf[n:]

    def _scan_text(self, out: list[str], final: bool) -> bool:
        """Release text up to the next possible structure; False when the buffer must wait."""
        if self._line_start:
            decision = _line_marker(self._buf, final)
            if decision is _HOLD:
                return False
            n, kind = decision
            if kind:
                self._drop_token(kind, n)
                self._line_start = kind == RULE or kind == TABLE_RULE  # a dropped line ends at its newline
                return True
            self._line_start = False
        m = _INTERESTING.search(self._buf)
        if m is None:
            out.append(self._take(len(self._buf)))
            return True
        if m.start():
            out.append(self._take(m.start()))
            return True
        ch = self._buf[0]
        if ch == "\n":
            out.append(self._take(1))
            self._line_start = True
            return True
        decision = {
            "<": self._angle,
            "{": self._brace,
            "[": self._bracket,
            "【": self._bracket,
            "`": self._fence_open,
            "~": self._fence_open,
        }[ch](final)
        if decision is _HOLD:
            return False
        if decision is None:  # plain text after all
            out.append(self._take(1))
        return True

    def _angle(self, final: bool):
        rest = self._buf
        m = _DSML.match(rest)
        if m:
            if not m.group(1) and m.group(2).strip().lower().startswith("function_calls"):
                self._close = _DSML_CLOSE
                self._start(_BLOCK, TOOL_MARKUP, m.end())
            else:
                self._drop_token(TOOL_MARKUP, m.end())
            return True
        m = _SPECIAL.match(rest)
        if m:
            token = _token_class(m.group(1))
            if token == "end":
                self._start(_ENDED, TEMPLATE, m.end())
            elif token == "tool_begin":
                self._start(_REGION, TOOL_MARKUP, m.end())
            else:
                self._drop_token(TOOL_MARKUP if token == "tool_end" else TEMPLATE, m.end())
            return True
        m = _TOOL_TAG.match(rest)
        if m:
            closing, name = m.group(1), m.group(2).lower()
            if closing or m.group(0).endswith("/>"):
                self._drop_token(TOOL_MARKUP, m.end())  # a stray closing or empty tag
            else:
                self._close = re.compile(rf"</{name}\s*>", re.I)
                self._start(_BLOCK, TOOL_MARKUP, m.end())
            return True
        for token, kind in _ANGLE_TOKENS.items():
            if rest.startswith(token):
                self._start(_ENDED, kind, len(token))
                return True
        if final:
            return None
        lower = rest.lower()
        if (
            _SPECIAL_PARTIAL.fullmatch(rest)
            or _DSML_PARTIAL.fullmatch(rest)
            or any(p.startswith(lower) for p in _DSML_PREFIXES)
            or any(t.startswith(rest) for t in _ANGLE_TOKENS)
            or _tool_tag_undecided(rest)
        ):
            return _HOLD
        return None

    def _brace(self, final: bool):
        body = self._buf[1:].lstrip(" \t\r\n")
        if not body:
            return None if final else _HOLD
        if body[0] not in "\"'":
            return None
        # strings are delimited by the quote the object starts with: JSON's " or a Python dict's '
        self._mode, self._kind, self._json_quote = _JSON, "", body[0]
        self._json = (1, 1, "", False)
        return True

    def _bracket(self, final: bool):
        silence = _SILENCE_TOKEN.match(self._buf)
        if silence:
            self._drop_token(SILENCE, silence.end())
            return True
        if not final and _SILENCE_PARTIAL.fullmatch(self._buf):
            return _HOLD
        for token, (kind, ends) in _BRACKET_TOKENS.items():
            if self._buf.startswith(token):
                if ends:
                    self._start(_ENDED, kind, len(token))
                else:
                    self._drop_token(kind, len(token))
                return True
        if not final and any(token.startswith(self._buf) for token in _BRACKET_TOKENS):
            return _HOLD
        return None

    def _fence_open(self, final: bool):
        mark = self._buf[0] * 3
        if self._buf.startswith(mark):
            self._fence = mark
            self._start(_FENCE, CODE_BLOCK, len(mark))
            return True
        if not final and mark.startswith(self._buf):
            return _HOLD
        return None

    def _scan_block(self, final: bool) -> bool:
        m = self._close.search(self._buf) if self._close else None
        if m:
            self._drop_chars(m.end())
            self._mode = _TEXT
            return True
        if final:
            self._drop_chars(len(self._buf))  # never closed: dropped to the end
            return True
        # keep a possible start of the closing tag
        cut = self._buf.rfind("<")
        keep = len(self._buf) - cut if cut >= 0 and len(self._buf) - cut < 64 else 0
        self._drop_chars(len(self._buf) - keep)
        return False

    def _scan_region(self, final: bool) -> bool:
        """Inside special-token tool-call markup: until a tool-call end token."""
        for m in _SPECIAL.finditer(self._buf):
            token = _token_class(m.group(1))
            if token == "end":
                self._drop_chars(m.start())
                self._drop_token(TEMPLATE, m.end() - m.start())
                self._mode, self._kind = _ENDED, TEMPLATE
                return True
            if token == "tool_end":
                self._drop_chars(m.end())
                self._mode = _TEXT
                return True
        cut = self._buf.rfind("<")
        keep = 0
        if not final and cut >= 0 and _SPECIAL_PARTIAL.fullmatch(self._buf[cut:]):
            keep = len(self._buf) - cut
        self._drop_chars(len(self._buf) - keep)
        return False

    def _scan_fence(self, final: bool) -> bool:
        end = self._buf.find(self._fence)
        if end >= 0:
            stop = end + len(self._fence)
            while stop < len(self._buf) and self._buf[stop] == self._fence[0]:
                stop += 1
            self._drop_chars(stop)
            self._mode = _TEXT
            return True
        keep = 0 if final else len(self._buf) - len(self._buf.rstrip(self._fence[0]))
        self._drop_chars(len(self._buf) - min(keep, 2))
        return False

    def _scan_json(self, out: list[str], final: bool) -> bool:
        """A `{` followed by a quote: held until it balances; dropped when it has keys."""
        pos, depth, quote, escaped = self._json
        buf = self._buf
        while pos < len(buf) and depth:
            ch = buf[pos]
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = ""
            elif ch == self._json_quote:
                quote = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            pos += 1
        self._json = (pos, depth, quote, escaped)
        if depth and not final:
            return False
        body = buf[:pos]
        keys = set(_JSON_KEY.findall(body))
        self._mode = _TEXT
        if keys:
            self.dropped.add(TOOL_JSON if keys & _TOOL_KEYS else JSON, len(body))
            self._buf = buf[pos:]
        else:
            out.append(self._take(pos))  # braces in prose: "{1, 2, 3}"
        return True


_JSON_KEY = re.compile(r"[\"']([A-Za-z_][\w\-]*)[\"']\s*:")


def _token_class(name: str) -> str:
    n = name.strip().lower().replace("▁", "_").replace(" ", "_").replace("-", "_")
    if n in _TURN_TOKENS:
        return "end"
    if n == "python_tag" or any(word in n for word in ("tool", "function", "call")):
        return "tool_end" if "end" in n or n.startswith("/") else "tool_begin"
    return "other"


def _tool_tag_undecided(rest: str) -> bool:
    """`rest` (starting with "<") may still become an XML tool-call tag."""
    m = _TAG_START.match(rest)
    if m is None:  # not a tag start at all
        return False
    name, after = m.group(1).lower(), rest[m.end() :]
    if not after:
        return any(tag.startswith(name) for tag in _TOOL_TAGS)
    return name in _TOOL_TAGS and after[0] in " \t\r\n/" and ">" not in after and len(after) < 200


def _line_marker(buf: str, final: bool):
    """At a line start: (characters to drop, kind), (0, "") for none, or _HOLD."""
    newline = buf.find("\n")
    line = buf if newline < 0 else buf[:newline]
    complete = newline >= 0 or final
    if line.strip() and set(line) <= _RULE_CHARS:
        if not complete:
            return _HOLD  # "---", "* * *", "|---|---|" or the start of "- item" / "**bold**"
        whole = len(line) + (newline >= 0)
        if _RULE_LINE.fullmatch(line):
            return whole, RULE
        if "-" in line and _TABLE_RULE_LINE.fullmatch(line):
            return whole, TABLE_RULE
    elif not line.strip():
        return _HOLD if not complete else (0, "")
    for mark, kind in ((_HEADING_MARK, HEADING), (_QUOTE_MARK, QUOTE), (_LIST_MARK, LIST)):
        m = mark.match(line)
        if m and (kind != QUOTE or ">" in m.group(0)):
            # a mark that reaches the end of an unfinished line may still grow ("#" -> "## ")
            return _HOLD if not complete and m.end() == len(line) else (m.end(), kind)
    if not complete and (_HEADING_PARTIAL.fullmatch(line) or _LIST_PARTIAL.fullmatch(line)):
        return _HOLD
    return 0, ""


def strip_structure(text: str, dropped: Dropped | None = None) -> str:
    """Whole-text version of OutboundStream."""
    return "".join(run_whole(OutboundStream(dropped), text))


# -- inline ------------------------------------------------------------------------------------

_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,6}|#[xX][0-9A-Fa-f]{1,6});")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\n]*)\)")
_AUTOLINK = re.compile(r"<(?:(?:https?|ftp)://|www\.)[^\s<>]+>", re.I)
_EMAIL_AUTOLINK = re.compile(r"<([\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")
# A URL ends before trailing sentence punctuation ("see https://x.org/a." keeps its period).
_URL = re.compile(
    r"\b(?:https?|ftp)://[^\s<>\"'，。！？、）)\]]+(?<![.,;:!?])"
    r"|\bwww\.[^\s<>\"'，。！？、）)\]]+(?<![.,;:!?])",
    re.I,
)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_INLINE_CODE = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_CODE_WORD = re.compile(r"[\w.+#-]{1,40}")  # `C++`, `fay-ros`, `config.yaml`: a name, said as a word
_EMPHASIS = [
    re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"),
    re.compile(r"(~~)(?=\S)(.+?)(?<=\S)~~"),
    re.compile(r"(?<![*\d\\])(\*)(?=[^\s*])(.+?)(?<=[^\s*\\])\*(?![*\d])"),
    re.compile(r"(?<![\w\\])(_)(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"),
]
_STRAY_MARKS = re.compile(
    r"\*{2,}|_{2,}|~{2,}|`+|(?:^|(?<=\s))\*+(?=\S)|(?<=\S)(?<!\\)\*+(?=\s|$)"
    r"|(?:^|(?<=\s))_+(?=\w)|(?<=\w)_+(?=\s|$)|(?:^|(?<=[\s.!?;:。！？；：]))#{1,6}(?=\s|$)"
)
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}|（\s*）|【\s*】")
_TABLE_EDGE = re.compile(r"^[ \t]*\||\|[ \t]*$", re.M)
_TABLE_CELL = re.compile(r"[ \t]*\|[ \t]*")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_LINE_EDGES = re.compile(r" *\n *")
_LINE_BREAK = re.compile(r"(?<![\s,.!?;:，。！？；：、…])[ ]*\n")
_BLANK_LINES = re.compile(r"\s*\n\s*")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.!?;:，。！？；：、])")
_SPACE_AFTER_CJK_PUNCT = re.compile(r"(?<=[。！？，；：、）」』】])[ ]+")
_REPEATED_COMMAS = re.compile(r"([,，、])(?:\s*[,，、])+")


def clean_inline(text: str, dropped: Dropped | None = None) -> str:
    """Markup inside a piece of text: unwrap what carries words (emphasis, link text, a code
    name), drop what does not (images, URLs, tags, code), tidy the spacing."""
    dropped = dropped if dropped is not None else Dropped()

    def cut(pattern: re.Pattern[str], kind: str, src: str, keep: int | None = None, instead: str = " ") -> str:
        def repl(m: re.Match[str]) -> str:
            kept = m.group(keep) if keep is not None else ""
            dropped.add(kind, len(m.group(0)) - len(kept))
            return kept if keep is not None else instead

        return pattern.sub(repl, src)

    out = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    out = cut(_IMAGE, "markdown image", out)
    out = cut(_LINK, "link target", out, keep=1)
    out = cut(_AUTOLINK, "url", out)
    out = cut(_EMAIL_AUTOLINK, "markup symbol", out, keep=1)
    out = cut(_URL, "url", out)
    out = cut(_HTML_TAG, "html tag", out)

    def code(m: re.Match[str]) -> str:
        body = m.group(2).strip()
        if _CODE_WORD.fullmatch(body):
            dropped.add("inline code mark", len(m.group(0)) - len(body))
            return body
        dropped.add("inline code", len(m.group(0)))
        return " "

    out = _INLINE_CODE.sub(code, out)
    for pattern in _EMPHASIS:
        out = cut(pattern, "markdown emphasis", out, keep=2)
    out = cut(_STRAY_MARKS, "markup symbol", out)
    if "|" in out:
        # table rows: the cells become a list ("| Fay | 3 |" -> "Fay, 3")
        out = cut(_TABLE_EDGE, "markdown table mark", out)
        out = cut(_TABLE_CELL, "markdown table mark", out, instead=", ")
    out = cut(_EMPTY_BRACKETS, "markup symbol", out)
    out = _SPACES.sub(" ", out)
    out = _LINE_EDGES.sub("\n", out).strip()
    # lines (headings, list items) become clauses, so they are not read as one run-on phrase
    out = _LINE_BREAK.sub(", ", out)
    out = _BLANK_LINES.sub(" ", out).strip(" ,;，；")
    out = _SPACE_AFTER_CJK_PUNCT.sub("", _SPACE_BEFORE_PUNCT.sub(r"\1", out))
    out = _REPEATED_COMMAS.sub(r"\1", out).strip()
    # a clause mark that markup removal left at the end goes, one the text itself ends with
    # stays: a long first sentence is released at its first comma (sentences.py), and the
    # voice pauses there
    clause_mark = text.rstrip()[-1:]
    return out + clause_mark if out and clause_mark in (",", ";", "，", "；") else out


def sanitize(text: str, dropped: Dropped | None = None) -> SanitizeResult:
    """The whole gate on a whole text: structure, then inline markup."""
    dropped = dropped if dropped is not None else Dropped()
    return SanitizeResult(clean_inline(strip_structure(text, dropped), dropped), dropped)
