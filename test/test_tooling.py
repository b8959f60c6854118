"""The project's own commands keep their promises: setup is idempotent and fast the second
time, a test run that collects nothing fails, and CI runs exactly `make test`."""
from __future__ import annotations

import os
import subprocess

from harness import REPO


def test_second_setup_skips_every_finished_step():
    out = subprocess.run(["bash", "scripts/setup.sh"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    for step in ("apt", "pip requirements", "fay_msgs", "fay_ros"):
        assert f"{step}" in out.stdout and "skipped" in out.stdout, out.stdout
    assert out.stdout.count("up to date, skipped") >= 4, out.stdout
    assert "setup: done" in out.stdout


def test_a_run_that_collects_no_tests_fails():
    env = dict(os.environ)
    out = subprocess.run(["bash", "scripts/test.sh", "-q", "-p", "no:cacheprovider", "-k", "no_such_test_anywhere",
                          "test/test_bringup_latency.py"], cwd=REPO, capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 1
    assert "collected no tests" in out.stderr


def test_ci_runs_make_test_and_nothing_else():
    lines = [line.strip() for line in (REPO / ".ci/run").read_text().splitlines()
             if line.strip() and not line.strip().startswith("#")]
    assert lines[-1] == "exec make test"
    assert not any("pytest" in line for line in lines)
