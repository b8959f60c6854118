"""Twenty people typing at once through the real graph (issue 39): every line is answered to
its own user and to no one else, none is lost. A small load (20 users × 3 lines, each user's
next line after their answer), correctness only: how fast is `make bench ONLY=room_load`.
On the same graph: the owner's tone correction becomes a rule in the memory node and in their
next prompt, and in no one else's."""

from __future__ import annotations

import threading

import pytest

from harness import RosProbe, wait_until
from room_load import TAG, openai_client, openai_endpoint, room, stream_tag

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


def test_the_owners_tone_correction_is_a_rule_in_the_memory_node_and_the_next_prompt(probe, llm, tmp_path):
    from fay_msgs.msg import Transcript
    from fay_msgs.srv import GetActiveRules
    from fay_ros.common import topics
    from fay_ros.memory.tone import tone_corrections

    rule = tone_corrections("don't sound like customer service")[0].content
    # u01 is the robot's owner; u02 a listed adult (the people file decides, never the words)
    people = tmp_path / "people.yaml"
    people.write_text(
        "people:\n"
        "  - {id: u01, name: Uma, role: owner, relation: owner}\n"
        "  - {id: u02, name: Ben, role: user, relation: adult}\n",
        encoding="utf-8",
    )
    with room(probe, llm, tmp_path, people_file=str(people)) as rig:
        rig.outcome.sent["u01-1"] = 0.0
        rig.pub.publish(Transcript(text="u01-1: please don't sound like customer service.", user_id="u01"))
        rig.wait_answered(["u01-1"])

        def stored() -> list[str]:
            response = probe.call(GetActiveRules, topics.SRV_ACTIVE_RULES, GetActiveRules.Request(owner="u01"))
            return [m.content for m in response.rules]

        wait_until(lambda: rule in stored(), timeout=30, message="the tone rule among u01's active rules")
        llm.requests.clear()
        rig.line("u01-2")
        rig.line("u02-1")
        rig.wait_answered(["u01-2", "u02-1"])
        prompts = {
            tag: "\n".join(m["content"] for m in r["messages"] if m["role"] == "system")
            for r in llm.requests
            for tag in TAG.findall(r["messages"][-1]["content"])
        }
        assert rule in prompts["u01-2"], "the owner's next prompt carries the rule"
        assert rule not in prompts["u02-1"], "nobody else's"
