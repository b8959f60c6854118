"""A reader of speaker cards outside the memory node (the admin page, issue 39): an owner's
confirmed card facts (`name`, `address:formality`, `address:language`, written by
self_facts from the person's own words) with each memory's id and the heard turns it rests
on, from a memory database opened read-only. Edits go through the memory node's services,
never through this reader."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..memory.model import CONFIRMED
from ..memory.readonly import open_readonly
from ..memory.self_facts import (
    ADDRESS_FORMALITY,
    ADDRESS_LANGUAGE,
    ANSWER_LANGUAGES,
    CASUAL,
    FORMAL,
    SelfFact,
    answer_language_fact,
    formality_fact,
    name_fact,
    name_from_content,
)
from ..text.words import has_cjk
from .style import speaker_card

# The card's fields, in the order the admin page shows them, and the memory key of each.
CARD_KEYS = {"name": "name", "formality": ADDRESS_FORMALITY, "language": ADDRESS_LANGUAGE}

# The confirmed memories of the card keys, oldest first; `{p}` is the driver's placeholder.
_FACTS_SQL = (
    "SELECT id, key, content, created FROM nodes WHERE owner = {p} AND status = {p} "
    "AND key IN ({p}, {p}, {p}) ORDER BY created"
)
# A memory's evidence: SQLite keeps it in node_sources, PostgreSQL in the nodes.sources array.
_SQLITE_SOURCES_SQL = (
    "SELECT t.text FROM node_sources s JOIN turns t ON t.turn_id = s.turn_id AND t.owner = ? "
    "WHERE s.node_id = ? ORDER BY s.position"
)
_POSTGRES_SOURCES_SQL = (
    "SELECT t.text FROM nodes n, unnest(n.sources) WITH ORDINALITY AS s(turn_id, position) "
    "JOIN turns t ON t.turn_id = s.turn_id AND t.owner = %s WHERE n.id = %s ORDER BY s.position"
)


class CardTables:
    """The two queries a card needs, over a DB-API style `execute(sql, params)`."""

    def __init__(self, execute: Callable[[str, tuple], list[tuple]], placeholder: str, sources_sql: str) -> None:
        self._execute = execute
        self._p = placeholder
        self._sources_sql = sources_sql

    def facts(self, owner: str) -> list[tuple]:
        return self._execute(_FACTS_SQL.format(p=self._p), (owner, CONFIRMED, *CARD_KEYS.values()))

    def sources(self, owner: str, node_id: str) -> list[str]:
        return [row[0] for row in self._execute(self._sources_sql, (owner, node_id))]


def _sqlite_tables(db: Any, lock: threading.RLock) -> CardTables:
    def execute(sql: str, params: tuple) -> list[tuple]:
        with lock:
            return list(db.execute(sql, params).fetchall())

    return CardTables(execute, "?", _SQLITE_SOURCES_SQL)


def _postgres_tables(store: Any) -> CardTables:
    def execute(sql: str, params: tuple) -> list[tuple]:
        with store.lock:
            return list(store._db().execute(sql, params).fetchall())

    return CardTables(execute, "%s", _POSTGRES_SOURCES_SQL)


def read_card(tables: CardTables, owner: str) -> dict[str, Any]:
    """{"owner", "card": {field: {"key", "memory_id", "content", "evidence": [turn texts]} or
    None}, "line"}: what the dialogue reads for this person (dialogue/style.py renders the
    same contents), newest confirmed memory per key, only this owner's rows."""
    newest: dict[str, tuple] = {}
    for row in tables.facts(owner):
        newest[row[1]] = row  # ordered by time: the last one wins
    card: dict[str, Any] = {}
    for field, key in CARD_KEYS.items():
        fact = newest.get(key)
        card[field] = (
            None
            if fact is None
            else {"key": key, "memory_id": fact[0], "content": fact[2], "evidence": tables.sources(owner, fact[0])}
        )
    parsed = speaker_card({key: found[2] for key, found in newest.items()})
    values = {"name": parsed.name, "formality": parsed.formality, "language": parsed.language}
    for field, entry in card.items():
        if entry is not None:
            entry["value"] = values[field]
    return {"owner": owner, "card": card, "line": parsed.line()}


def card_reader(location: str) -> Callable[[str], dict[str, Any]]:
    """owner -> the owner's speaker card, from the memory database at `location` opened
    read-only per request. LookupError when the database has no memories table (yet)."""

    def read(owner: str) -> dict[str, Any]:
        tables, close = open_readonly(location, "nodes", "memories", _postgres_tables, _sqlite_tables)
        try:
            return read_card(tables, owner)
        finally:
            close()

    return read


MAX_NAME_CHARS = 40


def card_fact(field: str, value: str) -> SelfFact:
    """The memory an edit of one card field writes: the same keyed fact self_facts stores when
    the person says it (so the dialogue reads an edited card exactly like a heard one).
    ValueError naming the field when the value is not one the card can hold."""
    value = value.strip()
    if field == "name":
        if (
            not value
            or len(value) > MAX_NAME_CHARS
            or any(ch in value for ch in ".。\n\r\t")
            or not value.isprintable()
        ):
            raise ValueError(f"name: 1..{MAX_NAME_CHARS} printable characters, no full stop or line break")
        return name_fact(value, "zh" if has_cjk(value) else "en")
    if field == "formality":
        if value not in (CASUAL, FORMAL):
            raise ValueError(f"formality {value!r}: expected {CASUAL} or {FORMAL}")
        return formality_fact(value)
    if field == "language":
        if value not in ANSWER_LANGUAGES:
            raise ValueError(f"language {value!r}: expected one of {', '.join(ANSWER_LANGUAGES)}")
        return answer_language_fact(value)
    raise ValueError(f"field {field!r}: expected one of {', '.join(CARD_KEYS)}")


def is_card_fact(key: str, content: str, tags: list[str]) -> bool:
    """Whether a memory/remember request's key, content and tags are exactly one card field's
    keyed fact (what card_fact makes): the only write the admin page's session may send."""
    candidates = {
        "name": [name_from_content(content)],
        ADDRESS_FORMALITY: [CASUAL, FORMAL],
        ADDRESS_LANGUAGE: list(ANSWER_LANGUAGES),
    }.get(key, [])
    field = next((f for f, k in CARD_KEYS.items() if k == key), "")
    for value in candidates:
        try:
            fact = card_fact(field, value)
        except ValueError:
            continue
        if fact.content == content and list(fact.tags) == list(tags):
            return True
    return False
