"""One memory database opened read-only for readers outside the memory node (the admin page's
layered profile and reminders): no migration, no vector index, SQLite in `mode=ro`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from .backend import is_postgres, sqlite_path

T = TypeVar("T")


class _Connection:
    """What the PostgreSQL table classes need of a store: `_db()` and a lock."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.RLock()

    def _db(self) -> Any:
        return self.conn


def open_readonly(
    location: str,
    table: str,
    what: str,
    postgres: Callable[[Any], T],
    sqlite: Callable[[Any, threading.RLock], T],
) -> tuple[T, Callable[[], None]]:
    """(tables, close) over the memory database at `location` (a SQLite path or sqlite:/// URL,
    or a postgresql:// URL): `postgres(store-like)` or `sqlite(sqlite_utils.Database, lock)`
    makes the tables. LookupError when the database or its `table` does not exist (yet);
    `what` names it for that message ("no <what> in this database")."""
    missing = f"no {what} in this database (start the memory node once)"
    if is_postgres(location):
        import psycopg

        conn = psycopg.connect(location.strip(), autocommit=True, connect_timeout=10, application_name="fay_ros-admin")
        found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
        if not found or not found[0]:
            conn.close()
            raise LookupError(missing)
        return postgres(_Connection(conn)), conn.close
    import sqlite3

    import sqlite_utils

    path = sqlite_path(location)
    if not path.exists():
        raise LookupError(f"{path}: no such memory database")
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=10.0)
    found = raw.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    if found is None:
        raw.close()
        raise LookupError(missing)
    return sqlite(sqlite_utils.Database(raw), threading.RLock()), raw.close
