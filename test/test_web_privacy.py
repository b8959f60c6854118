"""Two people, two tokens, one companion: end to end through the web face.

Real processes: the memory node (real SQLite), the dialogue node (tiny profile) against a
loopback OpenAI-compatible server that stands in for a cloud model and needs an API key,
and `fay-ros web` (the web door in front of rosbridge-server-rs); two headless Chromium
pages open the face, each with its own token, and type.

Shows:
- each token speaks as the user bound to it, even from a page tampered to claim the owner's
  id, as the memory writes show: Alice's facts are Alice's, Bob's are Bob's, the one-person default user has
  none;
- 0 cross-reads: no reply on Alice's page, no prompt of Alice's turns, no memory answer for
  Alice carries anything of Bob's, and the other way round;
- scans while it runs: no API key, no token and no URL userinfo in any process output, no
  user text on /diagnostics.
"""

from __future__ import annotations

import json
import secrets

import pytest
from diagnostic_msgs.msg import DiagnosticArray

import dialogue_fake_llm as fake
from browser_rig import needs_chromium
from fay_msgs.msg import Transcript
from fay_msgs.srv import GetProfile
from fay_ros.common import qos, topics
from harness import NodeProcess, free_port, wait_until, write_web_access

pytestmark = [pytest.mark.slow, needs_chromium]

PEOPLE = {
    "alice": {
        "said": ["My name is Alice.", "I like green tea."],
        "asks": [("What's my name?", "Alice"), ("What do I like?", "green tea")],
        "private": ("Alice", "green tea"),
    },
    "bob": {
        "said": ["My name is Bob.", "I like black coffee."],
        "asks": [("What's my name?", "Bob"), ("What do I like?", "black coffee")],
        "private": ("Bob", "black coffee"),
    },
}


def replies_on(page) -> list[dict]:
    return page.evaluate("window.fayFace.state.events.filter(e => e.kind === 'reply')")


def type_and_wait_reply(page, typed, text: str) -> str:
    """Type a line in the page; return the text of the reply it shows. Right after the nodes
    start, a line our collector heard may still miss the dialogue node, or its reply the
    bridge (each link is matched on its own): with no reply after a while the line is typed
    again, as a person would (every line typed here reads the same the second time)."""
    before = {e["utterance"].rsplit(":", 1)[0] for e in replies_on(page)}

    def answered():
        new = [e for e in replies_on(page) if e["utterance"].rsplit(":", 1)[0] not in before]
        ends = {e["utterance"].rsplit(":", 1)[0] for e in new}
        return new if ends else None

    for attempt in range(3):
        sent_before = sum(m.text == text for m in typed.messages)  # both people ask "What's my name?"

        def delivered(sent_before=sent_before):
            if sum(m.text == text for m in typed.messages) == sent_before:  # lost before discovery settled: again
                page.fill("#chat-text", text)
                page.click("#chat-send")
            return sum(m.text == text for m in typed.messages) > sent_before

        wait_until(delivered, timeout=30, interval=0.5, message=f"{text!r} on text_input")
        try:
            new = wait_until(
                answered,
                timeout=60 if attempt == 2 else 20,
                message=lambda: (
                    f"a reply to {text!r} on the page; it shows "
                    f"{replies_on(page)}; typed: {[(m.user_id, m.text) for m in typed.messages]}"
                ),
            )
            break
        except TimeoutError:
            if attempt == 2:
                raise
    conversation = new[0]["utterance"].rsplit(":", 1)[0]
    wait_until(
        lambda: len({e["utterance"] for e in replies_on(page) if e["utterance"].startswith(conversation + ":")}) >= 1,
        timeout=10,
    )
    return " ".join(e["text"] for e in replies_on(page) if e["utterance"].startswith(conversation + ":"))


