"""A reader of the layered profile outside the memory node (the admin page): the layer
tables of a memory database, opened without migrating or indexing anything."""

from __future__ import annotations

from typing import Any

from ..readonly import open_readonly as _open_tables
from .layer_tables import PostgresLayers, SqliteLayers


def open_readonly(location: str) -> tuple[Any, Any]:
    """(repository, close) over the layer tables of the memory database at `location` (a
    SQLite path or sqlite:/// URL, or a postgresql:// URL), for readers outside the memory
    node (the admin page): no migration, no vector index, and SQLite opened read-only.
    Raises LookupError when the database has no layered profile (yet)."""
    return _open_tables(
        location,
        "profile_layers",
        "layered profile",
        PostgresLayers,
        SqliteLayers,
    )
