"""Reading the user's documents into sections of paragraphs, each section with its locator.

One reader per format, each a well-kept parser: `pypdf` (a page is a section, "page N"),
`python-docx` (headings by paragraph style), `lxml.html` (h1..h6), `markdown-it-py`
(CommonMark headings, lists, tables); .txt and .md bytes are decoded with the encoding
`charset-normalizer` detects (Chinese files are often GBK or Big5). Headings give the
heading path of the paragraphs under them ("Opening hours > Weekends").

A file that cannot be read raises `DocumentError` with a message naming the file and saying
why (encrypted or corrupt PDF, a binary file named .txt, undecodable text, no text at all,
too large); the caller indexes every other file.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import FayError

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx")
HEADING_SEPARATOR = " > "


class DocumentError(FayError):
    """A file that cannot be indexed; str() names the file and the reason."""


@dataclass
class Section:
    """Paragraphs under one locator (a heading path, a page, "" for a flat text)."""

    locator: str
    paragraphs: list[str] = field(default_factory=list)


def read_document(path: Path, display_name: str, max_bytes: int) -> list[Section]:
    """The sections of the file at `path` (named `display_name` in errors), in reading order,
    without empty ones. Raises DocumentError."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise DocumentError(f"{display_name}: unsupported file type {suffix or '(none)'!r}")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DocumentError(f"{display_name}: cannot read ({exc.strerror or exc})") from None
    if size > max_bytes:
        raise DocumentError(
            f"{display_name}: too large ({size / 1e6:.1f} MB > max_file_mb {max_bytes / 1e6:.1f} MB); "
            "split it or raise max_file_mb"
        )
    if size == 0:
        raise DocumentError(f"{display_name}: empty file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{display_name}: cannot read ({exc.strerror or exc})") from None
    if suffix == ".pdf":
        sections = _read_pdf(data, display_name)
    elif suffix == ".docx":
        sections = _read_docx(data, display_name)
    elif suffix in (".html", ".htm"):
        sections = _read_html(data, display_name)
    elif suffix in (".md", ".markdown"):
        sections = _read_markdown(decode_text(data, display_name))
    else:
        sections = _read_plain(decode_text(data, display_name))
    sections = [s for s in sections if s.paragraphs]
    if not sections:
        raise DocumentError(f"{display_name}: no text to index")
    return sections


# ------------------------------------------------------------------ text encodings

# A text file with this share of control characters (other than tab/newline/CR/form feed)
# is binary, whatever charset-normalizer guesses for it.
_MAX_CONTROL_SHARE = 0.01


def decode_text(data: bytes, display_name: str) -> str:
    """The text of a file's bytes: UTF-8 (with or without BOM) when it decodes, else the
    encoding charset-normalizer detects (GBK/GB18030, Big5, Latin-1 ...)."""
    if b"\x00" in data[:65536]:
        raise DocumentError(f"{display_name}: a binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        from charset_normalizer import from_bytes

        best = from_bytes(data).best()
        if best is None:
            raise DocumentError(f"{display_name}: undecodable text (no known encoding fits)") from None
        text = str(best)
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f")
    if text and controls / len(text) > _MAX_CONTROL_SHARE:
        raise DocumentError(f"{display_name}: a binary file, not text")
    return text


# ------------------------------------------------------------------ plain text and Markdown

_BLANK_LINE = re.compile(r"\n\s*\n")


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _BLANK_LINE.split(text.replace("\r\n", "\n").replace("\r", "\n")) if p.strip()]


def _read_plain(text: str) -> list[Section]:
    return [Section("", _paragraphs(text))]


def _inline_text(token) -> str:
    """The words of a Markdown inline token, markup dropped (links keep their text, images
    their alt text)."""
    parts = []
    for child in token.children or ():
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content if child.type != "html_inline" else "")
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts).strip()


