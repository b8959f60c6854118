"""The project's own commands keep their promises: setup is idempotent and fast the second
time, a test run that collects nothing fails, and CI runs exactly `make test`; and the tests
keep theirs: they synchronise on events, never on log lines."""

from __future__ import annotations

import ast
import os
import subprocess

from harness import REPO, NodeProcess


def test_second_setup_skips_every_finished_step():
    out = subprocess.run(["bash", "scripts/setup.sh"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    for step in ("apt", "pip requirements", "fay_msgs", "fay_ros"):
        assert f"{step}" in out.stdout and "skipped" in out.stdout, out.stdout
    assert out.stdout.count("up to date, skipped") >= 4, out.stdout
    assert "setup: done" in out.stdout


def test_a_run_that_collects_no_tests_fails():
    env = dict(os.environ, FAY_TEST_WORKERS="0")  # one process: three workers collecting nothing cost ~15 s
    out = subprocess.run(
        [
            "bash",
            "scripts/test.sh",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "no_such_test_anywhere",
            "test/test_bringup_latency.py",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 1
    assert "collected no tests" in out.stderr


def test_ci_runs_make_test_and_nothing_else():
    lines = [
        line.strip()
        for line in (REPO / ".ci/run").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert lines[-1] == "exec make test"
    assert not any("pytest" in line for line in lines)


# -- tests wait on events, not on log lines ------------------------------------------------------

# Calls that wait until their first argument (a predicate) holds.
# A wait -> (position, keyword) of its predicate argument.
WAITS = {
    "wait_until": (0, "predicate"),
    "wait_for": (0, "predicate"),
    "wait_for_match": (0, "predicate"),
    "repeat_until": (1, "arrived"),
    "publish_until": (2, "arrived"),
}
# Reading what a process printed: NodeProcess.output(), a pipe's readline().
LOG_READS = {"output", "readline"}


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def log_synchronisation(source: str) -> list[str]:
    """Lines of `source` that synchronise on log text: `wait_output(...)`, or a wait whose
    predicate (a lambda, or a function of the module named there) reads a process's output.
    Reading the output in a wait's `message=` (to explain a timeout) is fine."""
    tree = ast.parse(source)
    functions = {f.name: f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = _called(call)
        if name == "wait_output":
            found.append(f"{call.lineno}: wait_output(...)")
            continue
        if name not in WAITS:
            continue
        position, keyword = WAITS[name]
        predicate = (
            call.args[position]
            if len(call.args) > position
            else next((k.value for k in call.keywords if k.arg == keyword), None)
        )
        if isinstance(predicate, ast.Name) and predicate.id in functions:
            predicate = functions[predicate.id]
        if predicate is not None and any(
            isinstance(n, ast.Call) and _called(n) in LOG_READS for n in ast.walk(predicate)
        ):
            found.append(f"{call.lineno}: {name}(...) waits on a process's output")
    return found


def test_no_test_or_benchmark_synchronises_on_log_lines():
    assert not hasattr(NodeProcess, "wait_output"), "NodeProcess waits on readiness (wait_ready), not on log text"
    offences = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted([*(REPO / "test").glob("*.py"), *(REPO / "bench").glob("*.py")])
        for line in log_synchronisation(path.read_text(encoding="utf-8"))
    ]
    assert not offences, (
        "wait on an event (NodeProcess.wait_ready, a message, a service or port answering, "
        "an exit), then assert on the log if need be:\n" + "\n".join(offences)
    )


def test_the_log_synchronisation_check_finds_what_it_forbids():
    assert log_synchronisation('node.wait_output("dialogue ready")\n') == ["1: wait_output(...)"]
    assert log_synchronisation('wait_until(lambda: "x" in proc.output(), 5)\n') == [
        "1: wait_until(...) waits on a process's output"
    ]
    assert log_synchronisation("def seen():\n    return 'x' in proc.output()\n\nwait_until(seen)\n") == [
        "4: wait_until(...) waits on a process's output"
    ]
    assert log_synchronisation("assert 'ready' in proc.stdout.readline()\n") == []  # an assertion, not a wait
    assert log_synchronisation("wait_until(lambda: proc.alive(), message=lambda: proc.output())\n") == []
    assert log_synchronisation("publish_until(pub, msg, lambda: 'x' in proc.output())\n") == [
        "1: publish_until(...) waits on a process's output"
    ]
    assert log_synchronisation("repeat_until(send, arrived=lambda: 'x' in proc.output())\n") == [
        "1: repeat_until(...) waits on a process's output"
    ]
    assert log_synchronisation("collector.wait_for_match(lambda m: m.data in log.output())\n") == [
        "1: wait_for_match(...) waits on a process's output"
    ]
