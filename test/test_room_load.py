"""Twenty people typing at once through the real graph (issue 39): every line is answered to
its own user and to no one else, none is lost. A small load (20 users × 3 lines, each user's
next line after their answer), correctness only: how fast is `make bench ONLY=room_load`."""

from __future__ import annotations

import threading

import pytest

from harness import RosProbe
from room_load import openai_client, openai_endpoint, room, stream_tag

pytestmark = pytest.mark.slow

USERS = 20
LINES = 3


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("room_load_probe")
    yield p
    p.close()


def test_twenty_users_typing_at_once_each_get_their_own_answers(probe, llm, tmp_path):
    with room(probe, llm, tmp_path) as rig:
        failures: list[BaseException] = []

        def user(n: int) -> None:
            try:
                for k in range(1, LINES + 1):
                    tag = f"u{n:02d}-{k}"
                    rig.line(tag)
                    rig.wait_answered([tag], timeout=60)
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                failures.append(exc)

        threads = [threading.Thread(target=user, args=(n,)) for n in range(USERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        outcome = rig.outcome
        assert not failures, failures[:3]
        assert outcome.misrouted == [], "an answer reached another person"
        assert outcome.unanswered() == [] and len(outcome.sent) == USERS * LINES
        print(f"\n{len(outcome.sent)} lines of {USERS} users, slowest answer {max(outcome.latencies()):.2f} s")


def test_twenty_streaming_clients_on_the_openai_endpoint_each_get_their_own_answers(probe, llm, tmp_path):
    users = [f"u{n:02d}" for n in range(USERS)]
    with room(probe, llm, tmp_path) as _rig, openai_endpoint(tmp_path, users) as (root, tokens):
        answers: dict[str, str] = {}
        failures: list[BaseException] = []

        def client(user: str) -> None:
            try:
                chat = openai_client(root, tokens[user])
                for k in range(1, LINES + 1):
                    tag = f"{user}-{k}"
                    answers[tag] = stream_tag(chat, tag)[1]
            except BaseException as exc:  # noqa: BLE001 - reported by the test thread
                failures.append(exc)

        threads = [threading.Thread(target=client, args=(user,)) for user in users]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures[:3]
        assert len(answers) == USERS * LINES
        assert {tag: answer for tag, answer in answers.items() if answer != f"Noted {tag}."} == {}
