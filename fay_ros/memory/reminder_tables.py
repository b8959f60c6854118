"""The reminder store's tables (migration 0006_reminders) in both backends, as plain rows.

- reminders: one row per reminder (docs/reminders.md, "Storage"); `next_due_utc` is indexed
  with `status` for the scheduler's look across owners (`rows(None, ...)`), every other read
  names the owner.
- commitments: what the user said they would do ("I'll call the dentist tomorrow"), kept apart
  from reminders (an explicit scheduled job vs an open commitment).

The rows are dicts of the columns; reminders.py turns them into objects and checks them. Each
write is one transaction. SQLite goes through the store's sqlite-utils database and lock,
PostgreSQL through the store's connection (reconnected after a lost server) and lock.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

REMINDER_COLUMNS = (
    "id",
    "owner",
    "tz",
    "start_local",
    "rrule",
    "next_due_utc",
    "status",
    "snoozed_until_utc",
    "attempts",
    "text",
    "source_utterance",
    "source_turn",
    "created",
    "updated",
)
COMMITMENT_COLUMNS = (
    "id",
    "owner",
    "text",
    "due_hint_utc",
    "status",
    "followups",
    "last_followup_utc",
    "source_turn",
    "created",
)
TABLES = {"reminders": REMINDER_COLUMNS, "commitments": COMMITMENT_COLUMNS}

Run = Callable[[str, Sequence[Any]], Any]  # (sql with ? marks, params) -> cursor


class ReminderTables:
    """The queries, written with `?` marks; a backend gives `_tx` (a transaction's runner) and `_rows`."""

    def _tx(self) -> contextlib.AbstractContextManager[Run]:
        raise NotImplementedError

    def _rows(self, sql: str, params: Sequence[Any]) -> builtins.list[tuple]:
        raise NotImplementedError

    def insert(self, table: str, row: dict) -> None:
        columns = TABLES[table]
        with self._tx() as run:
            run(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [row[c] for c in columns],
            )

    def rows(
        self,
        table: str,
        owner: str | None,
        statuses: Iterable[str] = (),
        due_before: float | None = None,
        row_id: str | None = None,
    ) -> builtins.list[dict]:
        """Rows of `owner` (None: every owner, for the scheduler), optionally of `statuses`,
        due at or before `due_before` (reminders) or with id `row_id`."""
        columns = TABLES[table]
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        wanted = list(statuses)
        if wanted:
            where.append(f"status IN ({', '.join('?' * len(wanted))})")
            params += wanted
        if due_before is not None:
            where.append("next_due_utc <= ?")
            params.append(float(due_before))
        if row_id is not None:
            where.append("id = ?")
            params.append(row_id)
        order = "next_due_utc, id" if table == "reminders" else "created, id"
        sql = f"SELECT {', '.join(columns)} FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [dict(zip(columns, r)) for r in self._rows(sql + f" ORDER BY {order}", params)]

    def update(self, table: str, owner: str, row_id: str, values: dict, statuses: Iterable[str] = ()) -> int:
        """Set `values` on the owner's row `row_id` (only while its status is one of `statuses`,
        when given); the number of rows changed (0 or 1)."""
        assert values and set(values) <= set(TABLES[table])
        wanted = list(statuses)
        sql = f"UPDATE {table} SET {', '.join(k + ' = ?' for k in values)} WHERE owner = ? AND id = ?"
        params = [*values.values(), owner, row_id]
        if wanted:
            sql += f" AND status IN ({', '.join('?' * len(wanted))})"
            params += wanted
        with self._tx() as run:
            return run(sql, params).rowcount

    def update_all(self, table: str, owner: str, values: dict, statuses: Iterable[str]) -> int:
        """Set `values` on every row of the owner in `statuses`."""
        wanted = list(statuses)
        with self._tx() as run:
            return run(
                f"UPDATE {table} SET {', '.join(k + ' = ?' for k in values)} WHERE owner = ? "
                f"AND status IN ({', '.join('?' * len(wanted))})",
                [*values.values(), owner, *wanted],
            ).rowcount

    def count(self, table: str, owner: str | None = None) -> int:
        if owner is None:
            return int(self._rows(f"SELECT count(*) FROM {table}", [])[0][0])
        return int(self._rows(f"SELECT count(*) FROM {table} WHERE owner = ?", [owner])[0][0])

    # -- migration between backends
    def export(self) -> dict[str, builtins.list[dict]]:
        """Every row of both tables (every owner), by id."""
        return {
            table: [
                dict(zip(columns, r)) for r in self._rows(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id", [])
            ]
            for table, columns in TABLES.items()
        }

    def import_(self, tables: dict[str, builtins.list[dict]]) -> int:
        """Insert the rows whose id is not here yet (idempotent); the number inserted."""
        inserted = 0
        with self._tx() as run:
            for table, columns in TABLES.items():
                for row in tables.get(table, []):
                    if run(f"SELECT 1 FROM {table} WHERE id = ?", [row["id"]]).fetchone() is not None:
                        continue
                    run(
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        [row[c] for c in columns],
                    )
                    inserted += 1
        return inserted


class SqliteReminderTables(ReminderTables):
    def __init__(self, db: Any, lock: threading.RLock) -> None:
        self.db = db  # sqlite_utils.Database of the memory store
        self.lock = lock

    @contextlib.contextmanager
    def _tx(self) -> Iterator[Run]:
        with self.lock, self.db.atomic():
            yield lambda sql, params: self.db.execute(sql, list(params))

    def _rows(self, sql: str, params: Sequence[Any]) -> builtins.list[tuple]:
        with self.lock:
            return self.db.execute(sql, list(params)).fetchall()


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


class PostgresReminderTables(ReminderTables):
    def __init__(self, store: Any) -> None:
        self.store = store  # PostgresMemoryStore: its _db() reconnects after a lost server

    @contextlib.contextmanager
    def _tx(self) -> Iterator[Run]:
        with self.store.lock:
            conn = self.store._db()
            with conn.transaction():
                cur = conn.cursor()
                yield lambda sql, params: cur.execute(_pg(sql), list(params))

    def _rows(self, sql: str, params: Sequence[Any]) -> builtins.list[tuple]:
        with self.store.lock:
            return self.store._db().execute(_pg(sql), list(params)).fetchall()
