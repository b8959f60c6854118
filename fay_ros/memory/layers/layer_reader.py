"""A reader of the layered profile outside the memory node (the admin page): the layer
tables of a memory database, opened without migrating or indexing anything."""

from __future__ import annotations

import threading
from typing import Any

from ..backend import is_postgres, sqlite_path
from .layer_tables import PostgresLayers, SqliteLayers


class _Connection:
    """What PostgresLayers needs of a store: a connection and a lock."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.RLock()

    def _db(self) -> Any:
        return self.conn


def open_readonly(location: str) -> tuple[Any, Any]:
    """(repository, close) over the layer tables of the memory database at `location` (a
    SQLite path or sqlite:/// URL, or a postgresql:// URL), for readers outside the memory
    node (the admin page): no migration, no vector index, and SQLite opened read-only.
    Raises LookupError when the database has no layered profile (yet)."""
    if is_postgres(location):
        import psycopg

        conn = psycopg.connect(location.strip(), autocommit=True, connect_timeout=10, application_name="fay_ros-admin")
        found = conn.execute("SELECT to_regclass('profile_layers') IS NOT NULL").fetchone()
        if not found or not found[0]:
            conn.close()
            raise LookupError("no layered profile in this database (start the memory node once)")
        return PostgresLayers(_Connection(conn)), conn.close
    import sqlite3

    import sqlite_utils

    path = sqlite_path(location)
    if not path.exists():
        raise LookupError(f"{path}: no such memory database")
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=10.0)
    found = raw.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'profile_layers'").fetchone()
    if found is None:
        raw.close()
        raise LookupError("no layered profile in this database (start the memory node once)")
    return SqliteLayers(sqlite_utils.Database(raw), threading.RLock()), raw.close
