"""The layers' tables (migration 0005_profile_layers) in both backends:

- profile_layers (owner, layer, doc): one JSON document per owner and layer, plus the
  pipeline's buffers (layer "pipeline");
- profile_events (owner, turn_id, time, speaker, text): the light event layer, by turn id;
- profile_changelog: every layer change (layer, item, old, new, reason, evidence turn ids).

`save` writes an owner's documents, events and changes in one transaction. Every query names
the owner.
"""

from __future__ import annotations

import builtins
import json
import threading
from typing import Any

TABLES = ("profile_layers", "profile_events", "profile_changelog")
_CHANGE_COLUMNS = ("time", "layer", "item", "old", "new", "reason", "evidence")


def _scrub(evidence: list[str], gone: set[str]) -> list[str] | None:
    """The evidence without the forgotten turns; None when the row rested only on them."""
    rest = [e for e in evidence if e not in gone]
    return None if evidence and not rest else rest


class SqliteLayers:
    def __init__(self, db: Any, lock: threading.RLock) -> None:
        self.db = db  # sqlite_utils.Database of the memory store
        self.lock = lock

    def load(self, owner: str) -> dict[str, dict]:
        with self.lock:
            rows = self.db.execute("SELECT layer, doc FROM profile_layers WHERE owner = ?", [owner]).fetchall()
        return {layer: json.loads(doc) for layer, doc in rows}

    def save(
        self,
        owner: str,
        docs: dict[str, dict],
        events: builtins.list[dict] = (),  # type: ignore[assignment]
        changes: builtins.list[dict] = (),  # type: ignore[assignment]
        forget_turns: builtins.list[str] = (),  # type: ignore[assignment]
        max_events: int = 0,
    ) -> None:
        with self.lock, self.db.atomic():
            for layer, doc in docs.items():
                self.db.execute(
                    "INSERT INTO profile_layers (owner, layer, doc) VALUES (?, ?, ?) "
                    "ON CONFLICT (owner, layer) DO UPDATE SET doc = excluded.doc",
                    [owner, layer, json.dumps(doc, ensure_ascii=False)],
                )
            for e in events:
                self.db.execute(
                    "INSERT OR IGNORE INTO profile_events (owner, turn_id, time, speaker, text) VALUES (?, ?, ?, ?, ?)",
                    [owner, e["turn_id"], e["time"], e["speaker"], e["text"]],
                )
            if max_events and events:
                self.db.execute(
                    "DELETE FROM profile_events WHERE owner = ? AND turn_id NOT IN "
                    "(SELECT turn_id FROM profile_events WHERE owner = ? ORDER BY time DESC LIMIT ?)",
                    [owner, owner, int(max_events)],
                )
            if forget_turns:
                gone = set(forget_turns)
                marks = ",".join("?" * len(forget_turns))
                self.db.execute(
                    f"DELETE FROM profile_events WHERE owner = ? AND turn_id IN ({marks})", [owner, *forget_turns]
                )
                for row_id, evidence in self.db.execute(
                    "SELECT id, evidence FROM profile_changelog WHERE owner = ?", [owner]
                ).fetchall():
                    ids = json.loads(evidence)
                    if not gone & set(ids):
                        continue
                    rest = _scrub(ids, gone)
                    if rest is None:
                        self.db.execute("DELETE FROM profile_changelog WHERE id = ?", [row_id])
                    else:
                        self.db.execute(
                            "UPDATE profile_changelog SET evidence = ? WHERE id = ?", [json.dumps(rest), row_id]
                        )
            for c in changes:
                self.db.execute(
                    "INSERT INTO profile_changelog (owner, time, layer, item, old, new, reason, evidence) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [owner, *(c[k] for k in _CHANGE_COLUMNS[:-1]), json.dumps(c["evidence"], ensure_ascii=False)],
                )

    def events(self, owner: str, turn_ids: builtins.list[str] | None = None, limit: int = 100) -> builtins.list[dict]:
        with self.lock:
            if turn_ids is not None:
                if not turn_ids:
                    return []
                marks = ",".join("?" * len(turn_ids))
                rows = self.db.execute(
                    f"SELECT turn_id, time, speaker, text FROM profile_events WHERE owner = ? AND turn_id IN ({marks}) "
                    f"ORDER BY time DESC LIMIT ?",
                    [owner, *turn_ids, int(limit)],
                ).fetchall()
            else:
                rows = self.db.execute(
                    "SELECT turn_id, time, speaker, text FROM profile_events WHERE owner = ? "
                    "ORDER BY time DESC LIMIT ?",
                    [owner, int(limit)],
                ).fetchall()
        return [dict(zip(("turn_id", "time", "speaker", "text"), r)) for r in rows]

    def changelog(self, owner: str, limit: int = 200) -> builtins.list[dict]:
        with self.lock:
            rows = self.db.execute(
                f"SELECT {', '.join(_CHANGE_COLUMNS)} FROM profile_changelog WHERE owner = ? ORDER BY id DESC LIMIT ?",
                [owner, int(limit)],
            ).fetchall()
        return [dict(zip(_CHANGE_COLUMNS, r[:-1] + (json.loads(r[-1]),))) for r in rows]

    def owners(self) -> builtins.list[str]:
        with self.lock:
            return [r[0] for r in self.db.execute("SELECT DISTINCT owner FROM profile_layers ORDER BY owner")]

    # -- migration between backends
    def export(self) -> dict[str, builtins.list[dict]]:
        with self.lock:
            out = {}
            for table in TABLES:
                cur = self.db.execute(f"SELECT * FROM {table} ORDER BY rowid")
                names = [d[0] for d in cur.description]
                out[table] = [dict(zip(names, r)) for r in cur.fetchall()]
        for row in out["profile_layers"]:
            row["doc"] = json.loads(row["doc"])
        for row in out["profile_changelog"]:
            row["evidence"] = json.loads(row["evidence"])
            row.pop("id", None)
        return out

    def import_(self, tables: dict[str, builtins.list[dict]]) -> None:
        """Replace the layers of the owners in `tables` (idempotent: a second run changes nothing)."""
        owners = {r["owner"] for rows in tables.values() for r in rows}
        with self.lock, self.db.atomic():
            for owner in owners:
                for table in TABLES:
                    self.db.execute(f"DELETE FROM {table} WHERE owner = ?", [owner])
            for r in tables.get("profile_layers", []):
                self.db.execute(
                    "INSERT INTO profile_layers (owner, layer, doc) VALUES (?, ?, ?)",
                    [r["owner"], r["layer"], json.dumps(r["doc"], ensure_ascii=False)],
                )
            for r in tables.get("profile_events", []):
                self.db.execute(
                    "INSERT INTO profile_events (owner, turn_id, time, speaker, text) VALUES (?, ?, ?, ?, ?)",
                    [r["owner"], r["turn_id"], r["time"], r["speaker"], r["text"]],
                )
            for r in tables.get("profile_changelog", []):
                self.db.execute(
                    "INSERT INTO profile_changelog (owner, time, layer, item, old, new, reason, evidence) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [r["owner"], *(r[k] for k in _CHANGE_COLUMNS[:-1]), json.dumps(r["evidence"], ensure_ascii=False)],
                )


