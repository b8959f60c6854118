"""Test harness for real ROS 2 graphs: node subprocesses and an in-test probe node.

- `ros_environment()` isolates a test session: its own ROS_DOMAIN_ID (locked so concurrent
  runs on one machine never share one), ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a
  temporary ROS_LOG_DIR.
- `NodeProcess` runs a node module in a real subprocess and always cleans it up;
  `wait_ready()` waits for its readiness event: the node's latched `~/ready` topic
  (fay_ros.common.readiness), or for a process that is no node (`fay-ros web`, `fay-ros llm`)
  its port answering. Tests synchronise on events like these, never on log lines
  (test_tooling checks it); what a log says may still be asserted once an event has happened.
- `RosProbe` is an rclpy node living in the test process (own context, background executor)
  that publishes, collects messages and calls services, waiting on events with timeouts.
- `publish_until` / `repeat_until` send the first message into a node until its effect comes
  back: a matched count seen from the test side does not mean the node has matched us yet.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TIMEOUT = 20.0
# Dialogue parameters for tests of what the embedded model answers (not how fast): one shared
# server serves several test files at once on 2 cores, so a request can wait behind others
# far longer than the node's defaults (20 s to the first token, 10 s between tokens) allow.
EMBEDDED_PATIENCE = {"first_token_timeout": 90.0, "idle_timeout": 60.0}
_domain_lock_file = None


def _claim_domain_id() -> int:
    """Pick a ROS_DOMAIN_ID no other concurrent test run on this machine holds."""
    global _domain_lock_file
    lock_dir = Path(tempfile.gettempdir()) / "fay_ros_test_domains"
    lock_dir.mkdir(exist_ok=True)
    start = os.getpid() % 90
    for i in range(90):
        domain = 10 + (start + i) % 90
        handle = open(lock_dir / f"{domain}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _domain_lock_file = handle  # held for the life of the test process
        return domain
    raise RuntimeError(f"no free ROS_DOMAIN_ID in 10..99 (locks in {lock_dir})")


_scratch: Path | None = None


def scratch_dir() -> Path:
    """This test process's own temporary directory (node logs, ROS_LOG_DIR, the config home),
    deleted when the process exits: thousands of node processes per run would otherwise leave
    their logs in /tmp for good."""
    global _scratch
    if _scratch is None:
        import atexit
        import shutil

        _scratch = Path(tempfile.mkdtemp(prefix="fay_ros_test_"))
        atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
    return _scratch


def ros_environment() -> dict[str, str]:
    """Set (once per test process) and return the isolated ROS environment. Each pytest-xdist
    worker is a test process of its own: it inherits the controller's environment, and claims
    its own domain (and log directory) instead of sharing the controller's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if "FAY_TEST_DOMAIN_ID" not in os.environ or os.environ.get("FAY_TEST_DOMAIN_OWNER", "") != worker:
        os.environ["FAY_TEST_DOMAIN_OWNER"] = worker
        os.environ["FAY_TEST_DOMAIN_ID"] = str(_claim_domain_id())
        os.environ["ROS_DOMAIN_ID"] = os.environ["FAY_TEST_DOMAIN_ID"]
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="ros_log_", dir=scratch_dir())
        # Whatever a command under test creates in "the user's config directory" (the web
        # access file) goes here, never into the real ~/.config.
        os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="config_", dir=scratch_dir())
        os.environ.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")
        os.environ["PYTHONUNBUFFERED"] = "1"
    return dict(os.environ)


def free_port() -> int:
    """A TCP port free on loopback right now (fixed ports may be taken by a parallel run), also
    "a port nothing listens on" for tests of an unreachable server."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def web_door_answers(port: int) -> bool:
    """The web door of `fay-ros web` listens: a handshake without a token gets its 401. The gate
    starts last, after the page server and once rosbridge listens, so this is the whole
    process being ready."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(f"ws://127.0.0.1:{port}/", open_timeout=1):
            return False
    except InvalidStatus as exc:
        return exc.response.status_code == 401
    except (OSError, TimeoutError):
        return False


