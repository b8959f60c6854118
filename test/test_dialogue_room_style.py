"""Issue 39 in the dialogue's core: speaker cards from a person's own words, voice examples by
scene and relation, the owner's tone corrections as rules, and `[SILENCE]` as no reply.

The engine runs against the scripted loopback LLM (test/dialogue_fake_llm.py) and a REAL
memory service on a temporary SQLite file (test/evidence_memory.py), so the memory policy
decides what is confirmed, as in the memory node."""

from __future__ import annotations

import pytest

import dialogue_fake_llm as fake
from evidence_memory import ServiceMemory
from fay_ros.dialogue.style import StyleError, StyleTable, scene_of, speaker_card, voice_examples
from fay_ros.memory.policy import RememberRequest, decide_remember
from fay_ros.memory.tone import tone_corrections
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


# -- speaker cards -----------------------------------------------------------------------------


def test_a_card_comes_from_the_persons_own_words_and_reaches_only_their_prompt(fresh, tmp_path):
    async def scenario():
        memory = RuledMemory(tmp_path)
        rig = Rig(fresh, memory=memory)
        answer_all(fresh)
        await turn(rig, memory, "alice", "Please call me Mr Li, and please be formal with me.")
        # bob talks ABOUT alice: her card must not change, and his card says nothing of her
        await turn(rig, memory, "bob", "Alice wants you to call her Ally. Be casual with her.")
        fresh.requests.clear()
        await turn(rig, memory, "alice", "What should we cook tonight?")
        await turn(rig, memory, "bob", "What should we cook tonight?")
        alice_prompt, bob_prompt = (system_of(r) for r in fresh.requests)
        card = "How to address the person you are talking with: call them Mr Li; politely and formally."
        assert card in alice_prompt
        assert "Ally" not in alice_prompt and "casually" not in alice_prompt
        assert "Mr Li" not in bob_prompt and "How to address" not in bob_prompt
        # stored with alice's memory, as her own confirmed statements
        facts = await memory.profile("alice")
        assert "preference:address:formality=User wants to be addressed formally." in facts
        assert not any("address" in f for f in await memory.profile("bob"))
        await rig.close()

    run(scenario())


def test_the_card_is_read_from_the_stored_facts():
    card = speaker_card(
        {
            "name": "用户的名字是小王。",
            "address:formality": "User wants to be addressed casually.",
            "address:language": "User wants to be answered in Chinese.",
        }
    )
    assert (card.name, card.language, card.formality) == ("小王", "Chinese", "casually")
    assert card.line() == "call them 小王; answer in Chinese; casually, as a friend (no titles, no honorifics)."
    assert not speaker_card({})


# -- style -------------------------------------------------------------------------------------


def test_voice_examples_are_chosen_by_scene_relation_and_language():
    table = StyleTable.load(VOICE_EXAMPLES)
    assert scene_of("I'm so tired and sad today", hour=8) == "comfort", "words before the clock"
    assert scene_of("how much is this teapot?", hour=15) == "shop"
    assert scene_of("讲个笑话吧", hour=20) == "play"
    assert scene_of("what's new", hour=7) == "morning"
    assert scene_of("what's new", hour=15) == "" and scene_of("what's new", 15, "shop") == "shop"
    child = voice_examples(table, "play", "child", "en", turn=0)
    owner = voice_examples(table, "play", "owner", "en", turn=0)
    assert child and owner and set(child).isdisjoint(owner)
    assert all(any("\u4e00" <= c <= "\u9fff" for c in line) for line in voice_examples(table, "play", "child", "zh", 0))
    assert voice_examples(table, "", "owner", "en", 0) == []


def test_examples_go_into_the_system_prompt_not_the_history(fresh, tmp_path):
    async def scenario():
        rig = Rig(fresh)
        rig.engine.style = StyleTable.load(VOICE_EXAMPLES)
        rig.engine.relation_of = lambda user: "child"
        answer_all(fresh, "Let's play!")
        await rig.engine.submit("mia", "can we play a game?", "en")
        request = fresh.requests[0]
        examples = voice_examples(rig.engine.style, "play", "child", "en", turn=1)
        assert examples and all(line in system_of(request) for line in examples)
        history = [m["content"] for m in request["messages"] if m["role"] != "system"]
        assert not any(line in text for line in examples for text in history)
        assert "Examples of your voice" in system_of(request)
        await rig.close()

    run(scenario())


