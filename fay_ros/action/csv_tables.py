"""Reading the editable CSV tables: errors that name file, line and problem.

Both tables (action rules, sentiment lexicon) are UTF-8 CSV files a person edits in a
spreadsheet. Reading collects every problem of a file, not only the first, so a tuner fixes
them in one go; a table with any error is rejected as a whole (the caller keeps its last
good table). Problems are `fay_ros.common.errors.Issue`s of one TableError, `file:line:
problem` each.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..common.errors import Issue, read_table_text


@dataclass
class CsvRow:
    line: int
    cells: dict[str, str]
    extra: list[str] = field(default_factory=list)  # cells beyond the header's columns
    missing: int = 0  # known header columns the row lacks
    header: tuple[str, ...] = ()  # the file's header, as written (stripped)


def read_text(path: Path) -> str:
    """The file as text; a byte that is not UTF-8 is reported with its line."""
    return read_table_text(path, utf8_hint="save the file as 'CSV UTF-8' in the spreadsheet")


def read_rows(
    path: Path, columns: tuple[str, ...], issues: list[Issue], required: tuple[str, ...] | None = None
) -> Iterator[CsvRow]:
    """Rows of a CSV whose header names the `required` columns (default: all `columns`; any
    order). A known column the header lacks is absent from `cells`; unknown columns are
    ignored. Blank rows and rows whose first cell starts with '#' are skipped (comments).
    """
    required = columns if required is None else required
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    line = 0
    try:
        for cells in reader:
            first_line, line = line + 1, reader.line_num
            if not any(c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [c.strip() for c in cells]
                missing = [c for c in required if c not in header]
                if missing:
                    hint = (
                        " (the file uses ';' between cells: save it as CSV with commas)"
                        if len(header) == 1 and ";" in header[0]
                        else ""
                    )
                    issues.append(
                        Issue(
                            first_line,
                            f"header lacks column(s) {', '.join(missing)}; expected: {','.join(columns)}{hint}",
                        )
                    )
                    return
                continue
            row = CsvRow(first_line, {}, header=tuple(header))
            for i, name in enumerate(header):
                if i < len(cells):
                    row.cells[name] = cells[i].strip()
                elif name in columns:
                    row.missing += 1
            row.extra = [c for c in cells[len(header) :] if c.strip()]
            yield row
    except csv.Error as exc:
        issues.append(Issue(line + 1, f"unreadable CSV: {exc}"))
        return
    if header is None:
        issues.append(Issue(0, f"empty table (expected a header: {','.join(columns)})"))


def parse_float(text: str, name: str, low: float, high: float, issues: list[Issue], line: int) -> float | None:
    try:
        value = float(text)
    except ValueError:
        issues.append(Issue(line, f"{name} {text!r} is not a number"))
        return None
    if not (low <= value <= high):  # also rejects nan
        issues.append(Issue(line, f"{name} {text} is outside {low:g}..{high:g}"))
        return None
    return value
