"""The people file (dialogue.people), the speaker tracker and the room's speak decisions
(dialogue.room): pure cores, no ROS."""

from __future__ import annotations

import asyncio
import random
import textwrap

import pytest

from fay_ros.common.paths import config_file
from fay_ros.dialogue.engine import DialogueEngine
from fay_ros.dialogue.people import GUEST, OWNER, USER, People, PeopleFileError, SpeakerTracker
from fay_ros.dialogue.persona import Persona
from fay_ros.dialogue.room import CHIME_IN, DIRECT, IGNORE, Room
from fay_ros.dialogue.toolbox import builtin_tools
from fay_ros.dialogue.tools import ToolContext, ToolError, base_tools
from harness import REPO

HOUSEHOLD = (REPO / "test" / "data" / "household_people.yaml").read_text(encoding="utf-8") + textwrap.dedent(
    """\
    speaking:
      chime_in_chance: 0.5
      cooldown: 30
    """
)
CONFIGURED = ("current_time", "memory_recall", "memory_remember", "reminder_add", "reminder_list")


def people(tmp_path, text: str = HOUSEHOLD) -> People:
    path = tmp_path / "people.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return People.load(path)


def test_the_shipped_file_makes_the_single_user_the_owner():
    shipped = People.load(config_file("people.yaml"))
    assert shipped.role_of("user") == OWNER
    assert shipped.role_of("someone_with_a_token") == USER
    assert shipped.role_of("") == GUEST
    assert shipped.tool_names("", CONFIGURED) == ("current_time",)  # knowledge_search is not configured here
    assert shipped.tool_names("user", CONFIGURED) == CONFIGURED
    # no placeholder name: "what's my name?" is theirs to tell ("Friend" was said as their name)
    assert shipped.find("user") is not None and shipped.find("user").name == ""
    engine = DialogueEngine(Persona(), None, lambda _piece: None, tools=builtin_tools())
    engine.people = shipped
    assert "name" not in engine._with_person("user", {})
    assert engine._with_person("user", {"name": "User's name is Ada."}) == {"name": "User's name is Ada."}


def test_a_name_in_the_people_file_is_the_persons_until_they_say_another(tmp_path):
    engine = DialogueEngine(Persona(), None, lambda _piece: None, tools=builtin_tools())
    engine.people = people(tmp_path)
    named = engine._with_person("mia", {})
    assert named["name"] == f"User's name is {engine.people.find('mia').name}."
    assert engine._with_person("mia", {"name": "User's name is Mimi."})["name"] == "User's name is Mimi."


def test_persons_roles_and_rep155_ids(tmp_path):
    household = people(tmp_path)
    anna = household.find("anna")
    assert anna is not None and (anna.name, anna.relation, anna.language) == ("Anna", "owner", "en")
    assert household.find("") is None and household.find("stranger") is None
    assert [household.role_of(u) for u in ("anna", "mia", "stranger", "")] == [OWNER, USER, USER, GUEST]
    assert household.by_voice("voice_mia") == "mia" and household.by_voice("voice_x") == ""
    assert household.by_person("person_anna") == "anna" and household.by_person("person_x") == ""