def http_ok(url: str) -> bool:
    """GET `url` answers 200 (never through a proxy from the environment: this is loopback)."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def start_web(*args: str, env: dict[str, str] | None = None, timeout: float = 30.0) -> NodeProcess:
    """`fay-ros web ARGS`, returned once its web door answers on `--bridge-port` (or, with
    `--bridge none`, once the page answers on `--port`)."""
    argv = list(args)

    def option(name: str) -> str:
        return argv[argv.index(name) + 1]

    if "--bridge" in argv and option("--bridge") == "none":
        page_url = f"http://127.0.0.1:{option('--port')}/"
        ready = lambda: http_ok(page_url)  # noqa: E731
    else:
        door_port = int(option("--bridge-port"))
        ready = lambda: web_door_answers(door_port)  # noqa: E731
    proc = NodeProcess("fay_ros.cli", args=["web", *argv], ros=False, env=env, ready=ready)
    return _started(proc, timeout)


def start_llm(*args: str, timeout: float = 90.0) -> tuple[NodeProcess, str]:
    """`fay-ros llm` (the embedded model) on a free loopback port, returned with its base URL
    once llama.cpp's /health answers 200 (the model is loaded)."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    proc = NodeProcess(
        "fay_ros.cli", args=["llm", "--port", str(port), *args], ros=False, ready=lambda: http_ok(root + "/health")
    )
    return _started(proc, timeout), root + "/v1"


def _started(proc: NodeProcess, timeout: float) -> NodeProcess:
    """`proc` once ready; stopped (not left running) when it never gets there."""
    try:
        proc.wait_ready(timeout)
    except BaseException:
        proc.stop()
        raise
    return proc


@contextlib.contextmanager
def dialogue_node(probe: RosProbe, params: dict[str, Any], **kwargs: Any) -> Iterator[tuple[NodeProcess, Any, Any]]:
    """The dialogue node as a process, ready, with `probe` collecting its replies and publishing
    typed turns: yields (node, replies collector, text_input publisher); its output is printed
    at the end (shown for a failing test)."""
    from fay_msgs.msg import Transcript, Utterance
    from fay_ros.common import topics

    node = NodeProcess("fay_ros.nodes.dialogue", params, **kwargs)
    try:
        # an event wait: on a loaded 2-core machine the node's start (engine, clients, tools)
        # can take longer than the default bound
        node.wait_ready(timeout=60, probe=probe)
        replies = probe.collect(Utterance, topics.REPLY)
        text_input = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(text_input)
        probe.wait_matched(replies, node.node_name or "dialogue")
        yield node, replies, text_input
    finally:
        node.stop()
        print(f"\n----- dialogue node output -----\n{node.output()[-3000:]}")


def write_tools_file(path: Path, *, ros: str = "", mcp: str = "") -> Path:
    """A dialogue `tools_file` with the built-in tools plus the given `ros:` / `mcp:` sections
    (each the YAML of that section, unindented)."""
    import textwrap

    from fay_ros.agent.tool_config import BUILTIN_TOOLS

    text = f"builtin: [{', '.join(BUILTIN_TOOLS)}]\n"
    for name, section in (("mcp", mcp), ("ros", ros)):
        if section:
            text += f"{name}:\n" + textwrap.indent(section, "  ")
    path.write_text(text, encoding="utf-8")
    return path


