"""`fay-ros`: the project's command-line tool.

Subcommands live one per module in this package; each module defines
`register(subparsers)` which adds its parser and sets `func(args) -> int`. New subcommands
only add a module here.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from .. import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fay-ros", description="fay_ros companion tools")
    parser.add_argument("--version", action="version", version=f"fay_ros {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
