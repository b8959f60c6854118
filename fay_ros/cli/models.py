"""`fay-ros models`: the chat and speech models this machine has, and getting others.

    fay-ros models list                       the catalogue (config/models.yaml), with marks
    fay-ros models info qwen2.5-1.5b-instruct every fact, where it is on disk, its hashes
    fay-ros models pull qwen2.5-1.5b-instruct [--accept-licence]
    fay-ros models use qwen2.5-1.5b-instruct  `make run` / companion.launch.py start with it
    fay-ros models remove whisper-small [--force]

Only `pull` uses the network (huggingface_hub: HF_ENDPOINT, HF_TOKEN honoured). The logic
lives in fay_ros.models; this module parses and prints.
"""

from __future__ import annotations

import argparse
import shutil
import sys

from ..common.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="chat and speech models: list, info, pull, use, remove")
    p.add_argument("--catalogue", default=None, help="catalogue file (default: config/models.yaml)")
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
    actions = p.add_subparsers(dest="models_command", metavar="ACTION")
    actions.add_parser("list", help="the catalogue: installed (*), in use (>)").set_defaults(func=_list)
    info = actions.add_parser("info", help="every fact of a model, where it is, its sha256")
    info.add_argument("name")
    info.set_defaults(func=_info)
    pull = actions.add_parser("pull", help="download a model (the licence is shown first)")
    pull.add_argument("name")
    pull.add_argument("--accept-licence", action="store_true", help="accept the model's licence without asking")
    pull.set_defaults(func=_pull)
    use = actions.add_parser("use", help="start the companion with this model (make run, ros2 launch)")
    use.add_argument("name")
    use.set_defaults(func=_use)
    remove = actions.add_parser("remove", help="delete a pulled model")
    remove.add_argument("name")
    remove.add_argument("--force", action="store_true", help="also the model in use (the default comes back)")
    remove.set_defaults(func=_remove)


def _fail(message: str, code: int = 1) -> int:
    print(f"fay-ros models: {message}", file=sys.stderr)
    return code


def _catalogue(args: argparse.Namespace):
    from ..models.catalogue import load_catalogue

    return load_catalogue(args.catalogue)


def _in_use(catalogue) -> dict[str, str]:
    """kind -> the model name in use (the user's choice, else the shipped default)."""
    from ..models.store import read_choice

    choice = read_choice()
    return {
        "chat": choice.chat or catalogue.default("chat"),
        "asr": choice.asr or catalogue.default("asr"),
    }


def _run(body, args: argparse.Namespace) -> int:
    from ..models.fetch import FetchError

    try:
        return body(args)
    except (ConfigError, FetchError) as exc:
        return _fail(str(exc), 2 if isinstance(exc, ConfigError) else 1)


def _list(args: argparse.Namespace) -> int:
    return _run(_list_body, args)


def _list_body(args: argparse.Namespace) -> int:
    from ..models.store import location

    catalogue = _catalogue(args)
    in_use = _in_use(catalogue)
    print(f"   {'NAME':24} {'KIND':5} {'SIZE':>8} {'RAM':>7}  {'LANGUAGES':18} LICENCE")
    for name, e in catalogue.models.items():
        mark = (">" if in_use[e.kind] == name else " ") + ("*" if location(name, e) else " ")
        size = f"{e.approx_mb} MB" if e.approx_mb < 1000 else f"{e.approx_mb / 1000:.1f} GB"
        ram = f"{e.ram_mb / 1000:.1f} GB"
        shipped = " (shipped)" if e.shipped else ""
        print(f"{mark} {name:24} {e.kind:5} {size:>8} {ram:>7}  {','.join(e.languages):18} {e.licence}{shipped}")
    print("* installed   > in use   (fay-ros models info NAME; pull NAME; use NAME)")
    return 0


def _info(args: argparse.Namespace) -> int:
    return _run(_info_body, args)


