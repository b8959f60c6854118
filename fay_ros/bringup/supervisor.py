"""Pip-only bring-up: start each node as its own process, restart crashed ones, stop all.

No ROS import here: nodes are child processes (`python -m <module> --ros-args ...`), so one
node crashing never takes the others down, and Ctrl-C stops them all in order.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .graph import NodeSpec, ProcessSpec, respawn_after_exit


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the supervisor dies (even by SIGKILL), so no
    node outlives its bring-up."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def ros_args(spec: NodeSpec, ns: str, params_dir: Path) -> list[str]:
    """--ros-args for a node: namespace, name, and its parameters as a parameter file
    (a file rather than -p flags, so lists and strings keep their types)."""
    args = ["--ros-args", "-r", f"__ns:={ns}", "-r", f"__node:={spec.name}"]
    if spec.parameters:
        path = params_dir / f"{spec.name}.yaml"
        path.write_text(
            yaml.safe_dump({f"/**/{spec.name}": {"ros__parameters": spec.parameters}}, allow_unicode=True),
            encoding="utf-8",
        )
        args += ["--params-file", str(path)]
    return args


@dataclass
class _Child:
    spec: NodeSpec | ProcessSpec
    command: list[str]
    process: subprocess.Popen | None = None
    restarts: int = 0
    next_start: float = 0.0


class Supervisor:
    """Runs a set of nodes; restarts one that exits unexpectedly (with back-off)."""

    def __init__(
        self,
        specs: Sequence[NodeSpec],
        ns: str,
        env: dict[str, str] | None = None,
        python: str = sys.executable,
        log: Callable[[str], None] = lambda line: print(line, flush=True),
        max_backoff: float = 5.0,
        processes: Sequence[ProcessSpec] = (),
    ) -> None:
        self._params_dir = Path(tempfile.mkdtemp(prefix="fay_ros_up_"))
        self._python = python
        self._ns = ns
        self._children = [_Child(p, [python, "-m", "fay_ros.cli", *p.args]) for p in processes]
        self._children += [_Child(s, self.command(s)) for s in specs]
        self._env = dict(env if env is not None else os.environ)
        self._log = log
        self._max_backoff = max_backoff
        self._stopping = threading.Event()

    def command(self, spec: NodeSpec) -> list[str]:
        return [self._python, "-m", spec.module, *ros_args(spec, self._ns, self._params_dir)]

    def pids(self) -> dict[str, int]:
        return {c.spec.name: c.process.pid for c in self._children if c.process and c.process.poll() is None}

    def restarts(self) -> dict[str, int]:
        return {c.spec.name: c.restarts for c in self._children}

    def _start(self, child: _Child) -> None:
        # Only an interactive node (typed input) reads the terminal; the others must not
        # compete for it.
        stdin = None if getattr(child.spec, "interactive", False) else subprocess.DEVNULL
        # Own session: a terminal Ctrl-C reaches only the supervisor, which then stops the
        # children once each, in reverse start order.
        child.process = subprocess.Popen(
            child.command, env=self._env, stdin=stdin, start_new_session=True, preexec_fn=_die_with_parent
        )
        self._log(f"[fay-ros up] started {child.spec.name} (pid {child.process.pid})")

    def start(self) -> None:
        for child in self._children:
            self._start(child)

    def poll_once(self) -> None:
        now = time.monotonic()
        for child in self._children:
            proc = child.process
            if proc is None or proc.poll() is None:
                if proc is None and now >= child.next_start and not self._stopping.is_set():
                    self._start(child)
                continue
            code = proc.returncode
            child.process = None
            if not child.spec.respawn and code == 0:  # a one-shot process (fay-ros status) that is done
                child.next_start = float("inf")
                continue
            if not child.spec.respawn or not respawn_after_exit(code):
                reason = "" if respawn_after_exit(code) else " (a configuration error)"
                self._log(f"[fay-ros up] {child.spec.name} exited with {code}{reason}; not restarting")
                child.next_start = float("inf")
                continue
            child.restarts += 1
            delay = min(self._max_backoff, 0.5 * 2 ** min(child.restarts - 1, 4))
            child.next_start = now + delay
            self._log(f"[fay-ros up] {child.spec.name} exited with {code}; restarting in {delay:.1f}s")

    def run(self, poll_interval: float = 0.2) -> int:
        self.start()
        try:
            while not self._stopping.wait(poll_interval):
                self.poll_once()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
        return 0

    def request_stop(self) -> None:
        self._stopping.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        live = [c.process for c in reversed(self._children) if c.process and c.process.poll() is None]
        for proc in live:
            # SIGTERM: a node started from a background job ignores SIGINT (node_main keeps
            # that, as a shell expects), and every node stops cleanly on SIGTERM.
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in live:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if live:
            self._log(f"[fay-ros up] stopped {len(live)} node(s)")
        # the nodes read their parameter files at start only; every bring-up would otherwise
        # leave a directory of them in the temporary directory
        shutil.rmtree(self._params_dir, ignore_errors=True)
