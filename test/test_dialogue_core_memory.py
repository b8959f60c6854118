"""The layered profile's core memory in every dialogue LLM call (issue 35): the capable and
tiny flows, each within its token budget from the dialogue settings, safety facts never cut;
against the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

import dialogue_fake_llm as fake
from fay_ros.dialogue import prompts
from fay_ros.dialogue.prompts import CORE_MEMORY_HEAD
from fay_ros.memory.layers import trim_core_memory
from test_dialogue_engine import DictMemory, Rig, run

CORE = "\n".join(
    [
        "Safety (always respect):",
        "- User is allergic to peanuts.",
        "About them:",
        "- User's name is Tom.",
        "Tastes:",
        *(f"- likes thing number {i} very much indeed" for i in range(40)),
    ]
)


class LayeredMemory(DictMemory):
    """A gateway whose memory/profile answers facts and the core memory (the portrait)."""

    async def profile_with_core(self, owner):
        self.calls.append(("profile", owner))
        if owner != "tom":
            return [], ""
        return ["fact:allergy:peanuts=User is allergic to peanuts."], CORE


@pytest.fixture
def fresh(llm):
    llm.reset()
    yield llm
    llm.reset()


def test_trim_keeps_the_safety_block_whole():
    assert trim_core_memory(CORE, 0) == ""
    tiny = trim_core_memory(CORE, 5)
    assert tiny == "Safety (always respect):\n- User is allergic to peanuts."
    some = trim_core_memory(CORE, 60).split("\n")
    assert some[:4] == CORE.split("\n")[:4] and 4 < len(some) < len(CORE.split("\n"))


def test_capable_direct_call_carries_the_core_memory_within_its_budget(fresh):
    async def scenario():
        rig = Rig(fresh, memory=LayeredMemory(), judge=False, core_memory_tokens=60)
        fresh.script(fake.text("Hello Tom."), fake.text("Hello."))
        await rig.engine.run_turn("tom", "hi", "en")
        system = fresh.requests[0]["messages"][0]["content"]
        assert CORE_MEMORY_HEAD in system and "allergic to peanuts" in system and "Tom" in system
        assert "thing number 0 " in system and "thing number 39" not in system  # trimmed to 60 tokens
        await rig.engine.run_turn("ann", "hi", "en")  # another owner: none of tom's
        assert CORE_MEMORY_HEAD not in fresh.requests[1]["messages"][0]["content"]
        assert "peanuts" not in str(fresh.requests[1]["messages"])
        await rig.close()

    run(scenario())


def test_tiny_call_carries_the_safety_lines_even_on_a_tiny_budget(fresh):
    async def scenario():
        rig = Rig(fresh, memory=LayeredMemory(), profile="tiny", core_memory_tiny_tokens=10)
        fresh.script(fake.text("Hello."))
        await rig.engine.run_turn("tom", "tell me a story", "en")
        text = str(fresh.requests[0]["messages"])
        assert "Safety (always respect):\\n- User is allergic to peanuts." in text and "thing number" not in text
        await rig.close()

    run(scenario())


def test_a_safety_fact_is_said_once_in_a_tiny_prompt():
    facts = {"health:allergy:peanut": "User is allergic to peanuts.", "name": "User's name is Tom."}
    core = "Safety (always respect):\n- User is allergic to peanuts.\n- User takes insulin.\nTastes:\n- likes tea"
    volatile = "\n".join(prompts.tiny_volatile([], [], facts, [], "Tom", core))
    head = prompts.tiny_system("You are Fay.", facts, max_fact_lines=0)
    assert "allergic to peanuts" in head and "allergic to peanuts" not in volatile
    # a safety line the head does not state (no safety key) stays, under its heading
    assert "Safety (always respect):\n- Tom takes insulin.\nTastes:" in volatile  # (named as the head names him)
    only_known = "Safety (always respect):\n- User is allergic to peanuts.\nTastes:\n- likes tea"
    assert "Safety" not in "\n".join(prompts.tiny_volatile([], [], facts, [], "Tom", only_known))


def test_a_safety_fact_said_in_chinese_reaches_the_english_tiny_prompt_in_english():
    facts = {"health:allergy:peanut": "用户对花生过敏。", "health:condition:diabetes": "用户有糖尿病。"}
    head = prompts.tiny_system("You are Fay.", facts, max_fact_lines=0)
    assert "User is allergic to peanuts." in head and "User has diabetes." in head and "花生" not in head
    # a thing the tables do not know stays as it was said
    assert "用户对猫毛过敏。" in prompts.tiny_system("You are Fay.", {"health:allergy:猫毛": "用户对猫毛过敏。"}, 0)