def _info_body(args: argparse.Namespace) -> int:
    from ..models.store import location, read_marker

    catalogue = _catalogue(args)
    e = catalogue.get(args.name)
    where = location(args.name, e)
    rows = [
        ("name", args.name),
        ("kind", e.kind),
        ("description", e.description),
        ("shipped by", e.shipped_by or "-"),
        ("repo", f"{e.repo}@{e.revision}" if e.repo else "-"),
        ("licence", f"{e.licence} {e.licence_url}".strip()),
        ("languages", ", ".join(e.languages)),
        ("download", f"~{e.approx_mb} MB"),
        ("ram", f"~{e.ram_mb} MB"),
        ("tokens/s", f"{e.tokens_per_s:g} (2 cores)" if e.tokens_per_s is not None else "not measured"),
        ("note", e.note or "-"),
        ("in use", "yes" if _in_use(catalogue)[e.kind] == args.name else "no"),
        ("on disk", str(where) if where else f"no (fay-ros models pull {args.name})"),
    ]
    marker = read_marker(where if where.is_dir() else where.parent) if where and not e.shipped else None
    if marker:
        rows.append(("commit", str(marker.get("commit") or "-")))
    for f in e.files:
        pulled = (marker or {}).get("files", {}).get(f.name, {})
        sha = pulled.get("sha256") or f.sha256 or "from the hub at download"
        size = pulled.get("size") or f.size
        rows.append((f"file {f.name}", f"sha256 {sha}" + (f", {size} bytes" if size else "")))
    for key, value in rows:
        print(f"{key:14} {value}")
    return 0


def _pull(args: argparse.Namespace) -> int:
    return _run(_pull_body, args)


def _pull_body(args: argparse.Namespace) -> int:
    from ..models.fetch import pull
    from ..models.store import location

    catalogue = _catalogue(args)
    e = catalogue.get(args.name)
    if e.shipped:
        where = location(args.name, e)
        if where is None:
            return _fail(
                f"{args.name} is shipped by the package {e.shipped_by}, which is not installed: run `make setup`"
            )
        print(f"{args.name} is already installed (shipped by the package {e.shipped_by}): {where}")
        return 0
    where = location(args.name, e)
    if where is not None:
        print(f"{args.name} is already installed: {where}")
        return 0
    print(f"{args.name}: licence {e.licence}" + (f" ({e.licence_url})" if e.licence_url else ""))
    if not args.accept_licence:
        if not sys.stdin.isatty():
            return _fail(
                f"the licence of {args.name} ({e.licence}) must be accepted before the download: "
                f"run `fay-ros models pull {args.name} --accept-licence`, or run it in a terminal to be asked"
            )
        answer = input(f"Accept the {e.licence} licence of {args.name} and download it? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            return _fail("licence not accepted: nothing downloaded")
    target = pull(args.name, e)
    print(f"pulled {args.name} into {target}; start the companion with it: fay-ros models use {args.name}")
    return 0


def _use(args: argparse.Namespace) -> int:
    return _run(_use_body, args)


def _use_body(args: argparse.Namespace) -> int:
    from ..models.store import location, missing_message, read_choice, write_choice

    catalogue = _catalogue(args)
    e = catalogue.get(args.name)
    where = location(args.name, e)
    if where is None:
        return _fail(f"cannot use it: {missing_message(args.name, e)}")
    choice = read_choice()
    value = None if e.shipped else args.name  # a shipped model = back to the default
    choice = choice.model_copy(update={e.kind: value})
    path = write_choice(choice)
    what = "the llm server and the dialogue" if e.kind == "chat" else "the asr node"
    print(f"{args.name} ({where}) is now the {e.kind} model: `make run` and companion.launch.py start {what} with it")
    print(f"(written to {path}; a launch argument still wins)")
    return 0


def _remove(args: argparse.Namespace) -> int:
    return _run(_remove_body, args)


def _remove_body(args: argparse.Namespace) -> int:
    from ..models.store import pull_dir, pulled_dir, read_choice, write_choice

    catalogue = _catalogue(args)
    e = catalogue.get(args.name)
    if e.shipped:
        return _fail(f"{args.name} is the embedded default, shipped by the package {e.shipped_by}: not removed")
    directory = pulled_dir(args.name, e)
    if directory is None:
        partial = pull_dir(args.name)
        if partial.is_dir():  # a pull that stopped half-way: nothing uses it
            shutil.rmtree(partial)
            print(f"removed the incomplete download of {args.name} ({partial})")
            return 0
        return _fail(f"{args.name} is not installed")
    choice = read_choice()
    in_use = getattr(choice, e.kind) == args.name
    if in_use and not args.force:
        return _fail(
            f"{args.name} is the {e.kind} model in use: `fay-ros models use {catalogue.default(e.kind)}` first, "
            "or remove it with --force (the default comes back)"
        )
    shutil.rmtree(directory)
    if in_use:
        write_choice(choice.model_copy(update={e.kind: None}))
        print(f"{args.name} was in use: the {e.kind} model is {catalogue.default(e.kind)} again")
    print(f"removed {args.name} ({directory})")
    return 0
