"""Import a Fay memory stream (memory_stream/nodes.json + embeddings.json) for one owner,
keeping what Fay had.

Fay's nodes.json is a list of ConceptNode dicts: node_id, node_type, content, importance,
created / last_retrieved (time steps), pointer_id (list of node ids or null) and, in newer
versions, datetime ("YYYY/MM/DD HH:MM:SS") and tags. embeddings.json maps content -> vector,
keyed by the node's raw content (trailing spaces and all).

- All or nothing: every problem is reported (file, node position, node_id, field) and nothing
  is written unless the whole file is valid.
- Idempotent: each imported node remembers its origin ("fay:<node_id>"), a second import of
  the same file adds nothing (the report says which were skipped and why).
- Order: a node's creation time is its datetime; a node without one (older Fay versions) is
  placed by its position in the stream between its dated neighbours, so time-ordered recall
  gives Fay's order.
- Tags: every tag is kept as Fay wrote it (source: and persistent: on reflections too); a node
  without a source: tag gets source:fay_import.
- Status (`imported_status`): conversations and observations were Fay's working memory and are
  confirmed; Fay's reflections are model inferences and become candidates, as ours do, until
  reviewed (`confirm_imported_reflections`, `fay-ros memory confirm OWNER --all-reflections`).
- Vectors: looked up by the raw content, then by the content normalised (NFKC, whitespace
  collapsed). Fay's vectors come from an unknown embedding API and cannot be compared with
  ours, so they are kept (model "fay-<dim>") and the configured embedder embeds the content for
  recall.
"""

from __future__ import annotations

import datetime
import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..common.errors import FayError
from .backend import MemoryBackend
from .model import (
    CANDIDATE,
    CONFIRMED,
    MAX_CONTENT_CHARS,
    NODE_TYPES,
    MemoryInputError,
    MemoryNode,
    is_guest,
    normalise_tags,
)

if TYPE_CHECKING:
    from .service import MemoryService, Outcome

FAY_ORIGIN = "fay:"  # origin prefix of an imported node: "fay:<Fay's node_id>"


class FayImportError(FayError, ValueError):
    """The Fay files cannot be imported; the message lists every problem."""


@dataclass
class ImportReport:
    imported: int
    skipped: int
    fay_vectors: int
    dropped_pointers: int
    # What happened to which node, for people: (fay node_id, why).
    skipped_nodes: list[tuple[str, str]] = field(default_factory=list)
    missing_vectors: list[str] = field(default_factory=list)  # fay node_ids with no vector in embeddings.json
    normalised_vectors: list[str] = field(default_factory=list)  # found only by the normalised content
    dangling: list[tuple[str, str]] = field(default_factory=list)  # (fay node_id, pointer to no node)
    undated: int = 0  # placed by their position in the stream
    by_status: dict[str, int] = field(default_factory=dict)  # "reflection candidate" -> count

    def summary(self, owner: str) -> str:
        lines = [
            f"imported {self.imported} Fay memory nodes for owner {owner!r} ({self.skipped} already imported, "
            f"{self.fay_vectors} Fay embeddings kept, {self.dropped_pointers} dangling pointers dropped)"
        ]
        for what, count in sorted(self.by_status.items()):
            lines.append(f"  {count} {what}")
        if self.undated:
            lines.append(f"  {self.undated} without datetime: placed in time by their position in nodes.json")
        if self.normalised_vectors:
            lines.append(f"  vector found by the normalised content for node(s) {', '.join(self.normalised_vectors)}")
        if self.missing_vectors:
            lines.append(
                f"  no Fay vector in embeddings.json for node(s) {', '.join(self.missing_vectors)} "
                "(recall uses this store's embedder anyway)"
            )
        for node_id, pointer in self.dangling:
            lines.append(f"  node {node_id}: pointer to {pointer} dropped (no such node)")
        for node_id, why in self.skipped_nodes:
            lines.append(f"  skipped node {node_id}: {why}")
        if self.by_status.get(f"reflection {CANDIDATE}"):
            lines.append(
                f"  Fay's reflections are candidates: review them, then `fay-ros memory confirm {owner} "
                "--all-reflections` (or one by id)"
            )
        return "\n".join(lines)


def imported_status(node_type: str) -> str:
    """The policy for Fay's nodes: a reflection is a model's inference, a candidate until someone
    confirms it; observations and conversations were Fay's working memory."""
    return CANDIDATE if node_type == "reflection" else CONFIRMED


