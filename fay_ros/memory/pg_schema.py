"""The memory database on PostgreSQL with pgvector: a versioned schema, forward migrations.

The same rules as schema.py (SQLite): migrations run in order, each recorded with the
transaction that applied it; a database with a migration this code does not know (written by
a newer fay_ros) is refused untouched. Several robots may start at once on one database: the
migrations run under a transaction-level advisory lock, so exactly one applies them.

Tags and pointers are array columns (GIN-indexed) rather than side tables; vectors live in
`embeddings`, one row per node and embedding model, with the owner copied in so the HNSW
scan filters by owner itself. The vector column has no fixed dimension (two robots may use
different embedders); each model gets its own partial HNSW index on `vector::vector(dim)`
(`ensure_vector_index`), which a query uses by naming the same model and dimension.

The server needs the pgvector extension: `CREATE EXTENSION vector` (docs/FLEET.md).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

import psycopg
from psycopg import sql

from .schema import REMINDER_DDL, SchemaError

MIGRATIONS_TABLE = "fay_memory_migrations"
# pg_advisory_xact_lock key of schema changes (any constant; "fay-memory" as digits).
_SCHEMA_LOCK = 0x0FA7_0E30


def _m0001(cur: psycopg.Cursor) -> None:
    cur.execute("""
        CREATE TABLE nodes (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            node_type TEXT NOT NULL,
            content TEXT NOT NULL,
            importance DOUBLE PRECISION NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            last_retrieved DOUBLE PRECISION NOT NULL,
            status TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT '',
            key TEXT NOT NULL DEFAULT '',
            source_session TEXT NOT NULL DEFAULT '',
            source_turn INTEGER NOT NULL DEFAULT 0,
            expires DOUBLE PRECISION NOT NULL DEFAULT 0,
            origin TEXT NOT NULL DEFAULT '',
            superseded_by TEXT NOT NULL DEFAULT '',
            tags TEXT[] NOT NULL DEFAULT '{}',
            pointer_ids TEXT[] NOT NULL DEFAULT '{}',
            seq BIGSERIAL NOT NULL
        )""")
    for ddl in (
        "CREATE INDEX nodes_owner_status ON nodes (owner, status)",
        "CREATE INDEX nodes_owner_kind_key ON nodes (owner, kind, key)",
        "CREATE INDEX nodes_owner_content ON nodes (owner, md5(content))",
        "CREATE INDEX nodes_owner_origin ON nodes (owner, origin)",
        "CREATE INDEX nodes_owner_created ON nodes (owner, created, seq)",
        "CREATE INDEX nodes_owner_last_retrieved ON nodes (owner, last_retrieved)",
        "CREATE INDEX nodes_owner_importance ON nodes (owner, importance)",
        "CREATE INDEX nodes_expires ON nodes (expires) WHERE expires > 0",
        "CREATE INDEX nodes_tags ON nodes USING gin (tags)",
        "CREATE INDEX nodes_pointers ON nodes USING gin (pointer_ids)",
    ):
        cur.execute(ddl)
    cur.execute("""
        CREATE TABLE embeddings (
            node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            owner TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector vector NOT NULL,
            PRIMARY KEY (node_id, model)
        )""")
    cur.execute("CREATE INDEX embeddings_model_owner ON embeddings (model, owner)")
    cur.execute("""
        CREATE TABLE profiles (
            owner TEXT PRIMARY KEY,
            portrait TEXT NOT NULL DEFAULT '',
            updated DOUBLE PRECISION NOT NULL DEFAULT 0,
            evidence_mark DOUBLE PRECISION NOT NULL DEFAULT 0,
            rebuilds INTEGER NOT NULL DEFAULT 0
        )""")
    cur.execute("""
        CREATE TABLE reflection_state (
            owner TEXT PRIMARY KEY,
            mark DOUBLE PRECISION NOT NULL DEFAULT 0,
            last_run DOUBLE PRECISION NOT NULL DEFAULT 0
        )""")


# --- turn log (issue 35) ---------------------------------------------------------------------
def _m0004(cur: psycopg.Cursor) -> None:
    # The heard turns (the event layer's raw data) and each memory's evidence (schema.py 0004).
    cur.execute("ALTER TABLE nodes ADD COLUMN sources TEXT[] NOT NULL DEFAULT '{}'")
    cur.execute("CREATE INDEX nodes_sources ON nodes USING gin (sources)")
    cur.execute("""
        CREATE TABLE turns (
            owner TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            session TEXT NOT NULL DEFAULT '',
            time DOUBLE PRECISION NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            dates TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            vector BYTEA,
            seq BIGSERIAL NOT NULL,
            PRIMARY KEY (owner, turn_id)
        )""")
    cur.execute("CREATE INDEX turns_owner_time ON turns (owner, time, seq)")


# --- end turn log ---


# --- issue 35: the layered profile (fay_ros/memory/layers) -------------------------------------
def _m0005(cur: psycopg.Cursor) -> None:
    cur.execute("""
        CREATE TABLE profile_layers (
            owner TEXT NOT NULL,
            layer TEXT NOT NULL,
            doc JSONB NOT NULL,
            PRIMARY KEY (owner, layer)
        )""")
    cur.execute("""
        CREATE TABLE profile_events (
            owner TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            time DOUBLE PRECISION NOT NULL,
            speaker TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (owner, turn_id)
        )""")
    cur.execute("CREATE INDEX profile_events_owner_time ON profile_events (owner, time)")
    cur.execute("""
        CREATE TABLE profile_changelog (
            id BIGSERIAL PRIMARY KEY,
            owner TEXT NOT NULL,
            time DOUBLE PRECISION NOT NULL,
            layer TEXT NOT NULL,
            item TEXT NOT NULL,
            old TEXT NOT NULL,
            new TEXT NOT NULL,
            reason TEXT NOT NULL,
            evidence JSONB NOT NULL
        )""")
    cur.execute("CREATE INDEX profile_changelog_owner ON profile_changelog (owner, id)")


# --- end issue 35 ------------------------------------------------------------------------------


# --- issue 36: reminders and commitments (fay_ros/memory/reminder_book.py) -------------------------
def _m0006(cur: psycopg.Cursor) -> None:
    for ddl in REMINDER_DDL:
        cur.execute(ddl)


# --- end issue 36 ------------------------------------------------------------------------------


MIGRATIONS: list[tuple[str, Callable[[psycopg.Cursor], None]]] = [
    ("0001_memory_stream", _m0001),
    ("0004_turn_log", _m0004),  # the turn log and each memory's sources
    ("0005_profile_layers", _m0005),  # the layered profile
    ("0006_reminders", _m0006),  # issue 36: reminders and commitments
]
LATEST = [name for name, _m in MIGRATIONS]


def migrate(conn: psycopg.Connection, where: str) -> list[str]:
    """Apply the pending migrations (creating the pgvector extension if it is missing and the
    role may). Returns the names applied. `where`: the database for messages (no secrets)."""
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if cur.fetchone() is None:
            try:
                with conn.transaction():
                    cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise SchemaError(
                    f"{where}: the pgvector extension is not installed in this database and could not be "
                    f"created ({type(exc).__name__}: {exc.diag.message_primary or exc}); run "
                    f"`CREATE EXTENSION vector;` as a superuser (docs/FLEET.md)"
                ) from None
        cur.execute(
            sql.SQL("CREATE TABLE IF NOT EXISTS {} (name TEXT PRIMARY KEY, applied DOUBLE PRECISION NOT NULL)").format(
                sql.Identifier(MIGRATIONS_TABLE)
            )
        )
        cur.execute(sql.SQL("SELECT name FROM {} ORDER BY name").format(sql.Identifier(MIGRATIONS_TABLE)))
        applied = [r[0] for r in cur.fetchall()]
        unknown = [name for name in applied if name not in LATEST]
        if unknown:
            raise SchemaError(
                f"{where}: written by a newer fay_ros (unknown schema migration(s) {unknown}); this version "
                f"knows {LATEST}. Upgrade fay_ros or use another memory database."
            )
        done = []
        for name, step in MIGRATIONS:
            if name in applied:
                continue
            step(cur)
            cur.execute(
                sql.SQL("INSERT INTO {} (name, applied) VALUES (%s, %s)").format(sql.Identifier(MIGRATIONS_TABLE)),
                [name, time.time()],
            )
            done.append(name)
        return done


def schema_version(conn: psycopg.Connection) -> list[str]:
    rows = conn.execute(sql.SQL("SELECT name FROM {} ORDER BY name").format(sql.Identifier(MIGRATIONS_TABLE)))
    return [r[0] for r in rows.fetchall()]


def vector_index_name(model: str, dim: int) -> str:
    return f"embeddings_hnsw_{hashlib.sha1(f'{model}/{dim}'.encode()).hexdigest()[:12]}"


# pgvector's HNSW graph (m = 16) takes about the vector plus 0.7 kB a row while it is built.
_GRAPH_OVERHEAD = 700


def hnsw_build_memory(vectors: int, dim: int) -> str:
    """maintenance_work_mem for building the HNSW index over `vectors` stored vectors in
    memory: the graph's estimated size with 25% headroom (3.2 GB at 1M x 512)."""
    graph = vectors * (4 * dim + _GRAPH_OVERHEAD)
    return f"{max(64, graph * 5 // 4 // 2**20)}MB"


