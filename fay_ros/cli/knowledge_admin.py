"""`fay-ros knowledge`: index the user's documents and search them (issue 41).

    fay-ros knowledge add PATH... [--kb NAME] [--db FILE]    files and folders, incremental
    fay-ros knowledge list [--kb NAME]                        documents, chunks, when, errors
    fay-ros knowledge remove SOURCE... [--kb NAME]            as `list` names them
    fay-ros knowledge search QUESTION [--kb NAME] -n K [--json]

`--db` takes a file, sqlite:///<path> or postgresql://user@host/db (the password from
PGPASSWORD or a passfile), default $XDG_DATA_HOME/fay_ros/knowledge.db; `--embedder` must be
the one the base was indexed with. Exit code 1 when a file could not be indexed (each named
on stderr; every other file is indexed), 2 when the database cannot be used.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys

from ..common.errors import FayError
from ..knowledge.api import DEFAULT_KB


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("knowledge", help="index documents into a knowledge base; list, remove, search")
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
    sub = p.add_subparsers(dest="knowledge_command", metavar="ACTION")

    def action(name: str, help_text: str, default_kb: str | None = DEFAULT_KB) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help_text)
        parser.add_argument(
            "--db", default=None, help="knowledge database: a file, sqlite:///<path> or postgresql://..."
        )
        parser.add_argument("--kb", default=default_kb, help=f"knowledge base name (default {default_kb or 'all'})")
        parser.add_argument("--embedder", default="auto", choices=["auto", "use", "hashed"], help="embedding model")
        return parser

    add = action("add", "index files and folders (.txt .md .html .pdf .docx); unchanged files are skipped")
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--max-file-mb", type=float, default=None, help="refuse larger files (default 20)")
    add.set_defaults(func=_add)

    listing = action("list", "the documents with their chunk counts, index times and errors", default_kb=None)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=_list)

    remove = action("remove", "drop documents (by the source `list` shows)")
    remove.add_argument("sources", nargs="+", metavar="SOURCE")
    remove.set_defaults(func=_remove)

    search = action("search", "the best passages for a question, with their sources", default_kb=None)
    search.add_argument("question")
    search.add_argument("-n", type=int, default=5, help="how many passages (default 5)")
    search.add_argument("--json", action="store_true", help="a JSON array, best first: text, source, locator, score")
    search.add_argument("--threshold", type=float, default=None, help="minimum score (default from settings)")
    search.set_defaults(func=_search)


def _open(args: argparse.Namespace, **overrides):
    from ..knowledge.base import KnowledgeBase, KnowledgeSettings

    values = {"embedder": args.embedder, **{k: v for k, v in overrides.items() if v is not None}}
    if args.db:
        values["db"] = args.db
    return KnowledgeBase(KnowledgeSettings(**values))


def _run(args: argparse.Namespace, body) -> int:
    try:
        kb = _open(
            args,
            max_file_mb=getattr(args, "max_file_mb", None),
            threshold=getattr(args, "threshold", None),
        )
    except FayError as exc:
        print(f"fay-ros knowledge: {exc}", file=sys.stderr)
        return 2
    try:
        return body(kb)
    finally:
        kb.close()


def _add(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    def body(kb) -> int:
        bar = tqdm(total=0, desc="indexing", unit="file", disable=not sys.stderr.isatty())

        def progress(done: int, total: int, source: str) -> None:
            bar.total = total
            bar.n = done
            bar.set_postfix_str(source, refresh=True)

        report = kb.add(args.paths, kb=args.kb, progress=progress)
        bar.close()
        for _, message in report.failed:
            print(f"error: {message}", file=sys.stderr)
        print(
            f"{kb.location} [{args.kb}]: {len(report.indexed)} indexed ({report.chunks} chunks, "
            f"{report.bytes / 1e6:.2f} MB), {len(report.unchanged)} unchanged, {len(report.removed)} removed, "
            f"{len(report.failed)} failed"
        )
        return 1 if report.failed else 0

    return _run(args, body)


def _list(args: argparse.Namespace) -> int:
    def body(kb) -> int:
        documents = kb.documents(args.kb)
        if args.json:
            print(json.dumps([d.__dict__ for d in documents], ensure_ascii=False, indent=2))
            return 0
        for d in documents:
            when = datetime.datetime.fromtimestamp(d.indexed_at).isoformat(" ", "seconds") if d.indexed_at else "never"
            status = f"  ERROR {d.error}" if d.error else ""
            print(f"{d.kb}\t{d.source}\t{d.chunks} chunks\t{when}{status}")
        if not documents:
            print(f"{kb.location}: no documents", file=sys.stderr)
        return 0

    return _run(args, body)


def _remove(args: argparse.Namespace) -> int:
    def body(kb) -> int:
        removed = kb.remove(args.sources, kb=args.kb)
        for source in args.sources:
            if source not in removed:
                print(f"error: {source}: not in knowledge base {args.kb!r}", file=sys.stderr)
        print(f"{len(removed)} removed")
        return 0 if len(removed) == len(args.sources) else 1

    return _run(args, body)


def _search(args: argparse.Namespace) -> int:
    def body(kb) -> int:
        passages = kb.search(args.question, k=args.n, kb=args.kb)
        if args.json:
            rows = [{"text": p.text, "source": p.source, "locator": p.locator, "score": p.score} for p in passages]
            print(json.dumps(rows, ensure_ascii=False, indent=2))
            return 0
        if not passages:
            print("nothing found")
        for p in passages:
            where = f"{p.source}" + (f" ({p.locator})" if p.locator else "")
            print(f"{p.score:.3f}  {where}\n    {p.text}")
        return 0

    return _run(args, body)