def test_two_tokens_are_two_users_with_separate_memories(ros, tmp_path, browser):
    api_key = "sk-test-" + secrets.token_hex(16)
    llm = fake.ScriptedLlm()
    llm.responder = lambda body: fake.text("Nice to talk with you.")
    access = tmp_path / "web_access.yaml"
    tokens = write_web_access(access, {"alice": "face", "bob": "face"})
    page_port, bridge_port = free_port(), free_port()
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, qos.EVENTS)
    typed = ros.collect(Transcript, topics.TEXT_INPUT, qos.EVENTS)
    readiness = ros.publisher(Transcript, topics.TEXT_INPUT, qos.EVENTS)
    nodes = [
        NodeProcess("fay_ros.nodes.memory", {"db_path": str(tmp_path / "memory.db"), "embedder": "hashed"}),
        NodeProcess(
            "fay_ros.nodes.dialogue",
            {
                "base_url": llm.base_url,
                "model": "cloud-model",
                "model_profile": "tiny",
                "api_key_env": "FAY_TEST_LLM_KEY",
                "memory_timeout": 2.0,
            },
            env={"FAY_TEST_LLM_KEY": api_key},
        ),
        NodeProcess(
            "fay_ros.cli",
            args=[
                "web",
                "--bridge",
                "rs",
                "--port",
                str(page_port),
                "--bridge-port",
                str(bridge_port),
                "--access-file",
                str(access),
            ],
            ros=False,
        ),
    ]
    try:
        ros.wait_for_subscribers(readiness, count=3, timeout=60)  # memory, dialogue and our collector
        ros.wait_for_publishers(topics.REPLY, timeout=60)
        ros.call(GetProfile, topics.SRV_PROFILE, GetProfile.Request(owner="alice"), 30)  # memory answers
        pages = {}
        for user, token in tokens.items():
            page = browser.new_page()  # a context of its own: its own storage, like another device
            # wait_until polls the lambda right here, within this iteration: no late binding.
            url = f"http://127.0.0.1:{page_port}/#token={token}"
            wait_until(
                lambda: _opened(page, url),  # noqa: B023
                timeout=30,
                interval=0.5,
                message=f"the face of {user}",
            )
            page.wait_for_function("document.body.dataset.connection === 'connected'", timeout=30000)
            # A tampered page: it claims to be the owner ('user') on every typed line.
            page.evaluate("""() => {
                const publish = ROSLIB.Topic.prototype.publish;
                ROSLIB.Topic.prototype.publish = function (message) {
                    if (this.name.endsWith('/text_input')) message.user_id = 'user';
                    return publish.call(this, message);
                };
            }""")
            pages[user] = page
        ros.wait_for_publishers(topics.TEXT_INPUT, count=2)  # the bridge's, for the pages (and ours)

        answers = {user: [] for user in PEOPLE}
        for step in range(2):  # interleaved: Alice, Bob, Alice, Bob
            for user, person in PEOPLE.items():
                type_and_wait_reply(pages[user], typed, person["said"][step])
        for step in range(2):
            for user, person in PEOPLE.items():
                question, expected = person["asks"][step]
                answer = type_and_wait_reply(pages[user], typed, question)
                answers[user].append(answer)
                assert expected.lower() in answer.lower(), (user, question, answer)
        seen_on_page = {user: json.dumps(replies_on(page)) for user, page in pages.items()}
        for page in pages.values():
            page.close()

        # every typed line spoke as the token's user, whatever the page holds
        assert {m.user_id for m in typed.messages if m.text} == {"alice", "bob"}
        for user, person in PEOPLE.items():
            assert {m.user_id for m in typed.messages if m.text in person["said"]} == {user}

        # memory writes: each owner has exactly their own facts
        profiles = {
            owner: " ".join(ros.call(GetProfile, topics.SRV_PROFILE, GetProfile.Request(owner=owner), 30).facts)
            for owner in ("alice", "bob", "user")
        }
        assert profiles["user"] == "", profiles
        cross_reads = 0
        for user, person in PEOPLE.items():
            other = next(p for u, p in PEOPLE.items() if u != user)
            for word in person["private"]:
                assert word.lower() in profiles[user].lower(), (user, profiles[user])
            for word in other["private"]:
                cross_reads += word.lower() in profiles[user].lower()
                cross_reads += word.lower() in seen_on_page[user].lower()
                cross_reads += word.lower() in " ".join(answers[user]).lower()
                # the prompts of this user's turns ("You are talking with Alice.") never hold the other's facts
                prompts = [
                    json.dumps(r["messages"]) for r in llm.requests if person["private"][0] in json.dumps(r["messages"])
                ]
                cross_reads += sum(word.lower() in prompt.lower() for prompt in prompts)
        assert cross_reads == 0

        # scans: no secret in any output, no user text on /diagnostics
        outputs = "\n".join(n.output() for n in nodes)
        assert api_key not in outputs
        for token in tokens.values():
            assert token not in outputs
        assert diagnostics.messages, "no /diagnostics during the conversation"
        values = " ".join(kv.value for array in diagnostics.messages for status in array.status for kv in status.values)
        for person in PEOPLE.values():
            for line in person["said"] + [q for q, _ in person["asks"]]:
                assert line not in values
            for word in person["private"]:
                assert word not in values, f"{word!r} on /diagnostics"
    except BaseException:
        for node in nodes:
            print(f"----- {node.module} -----\n{node.output()[-3000:]}")
        raise
    finally:
        for node in reversed(nodes):
            node.stop()
        llm.close()


def _opened(page, url: str) -> bool:
    """Open the face (the page server may still be starting)."""
    try:
        page.goto(url)
        return page.evaluate("typeof window.fayFace === 'object'")
    except Exception:  # noqa: BLE001 - connection refused while the server starts: try again
        return False
