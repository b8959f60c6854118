"""KnowledgeBase: documents indexed into a store, searched by hybrid retrieval.

Indexing (`add`) is incremental: a file whose bytes hash as when it was last indexed is
skipped; a changed file is read again and its old chunks replaced in one transaction; a file
gone from a folder added before is dropped. A file that cannot be read is recorded with its
error (shown by `documents`) and every other file is indexed; a changed file that now fails
keeps its last good chunks, so nothing indexed is lost to a bad copy.

Search fuses two absolute signals into one score in [0, 1], so one threshold means the same
for every question:
- keyword: BM25 on the [0, 1] scale of `keywords.bm25_coverage` (terms that work for Chinese);
- meaning: the cosine of the question's and the chunk's embeddings (`make_embedder`: the
  multilingual USE model, else hashed n-grams), rescaled so that `cosine_floor` (what
  unrelated texts reach) is 0 and `cosine_ceiling` (a passage that says what was asked) 1.
The defaults (vector weight 0.6, floor 0.2, ceiling 0.6, threshold 0.2) were chosen on the
tuning split of bench/bench_knowledge.py with the USE model: the answer is found at 5 for
at least 0.93 of the questions in each language while most questions the documents do not
answer get nothing; docs/knowledge.md has the figures, held-out split included.
The candidates are the best `candidates` chunks of each search (FTS5/tsvector, and the
vectors); a passage is returned when its fused score reaches `threshold`.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..memory.backend import is_postgres, sqlite_path
from ..memory.embeddings import Embedder, make_embedder
from .api import DEFAULT_KB, DocumentInfo, Passage
from .chunking import Chunk, chunk_sections
from .documents import SUPPORTED_SUFFIXES, DocumentError, read_document
from .kb_store import KnowledgeStore, NewChunk, StoredDocument, default_location
from .keywords import bm25_coverage, candidate_terms, keyword_terms, term_weights


def open_knowledge_store(location: str, embedder: Embedder) -> KnowledgeStore:
    """The store at `location` (a file, sqlite:///<path> or postgresql://...). Raises
    KnowledgeStoreError naming the location (without credentials) when it cannot be used."""
    if is_postgres(location):
        from .kb_postgres import PostgresKnowledgeStore

        return PostgresKnowledgeStore(location.strip(), embedder)
    from .kb_sqlite import SqliteKnowledgeStore

    return SqliteKnowledgeStore(sqlite_path(location), embedder)


class KnowledgeSettings(BaseModel):
    """The knowledge base's settings (config file `knowledge:` section, CLI options)."""

    model_config = ConfigDict(extra="forbid")

    db: str = Field(default_factory=default_location, description="a file, sqlite:///<path> or postgresql://...")
    embedder: str = Field(default="auto", pattern="^(auto|use|hashed)$", description="embedding model (as memory's)")
    threshold: float = Field(
        default=0.2, ge=0.0, le=1.0, description="fused score below which a passage does not count as found"
    )
    max_file_mb: float = Field(default=20.0, gt=0, description="larger files are refused (named in the report)")
    chunk_chars: int = Field(default=600, ge=100, le=5000, description="a chunk's size limit, in characters")
    candidates: int = Field(
        default=50, ge=5, le=1000, description="chunks taken from each of keyword and vector search"
    )
    vector_weight: float = Field(default=0.6, ge=0.0, le=1.0, description="share of the meaning signal in the score")
    cosine_floor: float = Field(default=0.2, ge=0.0, lt=1.0, description="cosine that unrelated texts reach (scores 0)")
    cosine_ceiling: float = Field(
        default=0.6, gt=0.0, le=1.0, description="cosine at which the meaning signal is full (scores 1)"
    )


@dataclass
class AddReport:
    """What `KnowledgeBase.add` did, by source."""

    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source, message naming the file)
    chunks: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class _Candidate:
    path: Path
    source: str
    root: str


ProgressCallback = Callable[[int, int, str], None]  # (files done, files in all, the file now)
_EMBED_BATCH = 64


def index_text(source: str, chunk: Chunk) -> str:
    """What a chunk is indexed under: the document's name and heading path give its context
    ("Opening hours > Weekends" makes "Saturday 10-16" findable by 'weekend hours')."""
    title = Path(source).stem.replace("_", " ").replace("-", " ")
    return "\n".join(part for part in (title, chunk.locator, chunk.text) if part)


