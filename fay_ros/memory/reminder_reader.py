"""A reader of the reminders outside the memory node (the admin page): the reminder tables of
a memory database opened read-only, behind the one `ReminderBook` (issue 36). Writes (a
cancel) go through the memory node's memory/reminders, never through this reader."""

from __future__ import annotations

from collections.abc import Callable

from .readonly import open_readonly
from .reminder_book import ReminderBook
from .reminder_tables import PostgresReminderTables, SqliteReminderTables


def open_reminders_readonly(location: str) -> tuple[ReminderBook, Callable[[], None]]:
    """(book, close) over the reminder tables of the memory database at `location` (a SQLite
    path or sqlite:/// URL, or a postgresql:// URL): no migration, SQLite opened read-only.
    Raises LookupError when the database has no reminder tables (yet)."""
    tables, close = open_readonly(
        location,
        "reminders",
        "reminders",
        PostgresReminderTables,
        SqliteReminderTables,
    )
    return ReminderBook(tables), close