def write_web_access(path: Path, clients: dict[str, str], origins: Iterable[str] = ()) -> dict[str, str]:
    """An access file for `fay-ros web --access-file`: {user_id: role} -> {user_id: token}
    (user_id '' is a guest)."""
    import secrets

    import yaml

    tokens = {user: secrets.token_urlsafe(32) for user in clients}
    body = {
        "clients": [{"token": tokens[user], "user_id": user, "role": role} for user, role in clients.items()],
        "origins": list(origins),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    path.chmod(0o600)
    return tokens


def wait_until(
    predicate: Callable[[], Any],
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.02,
    message: str | Callable[[], str] = "condition",
) -> Any:
    """Poll `predicate` until it returns a truthy value; raise TimeoutError naming what failed."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise TimeoutError(f"timed out after {timeout:.1f}s waiting for {text}")
        time.sleep(interval)


def repeat_until(
    action: Callable[[], Any],
    arrived: Callable[[], Any],
    timeout: float = DEFAULT_TIMEOUT,
    every: float = 0.5,
    message: str | Callable[[], str] = "the effect of a repeated action",
) -> Any:
    """Do `action`, and again every `every` seconds, until `arrived()` returns a truthy value
    (returned); raise TimeoutError naming `message` after `timeout`.

    For the first message into a node. DDS discovery is asymmetric: our publisher may count the
    node's subscription as matched (and our subscription its publisher) before the node has
    matched ours, and a volatile message sent in that window is dropped. The node's own view of
    the match cannot be seen from here, so the action is repeated until its effect comes back,
    which proves the whole loop. Only for an idempotent action: a copy sent before the first
    effect was seen may still arrive, and must leave the node as one copy would."""
    next_action = 0.0

    def step() -> Any:
        nonlocal next_action
        value = arrived()
        if not value and time.monotonic() >= next_action:
            action()
            next_action = time.monotonic() + every
        return value

    return wait_until(step, timeout, message=message)


def publish_until(
    publisher: Any,
    msg: Any,
    arrived: Callable[[], Any],
    timeout: float = DEFAULT_TIMEOUT,
    every: float = 0.5,
    message: str | Callable[[], str] | None = None,
) -> Any:
    """`repeat_until` publishing `msg` (an idempotent one: see there) on `publisher`."""
    what = message or f"the effect of a {type(msg).__name__} on {publisher.topic_name}"
    return repeat_until(lambda: publisher.publish(msg), arrived, timeout, every, what)


# RosProbe.call: an unanswered request is sent again after this long (seconds), unless its type
# is one whose copy would do the thing twice (a second memory; a refused second transition).
RESEND_EVERY = 5.0
NOT_RESENT = frozenset({"Remember", "ChangeState"})


def _refused_transition(srv_type: Any) -> Any:
    request = srv_type.Request()
    request.transition.id = 0  # TRANSITION_CREATE: no state of a created node has it
    return request


# A request of a NOT_RESENT type that the server refuses without doing anything: sent (and re-sent)
# first, so the one real request goes out on a client whose response reader the server has matched.
WARM_UP = {
    "Remember": lambda srv_type: srv_type.Request(owner=""),  # a guest has no memory: refused, nothing written
    "Forget": lambda srv_type: srv_type.Request(owner=""),
    "Recall": lambda srv_type: srv_type.Request(owner=""),
    # (a CI run: the sim-time reminder tests' first "list", sent once with no warm-up, was lost
    # right after the memory node started and the module's setup timed out)
    "Reminders": lambda srv_type: srv_type.Request(action="list", owner=""),
    "ChangeState": _refused_transition,
}


class NodeProcess:
    """A node (or any fay_ros module) running in its own process.

    Every process started during a test is listed in `started` (conftest empties it before each
    test), so a failing test's report carries their output (see conftest.pytest_runtest_makereport).
    """

    started: list[NodeProcess] = []
    # the tail of each process's output that a failing test's report carries
    REPORTED_OUTPUT_CHARS = 8000

    def __init__(
        self,
        module: str,
        params: dict[str, Any] | None = None,
        *,
        args: Iterable[str] = (),
        namespace: str = "/fay",
        name: str | None = None,
        env: dict[str, str] | None = None,
        ros: bool = True,
        remaps: dict[str, str] | None = None,
        ready: Callable[[], bool] | None = None,
    ) -> None:
        """`ready`: for a process that is no node, the check that it serves (see wait_ready)."""
        self.module = module
        self.namespace = namespace
        # A node is named after its module unless renamed (`__node:=`), e.g. fay_ros.nodes.mic -> mic.
        self.node_name = (name or module.rsplit(".", 1)[-1]) if ros else None
        self._ready_check = ready
        cmd = [sys.executable, "-m", module, *args]
        if ros:
            cmd += ["--ros-args", "-r", f"__ns:={namespace}"]
            if name:
                cmd += ["-r", f"__node:={name}"]
            for src, dst in (remaps or {}).items():
                cmd += ["-r", f"{src}:={dst}"]
            for key, value in (params or {}).items():
                cmd += ["-p", f"{key}:={_literal(value)}"]
        self.cmd = cmd
        log_prefix = module.rsplit(".", 1)[-1] + "_"
        self.log_path = Path(tempfile.mkstemp(prefix=log_prefix, suffix=".log", dir=scratch_dir())[1])
        self._log = open(self.log_path, "wb")
        full_env = ros_environment()
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "test"), full_env.get("PYTHONPATH")]))
        full_env.update(env or {})
        self.process = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, env=full_env, cwd=str(REPO), start_new_session=True
        )
        NodeProcess.started.append(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    @classmethod
    def dump_stacks(cls) -> None:
        """Every running node of the test writes its threads' stacks into its output (SIGUSR1:
        fay_ros.common.node_main), for a failure report to show where a node that stopped
        answering waits."""
        nodes = [p for p in cls.started if p.alive() and p.module.startswith("fay_ros.nodes.")]
        sizes = {p: p.log_path.stat().st_size for p in nodes}
        for p in nodes:
            p.process.send_signal(signal.SIGUSR1)
        with contextlib.suppress(TimeoutError):
            wait_until(lambda: all(p.log_path.stat().st_size > sizes[p] for p in nodes), 3.0, message="stacks")

    def wait_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{self.module} still running after {timeout}s; output:\n{self.output()}") from None

    def wait_ready(self, timeout: float = DEFAULT_TIMEOUT, probe: RosProbe | None = None) -> None:
        """Return once the process serves: a node has published `true` on its latched `~/ready`
        (through `probe`, or the harness's own probe); a process that is no node answers its
        `ready` check. Raises if the process exits first, with its output."""
        if self._ready_check is not None:
            check = self._ready_check
            what = f"{' '.join(self.cmd[2:4])} to answer"
            wait_until(
                lambda: check() or not self.alive(),
                timeout,
                interval=0.1,
                message=lambda: f"{what}:\n{self.output()[-3000:]}",
            )
        elif self.node_name is not None:
            probe = probe or readiness_probe()
            topic = probe.ready_topic(self.node_name, self.namespace)
            ready = probe.readiness(self.node_name, self.namespace)
            try:
                wait_until(
                    lambda: any(m.data for m in ready.messages) or not self.alive(),
                    timeout,
                    message=lambda: f"true on {topic}:\n{self.output()[-3000:]}",
                )
            finally:
                probe.node.destroy_subscription(ready.subscription)
        else:
            raise TypeError(f"{self.module} is started with ros=False and no `ready` check: nothing to wait on")
        if not self.alive():
            raise AssertionError(
                f"{self.module} exited ({self.process.returncode}) before it was ready:\n{self.output()[-3000:]}"
            )

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.process.poll() is None:
            try:
                # SIGTERM, not SIGINT: a process started from a background job inherits an
                # ignored SIGINT, and every fay_ros process stops cleanly on SIGTERM.
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)
        self._log.close()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL the node (crash tests)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(5)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        import json

        return json.dumps(list(value), ensure_ascii=False)
    return str(value)


class Collector:
    """Messages received on one subscription, with event-based waits."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.subscription: Any = None  # set by RosProbe.collect
        self._cond = threading.Condition()

    def _on_message(self, msg: Any) -> None:
        with self._cond:
            self.messages.append(msg)
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[list[Any]], Any], timeout: float = DEFAULT_TIMEOUT, what: str = "messages"
    ) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                result = predicate(self.messages)
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"timed out after {timeout:.1f}s waiting for {what}; "
                        f"got {len(self.messages)}: {self.messages[-5:]!r}"
                    )
                self._cond.wait(remaining)

    def wait_for_count(self, n: int, timeout: float = DEFAULT_TIMEOUT) -> list[Any]:
        self.wait_for(lambda msgs: len(msgs) >= n, timeout, what=f"{n} message(s)")
        return list(self.messages)

    def wait_for_match(
        self, predicate: Callable[[Any], bool], timeout: float = DEFAULT_TIMEOUT, what: str = "a matching message"
    ) -> Any:
        return self.wait_for(lambda msgs: next((m for m in msgs if predicate(m)), None), timeout, what)

    def clear(self) -> None:
        with self._cond:
            self.messages.clear()


