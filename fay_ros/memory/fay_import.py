"""Import a Fay memory stream (memory_stream/nodes.json + embeddings.json) for one owner.

Fay's nodes.json is a list of ConceptNode dicts: node_id, node_type, content, importance,
created / last_retrieved (time steps), pointer_id (list of node ids or null) and, in newer
versions, datetime ("YYYY/MM/DD HH:MM:SS") and tags. embeddings.json maps content -> vector.

- All or nothing: every problem is reported (file, node position, node_id, field) and nothing
  is written unless the whole file is valid.
- Idempotent: each imported node remembers its origin ("fay:<node_id>"), a second import of
  the same file adds nothing.
- Status: conversations and observations were Fay's working memory and are imported as
  confirmed; Fay's reflections are model inferences and become candidates (as ours do).
- Fay's vectors come from an unknown embedding API and cannot be compared with ours, so they
  are kept (model "fay-<dim>") and the configured embedder embeds the content for recall.
"""
from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..common.errors import FayError
from .model import (CANDIDATE, CONFIRMED, NODE_TYPES, MAX_CONTENT_CHARS, MemoryInputError, MemoryNode, is_guest,
                    normalise_tags)
from .backend import MemoryBackend


class FayImportError(FayError, ValueError):
    """The Fay files cannot be imported; the message lists every problem."""


@dataclass
class ImportReport:
    imported: int
    skipped: int
    fay_vectors: int
    dropped_pointers: int

    def summary(self, owner: str) -> str:
        return (f"imported {self.imported} Fay memory nodes for owner {owner!r} ({self.skipped} already imported, "
                f"{self.fay_vectors} Fay embeddings kept, {self.dropped_pointers} dangling pointers dropped)")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FayImportError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise FayImportError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _load_json(path: Path):
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FayImportError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None