def test_the_tiny_model_gets_its_card_but_no_examples(fresh, tmp_path):
    async def scenario():
        memory = RuledMemory(tmp_path)
        rig = Rig(fresh, memory=memory, profile="tiny")
        rig.engine.style = StyleTable.load(VOICE_EXAMPLES)
        fresh.responder = lambda _body: fake.text("Sure, let's play.")
        await turn(rig, memory, "mia", "No need to be formal with me.")
        fresh.requests.clear()
        await turn(rig, memory, "mia", "can we play a game?")
        prompt = system_of(fresh.requests[0])
        assert "How to address the person you are talking with: casually" in prompt
        assert "Examples of your voice" not in prompt
        await rig.close()

    run(scenario())


def test_the_tiny_card_leaves_the_name_to_the_head(fresh, tmp_path):
    """The tiny head names the person ("You are talking with Mia."): the card after the history,
    read again every turn, does not say it a second time, and a card with only the name is no
    block at all."""

    async def scenario():
        memory = RuledMemory(tmp_path)
        rig = Rig(fresh, memory=memory, profile="tiny")
        fresh.responder = lambda _body: fake.text("Sure, let's play.")
        await turn(rig, memory, "mia", "My name is Mia.")
        fresh.requests.clear()
        await turn(rig, memory, "mia", "can we play a game?")
        prompt = system_of(fresh.requests[0])
        assert "You are talking with Mia." in prompt and "How to address" not in prompt, prompt
        await turn(rig, memory, "mia", "No need to be formal with me.")
        fresh.requests.clear()
        await turn(rig, memory, "mia", "can we play another game?")
        prompt = system_of(fresh.requests[0])
        assert "How to address the person you are talking with: casually" in prompt, prompt
        assert "call them" not in prompt and prompt.count("Mia") == prompt.count("You are talking with Mia."), prompt
        await rig.close()

    run(scenario())


def test_a_bad_examples_file_names_the_file_the_key_and_the_line(tmp_path):
    path = tmp_path / "voice_examples.yaml"
    path.write_text("examples:\n  - scene: morning\n    relation: owner\n    lines: [hi]\n  - scene: disco\n")
    with pytest.raises(StyleError) as error:
        StyleTable.load(path)
    message = str(error.value)
    assert str(path) in message and "examples[1].scene" in message and "line 5" in message


# -- tone corrections --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "key"),
    [
        ("Please don't sound like customer service.", "tone:no_customer_service"),
        ("别客服腔", "tone:no_customer_service"),
        ("Be more casual.", "tone:casual"),
        ("说话简短点", "tone:brief"),
    ],
)
def test_tone_corrections_are_read_in_english_and_chinese(said, key):
    assert [r.key for r in tone_corrections(said)] == [key]


@pytest.mark.parametrize("said", ["Do I sound like customer service?", "I work in customer service.", "你好"])
def test_questions_and_plain_talk_are_no_corrections(said):
    assert tone_corrections(said) == []


def test_the_policy_confirms_a_tone_rule_only_when_the_owner_said_it():
    rule = tone_corrections("别客服腔")[0]
    request = RememberRequest("alice", rule.content, "observation", tags=list(rule.tags), key=rule.key)
    request.user_confirmed = True
    assert decide_remember(request, ["别客服腔"]).status == "confirmed"
    assert decide_remember(request, ["今天天气不错"]).status == "candidate"


def test_the_owners_tone_correction_is_a_rule_in_the_next_prompts_a_guests_is_not(fresh, tmp_path):
    async def scenario():
        memory = RuledMemory(tmp_path)
        rig = Rig(fresh, memory=memory)
        rig.engine.relation_of = lambda user: {"alice": "owner"}.get(user, "guest")
        answer_all(fresh)
        await turn(rig, memory, "alice", "Please don't sound like customer service.")
        await turn(rig, memory, "visitor", "Be more casual.")
        rules = [m.content for m in await memory.active_rules("alice")]
        assert rules == [tone_corrections("don't sound like customer service")[0].content]
        assert await memory.active_rules("visitor") == [], "a guest's words set no tone"
        await rig.close()
        fresh.requests.clear()
        rig = Rig(fresh, memory=memory)  # a new process: only memory remembers
        rig.engine.relation_of = lambda user: {"alice": "owner"}.get(user, "guest")
        await turn(rig, memory, "alice", "What's for dinner?")
        await turn(rig, memory, "visitor", "What's for dinner?")
        alice_prompt, visitor_prompt = (system_of(r) for r in fresh.requests)
        assert rules[0] in alice_prompt
        assert "customer service" not in visitor_prompt and "casually and warmly" not in visitor_prompt
        await rig.close()

    run(scenario())