class RosProbe:
    """An rclpy node inside the test process, spun by a background executor thread."""

    def __init__(self, name: str = "test_probe", namespace: str = "/fay") -> None:
        ros_environment()
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self._rclpy = rclpy
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._closing = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        """Spin until the probe is closed, past an entity the test thread destroys meanwhile
        (wait_status's subscription, call's client: fay_ros.common.node_main.spin). Ending there,
        as executor.spin() did, left the probe deaf: the next service call on it was never
        answered (the conversation test's memory/profile after wait_status, 2 of 3 full runs)."""
        from rclpy.executors import ExternalShutdownException

        from fay_ros.common.node_main import spin

        with contextlib.suppress(ExternalShutdownException):
            spin(self.executor, lambda: not self._closing)

    def publisher(self, msg_type: Any, topic: str, qos: Any = None):
        from fay_ros.common import qos as fay_qos

        return self.node.create_publisher(msg_type, topic, qos or fay_qos.EVENTS)

    def collect(self, msg_type: Any, topic: str, qos: Any = None) -> Collector:
        from fay_ros.common import qos as fay_qos

        collector = Collector()
        collector.subscription = self.node.create_subscription(
            msg_type, topic, collector._on_message, qos or fay_qos.EVENTS
        )
        return collector

    def collect_timed(self, msg_type: Any, topic: str, qos: Any = None) -> Collector:
        """A collector of (ROS time of arrival in seconds, message), for messages that carry no
        stamp of their own."""
        from fay_ros.common import qos as fay_qos

        collector, clock = Collector(), self.node.get_clock()
        collector.subscription = self.node.create_subscription(
            msg_type,
            topic,
            lambda msg: collector._on_message((clock.now().nanoseconds * 1e-9, msg)),
            qos or fay_qos.EVENTS,
        )
        return collector

    @staticmethod
    def ready_topic(node_name: str, namespace: str = "/fay") -> str:
        from fay_ros.common.readiness import ready_topic

        return ready_topic(node_name, namespace)

    def readiness(self, node_name: str, namespace: str = "/fay") -> Collector:
        """Every readiness message of a node (latched: the current one arrives at once; a
        restarted node adds a new `true`)."""
        from std_msgs.msg import Bool

        from fay_ros.common.readiness import READY_QOS

        return self.collect(Bool, self.ready_topic(node_name, namespace), READY_QOS)

    def wait_ready(
        self, node_name: str, namespace: str = "/fay", count: int = 1, timeout: float = DEFAULT_TIMEOUT
    ) -> Collector:
        """Wait until a node (e.g. one of `fay-ros up`) has said `true` on its `~/ready`
        `count` times (a restart says it again); returns the collector to wait on later ones."""
        ready = self.readiness(node_name, namespace)
        ready.wait_for(
            lambda msgs: sum(m.data for m in msgs) >= count,
            timeout,
            what=f"{count} true on {self.ready_topic(node_name, namespace)}",
        )
        return ready

    def wait_status(
        self, name: str, predicate: Callable[[Any], bool] = lambda _s: True, timeout: float = DEFAULT_TIMEOUT
    ) -> Any:
        """The first /diagnostics status named `name` (e.g. "fay/dialogue: memory") that
        satisfies `predicate`, among those published from now on (a node's health comes every
        second, so its current status arrives within one)."""
        from diagnostic_msgs.msg import DiagnosticArray

        from fay_ros.common import topics

        collector = self.collect(DiagnosticArray, topics.DIAGNOSTICS)
        try:
            return collector.wait_for(
                lambda arrays: next((s for a in arrays for s in a.status if s.name == name and predicate(s)), None),
                timeout,
                what=f"status {name!r}",
            )
        finally:
            self.node.destroy_subscription(collector.subscription)

    def wait_for_subscribers(self, publisher: Any, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        wait_until(
            lambda: publisher.get_subscription_count() >= count,
            timeout,
            message=f"{count} subscriber(s) on {publisher.topic_name}",
        )

    def wait_subscribed(self, publisher: Any, node_name: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until `publisher` is matched with `node_name`'s subscription on its topic (and
        every other subscription the graph shows there), so that a volatile message sent next
        reaches that node. A count of 1 is not enough: a subscription of another test's process,
        still in the graph while it leaves, may be the one already matched."""
        self._wait_all_matched(
            self.node.get_subscriptions_info_by_topic,
            publisher.get_subscription_count,
            publisher.topic_name,
            node_name,
            "subscription",
            timeout,
        )

    def wait_matched(
        self, collector: Collector, node_name: str | None, timeout: float = DEFAULT_TIMEOUT, at_least: int = 1
    ) -> None:
        """Wait until `collector`'s subscription is matched with `node_name`'s publisher on its
        topic (None: with at least `at_least` publishers) and every other publisher the graph
        shows there, so that a volatile message the node sends next reaches the collector. A
        count of 1 is not enough on a shared topic like /diagnostics, where another node's
        publisher may be the one already matched, nor where a node that has just stopped may
        still count."""
        subscription = collector.subscription
        self._wait_all_matched(
            self.node.get_publishers_info_by_topic,
            subscription.get_publisher_count,
            subscription.topic_name,
            node_name,
            "publisher",
            timeout,
            at_least,
        )

    @staticmethod
    def _wait_all_matched(
        listed: Callable[[str], list],
        matched_count: Callable[[], int],
        topic: str,
        node_name: str | None,
        kind: str,
        timeout: float,
        at_least: int = 1,
    ) -> None:
        """Wait until the graph lists `node_name`'s endpoint on `topic` (`listed`: the endpoints
        of the other side there; None: any node's) and our endpoint is matched with as many as
        it lists, and with at least `at_least`."""

        def matched() -> bool:
            endpoints = listed(topic)
            named = node_name is None or any(e.node_name == node_name for e in endpoints)
            return named and matched_count() >= max(at_least, len(endpoints))

        who = f"{node_name}'s {kind}" if node_name is not None else f"{at_least} {kind}(s)"
        wait_until(matched, timeout, message=f"{who} on {topic} matched")

    def wait_for_publishers(self, topic: str, count: int = 1, timeout: float = DEFAULT_TIMEOUT) -> None:
        name = self.resolve(topic)
        wait_until(
            lambda: self.node.count_publishers(name) >= count, timeout, message=f"{count} publisher(s) on {name}"
        )

    def resolve(self, topic: str) -> str:
        return self.node.resolve_topic_name(topic)

    def call(
        self, srv_type: Any, name: str, request: Any, timeout: float = DEFAULT_TIMEOUT, resend: bool | None = None
    ) -> Any:
        """Call a service and return its response; the first answer to any sent copy wins.

        Fast DDS drops a response when the server has not yet matched the client's response
        reader 100 ms after the request (rmw_fastrtps rmw_response.cpp), and a request sent
        before the server's request reader matched is lost too; `wait_for_service` sees only
        the client's side of that discovery. Under load either happens right after startup,
        so an unanswered request is re-sent every RESEND_EVERY seconds, unless its copy would
        do the thing twice (`resend`: by default, unless the type is in NOT_RESENT). Such a
        request goes out once, after a WARM_UP request on the same client has been answered.
        """
        if resend is None:
            resend = srv_type.__name__ not in NOT_RESENT
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(f"service {self.resolve(name)} not available after {timeout}s")
            deadline = time.monotonic() + timeout
            if not resend:
                self.warm_up(client, srv_type, name, timeout, deadline)
            return self._first_answer(client, request, name, timeout, deadline, resend)
        finally:
            self.node.destroy_client(client)

    def warm_up(self, client: Any, srv_type: Any, name: str, timeout: float, deadline: float | None = None) -> None:
        """Send srv_type's WARM_UP request on `client` until it is answered (nothing if it has none)."""
        if (make := WARM_UP.get(srv_type.__name__)) is not None:
            deadline = time.monotonic() + timeout if deadline is None else deadline
            self._first_answer(client, make(srv_type), name, timeout, deadline, resend=True)

    def _first_answer(self, client: Any, request: Any, name: str, timeout: float, deadline: float, resend: bool) -> Any:
        """Send `request` on `client`, again every RESEND_EVERY s if `resend`, until one answers."""
        done = threading.Event()
        answered: list[Any] = []

        def send() -> None:
            future = client.call_async(request)
            future.add_done_callback(lambda f: (answered.append(f), done.set()))

        send()
        while not done.wait(min(RESEND_EVERY if resend else math.inf, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                NodeProcess.dump_stacks()  # (in the nodes' output, which a failure report shows)
                probe = "spinning" if self._thread.is_alive() else "NOT spinning any more"
                raise TimeoutError(f"service {self.resolve(name)} did not answer within {timeout}s (probe {probe})")
            send()
        return answered[0].result()

    # -- a node's parameters and lifecycle, through its own services -----------------------
    def set_parameters(self, node: str, namespace: str = "/fay", **values: Any) -> list[Any]:
        """`ros2 param set`: one rcl_interfaces SetParametersResult (successful, reason) per value."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        request = SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg() for name, value in values.items()]
        )
        return list(self.call(SetParameters, f"{namespace}/{node}/set_parameters", request).results)

    def get_parameter(self, node: str, name: str, namespace: str = "/fay") -> Any:
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python

        response = self.call(GetParameters, f"{namespace}/{node}/get_parameters", GetParameters.Request(names=[name]))
        return parameter_value_to_python(response.values[0])

    def lifecycle_state(self, node: str, namespace: str = "/fay") -> str:
        from lifecycle_msgs.srv import GetState

        return self.call(GetState, f"{namespace}/{node}/get_state", GetState.Request()).current_state.label

    def change_state(self, node: str, transition: int, namespace: str = "/fay") -> bool:
        """A lifecycle transition (lifecycle_msgs/msg/Transition.TRANSITION_*); True when taken."""
        from lifecycle_msgs.srv import ChangeState

        request = ChangeState.Request()
        request.transition.id = transition
        return self.call(ChangeState, f"{namespace}/{node}/change_state", request).success

    def close(self) -> None:
        self._closing = True
        self.executor.shutdown(timeout_sec=2)
        self.node.destroy_node()
        self._rclpy.shutdown(context=self.context)
        self._thread.join(5)


_readiness_probe: RosProbe | None = None
_readiness_lock = threading.Lock()


def readiness_probe() -> RosProbe:
    """One probe per test process for NodeProcess.wait_ready (closed at exit)."""
    global _readiness_probe
    with _readiness_lock:
        if _readiness_probe is None:
            import atexit

            _readiness_probe = RosProbe("readiness_probe")
            atexit.register(_readiness_probe.close)
        return _readiness_probe


def admin_get(url: str, token: str | None) -> tuple[int, dict]:
    """GET an admin route with the token in its header, no proxy: (status, JSON body)."""
    import json
    import urllib.error
    import urllib.request

    headers = {"X-Fay-Token": token} if token else {}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
