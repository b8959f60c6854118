"""The memory database: one SQLite file in WAL mode, a versioned schema, forward migrations.

Migrations are applied in order through sqlite-utils' migration sets, each in its own
transaction together with the record that it ran. Before an existing database with data is
migrated, a timestamped copy is written next to it (seed 002: never change a schema without
a backup). A database written by a newer fay_ros (a migration this code does not know) is
refused with a clear error instead of being touched.
"""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path

import sqlite_utils
from sqlite_utils.migrations import Migrations

from ..common.errors import FayError

MIGRATION_SET = "fay_memory"
migrations = Migrations(MIGRATION_SET)


class SchemaError(FayError, RuntimeError):
    """The database cannot be used by this version (newer schema, unreadable file)."""


# Issue 36: the reminder store's tables, the same DDL on both backends (pg_schema.py uses it as
# written; SQLite reads DOUBLE PRECISION as REAL). Times are epoch seconds; start_local is the
# wall-clock ISO time of the first occurrence in `tz` (docs/reminders.md, "Storage").
REMINDER_DDL = (
    """
    CREATE TABLE reminders (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        tz TEXT NOT NULL,
        start_local TEXT NOT NULL,
        rrule TEXT NOT NULL DEFAULT '',
        next_due_utc DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        snoozed_until_utc DOUBLE PRECISION NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        text TEXT NOT NULL,
        source_utterance TEXT NOT NULL DEFAULT '',
        source_turn TEXT NOT NULL DEFAULT '',
        created DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX reminders_status_due ON reminders (status, next_due_utc)",
    "CREATE INDEX reminders_owner_status ON reminders (owner, status)",
    """
    CREATE TABLE commitments (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        text TEXT NOT NULL,
        due_hint_utc DOUBLE PRECISION NOT NULL DEFAULT 0,
        status TEXT NOT NULL,
        followups INTEGER NOT NULL DEFAULT 0,
        last_followup_utc DOUBLE PRECISION NOT NULL DEFAULT 0,
        source_turn TEXT NOT NULL DEFAULT '',
        created DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX commitments_owner_status ON commitments (owner, status)",
)


@migrations(name="0001_memory_stream")
def _m0001(db: sqlite_utils.Database) -> None:
    db.execute("""
        CREATE TABLE nodes (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            node_type TEXT NOT NULL,
            content TEXT NOT NULL,
            importance REAL NOT NULL,
            created REAL NOT NULL,
            last_retrieved REAL NOT NULL,
            status TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT '',
            key TEXT NOT NULL DEFAULT '',
            source_session TEXT NOT NULL DEFAULT '',
            source_turn INTEGER NOT NULL DEFAULT 0,
            expires REAL NOT NULL DEFAULT 0
        )""")
    db.execute("CREATE INDEX nodes_owner_status ON nodes (owner, status)")
    db.execute("CREATE INDEX nodes_owner_kind_key ON nodes (owner, kind, key)")
    db.execute("""
        CREATE TABLE node_tags (
            node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (node_id, tag)
        )""")
    db.execute("CREATE INDEX node_tags_tag ON node_tags (tag)")
    db.execute("""
        CREATE TABLE node_pointers (
            node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            pointer_id TEXT NOT NULL,
            PRIMARY KEY (node_id, position)
        )""")
    db.execute("CREATE INDEX node_pointers_target ON node_pointers (pointer_id)")
    db.execute("""
        CREATE TABLE embeddings (
            node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (node_id, model)
        )""")


@migrations(name="0002_profile_reflection_import")
def _m0002(db: sqlite_utils.Database) -> None:
    # Fay import needs to know where a node came from (idempotent re-import), supersede
    # needs to point at the newer value, and profile / reflection keep per-owner progress.
    db.execute("ALTER TABLE nodes ADD COLUMN origin TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE nodes ADD COLUMN superseded_by TEXT NOT NULL DEFAULT ''")
    db.execute("CREATE INDEX nodes_owner_origin ON nodes (owner, origin)")
    db.execute("""
        CREATE TABLE profiles (
            owner TEXT PRIMARY KEY,
            portrait TEXT NOT NULL DEFAULT '',
            updated REAL NOT NULL DEFAULT 0,
            evidence_mark REAL NOT NULL DEFAULT 0,
            rebuilds INTEGER NOT NULL DEFAULT 0
        )""")
    db.execute("""
        CREATE TABLE reflection_state (
            owner TEXT PRIMARY KEY,
            mark REAL NOT NULL DEFAULT 0,
            last_run REAL NOT NULL DEFAULT 0
        )""")


@migrations(name="0003_content_lookup")
def _m0003(db: sqlite_utils.Database) -> None:
    # remember looks for an identical memory before every write: without this index that was
    # a scan of the owner's rows, so writes slowed down as the memory grew.
    db.execute("CREATE INDEX nodes_owner_content ON nodes (owner, content)")


# --- turn log (issue 35) ---------------------------------------------------------------------
@migrations(name="0004_turn_log")
def _m0004(db: sqlite_utils.Database) -> None:
    # The event layer's raw data: every heard turn (docs/memory.md, "Turn log"), with the dates
    # its words refer to and its vector; and each memory's evidence, the turns it rests on.
    db.execute("""
        CREATE TABLE turns (
            owner TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            time REAL NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            dates TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            vector BLOB,
            PRIMARY KEY (owner, turn_id)
        )""")
    db.execute("CREATE INDEX turns_owner_time ON turns (owner, time)")
    db.execute("""
        CREATE TABLE node_sources (
            node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            turn_id TEXT NOT NULL,
            PRIMARY KEY (node_id, position)
        )""")
    db.execute("CREATE INDEX node_sources_turn ON node_sources (turn_id)")
    # the evidence search reads an owner's newest memories
    db.execute("CREATE INDEX nodes_owner_created ON nodes (owner, created)")


# --- end turn log ---


# --- issue 35: the layered profile (fay_ros/memory/layers) -------------------------------------
@migrations(name="0005_profile_layers")
def _m0005(db: sqlite_utils.Database) -> None:
    db.execute("""
        CREATE TABLE profile_layers (
            owner TEXT NOT NULL,
            layer TEXT NOT NULL,
            doc TEXT NOT NULL,
            PRIMARY KEY (owner, layer)
        )""")
    db.execute("""
        CREATE TABLE profile_events (
            owner TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            time REAL NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (owner, turn_id)
        )""")
    db.execute("CREATE INDEX profile_events_owner_time ON profile_events (owner, time)")
    db.execute("""
        CREATE TABLE profile_changelog (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            owner TEXT NOT NULL,
            time REAL NOT NULL,
            layer TEXT NOT NULL,
            item TEXT NOT NULL,
            old TEXT NOT NULL,
            new TEXT NOT NULL,
            reason TEXT NOT NULL,
            evidence TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX profile_changelog_owner ON profile_changelog (owner, id)")


# --- end issue 35 ------------------------------------------------------------------------------


# --- issue 36: reminders and commitments (fay_ros/memory/reminder_book.py) -------------------------
@migrations(name="0006_reminders")
def _m0006(db: sqlite_utils.Database) -> None:
    for ddl in REMINDER_DDL:
        db.execute(ddl.replace("DOUBLE PRECISION", "REAL"))


# --- end issue 36 ------------------------------------------------------------------------------


LATEST = [m.name for m in migrations._migrations]


def connect(path: str | Path, synchronous: str = "FULL") -> sqlite_utils.Database:
    """Open (creating if needed) and migrate the memory database at `path`."""
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists() and path.stat().st_size > 0
    try:
        # One connection shared by the node's threads; MemoryStore serialises access.
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
        db = sqlite_utils.Database(conn)
        db.enable_wal()
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.execute("PRAGMA foreign_keys=ON")
        applied = [m.name for m in migrations.applied(db)]
    except sqlite3.DatabaseError as exc:
        raise SchemaError(f"{path}: not a usable SQLite database ({exc})") from None
    unknown = [name for name in applied if name not in LATEST]
    if unknown:
        conn.close()
        raise SchemaError(
            f"{path}: written by a newer fay_ros (unknown schema migration(s) {unknown}); "
            f"this version knows {LATEST}. Upgrade fay_ros or use another memory database."
        )
    pending = [name for name in LATEST if name not in applied]
    if pending and existed and applied:
        backup(db, path, f"before-{pending[0]}")
    migrations.apply(db)
    return db


def backup(db: sqlite_utils.Database, path: Path, label: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    dest = sqlite3.connect(str(target))
    try:
        db.conn.backup(dest)
    finally:
        dest.close()
    return target


def schema_version(db: sqlite_utils.Database) -> list[str]:
    return [m.name for m in migrations.applied(db)]