def _read_markdown(text: str) -> list[Section]:
    """CommonMark (with tables) parsed by markdown-it-py: a section per heading (ATX or
    underlined), a paragraph per paragraph, list item, table row or code block."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    sections: list[Section] = [Section("")]
    headings: list[tuple[int, str]] = []
    row: list[str] | None = None
    in_heading = 0
    for token in tokens:
        if token.type == "heading_open":
            in_heading = int(token.tag[1])
        elif token.type == "inline" and in_heading:
            level, title = in_heading, _inline_text(token).replace("\n", " ")
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, title))
            sections.append(Section(HEADING_SEPARATOR.join(t for _, t in headings)))
            in_heading = 0
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(_inline_text(token))
        elif token.type == "tr_close" and row is not None:
            if any(row):
                sections[-1].paragraphs.append("  ".join(cell for cell in row if cell))
            row = None
        elif token.type == "inline":
            words = _inline_text(token)
            if words:
                sections[-1].paragraphs.append(words)
        elif token.type in ("fence", "code_block") and token.content.strip():
            sections[-1].paragraphs.append(token.content.strip())
    return sections


# ------------------------------------------------------------------ HTML

_HTML_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HTML_BLOCKS = {"p", "li", "pre", "blockquote", "dt", "dd", "caption", "tr", "figcaption", "address"}
_HTML_SKIPPED = {"script", "style", "noscript", "template", "nav", "head"}
_SPACES = re.compile(r"[ \t\u00a0]+")


def _read_html(data: bytes, display_name: str) -> list[Section]:
    import lxml.etree
    import lxml.html

    try:
        # bytes, so lxml honours the page's own <meta charset>; it falls back to detection
        root = lxml.html.document_fromstring(data)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise DocumentError(f"{display_name}: not readable HTML ({exc})") from None
    sections: list[Section] = [Section("")]
    headings: list[tuple[int, str]] = []

    def text_of(element) -> str:
        if element.tag == "tr":
            cells = [_SPACES.sub(" ", c.text_content()).strip() for c in element if isinstance(c.tag, str)]
            return "  ".join(c for c in cells if c)
        return "\n".join(
            line for line in (_SPACES.sub(" ", x).strip() for x in element.text_content().split("\n")) if line
        )

    def walk(element) -> None:
        for child in element:
            if not isinstance(child.tag, str) or child.tag in _HTML_SKIPPED:
                continue
            if child.tag in _HTML_HEADINGS:
                level = _HTML_HEADINGS[child.tag]
                title = text_of(child).replace("\n", " ")
                while headings and headings[-1][0] >= level:
                    headings.pop()
                headings.append((level, title))
                sections.append(Section(HEADING_SEPARATOR.join(t for _, t in headings)))
            elif child.tag in _HTML_BLOCKS:
                text = text_of(child)
                if text:
                    sections[-1].paragraphs.append(text)
            else:
                loose = (child.text or "").strip()
                if loose and child.tag in ("div", "section", "article", "main", "body", "td"):
                    sections[-1].paragraphs.append(_SPACES.sub(" ", loose))
                walk(child)
                tail = (child.tail or "").strip()
                if tail and element.tag in ("div", "section", "article", "main", "body"):
                    sections[-1].paragraphs.append(_SPACES.sub(" ", tail))

    body = root.find("body")
    walk(body if body is not None else root)
    return sections


# ------------------------------------------------------------------ DOCX


def _read_docx(data: bytes, display_name: str) -> list[Section]:
    import io
    import zipfile

    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise DocumentError(f"{display_name}: not a readable .docx ({exc})") from None
    except Exception as exc:  # python-docx/lxml raise many kinds on a damaged package
        raise DocumentError(f"{display_name}: not a readable .docx ({type(exc).__name__}: {exc})") from None
    sections: list[Section] = [Section("")]
    headings: list[tuple[int, str]] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            text = item.text.strip()
            if not text:
                continue
            style = (item.style.name if item.style is not None else "") or ""
            level = 0
            if style == "Title":
                level = 1
            elif style.startswith("Heading "):
                level = int(style.split()[-1]) + 1 if style.split()[-1].isdigit() else 0
            if level:
                while headings and headings[-1][0] >= level:
                    headings.pop()
                headings.append((level, text))
                sections.append(Section(HEADING_SEPARATOR.join(t for _, t in headings)))
            else:
                sections[-1].paragraphs.append(text)
        elif isinstance(item, Table):
            for row in item.rows:
                cells: list[str] = []
                for cell in row.cells:  # a merged cell repeats: keep it once
                    value = cell.text.strip()
                    if value and (not cells or cells[-1] != value):
                        cells.append(value)
                if cells:
                    sections[-1].paragraphs.append("  ".join(cells))
    return sections


# ------------------------------------------------------------------ PDF

# A line repeated on at least this share of a document's pages (3 pages or more), at the top
# or bottom of a page, is a running header or footer, not content ("Museum Guide 2024 - 3").
_RUNNING_LINE_SHARE = 0.5
_DIGITS = re.compile(r"\d+")
_SENTENCE_END = tuple(".!?;:。！？；：…”」』)）")


def _read_pdf(data: bytes, display_name: str) -> list[Section]:
    import io

    import pypdf
    import pypdf.errors

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # an owner-password-only PDF opens with the empty user password
            try:
                opened = reader.decrypt("")
            except Exception:  # pypdf raises several kinds for an unsupported cipher
                opened = pypdf.PasswordType.NOT_DECRYPTED
            if opened == pypdf.PasswordType.NOT_DECRYPTED:
                raise DocumentError(f"{display_name}: encrypted PDF (password protected); decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except (pypdf.errors.PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentError(f"{display_name}: corrupt or unreadable PDF ({exc})") from None
    page_lines = [[line.strip() for line in page.split("\n")] for page in pages]
    running = _running_lines(page_lines)
    sections = []
    for number, lines in enumerate(page_lines, start=1):
        kept = [line for line in lines if _DIGITS.sub("#", line) not in running]
        sections.append(Section(f"page {number}", _join_pdf_lines(kept)))
    if not any(s.paragraphs for s in sections):
        raise DocumentError(f"{display_name}: the PDF has no text (a scan without a text layer?)")
    return sections


def _running_lines(page_lines: list[list[str]]) -> set[str]:
    if len(page_lines) < 3:
        return set()
    counts: Counter[str] = Counter()
    for lines in page_lines:
        content = [line for line in lines if line]
        edges = {_DIGITS.sub("#", line) for line in content[:2] + content[-2:]}
        counts.update(edges)
    return {line for line, n in counts.items() if n >= _RUNNING_LINE_SHARE * len(page_lines) and line}


def _join_pdf_lines(lines: list[str]) -> list[str]:
    """A PDF's text lines as paragraphs: a blank line ends a paragraph; a line that does not
    end a sentence continues on the next (a PDF breaks lines where the page is full)."""
    paragraphs: list[str] = []
    current = ""
    for line in lines:
        if not line:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        if not current:
            current = line
        elif current.endswith("-") and current[-2:-1].isalpha() and line[:1].islower():
            current = current[:-1] + line  # a word hyphenated at the line end
        elif _is_cjk_edge(current[-1]) and _is_cjk_edge(line[0]):
            current += line
        else:
            current += " " + line
        if current.endswith(_SENTENCE_END) and len(line) < 40:
            # a short line ending a sentence is the last line of its paragraph
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return paragraphs


def _is_cjk_edge(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef"
