"""`fay-ros chat` without TEXT: a conversation, against the scripted loopback LLM.

The CLI runs as a real process: piped stdin (scripts) and a pseudo-terminal (a person at
the keyboard: prompt, Ctrl-C, Ctrl-D). No sleeps: every wait is on output or on the process.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

import dialogue_fake_llm as fake
from harness import REPO, free_port, ros_environment

CLI = [sys.executable, "-m", "fay_ros.cli", "chat"]
APOLOGY = "Sorry, I can't answer right now."  # the shipped persona's English apology (starts with this)


@pytest.fixture
def llm():
    server = fake.ScriptedLlm()
    yield server
    server.close()


def _chat_piped(stdin: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
        env=ros_environment(),
    )


def _messages(request: dict) -> list[tuple[str, str]]:
    """(role, content) of a recorded request, without the system prompt."""
    return [(m["role"], m["content"]) for m in request["messages"] if m["role"] != "system"]


def test_piped_conversation_keeps_the_history_and_prints_only_replies(llm):
    llm.script(
        fake.judge_finish("Hello Tom. Nice to meet you!"),
        fake.judge_finish("You said your name is Tom."),
        fake.judge_finish("Bye Tom."),
    )
    result = _chat_piped(
        "I am Tom.\n\n   \nWhat is my name?\nGoodbye.\n", "--base-url", llm.base_url, "--model", "m", "--qa", "none"
    )
    assert result.returncode == 0, result.stderr
    # only the replies on stdout, in order, one sentence per line: no prompt, no banner
    assert result.stdout.splitlines() == ["Hello Tom.", "Nice to meet you!", "You said your name is Tom.", "Bye Tom."]
    assert "Ctrl-D" not in result.stderr and "you>" not in result.stderr
    assert len(llm.requests) == 3, "empty lines must not be turns"
    assert all(r["model"] == "m" for r in llm.requests)
    assert _messages(llm.requests[0]) == [("user", "I am Tom.")]
    assert _messages(llm.requests[1]) == [
        ("user", "I am Tom."),
        ("assistant", "Hello Tom. Nice to meet you!"),
        ("user", "What is my name?"),
    ]
    assert _messages(llm.requests[2]) == [
        ("user", "I am Tom."),
        ("assistant", "Hello Tom. Nice to meet you!"),
        ("user", "What is my name?"),
        ("assistant", "You said your name is Tom."),
        ("user", "Goodbye."),
    ]


def test_a_failing_turn_apologises_and_the_conversation_goes_on(llm):
    llm.script(fake.judge_finish("First answer."), fake.status(500), fake.judge_finish("Third answer."))
    result = _chat_piped("one\ntwo\nthree\n", "--base-url", llm.base_url, "--qa", "none")
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0] == "First answer." and lines[1].startswith(APOLOGY) and lines[-1] == "Third answer.", lines
    assert "the LLM failed" in result.stderr and "HTTP 500" in result.stderr
    assert len(llm.requests) == 3
    # the failed turn left the history of the others intact
    assert _messages(llm.requests[2])[:2] == [("user", "one"), ("assistant", "First answer.")]
    assert _messages(llm.requests[2])[-1] == ("user", "three")


def test_quit_command_ends_the_conversation(llm):
    llm.script(fake.judge_finish("Hi."))
    result = _chat_piped("hello\n/quit\nnever sent\n", "--base-url", llm.base_url, "--qa", "none")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Hi."]
    assert len(llm.requests) == 1


def test_the_key_rule_and_no_credentials_in_anything_printed():
    env = ros_environment() | {"FAY_TEST_CHAT_KEY": ""}
    unset = subprocess.run(
        [*CLI, "hi", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "FAY_TEST_CHAT_KEY"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=env,
    )
    assert unset.returncode == 2 and "FAY_TEST_CHAT_KEY is not set" in unset.stderr, unset.stderr
    port = free_port()  # nothing listens there
    key, secrets = "sk-chat-cli-8e3f0a", ("pw-2b9d", "sk-query-61c4", "api_key=")
    env["FAY_TEST_CHAT_KEY"] = key
    failed = subprocess.run(
        [
            *CLI,
            "--base-url",
            f"http://fay:pw-2b9d@127.0.0.1:{port}/v1?api_key=sk-query-61c4",
            "--api-key-env",
            "FAY_TEST_CHAT_KEY",
            "--qa",
            "none",
            "--verbose",
        ],
        input="hello\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=env,
    )
    assert failed.returncode == 1 and f"cannot reach http://127.0.0.1:{port}/v1" in failed.stderr, failed.stderr
    printed = failed.stdout + failed.stderr
    assert not [s for s in (key, *secrets) if s in printed], printed


# -- a person at a terminal ----------------------------------------------------------------

# The child becomes a session leader (start_new_session) and takes the pty as its controlling
# terminal, so a typed Ctrl-C reaches it as SIGINT from the line discipline, as in a shell.
_CTTY_EXEC = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


class Terminal:
    """The CLI on a pseudo-terminal; `expect` waits for text in what the terminal shows."""

    def __init__(self, *args: str) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        env = ros_environment() | {"TERM": "dumb"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CTTY_EXEC, "-m", "fay_ros.cli", "chat", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=str(REPO),
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.shown = ""  # everything the terminal showed (\r\n as \n)
        self.pos = 0  # expect() searches from here

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 4096)
        except OSError:  # EIO: the child closed the terminal
            data = b""
        if not data:
            return False
        self.shown += data.decode("utf-8", "replace").replace("\r\n", "\n")
        return True

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while (found := self.shown.find(text, self.pos)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(left) and self.proc.poll() is not None):
                raise AssertionError(f"{text!r} not shown; the terminal showed:\n{self.shown}")
        self.pos = found + len(text)

    def type(self, data: str) -> None:
        os.write(self.master, data.encode())

    def wait(self, timeout: float = 30) -> int:
        """Exit code, after draining the output."""
        code = self.exit_code(timeout)
        return code if code is not None else self.proc.wait(timeout=1)

    def exit_code(self, timeout: float) -> int | None:
        """The exit code once the program has ended (output drained), None if it still runs
        after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(min(0.1, max(0.0, deadline - time.monotonic())))
        while self._read(0):
            pass
        return self.proc.poll()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def terminal():
    terminals: list[Terminal] = []

    def start(*args: str) -> Terminal:
        terminals.append(Terminal(*args))
        return terminals[-1]

    yield start
    for t in terminals:
        t.close()


