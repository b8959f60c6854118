"""The memory store's interface and the choice of backend by URL.

Two backends keep the same memory stream with the same scoring (retrieval.py) and serve the
same service, policy and migrations (each backend has its own versioned migrations):

- SQLite (store.MemoryStore): one file, the embedded default. A location that is a path or
  `sqlite:///<path>` (`sqlite:////abs/path`, `sqlite:///~/memory.db`).
- PostgreSQL with pgvector (pg_store.PostgresMemoryStore): one database shared by several
  robots. A location `postgresql://user@host:port/db` (or `postgres://`). The password comes
  from the environment (PGPASSWORD) or a passfile (PGPASSFILE, ~/.pgpass) as libpq reads them;
  a URL is only ever shown through `describe_location` (fay_ros.common.urls.safe_url).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..common.urls import safe_url
from .embeddings import Embedder
from .model import CANDIDATE, CONFIRMED, MemoryNode
from .retrieval import DEFAULT_DECAY_PER_HOUR, Weights
from .turn_log import Turn

if TYPE_CHECKING:
    from .reminder_tables import ReminderTables

_RECALL_WEIGHTS = Weights()  # frozen: one shared default is safe
SQLITE_SCHEME = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class MemoryBackend(Protocol):
    """What the service, policy, reflection, profile, forget and the CLI use of a store.
    Every read and write names the owner; `write` is one transaction, committed on return."""

    embedder: Embedder
    clock: Callable[[], float]
    lock: Any  # a re-entrant lock: the service holds it across a read and its write

    @property
    def location(self) -> str: ...  # where the data lives, fit for logs (no credentials)

    def close(self) -> None: ...

    def get(self, owner: str, node_id: str) -> MemoryNode | None: ...

    def get_many(self, owner: str, node_ids: Iterable[str]) -> builtins.list[MemoryNode]: ...

    def list(
        self,
        owner: str,
        statuses: Iterable[str] = (CONFIRMED, CANDIDATE),
        node_types: Iterable[str] = (),
        tags_all: Iterable[str] = (),
        limit: int | None = None,
        newest_first: bool = True,
        created_after: float | None = None,
        include_expired: bool = False,
        tags_any: Iterable[str] = (),
    ) -> builtins.list[MemoryNode]: ...

    def find_keyed(self, owner: str, kind: str, key: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]: ...

    def find_content(self, owner: str, content: str, statuses: Iterable[str]) -> builtins.list[MemoryNode]: ...

    def pointing_to(self, owner: str, node_ids: Iterable[str]) -> builtins.list[MemoryNode]: ...

    def count(self, owner: str | None = None) -> int: ...

    def owners(self) -> builtins.list[str]: ...

    def write(
        self,
        add: Sequence[tuple[MemoryNode, np.ndarray | None]] = (),
        status: Sequence[tuple[str, str, str, str]] = (),
        delete: Sequence[tuple[str, str]] = (),
        update: Sequence[MemoryNode] = (),
    ) -> None: ...

    def add_many(
        self,
        nodes: Sequence[MemoryNode],
        vectors: np.ndarray | None = None,
        extra_vectors: Sequence[tuple[str, str, np.ndarray]] = (),
    ) -> None: ...

    def purge_expired(self) -> int: ...

    def recall(
        self,
        owner: str,
        query: str,
        n: int = 10,
        statuses: Iterable[str] = (CONFIRMED,),
        tags_all: Iterable[str] = (),
        tags_any: Iterable[str] = (),
        node_types: Iterable[str] = (),
        weights: Weights = _RECALL_WEIGHTS,
        decay_per_hour: float = DEFAULT_DECAY_PER_HOUR,
        stateless: bool = False,
        query_vector: np.ndarray | None = None,
    ) -> builtins.list[MemoryNode]: ...

    def recall_ids(
        self,
        owner: str,
        query_vector: np.ndarray | None,
        n: int,
        statuses: Iterable[str] = (CONFIRMED,),
        tags_all: Iterable[str] = (),
        tags_any: Iterable[str] = (),
        node_types: Iterable[str] = (),
        weights: Weights = _RECALL_WEIGHTS,
        decay_per_hour: float = DEFAULT_DECAY_PER_HOUR,
        stateless: bool = False,
    ) -> builtins.list[tuple[str, float]]: ...

    def vectors(self, owner: str, nodes: Sequence[MemoryNode]) -> np.ndarray: ...

    def flush_touches(self) -> int: ...

    def maintain_embeddings(self, limit: int = 256) -> int: ...

    def get_state(self, table: str, owner: str) -> dict: ...

    def set_state(self, table: str, owner: str, **values) -> None: ...

    def export_rows(
        self, after_id: str = "", limit: int = 1000
    ) -> builtins.list[tuple[MemoryNode, builtins.list[tuple[str, np.ndarray]]]]: ...

    def export_states(self) -> dict[str, builtins.list[dict]]: ...

    def import_rows(self, rows: Sequence[tuple[MemoryNode, Sequence[tuple[str, np.ndarray]]]]) -> int: ...

    def import_states(self, states: dict[str, builtins.list[dict]]) -> None: ...

    # --- turn log (issue 35): heard turns (turn_log.Turn) and the memories resting on them ---
    def add_turns(self, turns: Sequence[Turn], vectors: np.ndarray | None = None) -> builtins.list[str]: ...

    def get_turns(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[Turn]: ...

    def list_turns(
        self, owner: str, since: float | None = None, until: float | None = None, limit: int | None = None
    ) -> builtins.list[Turn]: ...

    def turns_with_vectors(self, owner: str) -> builtins.list[tuple[Turn, np.ndarray | None]]: ...

    def turn_stamp(self, owner: str) -> tuple[int, float]: ...

    def count_turns(self, owner: str | None = None) -> int: ...

    def delete_turns(self, owner: str, turn_ids: Iterable[str]) -> int: ...

    def resting_on(self, owner: str, turn_ids: Iterable[str]) -> builtins.list[MemoryNode]: ...

    def export_turns(self, after: tuple[str, str] = ("", ""), limit: int = 1000) -> builtins.list[Turn]: ...

    # --- end turn log ---

    # --- issue 36: reminders and commitments (reminder_tables.py; reminders.ReminderBook) ---
    def reminder_tables(self) -> ReminderTables: ...

    # --- end issue 36 ---


def is_postgres(location: str) -> bool:
    return location.strip().lower().startswith(POSTGRES_SCHEMES)


def sqlite_path(location: str) -> Path:
    """The file of a SQLite location: a plain path or sqlite:///<path>."""
    location = location.strip()
    if location.lower().startswith(SQLITE_SCHEME):
        location = location[len(SQLITE_SCHEME) :]
    if not location:
        raise ValueError("a SQLite location needs a file path, e.g. sqlite:///~/memory.db")
    return Path(location).expanduser()


def describe_location(location: str) -> str:
    """The location for logs and messages: a PostgreSQL URL without credentials or query."""
    return safe_url(location.strip()) if is_postgres(location) else str(sqlite_path(location))


def open_store(
    location: str | Path, embedder: Embedder, clock: Callable[[], float], synchronous: str = "FULL"
) -> MemoryBackend:
    """The store at `location` (see the module docstring). Raises SchemaError (unusable or
    newer database, unreachable server) or ValueError (a location that names no backend)."""
    text = str(location)
    if is_postgres(text):
        from .pg_store import PostgresMemoryStore

        return PostgresMemoryStore(text.strip(), embedder, clock=clock)
    if "://" in text and not text.strip().lower().startswith(SQLITE_SCHEME):
        raise ValueError(
            f"{safe_url(text)}: unknown memory database URL; use a file path, sqlite:///<path> "
            "or postgresql://user@host/db"
        )
    from .store import MemoryStore

    return MemoryStore(sqlite_path(text), embedder, clock=clock, synchronous=synchronous)
