"""A reader of the reminders outside the memory node (the admin page): the reminder tables of
a memory database opened read-only, behind the one `ReminderBook` (issue 36). Writes (a
cancel) go through the memory node's memory/reminders, never through this reader."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .backend import is_postgres, sqlite_path
from .reminder_book import ReminderBook
from .reminder_tables import PostgresReminderTables, SqliteReminderTables


class _Connection:
    """What PostgresReminderTables needs of a store: `_db()` and a lock."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.RLock()

    def _db(self) -> Any:
        return self.conn


def open_reminders_readonly(location: str) -> tuple[ReminderBook, Callable[[], None]]:
    """(book, close) over the reminder tables of the memory database at `location` (a SQLite
    path or sqlite:/// URL, or a postgresql:// URL): no migration, SQLite opened read-only.
    Raises LookupError when the database has no reminder tables (yet)."""
    if is_postgres(location):
        import psycopg

        conn = psycopg.connect(location.strip(), autocommit=True, connect_timeout=10, application_name="fay_ros-admin")
        found = conn.execute("SELECT to_regclass('reminders') IS NOT NULL").fetchone()
        if not found or not found[0]:
            conn.close()
            raise LookupError("no reminders in this database (start the memory node once)")
        return ReminderBook(PostgresReminderTables(_Connection(conn))), conn.close
    import sqlite3

    import sqlite_utils

    path = sqlite_path(location)
    if not path.exists():
        raise LookupError(f"{path}: no such memory database")
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=10.0)
    found = raw.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reminders'").fetchone()
    if found is None:
        raw.close()
        raise LookupError("no reminders in this database (start the memory node once)")
    return ReminderBook(SqliteReminderTables(sqlite_utils.Database(raw), threading.RLock())), raw.close
