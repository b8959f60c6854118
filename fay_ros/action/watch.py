"""Hot reload of the action tables: re-read a file when it changes, keep the last good tables.

The node polls `TableWatcher.poll()` on a timer. A file counts as changed when its
modification time, size or inode differ from the last look (editors and spreadsheets often
save by writing a new file and renaming it). A changed file that fails validation is
reported once (with file, line and problem) and the engine keeps using the last good
tables until the file changes again.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .cue import CueEngine
from .rules import RuleTable, load_rules
from .sentiment import Lexicon, load_lexicon
from .tables import TableError

Signature = tuple[int, int, int] | None


def signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


@dataclass(frozen=True)
class ReloadEvent:
    path: Path
    ok: bool
    message: str


class TableWatcher:
    """Owns the current CueEngine; raises TableError at construction if a table is bad."""

    def __init__(self, rules_path: Path | str, lexicon_path: Path | str) -> None:
        self.rules_path, self.lexicon_path = Path(rules_path), Path(lexicon_path)
        self._signatures = {self.rules_path: signature(self.rules_path),
                            self.lexicon_path: signature(self.lexicon_path)}
        self._rules: RuleTable = load_rules(self.rules_path)
        self._lexicon: Lexicon = load_lexicon(self.lexicon_path)
        self.engine = CueEngine(self._rules, self._lexicon)

    def describe(self) -> str:
        return (f"{len(self._rules.rules)} rules ({self._rules.keyword_count} keywords) from {self.rules_path}; "
                f"lexicon {self._lexicon.summary} from {self.lexicon_path}")

    def poll(self) -> list[ReloadEvent]:
        """Reload what changed since the last poll; return what happened (empty: nothing)."""
        events = []
        changed = False
        loaders: list[tuple[Path, Callable]] = [(self.rules_path, load_rules), (self.lexicon_path, load_lexicon)]
        for path, loader in loaders:
            sig = signature(path)
            if sig == self._signatures[path]:
                continue
            self._signatures[path] = sig
            try:
                table = loader(path)
            except TableError as exc:
                events.append(ReloadEvent(path, False, f"rejected, keeping the last good table:\n{exc}"))
                continue
            if path == self.rules_path:
                self._rules = table
            else:
                self._lexicon = table
            changed = True
            events.append(ReloadEvent(path, True, "reloaded"))
        if changed:
            self.engine = CueEngine(self._rules, self._lexicon)
            events = [ReloadEvent(e.path, e.ok, f"{e.message}: {self.describe()}" if e.ok else e.message)
                      for e in events]
        return events
