"""Issue 39 in the dialogue's core: speaker cards from a person's own words, voice examples by
scene and relation, the owner's tone corrections as rules, and `[SILENCE]` as no reply.

The engine runs against the scripted loopback LLM (test/dialogue_fake_llm.py) and a REAL
memory service on a temporary SQLite file (test/evidence_memory.py), so the memory policy
decides what is confirmed, as in the memory node."""

from __future__ import annotations

import pytest

import dialogue_fake_llm as fake
from evidence_memory import ServiceMemory
from fay_ros.text.outbound import sanitize
from test_dialogue_engine import Rig, run

VOICE_EXAMPLES = "config/voice_examples.yaml"


class RuledMemory(ServiceMemory):
    """The real memory service, with its active rules, hearing what the users say (as the
    memory node hears `speech/final`), so the policy checks writes against their words."""

    async def active_rules(self, owner):
        out = self.service.active_rules(owner)
        return [self._as_memory(m) for m in out.nodes] if out.success else []

    @staticmethod
    def _as_memory(node):
        from fay_ros.dialogue.tools import Memory

        return Memory(node.id, node.content, node.status, 0.0, node.node_type, tuple(node.tags), node.key)


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


def answer_all(llm, text: str = "Okay.") -> None:
    llm.responder = lambda _body: fake.judge_finish(text)


def system_of(request) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


async def turn(rig: Rig, memory: RuledMemory, user: str, text: str):
    memory.service.hear_user(user, text)
    trace = await rig.engine.submit(user, text, "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en")
    await rig.engine.settle()
    return trace


# -- [SILENCE] ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("[SILENCE]", ""),
        ("  [silence]  ", ""),
        ("[ Silence ]", ""),
        ("【SILENCE】", ""),
        ("Sure thing. [SILENCE] See you.", "Sure thing. See you."),
        ("好的【silence】再见。", "好的再见。"),
        ("[see here] the list", "[see here] the list"),
        ("【注意】别迟到。", "【注意】别迟到。"),
    ],
)
def test_the_silence_marker_is_never_spoken_in_any_case_or_bracket(text, spoken):
    assert sanitize(text).text == spoken


@pytest.mark.parametrize("answer", [fake.judge_finish("[SILENCE]"), fake.text("  [Silence] ")])
def test_a_reply_of_only_silence_is_no_reply_at_all(fresh, answer):
    async def scenario():
        rig = Rig(fresh)
        fresh.script(answer)
        trace = await rig.engine.submit("alice", "you two keep talking", "en")
        assert rig.pieces == [], "nothing on reply: no stock line, no empty end marker"
        assert len(fresh.requests) == 1, "silence is an answer: the model is not asked again"
        fresh.script(fake.judge_finish("I am here."))
        await rig.engine.submit("alice", "are you there?", "en")
        assert [p.text for p in rig.pieces] == ["I am here."]
        assert trace.error == ""
        await rig.close()

    run(scenario())