def lookup_key(text: str) -> str:
    """Content as embeddings.json is searched when the raw content is not a key: NFKC, runs of
    whitespace as one space, no leading or trailing whitespace."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


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


@dataclass
class FayStream:
    """A parsed, valid Fay stream: our nodes in Fay's order, Fay's vectors by our node id, and
    what the report says about them."""

    nodes: list[MemoryNode]
    fay_ids: list[str]
    vectors: dict[str, np.ndarray]
    report: ImportReport


def read_fay_stream(nodes_path: Path, embeddings_path: Path | None, owner: str, now: float) -> FayStream:
    """Parse and validate (raises FayImportError listing every problem)."""
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
    fay_ids: list[str] = []
    raw_contents: list[str] = []
    dated: list[float | None] = []
    raw_pointers: list[list[str]] = []
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
        nodes.append(
            MemoryNode(
                owner=owner,
                content=content.strip(),
                node_type=node_type,
                importance=float(min(10.0, max(1.0, float(importance) * scale))) if importance else 1.0,
                tags=tags,
                status=imported_status(node_type),
                origin=f"{FAY_ORIGIN}{node_id}",
            )
        )
        fay_ids.append(str(node_id))
        raw_contents.append(content)
        dated.append(created)
        raw_pointers.append([str(p) for p in pointers])
    if errors:
        raise FayImportError(f"{len(errors)} problem(s); nothing imported:\n  " + "\n  ".join(errors))
    report = ImportReport(imported=0, skipped=0, fay_vectors=0, dropped_pointers=0)
    for node, when in zip(nodes, stream_times(dated, now)):
        node.created = node.last_retrieved = when
    report.undated = sum(1 for d in dated if d is None)
    new_id = {fid: node.id for fid, node in zip(fay_ids, nodes)}
    for fid, node, pointers in zip(fay_ids, nodes, raw_pointers):
        node.pointer_ids = [new_id[p] for p in pointers if p in new_id]
        report.dangling += [(fid, p) for p in pointers if p not in new_id]
    report.dropped_pointers = len(report.dangling)
    by_key: dict[str, object] = {}
    for text, vec in vectors.items():
        by_key.setdefault(lookup_key(str(text)), vec)
    fay_vectors: dict[str, np.ndarray] = {}
    for fid, node, raw_content in zip(fay_ids, nodes, raw_contents):
        vec = vectors.get(raw_content)  # Fay keys embeddings.json by the raw content
        if vec is None:
            vec = by_key.get(lookup_key(raw_content))
            if _is_vector(vec):
                report.normalised_vectors.append(fid)
        if _is_vector(vec):
            fay_vectors[node.id] = np.asarray(vec, dtype=np.float32)
        else:
            report.missing_vectors.append(fid)
    return FayStream(nodes, fay_ids, fay_vectors, report)


def _is_vector(value) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )


def stream_times(dated: list[float | None], now: float) -> list[float]:
    """Creation times in stream order: a node's datetime when it has one; one without is placed
    by its position, evenly between the dated nodes around it (a second apart after the last
    dated one, or before the first; before `now` when none is dated). Fay's stream is in
    creation order, so undated nodes keep it."""
    times: list[float | None] = list(dated)
    known = [i for i, t in enumerate(times) if t is not None]
    if not known:
        return [now - (len(times) - i) for i in range(len(times))]
    out: list[float] = []
    for i, t in enumerate(times):
        if t is not None:
            out.append(t)
            continue
        before = max((k for k in known if k < i), default=None)
        after = min((k for k in known if k > i), default=None)
        if before is None:
            assert after is not None
            out.append(float(times[after]) - (after - i))  # type: ignore[arg-type]
        elif after is None:
            out.append(float(times[before]) + (i - before))  # type: ignore[arg-type]
        else:
            low, high = float(times[before]), float(times[after])  # type: ignore[arg-type]
            step = (high - low) / (after - before) if high > low else 1e-3
            out.append(low + step * (i - before))
    return out


def import_fay(
    store: MemoryBackend, nodes_path: str | Path, owner: str, embeddings_path: str | Path | None = None
) -> ImportReport:
    if is_guest(owner):
        raise FayImportError("an owner (user id) is required: a guest has no private memory")
    nodes_path = Path(nodes_path)
    if embeddings_path is None and (nodes_path.parent / "embeddings.json").exists():
        embeddings_path = nodes_path.parent / "embeddings.json"
    stream = read_fay_stream(nodes_path, Path(embeddings_path) if embeddings_path else None, owner, store.clock())
    report = stream.report
    with store.lock:
        by_origin = {n.origin: n for n in store.list(owner, statuses=[], include_expired=True) if n.origin}
        fresh = []
        for fid, node in zip(stream.fay_ids, stream.nodes):
            earlier = by_origin.get(node.origin)
            if earlier is None:
                fresh.append(node)
            else:
                report.skipped_nodes.append((fid, f"already imported as {earlier.id} ({earlier.status})"))
        if by_origin:
            # Pointers to nodes imported earlier must point at their existing ids.
            origin_of_new = {n.id: n.origin for n in stream.nodes}
            existing_id = {origin: n.id for origin, n in by_origin.items()}
            for n in fresh:
                n.pointer_ids = [existing_id.get(origin_of_new.get(p, ""), p) for p in n.pointer_ids]
        extra = [
            (n.id, f"fay-{stream.vectors[n.id].size}", stream.vectors[n.id]) for n in fresh if n.id in stream.vectors
        ]
        store.add_many(fresh, extra_vectors=extra)
    report.imported, report.skipped, report.fay_vectors = len(fresh), len(stream.nodes) - len(fresh), len(extra)
    for n in fresh:
        what = f"{n.node_type} {n.status}"
        report.by_status[what] = report.by_status.get(what, 0) + 1
    return report


def confirm_imported_reflections(service: MemoryService, owner: str) -> list[Outcome]:
    """Confirm, after review, every reflection imported from Fay that is still a candidate
    (each as memory/confirm does); the outcome of each."""
    candidates = service.store.list(owner, statuses=[CANDIDATE], node_types=["reflection"], newest_first=False)
    return [service.confirm(owner, n.id) for n in candidates if n.origin.startswith(FAY_ORIGIN)]
