"""The one place a node process starts, spins and shuts down.

Every node module's main() calls run_node(NodeClass): it initialises rclpy, builds the node
(which validates its parameters and may raise ConfigError), announces on `~/ready` that it
serves (fay_ros.common.readiness; unless the node announces that itself, later; a lifecycle
node (fay_ros.common.lifecycle) is started: configured and activated unless autostart is
false, ready once active), spins until
Ctrl-C / SIGTERM, and shuts down cleanly. A ConfigError stops the process at start-up with
exit code 2 and the reason on stderr.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
from collections.abc import Callable

import rclpy
from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from .exit_codes import EXIT_CONFIG_ERROR  # noqa: F401 - re-exported for the nodes
from .lifecycle import ManagedNode
from .params import ConfigError
from .readiness import announce_ready, announces_ready_itself


def _stop_spinning(_signum, _frame) -> None:
    raise KeyboardInterrupt


def spin(executor: Executor, keep_going: Callable[[], bool] = lambda: True) -> None:
    """executor.spin() that goes on past a destroyed entity. A subscription or client destroyed
    on one thread while another builds the executor's wait set raises InvalidHandle there
    (rclpy's event handler of the destroyed subscription: measured, within seconds of a loop
    that subscribes and unsubscribes while messages flow), and executor.spin() ends with it: a
    node whose callback re-subscribes (a reloaded schedule, a parameter) would stop, a test's
    probe would go deaf. The wait set is built again on the next turn, without the entity."""
    while executor.context.ok() and keep_going():
        try:
            executor.spin_once()
        except InvalidHandle:
            continue


def run_node(factory: Callable[[], Node], args: list[str] | None = None, threads: int = 2) -> int:
    # threads=1: rclpy's SingleThreadedExecutor, a quarter of the multi-threaded one's CPU per
    # message (the audio-rate nodes, whose callbacks never wait on one another: docs/ARCHITECTURE.md,
    # CPU budget); more: a MultiThreadedExecutor, for nodes with callbacks that wait (actions).
    # rclpy's own signal handlers shut the context down at once, before close() could publish a
    # node's last state (speaking=false, a servo's rest pose, a lifecycle node's not-ready).
    # Here Ctrl-C / SIGTERM only stop spinning; the context ends after close().
    # `kill -USR1 <pid>`: every thread's stack on stderr, the node going on (a node that stopped
    # answering shows where it waits; registered first, so one stuck starting up shows it too)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rclpy.init(args=args if args is not None else sys.argv, signal_handler_options=SignalHandlerOptions.NO)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a background job keeps ignoring it
        signal.signal(signal.SIGINT, _stop_spinning)
    signal.signal(signal.SIGTERM, _stop_spinning)
    node = None
    executor = None
    try:
        try:
            node = factory()
        except ConfigError as exc:
            print(f"[fay_ros] cannot start: {exc}", file=sys.stderr, flush=True)
            return EXIT_CONFIG_ERROR
        if isinstance(node, ManagedNode):
            node.start()
        elif not announces_ready_itself(node):
            announce_ready(node)
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        try:
            spin(executor)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        return 0
    finally:
        # Shutting down already: a second Ctrl-C (terminal and supervisor both signalling)
        # must not interrupt the cleanup halfway with a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if node is not None:
            close = getattr(node, "close", None)
            if callable(close):
                close()
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
