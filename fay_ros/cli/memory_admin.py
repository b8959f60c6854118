"""`fay-ros memory`: look into and manage the memory database (import from Fay, recall,
list, confirm, forget, schema; migrate between SQLite and PostgreSQL). Every command but
migrate names one owner; none lists across owners. `--db` takes a file path, sqlite:///<path>
or postgresql://user@host/db (the password from PGPASSWORD or a passfile); it and --embedder
go before or after the action.

It opens the same SQLite file as the memory node (WAL allows both at once); the node notices
the changes. The default database is the node's default db_path.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys

from ..common.paths import default_memory_db


def _database_options(parser: argparse.ArgumentParser, suppress: bool, db: bool = True) -> None:
    """--db and --embedder: on `fay-ros memory` itself (with defaults) and again on each action
    (without, so a value given after the action wins and one given before is kept):
    `fay-ros memory --db X import ...` and `fay-ros memory import ... --db X` are the same."""
    if db:
        parser.add_argument(
            "--db",
            default=argparse.SUPPRESS if suppress else default_memory_db(),
            help="memory database: a file, sqlite:///<path> or postgresql://user@host/db "
            "(default $XDG_DATA_HOME/fay_ros/memory.db: %(default)s); before or after the action",
        )
    parser.add_argument(
        "--embedder",
        default=argparse.SUPPRESS if suppress else "auto",
        choices=["auto", "use", "hashed"],
        help="embedder; must match the memory node's so recall uses the same vectors",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("memory", help="import a Fay memory stream; recall, list, confirm or forget memories")
    _database_options(p, suppress=False)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
    sub = p.add_subparsers(dest="memory_command", metavar="ACTION")

    def action(name: str, db: bool = True, **kwargs) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, **kwargs)
        _database_options(parser, suppress=True, db=db)
        return parser

    imp = action("import", help="import Fay's memory_stream/nodes.json (+ embeddings.json beside it)")
    imp.add_argument("nodes_json", help="path to Fay's nodes.json")
    imp.add_argument("--owner", required=True, help="user id the memories belong to")
    imp.add_argument("--embeddings", default=None, help="Fay's embeddings.json (default: next to nodes.json)")
    imp.set_defaults(func=_import)

    search = action("recall", aliases=["search"], help="recall an owner's memories for a query (as memory/recall)")
    search.add_argument(
        "query", nargs="?", default="", help="what to look for ('' with --time-ordered: the latest memories)"
    )
    search.add_argument("--owner", required=True)
    search.add_argument("-n", type=int, default=10)
    search.add_argument("--tag", action="append", default=[], help="required tag (repeatable)")
    search.add_argument("--any-tag", action="append", default=[], help="at least one of these tags (repeatable)")
    search.add_argument(
        "--type",
        dest="node_type",
        default="",
        choices=["observation", "conversation", "reflection"],
        help="only memories of this node type (Fay's retrieve filter)",
    )
    search.add_argument(
        "--time-ordered",
        action="store_true",
        help="oldest first: without a query the last N memories, with one the best N",
    )
    search.add_argument("--candidates", action="store_true", help="include candidate memories")
    search.add_argument("--json", action="store_true", help="print JSON")
    # --- turn log (issue 35) ---
    search.add_argument(
        "--evidence",
        action="store_true",
        help="hybrid recall over the heard turns and memories (words, meaning, time, facts): each item "
        "with its source turn ids and absolute date",
    )
    search.add_argument(
        "--now", default="", metavar="ISO", help="with --evidence: the reference time of time words (default now)"
    )
    # --- end turn log ---
    search.set_defaults(func=_search)

    lst = action("list", help="list an owner's memories, newest first")
    lst.add_argument("--owner", required=True)
    lst.add_argument("--status", action="append", choices=["confirmed", "candidate", "superseded"], default=None)
    lst.add_argument("--type", action="append", choices=["observation", "conversation", "reflection"], default=[])
    lst.add_argument("--tag", action="append", default=[])
    lst.add_argument("--limit", type=int, default=50)
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=_list)

    confirm = action(
        "confirm",
        help="confirm candidate memories after review (as memory/confirm): OWNER ID..., or OWNER --all-reflections",
    )
    confirm.add_argument(
        "targets",
        nargs="*",
        metavar="OWNER ID",
        help="the owner, then the ids of the candidates (with --owner: the ids only)",
    )
    confirm.add_argument("--owner", default=None, help="the owner (instead of the first positional)")
    confirm.add_argument(
        "--all-reflections", action="store_true", help="every reflection imported from Fay that is still a candidate"
    )
    confirm.set_defaults(func=_confirm)

    forget = action("forget", help="forget one memory by id, or by a query that matches exactly one")
    forget.add_argument("target", help="memory id, or text describing what to forget (with --query)")
    forget.add_argument("--owner", required=True)
    forget.add_argument("--query", action="store_true", help="treat TARGET as a query instead of an id")
    forget.add_argument("--all", action="store_true", help="delete every match of an ambiguous query")
    forget.set_defaults(func=_forget)

    mig = action(
        "migrate",
        db=False,
        help="copy every memory to another database (SQLite <-> PostgreSQL); idempotent and resumable",
    )
    mig.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="URL",
        help="source: sqlite:///<path>, a file path, or postgresql://user@host/db",
    )
    mig.add_argument("--to", dest="target", required=True, metavar="URL", help="target (same forms)")
    mig.set_defaults(func=_migrate)

    # --- turn log (issue 35) ---
    replay = action(
        "replay",
        help="feed a conversation log (JSONL: time, speaker, text, id[, session]) to an owner's memory "
        "as if heard at those times; idempotent",
    )
    replay.add_argument("file", help="JSON Lines file, one turn per line")
    replay.add_argument("--owner", required=True, help="user id the conversation belongs to")
    replay.set_defaults(func=_replay)
    # --- end turn log ---

    schema = action("schema", db=False, help="print the memory conventions for external agents (JSON)")
    schema.set_defaults(func=_schema)
    _register_profile(action)  # issue 35


def _service(args):
    from ..memory.schema import SchemaError
    from ..memory.service import build_service

    try:
        svc = build_service(args.db, embedder=args.embedder)
    except (SchemaError, ValueError) as exc:
        print(f"fay-ros memory: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    svc.enable_layers()  # a replayed or forgotten turn reaches the layered profile, as in the node
    return svc


def _fmt_time(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M") if seconds else "-"


def _print_nodes(nodes, as_json: bool) -> None:
    if as_json:
        # date: the day the memory was written (local, ISO); sources: the turn ids it rests on
        rows = [{**vars(n), "date": _fmt_time(n.created)[:10] if n.created else ""} for n in nodes]
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    for n in nodes:
        score = f" score={n.score:.3f}" if n.score else ""
        key = f" key={n.key}" if n.key else ""
        print(f"{n.id}  {n.status:<10} {n.node_type:<12} imp={n.importance:g} {_fmt_time(n.created)}{key}{score}")
        print("    " + n.content.replace("\n", "\n    "))
        if n.tags:
            print("    tags: " + ", ".join(n.tags))
        if n.pointer_ids:
            print("    from: " + ", ".join(n.pointer_ids))


def _import(args) -> int:
    from ..memory.fay_import import FayImportError, import_fay

    svc = _service(args)
    try:
        report = import_fay(svc.store, args.nodes_json, args.owner, args.embeddings)
    except FayImportError as exc:
        print(f"fay-ros memory import: {exc}", file=sys.stderr)
        return 1
    finally:
        svc.store.close()
    print(report.summary(args.owner))
    return 0


def _search(args) -> int:
    if args.evidence:
        return _search_evidence(args)
    svc = _service(args)
    try:
        out = svc.recall(
            args.owner,
            args.query,
            args.tag,
            args.any_tag,
            args.n,
            args.candidates,
            stateless=True,
            node_type=args.node_type,
            time_ordered=args.time_ordered,
        )
    finally:
        svc.store.close()
    if not out.success:
        print(f"fay-ros memory recall: {out.message}", file=sys.stderr)
        return 1
    _print_nodes(out.nodes, args.json)
    if not args.json:
        print(out.message)
    return 0


def _list(args) -> int:
    from ..memory.model import is_guest, normalise_tags

    if is_guest(args.owner):
        print("fay-ros memory list: an owner is required (a guest has no private memory)", file=sys.stderr)
        return 1
    svc = _service(args)
    try:
        nodes = svc.store.list(
            args.owner,
            statuses=args.status or ["confirmed", "candidate"],
            node_types=args.type,
            tags_all=normalise_tags(args.tag),
            limit=args.limit,
        )
    finally:
        svc.store.close()
    _print_nodes(nodes, args.json)
    return 0


def _confirm(args) -> int:
    from ..memory.fay_import import confirm_imported_reflections

    owner, ids = (
        (args.owner, args.targets)
        if args.owner is not None
        else ((args.targets[0], args.targets[1:]) if args.targets else ("", []))
    )
    if not owner.strip():
        print("fay-ros memory confirm: an owner is required: OWNER ID..., or --owner", file=sys.stderr)
        return 2
    if not ids and not args.all_reflections:
        print("fay-ros memory confirm: give the ids of the candidates, or --all-reflections", file=sys.stderr)
        return 2
    svc = _service(args)
    try:
        outcomes = [(node_id, svc.confirm(owner, node_id)) for node_id in ids]
        if args.all_reflections:
            outcomes += [(out.node.id if out.node else "?", out) for out in confirm_imported_reflections(svc, owner)]
    finally:
        svc.store.close()
    for node_id, out in outcomes:
        print(f"{node_id}: {out.message}", file=sys.stdout if out.success else sys.stderr)
    if args.all_reflections:
        print(f"confirmed {sum(1 for _i, out in outcomes if out.success)} of {len(outcomes)}")
    return 0 if all(out.success for _i, out in outcomes) else 1


def _forget(args) -> int:
    svc = _service(args)
    try:
        if args.query:
            out = svc.forget(args.owner, query=args.target, confirm_all=args.all)
        else:
            out = svc.forget(args.owner, node_id=args.target)
    finally:
        svc.store.close()
    if out.needs_confirmation:
        print(out.message)
        _print_nodes(out.nodes, False)
        return 3
    print(out.message, file=sys.stdout if out.success else sys.stderr)
    return 0 if out.success else 1


def _migrate(args) -> int:
    import time

    from ..memory.backend import describe_location, open_store
    from ..memory.embeddings import make_embedder
    from ..memory.migrate import ProgressBar, migrate
    from ..memory.schema import SchemaError

    if args.source.strip() == args.target.strip():
        print("fay-ros memory migrate: --from and --to are the same database", file=sys.stderr)
        return 2
    try:
        embedder = make_embedder(args.embedder)
        source = open_store(args.source, embedder, clock=time.time)
    except (SchemaError, ValueError, OSError) as exc:
        print(f"fay-ros memory migrate: --from: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            target = open_store(args.target, embedder, clock=time.time)
        except (SchemaError, ValueError, OSError) as exc:
            print(f"fay-ros memory migrate: --to: {exc}", file=sys.stderr)
            return 2
        try:
            print(f"migrating {describe_location(args.source)} -> {describe_location(args.target)}", file=sys.stderr)
            bar = ProgressBar(source.count())
            report = migrate(source, target, progress=bar.update)
        finally:
            target.close()
    finally:
        source.close()
    print(report.summary())
    return 0


def _schema(args) -> int:
    from ..memory.model import describe_schema
    from ..memory.schema import LATEST

    print(json.dumps({"schema_migrations": LATEST, **describe_schema()}, ensure_ascii=False, indent=2))
    return 0


# --- issue 35: the layered profile -------------------------------------------------------------
def _register_profile(action) -> None:
    prof = action("profile", help="print an owner's layered profile: every layer with evidence and confidence")
    prof.add_argument("--owner", required=True)
    prof.add_argument("--events", type=int, default=20, help="latest events to show")
    prof.add_argument("--changes", type=int, default=30, help="latest changelog rows to show")
    prof.add_argument(
        "--forget-turn",
        action="append",
        default=[],
        metavar="TURN_ID",
        help="forget these turns in the profile first (items resting only on them go; repeatable)",
    )
    prof.add_argument("--json", action="store_true", help="print JSON")
    prof.set_defaults(func=_profile)


def _profile(args) -> int:
    from ..memory.model import is_guest

    if is_guest(args.owner):
        print("fay-ros memory profile: an owner is required (a guest has no profile)", file=sys.stderr)
        return 1
    svc = _service(args)
    try:
        if args.forget_turn:
            print(svc.forget_evidence(args.owner, args.forget_turn).message, file=sys.stderr)
        snap = svc.layered.snapshot(args.owner, args.events, args.changes)
        snap["core_memory"] = svc.core_memory(args.owner, 400)
    finally:
        svc.store.close()
    if args.json:
        print(json.dumps(snap, ensure_ascii=False, indent=2))
    else:
        _print_profile(snap)
    return 0


def _ids(evidence) -> str:
    return "[" + ", ".join(evidence[-6:]) + (", ..." if len(evidence) > 6 else "") + "]"


def _print_profile(snap: dict) -> None:
    layers = snap["layers"]
    soul = layers["soul"]
    print(f"owner {snap['owner']}  (profile time {_fmt_time(snap['now'])}; buffered {snap['buffered']})")
    print("\nsoul")
    print(f"  portrait: {soul['portrait'] or '-'}  {_ids(soul.get('portrait_evidence', []))}")
    for trait in soul["traits"]:
        print(f"  trait: {trait['text']}  {_ids(trait.get('evidence', []))}")
    for name in ("values", "deep_needs"):
        if soul[name]:
            print(f"  {name}: {', '.join(soul[name])}")
    if soul["life_stage"]:
        print(f"  life stage: {soul['life_stage']}")
    print("\ninsights")
    for i in layers["insights"]["items"]:
        seen = f"confidence {i['confidence']:.2f}, x{i['occurrences']}"
        print(f"  [{i['status']}] {i['text']} ({seen}) {_ids(i['evidence'])}")
    print("\nawareness")
    for n in layers["awareness"]["notes"][-10:]:
        print(f"  {n['date']}: {n['text']} {_ids(n['evidence'])}")
    print("\npreferences")
    for p in sorted(layers["preferences"]["items"], key=lambda p: (p["status"] != "current", -p["last_seen"])):
        how = "stated" if p["explicit"] else "inferred"
        what = "likes" if p["likes"] else "dislikes"
        print(
            f"  [{p['status']}] {what} {p['thing']} (weight {p['weight']:.2f}, {how}, "
            f"{_fmt_time(p['first_seen'])} .. {_fmt_time(p['last_seen'])}) {_ids(p['evidence'])}"
        )
    print("\nevents (latest first)")
    for e in snap["events"]:
        print(f"  {e['turn_id']}  {_fmt_time(e['time'])}  {e['text']}")
    print("\nchangelog (latest first)")
    for c in snap["changelog"]:
        change = f"{c['old'] or '-'} -> {c['new'] or '-'}"
        print(f"  {_fmt_time(c['time'])} {c['layer']} {c['item']}: {change} ({c['reason']}) {_ids(c['evidence'])}")
    print("\ncore memory\n" + (snap["core_memory"] or "  -"))


# --- end issue 35 ------------------------------------------------------------------------------


# --- turn log (issue 35) ------------------------------------------------------------------------
def _parse_time(text: str) -> float:
    """ISO 8601 -> seconds since the epoch (a time without a zone is local time)."""
    when = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return when.timestamp()


def _search_evidence(args) -> int:
    from ..memory.model import is_guest

    if is_guest(args.owner):
        print("fay-ros memory search: an owner is required (a guest has no private memory)", file=sys.stderr)
        return 1
    try:
        now = _parse_time(args.now) if args.now else None
    except ValueError:
        print(f"fay-ros memory search: --now {args.now!r}: expected an ISO 8601 time", file=sys.stderr)
        return 2
    svc = _service(args)
    try:
        items = svc.search_evidence(args.owner, args.query, n=args.n, now=now)
    finally:
        svc.store.close()
    if args.json:
        print(json.dumps([e.to_dict() for e in items], ensure_ascii=False, indent=1))
        return 0
    for e in items:
        print(f"{e.kind} {e.id}  score={e.score:.4f}  sources: {', '.join(e.sources) or '-'}")
        print("    " + e.render().replace("\n", "\n    "))
    print(f"{len(items)} items")
    return 0


def _replay_turns(path: str, owner: str) -> list:
    """The turns of a JSONL log, every line checked first; raises ValueError("FILE:LINE: why")."""
    from ..memory.model import MemoryInputError
    from ..memory.turn_log import SPEAKERS, Turn, check_turn

    turns = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{where}: expected a JSON object")
            missing = [k for k in ("time", "speaker", "text", "id") if k not in row]
            if missing:
                raise ValueError(f"{where}: missing {', '.join(missing)}")
            if not all(isinstance(row[k], str) for k in ("time", "speaker", "text", "id")) or not isinstance(
                row.get("session", ""), str
            ):
                raise ValueError(f"{where}: time, speaker, text, id and session must be strings")
            if row["speaker"] not in SPEAKERS:
                raise ValueError(f"{where}: speaker {row['speaker']!r}: expected one of {', '.join(SPEAKERS)}")
            try:
                when = _parse_time(row["time"])
            except ValueError:
                raise ValueError(
                    f"{where}: time {row['time']!r}: expected ISO 8601, e.g. 2026-11-03T19:00:00+00:00"
                ) from None
            try:
                turns.append(
                    check_turn(Turn(owner, row["id"], when, row["speaker"], row["text"], row.get("session", "")))
                )
            except MemoryInputError as exc:
                raise ValueError(f"{where}: {exc}") from None
    return turns


def _replay(args) -> int:
    from tqdm import tqdm

    from ..memory.model import is_guest

    if is_guest(args.owner):
        print("fay-ros memory replay: an owner is required (a guest has no private memory)", file=sys.stderr)
        return 2
    try:
        turns = _replay_turns(args.file, args.owner)
    except OSError as exc:
        print(f"fay-ros memory replay: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"fay-ros memory replay: {exc}", file=sys.stderr)
        return 2
    svc = _service(args)
    stored = present = facts = 0
    try:
        for turn in tqdm(turns, desc="replay", unit="turn", disable=not sys.stderr.isatty()):
            out = svc.hear_turn(turn.owner, turn.turn_id, turn.time, turn.speaker, turn.text, turn.session)
            if not out.success:  # checked above; a store refusal ends the replay here
                print(f"fay-ros memory replay: turn {turn.turn_id}: {out.message}", file=sys.stderr)
                return 1
            if "already stored" in out.message:
                present += 1
            else:
                stored += 1
                facts += len(out.nodes)
    finally:
        svc.store.close()
    print(
        f"replayed {len(turns)} turns for {args.owner}: {stored} stored, {present} already there, {facts} facts written"
    )
    return 0


# --- end turn log ---