def ensure_vector_index(
    conn: psycopg.Connection, model: str, dim: int, build_memory: str = "", build_workers: int | None = None
) -> None:
    """The HNSW (cosine) index of one embedding model's vectors; built once, by whichever
    robot with this model starts first (it may take a while on a large existing memory).

    For a build over many stored vectors (after a bulk load or a migration): `build_memory`
    is the build's maintenance_work_mem (`hnsw_build_memory`; used only when more than the
    session's) and `build_workers` its max_parallel_maintenance_workers. pgvector builds the
    graph in memory while it fits and many times slower on disk once it does not (it says so
    in a NOTICE); the parallel workers share that memory (/dev/shm must hold it)."""
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
        if build_memory:
            cur.execute(
                "SELECT pg_size_bytes(%s) > pg_size_bytes(current_setting('maintenance_work_mem'))", [build_memory]
            )
            more = cur.fetchone()
            if more and more[0]:
                cur.execute(sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(build_memory)))
        if build_workers is not None:
            cur.execute(
                sql.SQL("SET LOCAL max_parallel_maintenance_workers = {}").format(sql.Literal(int(build_workers)))
            )
        cur.execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {name} ON embeddings "
                "USING hnsw ((vector::vector({dim})) vector_cosine_ops) "
                "WITH (m = 16, ef_construction = 40) WHERE model = {model}"
            ).format(
                name=sql.Identifier(vector_index_name(model, dim)), dim=sql.SQL(str(int(dim))), model=sql.Literal(model)
            )
        )