def test_interactive_session_prompts_answers_and_ends_on_ctrl_d(llm, terminal):
    llm.script(fake.judge_finish("Hello there. I am Fay."), fake.judge_finish("Still here."))
    term = terminal("--base-url", llm.base_url, "--model", "m", "--qa", "none")
    term.expect("Ctrl-D to quit")  # the banner names the endpoint and how to leave
    assert llm.base_url in term.shown and " m " in term.shown
    term.expect("you> ")
    term.type("hello\n")
    term.expect("Hello there.\nI am Fay.\n")
    term.expect("you> ")
    term.type("and now?\n")
    term.expect("Still here.\n")
    term.expect("you> ")
    term.type("\x04")  # Ctrl-D on an empty line
    assert term.wait() == 0, term.shown
    assert len(llm.requests) == 2
    assert ("user", "hello") in _messages(llm.requests[1])


def test_ctrl_c_cancels_the_streaming_reply_then_quits_at_the_prompt(llm, terminal):
    # the first sentence streams, then the stream hangs until the gate opens (it never does)
    (held,) = llm.script(
        fake.text('{"action": "finish", "message": "Let me think. ', 'This sentence never arrives."}', gate_after=1)
    )
    llm.script(fake.judge_finish("Back again."))
    term = terminal("--base-url", llm.base_url, "--qa", "none")
    term.expect("you> ")
    term.type("tell me a long story\n")
    term.expect("Let me think.")
    term.type("\x03")  # Ctrl-C while the reply streams
    term.expect("(reply cancelled)")
    assert held.closed.wait(10), "the LLM stream was not closed"
    term.expect("you> ")  # the conversation goes on
    term.type("hello again\n")
    term.expect("Back again.\n")
    assert "never arrives" not in term.shown
    term.expect("you> ")
    term.type("\x03")  # Ctrl-C at the prompt: leave
    code = term.exit_code(10)
    if code is None:
        # GNU readline's callback loop (CPython's input()) misses a SIGINT that lands between
        # drawing the prompt and entering its select(): a person presses Ctrl-C again
        term.type("\x03")
        code = term.exit_code(30)
    assert code == 128 + signal.SIGINT, term.shown  # 130, as a shell reports Ctrl-C
    assert "Traceback" not in term.shown
    assert len(llm.requests) == 2


def test_reminders_are_set_listed_and_cancelled_in_the_database_given_without_the_model(llm, tmp_path):
    db = tmp_path / "memory.db"
    result = _chat_piped(
        "Remind me in 20 minutes to stretch.\nWhat are my reminders?\nCancel the reminder to stretch.\n",
        "--base-url",
        llm.base_url,
        "--model",
        "m",
        "--qa",
        "none",
        "--reminders-db",
        str(db),
        "--user",
        "ann",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("OK — I'll remind you to stretch ") and lines[0].endswith("(in 20 minutes)."), lines
    assert any("stretch" in line for line in lines[1:-1]) and "cancelled" in lines[-1], lines
    assert llm.requests == [], "reminder turns never reach the model"
    listed = subprocess.run(
        [*CLI[:-1], "reminders", "list", "--owner", "ann", "--all", "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        check=True,
    )
    assert '"status": "cancelled"' in listed.stdout and '"text": "stretch"' in listed.stdout