class PostgresLayers:
    """The same tables on PostgreSQL (JSONB documents), through the store's connection."""

    def __init__(self, store: Any) -> None:
        self.store = store  # PostgresMemoryStore: its _db() reconnects after a lost server

    @property
    def lock(self) -> threading.RLock:
        return self.store.lock

    def _conn(self) -> Any:
        return self.store._db()

    def load(self, owner: str) -> dict[str, dict]:
        with self.lock:
            rows = self._conn().execute("SELECT layer, doc FROM profile_layers WHERE owner = %s", [owner]).fetchall()
        return {layer: doc for layer, doc in rows}

    def save(
        self,
        owner: str,
        docs: dict[str, dict],
        events: builtins.list[dict] = (),  # type: ignore[assignment]
        changes: builtins.list[dict] = (),  # type: ignore[assignment]
        forget_turns: builtins.list[str] = (),  # type: ignore[assignment]
        max_events: int = 0,
    ) -> None:
        from psycopg.types.json import Jsonb

        with self.lock:
            conn = self._conn()
            with conn.transaction():
                cur = conn.cursor()
                for layer, doc in docs.items():
                    cur.execute(
                        "INSERT INTO profile_layers (owner, layer, doc) VALUES (%s, %s, %s) "
                        "ON CONFLICT (owner, layer) DO UPDATE SET doc = excluded.doc",
                        [owner, layer, Jsonb(doc)],
                    )
                for e in events:
                    cur.execute(
                        "INSERT INTO profile_events (owner, turn_id, time, speaker, text) VALUES (%s, %s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        [owner, e["turn_id"], e["time"], e["speaker"], e["text"]],
                    )
                if max_events and events:
                    cur.execute(
                        "DELETE FROM profile_events WHERE owner = %s AND turn_id NOT IN "
                        "(SELECT turn_id FROM profile_events WHERE owner = %s ORDER BY time DESC LIMIT %s)",
                        [owner, owner, int(max_events)],
                    )
                if forget_turns:
                    gone = set(forget_turns)
                    cur.execute(
                        "DELETE FROM profile_events WHERE owner = %s AND turn_id = ANY(%s)", [owner, list(forget_turns)]
                    )
                    cur.execute("SELECT id, evidence FROM profile_changelog WHERE owner = %s", [owner])
                    for row_id, ids in cur.fetchall():
                        if not gone & set(ids):
                            continue
                        rest = _scrub(ids, gone)
                        if rest is None:
                            cur.execute("DELETE FROM profile_changelog WHERE id = %s", [row_id])
                        else:
                            cur.execute(
                                "UPDATE profile_changelog SET evidence = %s WHERE id = %s", [Jsonb(rest), row_id]
                            )
                for c in changes:
                    cur.execute(
                        "INSERT INTO profile_changelog (owner, time, layer, item, old, new, reason, evidence) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        [owner, *(c[k] for k in _CHANGE_COLUMNS[:-1]), Jsonb(c["evidence"])],
                    )

    def events(self, owner: str, turn_ids: builtins.list[str] | None = None, limit: int = 100) -> builtins.list[dict]:
        with self.lock:
            if turn_ids is not None:
                rows = (
                    self._conn()
                    .execute(
                        "SELECT turn_id, time, speaker, text FROM profile_events "
                        "WHERE owner = %s AND turn_id = ANY(%s) "
                        "ORDER BY time DESC LIMIT %s",
                        [owner, list(turn_ids), int(limit)],
                    )
                    .fetchall()
                )
            else:
                rows = (
                    self._conn()
                    .execute(
                        "SELECT turn_id, time, speaker, text FROM profile_events WHERE owner = %s "
                        "ORDER BY time DESC LIMIT %s",
                        [owner, int(limit)],
                    )
                    .fetchall()
                )
        return [dict(zip(("turn_id", "time", "speaker", "text"), r)) for r in rows]

    def changelog(self, owner: str, limit: int = 200) -> builtins.list[dict]:
        with self.lock:
            rows = (
                self._conn()
                .execute(
                    f"SELECT {', '.join(_CHANGE_COLUMNS)} FROM profile_changelog WHERE owner = %s "
                    "ORDER BY id DESC LIMIT %s",
                    [owner, int(limit)],
                )
                .fetchall()
            )
        return [dict(zip(_CHANGE_COLUMNS, r)) for r in rows]

    def owners(self) -> builtins.list[str]:
        with self.lock:
            return [r[0] for r in self._conn().execute("SELECT DISTINCT owner FROM profile_layers ORDER BY owner")]

    def export(self) -> dict[str, builtins.list[dict]]:
        out: dict[str, builtins.list[dict]] = {}
        with self.lock:
            for table, order in (
                ("profile_layers", "owner, layer"),
                ("profile_events", "owner, time"),
                ("profile_changelog", "id"),
            ):
                cur = self._conn().execute(f"SELECT * FROM {table} ORDER BY {order}")
                names = [d.name for d in cur.description or ()]
                out[table] = [dict(zip(names, r)) for r in cur.fetchall()]
        for row in out["profile_changelog"]:
            row.pop("id", None)
        return out

    def import_(self, tables: dict[str, builtins.list[dict]]) -> None:
        from psycopg.types.json import Jsonb

        owners = sorted({r["owner"] for rows in tables.values() for r in rows})
        with self.lock:
            conn = self._conn()
            with conn.transaction():
                cur = conn.cursor()
                for table in TABLES:
                    cur.execute(f"DELETE FROM {table} WHERE owner = ANY(%s)", [owners])
                for r in tables.get("profile_layers", []):
                    cur.execute(
                        "INSERT INTO profile_layers (owner, layer, doc) VALUES (%s, %s, %s)",
                        [r["owner"], r["layer"], Jsonb(r["doc"])],
                    )
                for r in tables.get("profile_events", []):
                    cur.execute(
                        "INSERT INTO profile_events (owner, turn_id, time, speaker, text) VALUES (%s, %s, %s, %s, %s)",
                        [r["owner"], r["turn_id"], r["time"], r["speaker"], r["text"]],
                    )
                for r in tables.get("profile_changelog", []):
                    cur.execute(
                        "INSERT INTO profile_changelog (owner, time, layer, item, old, new, reason, evidence) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        [r["owner"], *(r[k] for k in _CHANGE_COLUMNS[:-1]), Jsonb(r["evidence"])],
                    )
