"""Copy a memory from one backend to another (`fay-ros memory migrate --from ... --to ...`).

Every memory of every owner, with every stored vector (each under its embedding model's
name), the per-owner profile and reflection state, the heard turns, the layered profile and the
reminders and commitments (issue 36). Idempotent and resumable: memories are
copied in pages by id and a memory already in the target (same id) is left alone, so running
it again after an interruption copies only what is missing, and running it twice changes
nothing. The source is only read.

A large memory (DEFER_INDEX_FROM or more) copied into an empty PostgreSQL database is loaded
without the vector index, which is then built in one pass
(PostgresMemoryStore.vector_index_deferred): grown row by row, a copy ran at 375 memories/s
already at 30,000. Resuming an interrupted copy of that kind grows it row by row (the target is no
longer empty).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TextIO

from .backend import MemoryBackend

PAGE = 500
DEFER_INDEX_FROM = 10_000


@dataclass
class MigrationReport:
    total: int = 0  # memories in the source
    copied: int = 0  # inserted into the target by this run
    present: int = 0  # already in the target (an earlier run, or the same id)
    owners_state: int = 0
    turns_copied: int = 0  # heard turns inserted by this run (turn log)
    reminders_copied: int = 0  # reminders and commitments inserted by this run (issue 36)

    def summary(self) -> str:
        return (
            f"migrated {self.copied} of {self.total} memories ({self.present} already there); "
            f"profile and reflection state of {self.owners_state} owner(s); {self.turns_copied} heard turns copied; "
            f"{self.reminders_copied} reminders and commitments copied"
        )


class ProgressBar:
    """A one-line progress bar on a terminal (plain lines when not a terminal)."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, width: int = 30) -> None:
        self.total, self.stream, self.width = total, stream, width
        self.tty = stream.isatty()
        self._last = 0.0

    def update(self, done: int) -> None:
        now = time.monotonic()
        if done < self.total and now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        share = done / self.total if self.total else 1.0
        filled = int(share * self.width)
        line = f"migrate [{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total} memories ({share:.0%})"
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        if self.tty and done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def migrate(
    source: MemoryBackend, target: MemoryBackend, page: int = PAGE, progress: Callable[[int], None] | None = None
) -> MigrationReport:
    report = MigrationReport(total=source.count())
    deferred: Callable[[], AbstractContextManager[None]] | None = getattr(target, "vector_index_deferred", None)
    bulk = deferred is not None and report.total >= DEFER_INDEX_FROM and target.count() == 0
    with deferred() if bulk and deferred is not None else contextlib.nullcontext():
        after = ""
        done = 0
        while True:
            rows = source.export_rows(after, page)
            if not rows:
                break
            inserted = target.import_rows(rows)
            report.copied += inserted
            report.present += len(rows) - inserted
            done += len(rows)
            after = rows[-1][0].id
            if progress is not None:
                progress(done)
    # --- turn log (issue 35): the heard turns, idempotent by owner + turn id ---
    after_turn = ("", "")
    while True:
        turns = source.export_turns(after_turn, page)
        if not turns:
            break
        report.turns_copied += len(target.add_turns(turns))
        after_turn = (turns[-1].owner, turns[-1].turn_id)
    # --- end turn log ---
    states = source.export_states()
    target.import_states(states)
    report.owners_state = len({row["owner"] for rows in states.values() for row in rows})
    # issue 35: the layered profile's tables travel with the state
    if hasattr(source, "profile_layers") and hasattr(target, "profile_layers"):
        target.profile_layers().import_(source.profile_layers().export())
    # --- issue 36: reminders and commitments, idempotent by id ---
    if hasattr(source, "reminder_tables") and hasattr(target, "reminder_tables"):
        report.reminders_copied = target.reminder_tables().import_(source.reminder_tables().export())
    # --- end issue 36 ---
    if progress is not None:
        progress(report.total)
    return report