class KnowledgeBase:
    """Implements `api.KnowledgeSearch`, plus `add`, `remove` and `documents`."""

    def __init__(
        self,
        settings: KnowledgeSettings | None = None,
        embedder: Embedder | None = None,
        store: KnowledgeStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings or KnowledgeSettings()
        self.embedder = embedder or make_embedder(self.settings.embedder)
        self.store = store or open_knowledge_store(self.settings.db, self.embedder)
        self.clock = clock

    @property
    def location(self) -> str:
        return self.store.location

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------------ indexing
    def add(
        self, paths: Iterable[str | Path], kb: str = DEFAULT_KB, progress: ProgressCallback | None = None
    ) -> AddReport:
        report = AddReport()
        files: list[_Candidate] = []
        scanned_roots: dict[str, set[str]] = {}
        for given in paths:
            path = Path(given).expanduser()
            if path.is_dir():
                root = str(path.resolve())
                found = [
                    p
                    for p in sorted(path.rglob("*"))
                    if p.is_file()
                    and p.suffix.lower() in SUPPORTED_SUFFIXES
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                ]
                scanned_roots[root] = set()
                if not found:
                    report.failed.append(
                        (str(given), f"{given}: nothing to index (no {', '.join(SUPPORTED_SUFFIXES)} file in it)")
                    )
                for p in found:
                    source = p.relative_to(path).as_posix()
                    scanned_roots[root].add(source)
                    files.append(_Candidate(p, source, root))
            elif path.is_file():
                files.append(_Candidate(path, str(given), ""))
            else:
                report.failed.append((str(given), f"{given}: no such file or folder"))
        for number, candidate in enumerate(files):
            if progress:
                progress(number, len(files), candidate.source)
            self._add_file(candidate, kb, report)
        if progress:
            progress(len(files), len(files), "")
        for root, seen in scanned_roots.items():
            for document in self.store.documents(kb):
                if document.root == root and document.source not in seen:
                    self.store.delete_document(kb, document.source)
                    report.removed.append(document.source)
        return report

    def _add_file(self, candidate: _Candidate, kb: str, report: AddReport) -> None:
        max_bytes = int(self.settings.max_file_mb * 1e6)
        source = candidate.source
        try:
            size = candidate.path.stat().st_size
            content_hash = ""
            if size <= max_bytes:
                content_hash = hashlib.sha256(candidate.path.read_bytes()).hexdigest()
                known = self.store.document(kb, source)
                if known and known.content_hash == content_hash and not known.error:
                    report.unchanged.append(source)
                    return
            sections = read_document(candidate.path, source, max_bytes)
        except DocumentError as exc:
            self.store.record_error(kb, source, candidate.root, str(exc))
            report.failed.append((source, str(exc)))
            return
        except OSError as exc:
            message = f"{source}: cannot read ({exc.strerror or exc})"
            self.store.record_error(kb, source, candidate.root, message)
            report.failed.append((source, message))
            return
        chunks = chunk_sections(sections, self.settings.chunk_chars)
        texts = [index_text(source, chunk) for chunk in chunks]
        vectors = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        for start in range(0, len(texts), _EMBED_BATCH):
            vectors[start : start + _EMBED_BATCH] = self.embedder.embed(texts[start : start + _EMBED_BATCH])
        new_chunks = [
            NewChunk(i, chunk.locator, chunk.text, keyword_terms(text))
            for i, (chunk, text) in enumerate(zip(chunks, texts))
        ]
        document = StoredDocument(kb, source, candidate.root, content_hash, len(chunks), self.clock())
        self.store.replace_document(document, new_chunks, vectors)
        report.indexed.append(source)
        report.chunks += len(chunks)
        report.bytes += size

    def remove(self, sources: Iterable[str], kb: str = DEFAULT_KB) -> list[str]:
        """Drop these documents (as `documents` names them) from `kb`; returns those that were there."""
        return [source for source in sources if self.store.delete_document(kb, source)]

    def documents(self, kb: str | None = None) -> list[DocumentInfo]:
        return [d.info() for d in self.store.documents(kb)]

    # ------------------------------------------------------------------ search
    def search(self, question: str, k: int = 5, kb: str | None = None) -> list[Passage]:
        return [p for p in self.rank(question, max(k, 0), kb) if p.score >= self.settings.threshold][:k]

    def rank(self, question: str, k: int, kb: str | None = None, vector_weight: float | None = None) -> list[Passage]:
        """The best `k` passages by fused score, with no threshold (the bench uses it, with
        `vector_weight` 0 for its keyword-only baseline)."""
        question = question.strip()
        if not question or k <= 0:
            return []
        weight = self.settings.vector_weight if vector_weight is None else vector_weight
        terms = keyword_terms(question)
        stats = self.store.term_stats(terms)
        weights = term_weights(terms, stats.document_frequency, stats.chunks)
        n = self.settings.candidates
        ids = list(self.store.keyword_candidates(candidate_terms(terms, stats.document_frequency, stats.chunks), kb, n))
        query_vector = np.zeros(self.embedder.dim, dtype=np.float32)
        if weight > 0:
            query_vector = self.embedder.embed([question])[0]
            seen = set(ids)
            ids += [i for i in self.store.vector_candidates(query_vector, kb, n) if i not in seen]
        if not ids:
            return []
        chunks = self.store.chunks(ids)
        floor, ceiling = (
            self.settings.cosine_floor,
            max(self.settings.cosine_ceiling, self.settings.cosine_floor + 1e-6),
        )
        scored: list[Passage] = []
        for chunk in chunks:
            keyword = bm25_coverage(weights, Counter(chunk.terms), stats.average_length)
            meaning = 0.0
            if weight > 0:
                cosine = float(np.dot(chunk.vector, query_vector))
                meaning = min(1.0, max(0.0, (cosine - floor) / (ceiling - floor)))
            score = weight * meaning + (1.0 - weight) * keyword
            scored.append(Passage(chunk.text, chunk.source, chunk.locator, round(score, 4), chunk.kb))
        scored.sort(key=lambda p: -p.score)
        return scored[:k]


def sources_of(passages: Sequence[Passage]) -> list[str]:
    """The distinct sources of `passages`, best first (for "where does that come from?")."""
    return list(dict.fromkeys(p.source for p in passages))