def test_tool_sets_follow_the_role_and_a_scheduled_turn_sets_no_schedule(tmp_path):
    household = people(tmp_path)
    assert household.tool_names("anna", CONFIGURED) == CONFIGURED
    user_tools = ("current_time", "memory_recall", "memory_remember", "reminder_add")
    assert household.tool_names("mia", CONFIGURED) == user_tools
    assert household.tool_names("", CONFIGURED) == ("current_time",)  # knowledge_search is not configured here
    assert household.tool_names("stranger", CONFIGURED) == user_tools
    assert "reminder_add" not in household.tool_names("anna", CONFIGURED, scheduled=True)
    assert household.named_tools() == {"user": list(user_tools), "guest": ["current_time", "knowledge_search"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("people:\n  - id: anna\n    name: Anna\n    role: boss\n", "people[0].role"),
        ("people:\n  - id: anna\n    nmae: Anna\n", "people[0].nmae: unknown key"),
        ("people:\n  - {id: a, name: A, voices: [v1]}\n  - {id: b, name: B, voices: [v1]}\n", "people[1].voices"),
        ("people:\n  - {id: a, name: A}\n  - {id: a, name: B}\n", "people[1].id"),
        ("speaking:\n  chime_in_chance: 2\n", "speaking.chime_in_chance"),
        ("tools:\n  guest: everything\n", "tools.guest"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key_and_line(tmp_path, text, expected):
    with pytest.raises(PeopleFileError) as error:
        people(tmp_path, text)
    message = str(error.value)
    assert "people.yaml" in message and expected in message and "(line " in message, message


def test_the_speaker_is_the_voice_that_spoke_during_the_utterance_and_an_unknown_voice_is_a_guest(tmp_path):
    tracker = SpeakerTracker(people(tmp_path))
    assert tracker.speaker_between(0.0, 1.0) == ""  # nobody has spoken
    tracker.voice_speaking("voice_anna", True, 1.0)
    tracker.voice_speaking("voice_anna", False, 3.0)
    tracker.voice_speaking("voice_mia", True, 2.5)  # Mia starts as Anna ends
    tracker.voice_speaking("voice_mia", False, 6.0)
    assert tracker.speaker_between(1.0, 3.0) == "anna"
    assert tracker.speaker_between(2.5, 6.0) == "mia"
    assert tracker.speaker_between(7.0, 8.0) == ""  # nobody spoke then: not the last speaker
    tracker.voice_speaking("voice_7f3a", True, 10.0)  # still speaking when the utterance ends
    assert tracker.speaker_between(10.0, 11.0) == ""  # a voice nobody is known by
    tracker.person_voice("person_anna", "voice_7f3a")  # the speaker-id node matched it to a person
    assert tracker.speaker_between(10.0, 11.0) == "anna"


# -- the room ---------------------------------------------------------------------------------


def room(tmp_path, seed: int = 7) -> Room:
    return Room(people(tmp_path).speaking, ("Fay",), random.Random(seed))


def test_one_person_is_always_answered(tmp_path):
    r = room(tmp_path)
    decision = r.hear("anna", "What a lovely morning.", 0.0)
    assert (decision.decision, decision.reason, decision.present) == (DIRECT, "only_person", ("anna",))


def test_two_people_talking_to_each_other_are_not_answered_unless_they_name_the_companion(tmp_path):
    r = room(tmp_path)
    r.hear("anna", "Good morning.", 0.0)
    decision = r.hear("mia", "Mum, where are my shoes?", 1.0)
    assert (decision.decision, decision.reason, decision.present) == (IGNORE, "talking_to_each_other", ("anna", "mia"))
    assert [line.text for line in r.overheard(2.0)] == ["Mum, where are my shoes?"]
    assert r.hear("mia", "Fay, where are my shoes?", 3.0).reason == "name"
    assert r.hear("mia", "fay where are they", 4.0).decision == DIRECT  # case and punctuation do not matter
    assert r.hear("anna", "The Fayre is on Sunday.", 5.0).decision == IGNORE  # a word containing the name is not it


def test_an_answer_to_the_companions_question_is_addressed_to_it_within_the_window(tmp_path):
    r = room(tmp_path)
    r.hear("anna", "Hi.", 0.0)
    r.hear("mia", "Fay, hello!", 1.0)
    r.companion_said("mia", "Hello Mia! What did you draw today?", 2.0)
    assert r.hear("anna", "A cat.", 3.0).decision == IGNORE  # asked Mia, not Anna
    assert (r.hear("mia", "A cat.", 4.0).reason) == "reply_to_question"
    assert r.hear("mia", "And a dog.", 5.0).decision == IGNORE  # answered once: no longer a reply
    r.companion_said("mia", "Do you like cats?", 10.0)
    assert r.hear("mia", "Yes.", 10.0 + 21.0).decision == IGNORE  # outside the 20 s window


def test_presence_ends_after_the_window_and_comes_from_the_tracker_too(tmp_path):
    r = room(tmp_path)
    r.hear("anna", "Hi.", 0.0)
    assert r.hear("mia", "Hello there.", 200.0).reason == "only_person"  # Anna left 200 s ago
    r.tracked(("anna", "mia"))
    assert r.hear("mia", "Where is the cat?", 201.0).decision == IGNORE


def test_a_chime_in_needs_a_close_topic_the_chance_and_the_cooldown(tmp_path):
    r = room(tmp_path)
    r.hear("anna", "Fay, which dinosaurs lived in the cretaceous?", 0.0)
    r.companion_said("anna", "Tyrannosaurus and triceratops lived in the cretaceous.", 1.0)
    r.hear("mia", "Hi mum.", 2.0)
    assert r.hear("mia", "Shall we bake a cake?", 3.0).reason == "talking_to_each_other"  # not close
    decisions = [r.hear("mia", "I love the triceratops from the cretaceous.", 10.0 + 5 * i) for i in range(40)]
    chimes = [i for i, d in enumerate(decisions) if d.decision == CHIME_IN]
    assert chimes, [d.reason for d in decisions]
    assert all(d.reason == "topic_close" for d in decisions if d.decision == CHIME_IN)
    # at most one chime-in per 30 s cooldown (each hear is 5 s apart)
    assert all(b - a >= 6 for a, b in zip(chimes, chimes[1:])), chimes
    assert any(d.reason == "cooldown" for d in decisions)


def test_the_chance_decides_with_an_injected_seed(tmp_path):
    def run(seed: int) -> list[str]:
        r = room(tmp_path, seed)
        r.hear("anna", "Fay, tell me about volcanoes.", 0.0)
        r.companion_said("anna", "Volcanoes erupt lava and ash.", 1.0)
        r.tracked(("anna", "mia"))  # both stay present (a REP-155 tracker sees them)
        return [r.hear("mia", "volcanoes erupt lava", 100.0 * (i + 1)).decision for i in range(12)]

    assert run(1) == run(1)  # the same seed, the same decisions
    assert run(1) != run(2)
    assert set(run(1)) == {CHIME_IN, IGNORE}


def test_a_tool_outside_the_speakers_set_is_refused_when_it_runs():
    registry = base_tools()
    guest = ToolContext("", "what does the owner like?", allowed_tools=("current_time",))
    assert asyncio.run(registry.run("current_time", {}, guest))
    with pytest.raises(ToolError, match="not allowed for this speaker"):
        asyncio.run(registry.run("memory_recall", {"query": "likes"}, guest))


def test_the_engine_gives_each_turn_its_speakers_tools(tmp_path):
    engine = DialogueEngine(Persona(), None, lambda _piece: None, tools=builtin_tools())
    assert engine.tools_for("") is None  # no people file: no limit
    engine.people = people(tmp_path)
    registered = tuple(engine.tools.names())
    assert engine.tools_for("anna") == registered
    assert engine.tools_for("anna", scheduled=True) == tuple(t for t in registered if t != "reminder_add")
    assert engine.tools_for("mia") == ("current_time", "memory_recall", "memory_remember", "reminder_add")
    assert engine.tools_for("") == ("current_time", "knowledge_search")  # harmless: shared documents
