"""A table file that is re-read when it changes, keeping the last good table on a bad edit.

The one rule for every hot-reloaded table (action rules and lexicon, servo and LED maps):

- Start-up: the file is loaded at once; a bad file raises its TableError, which is a
  ConfigError, so the node stops with exit code 2 and is not restarted.
- Change detection: the node calls `poll()` on a timer; the file counts as changed when its
  modification time (ns), size or inode differ from the last look. The inode catches editors
  and spreadsheets that save by writing a new file and renaming it over the old one; a
  `stat` per poll costs nothing, whatever the file's size.
- When to re-read: at the first poll that sees a change, and only then. The signature is
  taken before reading, so an edit that lands during the read is seen by the next poll.
- A rejected edit (the loader raises TableError, a missing file included) is reported once,
  with file, line and problem; the last good table stays in use until the file changes
  again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from .errors import TableError, display_path

T = TypeVar("T")

Signature = tuple[int, int, int] | None  # (mtime_ns, size, inode); None: no such file

REJECTED = "NOT reloaded, keeping the last good table"


def file_signature(path: Path | str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True)
class ReloadResult(Generic[T]):
    """What one poll did: `changed` (a new table is in use), the table in use, and `error`
    (the rejected edit's TableError text, given once per edit)."""

    path: Path
    changed: bool
    table: T
    error: str | None = None

    @property
    def message(self) -> str:
        """One log line (or block) for people; empty when nothing happened."""
        if self.error is not None:
            return f"{display_path(self.path)}: {REJECTED}:\n{self.error}"
        return f"{display_path(self.path)}: reloaded" if self.changed else ""


class ReloadingTable(Generic[T]):
    """A table loaded from `path` by `loader`, reloaded by `poll()` when the file changes."""

    def __init__(self, path: Path | str, loader: Callable[[Path], T]) -> None:
        self.path = Path(path)
        self._loader = loader
        self._signature = file_signature(self.path)
        self.table: T = loader(self.path)  # a bad table at start-up raises TableError (a ConfigError)

    def poll(self) -> ReloadResult[T]:
        """Reload if the file changed since the last look. Never raises for a bad file."""
        signature = file_signature(self.path)
        if signature == self._signature:
            return ReloadResult(self.path, False, self.table)
        self._signature = signature
        try:
            table = self._loader(self.path)
        except TableError as exc:
            return ReloadResult(self.path, False, self.table, str(exc))
        self.table = table
        return ReloadResult(self.path, True, table)
