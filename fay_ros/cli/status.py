"""`fay-ros status`: which nodes of the companion are ready, and why the others are not.

    fay-ros status                         the state of every companion node, after a short look
                                           (and of the embedded model's `llm`, when it runs)
    fay-ros status --wait 120              wait until all are ready (exit 1 if not in time)
    fay-ros status --nodes dialogue,tts    only these nodes

Each node says on its latched `~/ready` whether it serves, and on /diagnostics
(`fay/<node>: state`) why not: a missing model, no audio device, a bad table. The bring-ups
(`fay-ros up`, the launch file) run `fay-ros status --wait` once, so their output says when the
companion is ready, or which node is not and why.

Exit status: 0 all ready; 1 not all ready (within --wait, or at the first look).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

from ..bringup.graph import NODE_MODULES, OPTIONAL_NODES
from ..bringup.status_board import StatusBoard
from ..common import topics

HEALTH_CATCH_UP_S = 2.5  # after all are ready: more than the health's period (1 s)
LOOK_SECONDS = 3.0  # without --wait: long enough for discovery and a health update (every 1 s)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "status",
        help="which companion nodes are ready, and why the others are not",
        description="Show each companion node's readiness and health, or wait until all are ready.",
    )
    p.add_argument("--namespace", default=topics.DEFAULT_NAMESPACE, help="namespace of the companion (default: /fay)")
    p.add_argument(
        "--nodes", default="", help="comma-separated node names (default: every companion node, and llm when it runs)"
    )
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait up to SECONDS until every node is ready (default: one short look)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the outcome line, not the table")
    p.set_defaults(func=run)


def _settled() -> Callable[[StatusBoard], bool]:
    """Every node ready, and then their health agreeing (or HEALTH_CATCH_UP_S passed): the
    health, repeated every second, catches up with the readiness, so the table does not show a
    ready node with the warning it had while it started."""
    catch_up_until: float | None = None

    def settled(board: StatusBoard) -> bool:
        nonlocal catch_up_until
        if not board.all_ready():
            return False
        if catch_up_until is None:
            catch_up_until = time.monotonic() + HEALTH_CATCH_UP_S
        return board.health_agrees() or time.monotonic() >= catch_up_until

    return settled


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    from ..ros_side.status_probe import watch

    names = [n.strip() for n in args.nodes.split(",") if n.strip()]
    board = StatusBoard(names) if names else StatusBoard([name for name, _module in NODE_MODULES], OPTIONAL_NODES)
    started = time.monotonic()
    if args.wait > 0:
        ready = watch(board, args.namespace, until=_settled(), timeout=args.wait) or board.all_ready()
    else:
        ready = watch(board, args.namespace, until=lambda _b: False, timeout=LOOK_SECONDS) or board.all_ready()
    if not args.quiet:
        print(board.table(), flush=True)
    if ready:
        print(
            f"[fay-ros status] companion ready: {len(board.nodes)} node(s) in {time.monotonic() - started:.1f} s",
            flush=True,
        )
        return 0
    missing = "; ".join(f"{name}: {why}" for name, why in board.not_ready().items())
    print(f"[fay-ros status] not ready{f' after {args.wait:g} s' if args.wait > 0 else ''}: {missing}", flush=True)
    return 1
