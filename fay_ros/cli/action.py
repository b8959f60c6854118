"""`fay-ros action`: try the action tables on a sentence, or validate a table file.

    fay-ros action "这边请"                 the cue as JSON, with matched keywords and sentiment
    fay-ros action - < sentences.txt        one JSON line per input line
    fay-ros action --rules my.csv "hi"      use another rules (or --lexicon) file
    fay-ros action --policy fay "这边请"     rank rules as Fay does (matched keywords, longest, priority)
    fay-ros action --no-match none "hm"     no cue when no rule matches (Fay's behaviour)
    fay-ros action --explain "好的，这边请"  also every candidate rule with its ranking keys and why
                                            the winner won
    fay-ros action --check FILE...          validate rules or lexicon files (told apart by header)

With --no-match none a sentence without a rule prints {"cue": null, ...} (the node publishes
nothing for it).

Exit status: 0 fine, 1 a table is invalid (every problem printed as file:line: problem).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..action import (
    LEXICON_FILE,
    MATCH_POLICIES,
    NO_MATCH_OPTIONS,
    RULES_FILE,
    CueEngine,
    TableError,
    default_table_path,
    load_lexicon,
    load_rules,
)
from ..action.csv_tables import read_text
from ..action.text_to_cue import Analysis


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "action",
        help="print the ActionCue of a sentence as JSON, or --check a rules/lexicon file",
        description="Turn sentences into action cues with the action tables, or validate table files.",
    )
    p.add_argument("text", nargs="*", help="sentence(s) to analyse; '-' reads one sentence per line from stdin")
    p.add_argument("--check", nargs="+", metavar="FILE", help="validate rules or lexicon CSV file(s) and exit")
    p.add_argument("--rules", default=None, help=f"rules file (default: the shipped config/{RULES_FILE})")
    p.add_argument(
        "--lexicon", default=None, help=f"sentiment lexicon file (default: the shipped config/{LEXICON_FILE})"
    )
    p.add_argument(
        "--policy",
        choices=MATCH_POLICIES,
        default="priority",
        help="rule ranking: 'priority' (priority, match strength, keyword count, sentimentHint, row; "
        "default) or 'fay' (Fay's: keyword count, longest keyword, priority, row)",
    )
    p.add_argument(
        "--no-match",
        choices=NO_MATCH_OPTIONS,
        default="idle",
        dest="no_match",
        help="no rule matched: 'idle' (the default idle cue; default) or 'none' (no cue, as Fay)",
    )
    p.add_argument(
        "--explain", action="store_true", help="add every candidate rule with its ranking keys and why the winner won"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return check(args.check)
    if not args.text:
        print("fay-ros action: give a sentence (or '-' for stdin), or --check FILE", file=sys.stderr)
        return 2
    try:
        engine = CueEngine.from_files(
            args.rules or default_table_path(RULES_FILE),
            args.lexicon or default_table_path(LEXICON_FILE),
            policy=args.policy,
            no_match=args.no_match,
        )
    except TableError as exc:
        print(f"fay-ros action: invalid table:\n{exc}", file=sys.stderr)
        return 1
    texts = [line.rstrip("\n") for line in sys.stdin] if args.text == ["-"] else args.text
    texts = [t for t in texts if t.strip()]
    single = len(texts) == 1
    for text in texts:
        report = describe(engine.analyse(text), args.explain)
        print(json.dumps(report, ensure_ascii=False, indent=2 if single else None), flush=True)
    return 0


def describe(analysis: Analysis, explain: bool) -> dict:
    """The cue as JSON (or {"cue": null} when there is none), with the match explained on request."""
    if analysis.cue is not None:
        report = analysis.cue.as_dict()
    else:
        report = {
            "cue": None,
            "text": analysis.text,
            "reason": "no rule matched; --no-match none sends no cue (Fay sends no Action)",
            "sentiment": analysis.sentiment.value,
            "negated_keywords": list(analysis.match.negated),
        }
    if explain:
        report["explain"] = analysis.match.explain()
    return report


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
