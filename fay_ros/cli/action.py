"""`fay-ros action`: try the action tables on a sentence, or validate a table file.

    fay-ros action "这边请"                 the cue as JSON, with matched keywords and sentiment
    fay-ros action - < sentences.txt        one JSON line per input line
    fay-ros action --rules my.csv "hi"      use another rules (or --lexicon) file
    fay-ros action --check FILE...          validate rules or lexicon files (told apart by header)

Exit status: 0 fine, 1 a table is invalid (every problem printed as file:line: problem).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..action import LEXICON_FILE, RULES_FILE, CueEngine, TableError, default_table_path, load_lexicon, load_rules
from ..action.tables import read_text


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "action", help="print the ActionCue of a sentence as JSON, or --check a rules/lexicon file",
        description="Turn sentences into action cues with the action tables, or validate table files.")
    p.add_argument("text", nargs="*", help="sentence(s) to analyse; '-' reads one sentence per line from stdin")
    p.add_argument("--check", nargs="+", metavar="FILE", help="validate rules or lexicon CSV file(s) and exit")
    p.add_argument("--rules", default=None, help=f"rules file (default: the shipped config/{RULES_FILE})")
    p.add_argument("--lexicon", default=None,
                   help=f"sentiment lexicon file (default: the shipped config/{LEXICON_FILE})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return check(args.check)
    if not args.text:
        print("fay-ros action: give a sentence (or '-' for stdin), or --check FILE", file=sys.stderr)
        return 2
    try:
        engine = CueEngine.from_files(args.rules or default_table_path(RULES_FILE),
                                      args.lexicon or default_table_path(LEXICON_FILE))
    except TableError as exc:
        print(f"fay-ros action: invalid table:\n{exc}", file=sys.stderr)
        return 1
    texts = [line.rstrip("\n") for line in sys.stdin] if args.text == ["-"] else args.text
    texts = [t for t in texts if t.strip()]
    single = len(texts) == 1
    for text in texts:
        cue = engine.cue(text).as_dict()
        print(json.dumps(cue, ensure_ascii=False, indent=2 if single else None), flush=True)
    return 0


def table_kind(path: Path) -> str:
    """'lexicon' when the header names kind and term, else 'rules'."""
    try:
        text = read_text(path)
    except TableError:
        return "rules"  # the rules loader reports the unreadable file
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            cells = {c.strip() for c in line.split(",")}
            return "lexicon" if {"kind", "term"} <= cells else "rules"
    return "rules"


def check(files: list[str]) -> int:
    status = 0
    for name in files:
        path = Path(name)
        kind = table_kind(path)
        try:
            if kind == "lexicon":
                lexicon = load_lexicon(path)
                print(f"OK {path}: sentiment lexicon, {lexicon.summary}")
            else:
                table = load_rules(path)
                print(f"OK {path}: {len(table.rules)} rules, {table.keyword_count} keywords")
                for warning in table.warnings:
                    print(f"warning: {warning}")
        except TableError as exc:
            status = 1
            print(f"INVALID {path} ({kind} table, {len(exc.issues)} problem(s)):\n{exc}", file=sys.stderr)
    return status