def _element_lines(text: str) -> list[int]:
    """Line number where each element of a top-level JSON array starts (for error messages)."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.find("[") + 1
    while 0 < pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        lines.append(text.count("\n", 0, pos) + 1)
        _value, pos = decoder.raw_decode(text, pos)
    return lines


def _parse_datetime(value) -> float | None:
    if not value:
        return None
    for fmt in ("%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"):
        try:
            return datetime.datetime.strptime(str(value).strip(), fmt).timestamp()
        except ValueError:
            continue
    raise ValueError(f"datetime {value!r} is not 'YYYY/MM/DD HH:MM:SS'")


def read_fay_stream(nodes_path: Path, embeddings_path: Path | None, owner: str, now: float):
    """Parse and validate; returns (nodes, fay_vectors_by_node_id, dropped_pointers)."""
    raw = _load_json(nodes_path)
    if not isinstance(raw, list):
        raise FayImportError(f"{nodes_path}: expected a JSON list of memory nodes, got {type(raw).__name__}")
    lines = _element_lines(_read_text(nodes_path))
    vectors: dict = {}
    if embeddings_path is not None:
        vectors = _load_json(embeddings_path)
        if not isinstance(vectors, dict):
            raise FayImportError(f"{embeddings_path}: expected a JSON object mapping content to a vector")
    errors: list[str] = []
    nodes: list[MemoryNode] = []
    fay_ids: list = []
    raw_pointers: list = []
    scale = 1.0
    importances = [d.get("importance") for d in raw if isinstance(d, dict)]
    if any(isinstance(v, (int, float)) and v > 10 for v in importances):
        scale = 0.1  # some Fay versions score importance 0..100
    seen_ids = set()
    for pos, item in enumerate(raw, start=1):
        where = f"{nodes_path}:{lines[pos - 1]}: node #{pos}" if pos <= len(lines) else f"{nodes_path}: node #{pos}"
        if not isinstance(item, dict):
            errors.append(f"{where}: expected an object, got {type(item).__name__}")
            continue
        node_id = item.get("node_id")
        where += f" (node_id {node_id!r})"
        problems = []
        if node_id is None or isinstance(node_id, (dict, list)):
            problems.append("node_id is missing")
        elif str(node_id) in seen_ids:
            problems.append("node_id is duplicated")
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            problems.append("content is missing or empty")
            content = ""
        elif len(content) > MAX_CONTENT_CHARS:
            problems.append(f"content longer than {MAX_CONTENT_CHARS} characters")
        node_type = item.get("node_type", "observation")
        if node_type not in NODE_TYPES:
            problems.append(f"node_type {node_type!r} is not one of {', '.join(NODE_TYPES)}")
        importance = item.get("importance", 5)
        if isinstance(importance, str):
            try:
                importance = float(importance)
            except ValueError:
                pass
        if not isinstance(importance, (int, float)) or isinstance(importance, bool) or importance < 0:
            problems.append(f"importance {item.get('importance')!r} is not a number >= 0")
            importance = 0
        try:
            created = _parse_datetime(item.get("datetime"))
        except ValueError as exc:
            problems.append(str(exc))
            created = None
        tags = item.get("tags") or []
        if not isinstance(tags, list):
            problems.append("tags is not a list")
            tags = []
        try:
            tags = normalise_tags([str(t) for t in tags])
        except MemoryInputError as exc:
            problems.append(str(exc))
            tags = []
        pointers = item.get("pointer_id")
        if pointers is None:
            pointers = []
        elif not isinstance(pointers, list):
            pointers = [pointers]
        if problems:
            errors += [f"{where}: {p}" for p in problems]
            continue
        seen_ids.add(str(node_id))
        if not any(t.startswith("source:") for t in tags):
            tags.append("source:fay_import")
        when = created if created is not None else now
        nodes.append(MemoryNode(owner=owner, content=content.strip(), node_type=node_type,
                                importance=float(min(10.0, max(1.0, float(importance) * scale))) if importance else 1.0,
                                created=when, last_retrieved=when, tags=tags,
                                status=CANDIDATE if node_type == "reflection" else CONFIRMED,
                                origin=f"fay:{node_id}"))
        fay_ids.append(str(node_id))
        raw_pointers.append([str(p) for p in pointers])
    if errors:
        raise FayImportError(f"{len(errors)} problem(s); nothing imported:\n  " + "\n  ".join(errors))
    new_id = {fid: node.id for fid, node in zip(fay_ids, nodes)}
    dropped = 0
    for node, pointers in zip(nodes, raw_pointers):
        node.pointer_ids = [new_id[p] for p in pointers if p in new_id]
        dropped += len(pointers) - len(node.pointer_ids)
    fay_vectors = {}
    for node in nodes:
        vec = vectors.get(node.content)
        if isinstance(vec, list) and vec and all(isinstance(v, (int, float)) for v in vec):
            fay_vectors[node.id] = np.asarray(vec, dtype=np.float32)
    return nodes, fay_vectors, dropped


def import_fay(store: MemoryBackend, nodes_path: str | Path, owner: str,
               embeddings_path: str | Path | None = None) -> ImportReport:
    if is_guest(owner):
        raise FayImportError("an owner (user id) is required: a guest has no private memory")
    nodes_path = Path(nodes_path)
    if embeddings_path is None and (nodes_path.parent / "embeddings.json").exists():
        embeddings_path = nodes_path.parent / "embeddings.json"
    nodes, fay_vectors, dropped = read_fay_stream(nodes_path, Path(embeddings_path) if embeddings_path else None,
                                                  owner, store.clock())
    with store.lock:
        existing = {n.origin for n in store.list(owner, statuses=[], include_expired=True) if n.origin}
        fresh = [n for n in nodes if n.origin not in existing]
        # Pointers to nodes imported earlier must point at their existing ids.
        if existing:
            by_origin = {n.origin: n.id for n in store.list(owner, statuses=[], include_expired=True) if n.origin}
            origin_of_new = {n.id: n.origin for n in nodes}
            for n in fresh:
                n.pointer_ids = [by_origin.get(origin_of_new.get(p, ""), p) for p in n.pointer_ids]
        extra = [(n.id, f"fay-{fay_vectors[n.id].size}", fay_vectors[n.id]) for n in fresh if n.id in fay_vectors]
        store.add_many(fresh, extra_vectors=extra)
    return ImportReport(imported=len(fresh), skipped=len(nodes) - len(fresh), fay_vectors=len(extra),
                        dropped_pointers=dropped)
