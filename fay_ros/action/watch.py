"""Hot reload of the action tables: re-read a file when it changes, keep the last good tables.

Each file is a `fay_ros.common.reloading.ReloadingTable` (the one reload rule: change =
mtime/size/inode differ from the last look; a rejected edit is reported once with file,
line and problem and the last good table stays). This module only rebuilds the CueEngine
when either table changed: the rules matcher needs the lexicon's negators.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..common.reloading import REJECTED, ReloadingTable, ReloadResult
from .rules import RuleTable, load_rules
from .sentiment import Lexicon, load_lexicon
from .text_to_cue import CueEngine


@dataclass(frozen=True)
class ReloadEvent:
    path: Path
    ok: bool
    message: str


class TableWatcher:
    """Owns the current CueEngine; raises TableError at construction if a table is bad."""

    def __init__(
        self, rules_path: Path | str, lexicon_path: Path | str, policy: str = "priority", no_match: str = "idle"
    ) -> None:
        self.rules_path, self.lexicon_path = Path(rules_path), Path(lexicon_path)
        self._rules: ReloadingTable[RuleTable] = ReloadingTable(self.rules_path, load_rules)
        self._lexicon: ReloadingTable[Lexicon] = ReloadingTable(self.lexicon_path, load_lexicon)
        self.engine = CueEngine(self._rules.table, self._lexicon.table, policy, no_match)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The rules table's warnings (e.g. a behavior the consumers do not know), for the log."""
        return self._rules.table.warnings

    def describe(self) -> str:
        rules, lexicon = self._rules.table, self._lexicon.table
        return (
            f"{len(rules.rules)} rules ({rules.keyword_count} keywords) from {self.rules_path}; "
            f"lexicon {lexicon.summary} from {self.lexicon_path}"
        )

    def poll(self) -> list[ReloadEvent]:
        """Reload what changed since the last poll; return what happened (empty: nothing)."""
        results: list[ReloadResult[Any]] = [self._rules.poll(), self._lexicon.poll()]
        if any(r.changed for r in results):
            self.engine = self.engine.with_tables(self._rules.table, self._lexicon.table)
        return [
            ReloadEvent(r.path, True, f"reloaded: {self.describe()}")
            if r.changed
            else ReloadEvent(r.path, False, f"{REJECTED}:\n{r.error}")
            for r in results
            if r.changed or r.error is not None
        ]
