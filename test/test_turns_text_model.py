"""The text turn model (fay_ros.turns.text_turn, issue 38): the embedded SmolLM2-135M asked
whether the words so far end the sentence; what it does in the recogniser's endpointing
(AsrCore, real Whisper) with a real recording that pauses mid-sentence; and the asr node that
loads it, says so on /diagnostics and reports its verdict with a held turn."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fay_ros.llm.embedded import default_model_path
from fay_ros.turns.end_of_turn import COMPLETE, INCOMPLETE, UNKNOWN, TurnJudgement, TurnSettings
from fay_ros.turns.text_turn import (
    PROMPT_HEAD,
    ROBOT_WORDS_CHARS,
    RobotWords,
    TextTurn,
    TextTurnSettings,
    judged_by_words,
    normalise,
    prompt_head,
)
from real_turns import RATE, load_real_turns
from test_turns_semantic import _feed

PAUSED = "librivox_austen_0930/pause-after-6"  # "He might even have been made [0.6 s] amiable himself."


@pytest.fixture(scope="module")
def model() -> TextTurn:
    loaded, why = TextTurn.load(default_model_path())
    assert loaded is not None, why
    return loaded


@pytest.fixture(scope="module")
def turns():
    return {t.id: t for t in load_real_turns()}


@pytest.fixture(scope="module")
def paused(turns):
    return turns[PAUSED]


def test_the_words_are_asked_about_without_case_or_punctuation():
    assert normalise("He might have been made.") == "he might have been made"
    assert normalise("Go forward 10 meters!") == "go forward 10 meters"
    assert normalise("Cold-hearted, isn't it?") == "cold-hearted isn't it"
    assert normalise(" ... ") == ""


# Said to a companion; the second of each pair stops where the speaker would go on.
FINISHED_AND_OPEN = [
    ("Can you tell me what time it is?", "Can you tell me what"),
    ("Please put the kettle on.", "Please put the"),
    ("My daughter is coming to visit on Sunday.", "My daughter is coming to visit on"),
    ("Remind me to take my pills at eight.", "Remind me to take my"),
    ("I had a very long day at work today.", "I had a very long day at"),
    ("What is the weather like tomorrow?", "What is the weather like"),
    ("Turn off the lights in the kitchen.", "Turn off the lights in the"),
]


@pytest.mark.parametrize("finished, stopped", FINISHED_AND_OPEN, ids=[f for f, _ in FINISHED_AND_OPEN])
def test_a_sentence_stopped_midway_is_unfinished_and_the_whole_one_is_not(model, finished, stopped):
    settings = TextTurnSettings()
    whole, cut = model.probability(finished), model.probability(stopped)
    assert cut < settings.unfinished, (stopped, cut)
    assert whole >= settings.unfinished and whole > 10 * cut, (finished, whole, cut)


# The robot asked; the person answers in a few words, or stops where they would go on.
ASKED = json.loads((Path(__file__).parent / "data" / "turns" / "robot_asked.json").read_text(encoding="utf-8"))
ANSWERS = [tuple(triple) for triple in ASKED["answers"]]


@pytest.mark.parametrize("asked, answer, stopped", ANSWERS, ids=[a for _, a, _ in ANSWERS])
def test_after_the_robot_s_question_a_short_answer_is_finished_and_a_fragment_is_not(model, asked, answer, stopped):
    """Alone, most of these answers are no sentence ("emma" 0.017: held as a thinking pause);
    read as the answer to the robot's question they are finished, and the fragment stays open."""
    settings = TextTurnSettings()
    assert model.probability(answer, asked) >= settings.finished, (asked, answer)
    assert model.probability(stopped, asked) < settings.unfinished, (asked, stopped)


def test_the_robot_s_words_decide_only_what_the_words_alone_leave_open(model):
    """An unsure short answer ends the turn after the robot's question; a hold stands on the
    words alone, since the tiny model also reads a speaker's fragment as an answer."""
    turn, settings = TurnSettings(), TextTurnSettings()
    complete = TurnJudgement(COMPLETE, UNKNOWN, turn.complete_ms)
    alone = judged_by_words(complete, model, settings, "Ten of clubs.", "en", turn)
    assert alone.wait_ms > turn.complete_ms and settings.unfinished <= alone.text_p < settings.finished, alone
    answer = judged_by_words(complete, model, settings, "Ten of clubs.", "en", turn, "Which card did you draw?")
    assert answer.wait_ms == turn.complete_ms and answer.text_p >= settings.finished, answer

    fragment, asked = "And so my fellow Americans ask not", "Do you know a famous line from a speech?"
    assert model.probability(fragment, asked) >= settings.unfinished, "the premise: the answer reading lets it go"
    held = judged_by_words(complete, model, settings, fragment, "en", turn, asked)
    assert held.wait_ms == turn.patience_ms and held.text_p < settings.unfinished, held
    sure = "How are you today?"  # finished alone: not read again (no second call)
    assert model.verdict(sure, settings, "Hello! I am Fay.") == model.probability(sure) >= settings.finished
    words_alone = TextTurnSettings(reads_reply=False)
    assert judged_by_words(complete, model, words_alone, "Ten of clubs.", "en", turn, "Which card did you draw?") == (
        judged_by_words(complete, model, words_alone, "Ten of clubs.", "en", turn)
    )


# Whole questions the model takes for unfinished: without punctuation they continue in its data.
QUESTIONS_IT_WOULD_HOLD = ["Can you help me?", "What can you do?", "Can you tell me a joke?"]


@pytest.mark.parametrize("question", QUESTIONS_IT_WOULD_HOLD)
def test_a_question_the_rules_find_complete_is_not_held_by_the_model(model, question):
    """Whisper writes a question mark after questions (nearly only); the model, which reads the
    words without it, would hold these for `patience_ms`. The rules' complete wait stands, and a
    question left open before its mark ("Can you, um?", "Could you play the?") is still the
    rules' to hold."""
    turn, settings = TurnSettings(), TextTurnSettings()
    assert model.probability(question) < settings.unfinished, "the premise: the model would hold it"
    complete = TurnJudgement(COMPLETE, UNKNOWN, turn.complete_ms)
    judged = judged_by_words(complete, model, settings, question, "en", turn)
    assert judged == complete, judged
    statement = question.rstrip("?") + "."  # the same words with a full stop: the model is asked
    assert judged_by_words(complete, model, settings, statement, "en", turn).wait_ms == turn.patience_ms
    assert not settings.asks(INCOMPLETE, "en", "Can you, um?")


def test_the_robot_s_words_come_before_the_person_s_as_the_assistant_s_message():
    assert prompt_head("") == prompt_head("  \n ") == PROMPT_HEAD
    head = prompt_head("Hello Anna!\n  Which card  did you draw?")
    assert head.endswith("<|im_start|>assistant\nHello Anna! Which card did you draw?<|im_end|>\n<|im_start|>user\n")
    assert head.startswith(PROMPT_HEAD.split("<|im_start|>user")[0])
    long_reply = " ".join(f"word{i}" for i in range(100)) + " What do you think?"
    said = prompt_head(long_reply).split("assistant\n")[1].split("<|im_end|>")[0]
    assert said.endswith("What do you think?") and len(said) <= ROBOT_WORDS_CHARS
    assert said.startswith("word") and said in long_reply, "cut at a word's start"


def test_the_robot_s_words_are_its_last_reply_sentence_by_sentence():
    words = RobotWords()
    assert words.heard("r1", "Hello Anna.", first=True) == "Hello Anna."
    assert words.heard("r1", " Which card did you draw? ", first=False) == "Hello Anna. Which card did you draw?"
    assert words.heard("r1", "", first=False) == "Hello Anna. Which card did you draw?"  # a closing marker
    assert words.heard("r2", "Nice!", first=False) == "Nice!", "another reply starts over"
    assert words.heard("r2", "Again?", first=True) == "Again?", "so does a first sentence"


def test_the_robot_s_words_are_read_once_before_the_person_speaks(model):
    """Priming computes the prompt up to the person's words; the verdict is the same."""
    asked = "Hello again! It has been a while. What would you like to drink this afternoon?"
    assert model.prime(asked)
    assert model.probability("a cup of tea please", asked) == pytest.approx(
        TextTurn.load(model.path)[0].probability("a cup of tea please", asked), abs=1e-4
    )
    assert not TextTurn(server=object(), path=Path("broken.gguf")).prime(asked), "a failed call is no error"


def test_a_full_stop_after_a_fragment_does_not_end_it(model):
    """Whisper writes one after a fragment too: the words decide, not the recogniser's stop."""
    with_stop = model.probability("He might even have been made.")
    assert with_stop == model.probability("he might even have been made")
    assert with_stop < TextTurnSettings().unfinished
    assert model.probability("He might even have been made amiable himself.") >= TextTurnSettings().finished


def test_no_words_or_a_failing_model_give_no_opinion(model):
    assert math.isnan(model.probability(""))
    assert math.isnan(model.probability("?!"))
    broken = TextTurn(server=object(), path=Path("broken.gguf"))  # no handle_completions: the call fails
    assert math.isnan(broken.probability("hello there"))


def test_a_missing_or_unusable_model_file_is_named(tmp_path):
    model, why = TextTurn.load("/no/such/model.gguf")
    assert model is None and why == "text turn model not found: /no/such/model.gguf"
    junk = tmp_path / "junk.gguf"
    junk.write_text("not a model\n")
    model, why = TextTurn.load(junk)
    assert model is None and why.startswith(f"text turn model unusable ({junk})"), why


def test_the_verdict_moves_the_rules_wait():
    turn, settings = TurnSettings(), TextTurnSettings(finished=0.1, unfinished=0.02)
    assert settings.wait_ms(turn.endpoint_ms, 0.3, turn) == turn.complete_ms  # finished: ends at once
    assert settings.wait_ms(turn.complete_ms, 0.005, turn) == turn.patience_ms  # "made." held
    # unsure: between the two, by where p lies between the thresholds (log scale), at least the rules'
    halfway = (turn.patience_ms + turn.complete_ms) / 2
    assert abs(settings.wait_ms(turn.complete_ms, (0.02 * 0.1) ** 0.5, turn) - halfway) <= 1
    assert settings.wait_ms(turn.complete_ms, 0.021, turn) > 1400, "barely over `unfinished`: nearly held"
    assert settings.wait_ms(turn.complete_ms, 0.095, turn) < 200, "nearly `finished`: nearly at once"
    assert settings.wait_ms(turn.patience_ms, 0.05, turn) == turn.patience_ms
    assert TextTurnSettings(finished=0.1, unfinished=0.0).wait_ms(turn.prosody_ms, 0.05, turn) == turn.prosody_ms
    assert settings.wait_ms(turn.endpoint_ms, float("nan"), turn) == turn.endpoint_ms
    assert settings.asks(COMPLETE, "en") and settings.asks(UNKNOWN, "en-US")
    assert not settings.asks(INCOMPLETE, "en"), "words left open keep their patience"
    assert not settings.asks(COMPLETE, "zh"), "the embedded model reads English only"
    assert not TextTurnSettings(enabled=False).asks(COMPLETE, "en")


@pytest.mark.parametrize(
    "settings, says",
    [
        (TextTurnSettings(finished=0.1, unfinished=0.5), "need 0 <= unfinished (0.5) <= finished (0.1) <= 1"),
        (TextTurnSettings(languages=()), "languages must be language codes"),
        (TextTurnSettings(languages=(" ",)), "languages must be language codes"),
    ],
)
def test_settings_out_of_range_are_refused(settings, says):
    with pytest.raises(ValueError, match=f"text turn: {says.replace('(', '[(]').replace(')', '[)]')}"):
        settings.validate()


def test_the_judgement_is_left_alone_when_the_model_is_not_asked(model):
    turn = TurnSettings()
    judged = TurnJudgement(INCOMPLETE, UNKNOWN, turn.patience_ms)
    assert judged_by_words(judged, model, TextTurnSettings(), "I went to the market and", "en", turn) == judged
    complete = TurnJudgement(COMPLETE, UNKNOWN, turn.complete_ms)
    assert judged_by_words(complete, None, TextTurnSettings(), "Made.", "en", turn) == complete
    assert judged_by_words(complete, model, None, "Made.", "en", turn) == complete
    held = judged_by_words(complete, model, TextTurnSettings(), "He might even have been made.", "en", turn)
    assert held.wait_ms == turn.patience_ms and held.text_p is not None and held.text_p < 0.02


def _finals(core, audio: np.ndarray) -> list[str]:
    return [
        e.text for i in range(0, len(audio), 480) for e in core.feed(audio[i : i + 480], RATE, i / RATE) if e.is_final
    ]


def test_a_real_thinking_pause_after_a_fragment_holds_the_turn(model, paused):
    """The rules end "He might even have been made." at its full stop; the model hears that
    the sentence goes on, and the one final has both halves."""
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.whisper_backend import WhisperRecognizer

    recognizer = WhisperRecognizer(language="en")
    audio = paused.in_room(0.5, 2.0)
    rules = _finals(AsrCore(recognizer, turn=TurnSettings()), audio)
    # (the recording's looped background may be heard as a word afterwards: only the first final counts)
    assert rules and "made" in rules[0].lower() and "himself" not in rules[0].lower(), rules  # the premise
    words = _finals(
        AsrCore(recognizer, turn=TurnSettings(), text_turn=model, text_turn_settings=TextTurnSettings()), audio
    )
    assert words and "made" in words[0].lower() and "himself" in words[0].lower(), words


def test_a_real_short_answer_to_the_robot_s_question_ends_the_turn_without_a_hold(model, turns):
    """ "Ten of clubs." (a real recording in its own room) alone is no sentence to the model (p
    about 0.03: the turn is held past the endpoint); as the answer to "Which card did you draw?"
    it is finished, and the one final comes without the hold. A question asked a minute before
    the voice began is not what it answers (ROBOT_WORDS_FRESH_S), unless the robot's voice
    ended just before."""
    from fay_ros.hearing.asr_core import ROBOT_WORDS_FRESH_S, AsrCore
    from fay_ros.hearing.whisper_backend import WhisperRecognizer

    recognizer = WhisperRecognizer(language="en")
    audio = turns["cards_001/whole"].in_room(0.5, 2.5)  # (the voice begins 0.5 s in)

    def heard(robot_words: str, said_at: float = 0.0, voice_ended_at: float | None = None) -> tuple[list, list[str]]:
        core = AsrCore(recognizer, turn=TurnSettings(), text_turn=model, text_turn_settings=TextTurnSettings())
        core.robot_said(robot_words, said_at)
        if voice_ended_at is not None:
            core.robot_finished_speaking(voice_ended_at)
        holds: list = []
        core.on_hold = holds.append
        return holds, _finals(core, audio)

    question = "Hello! Which card did you draw?"
    held_alone = [True]
    holds, finals = heard("")
    assert [h.text_p < TextTurnSettings().finished for h in holds] == held_alone, holds  # the premise
    assert len(finals) == 1 and "clubs" in finals[0].lower(), finals
    holds, finals = heard(question)
    assert holds == [] and len(finals) == 1 and "clubs" in finals[0].lower(), (holds, finals)
    long_ago = -2 * ROBOT_WORDS_FRESH_S
    holds, finals = heard(question, said_at=long_ago)
    assert [h.text_p < TextTurnSettings().finished for h in holds] == held_alone, holds
    assert len(finals) == 1 and "clubs" in finals[0].lower(), finals
    holds, finals = heard(question, said_at=long_ago, voice_ended_at=-1.0)  # a long reply, just said
    assert holds == [] and len(finals) == 1 and "clubs" in finals[0].lower(), (holds, finals)


def test_a_hold_by_the_words_is_not_ended_by_the_sound_of_the_voice(model, turns):
    """ "And Mr. John Dashwood had then leisure to consider … [0.9 s] … how much": smart-turn
    hears a finished voice in the pause (p 0.97), the text model an unfinished sentence; with
    both on, the words' hold stands."""
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.whisper_backend import WhisperRecognizer
    from fay_ros.turns.semantic_turn import SemanticSettings, SemanticTurn

    semantic, why = SemanticTurn.load()
    assert semantic is not None, why
    turn = turns["librivox_austen_0870/pause-after-9"]
    recognizer = WhisperRecognizer(language="en")
    audio = turn.in_room(0.5, 2.0)

    def first_final(**models) -> str:
        core = AsrCore(recognizer, turn=TurnSettings(), semantic_settings=SemanticSettings(), **models)
        finals = _finals(core, audio)
        assert finals, "no final"
        return finals[0].lower()

    assert "much" not in first_final(semantic=semantic), "the premise: smart-turn ends the turn in the pause"
    both = first_final(semantic=semantic, text_turn=model, text_turn_settings=TextTurnSettings())
    assert "consider" in both and "them" in both, both


@pytest.mark.slow
@pytest.mark.parametrize(
    "text_turn_model, level, says",
    [
        ("", "OK", "on (SmolLM2-135M-Instruct.Q4_1.gguf)"),
        ("/no/such/model.gguf", "WARN", "unavailable, rules alone: text turn model not found"),
    ],
    ids=["loaded", "missing"],
)
def test_the_asr_node_says_whether_the_text_model_takes_part_and_reports_its_hold(
    ros, launch_node, turns, paused, text_turn_model, level, says
):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.qos import QoSProfile

    from fay_msgs.msg import Transcript
    from fay_ros.common import topics

    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    decisions = ros.collect(DiagnosticStatus, topics.SPEECH_DECISIONS)
    params = {"language": "en", "text_turn": True, **({"text_turn_model": text_turn_model} if text_turn_model else {})}
    asr = launch_node("fay_ros.nodes.asr", params)
    asr.wait_ready(timeout=90, probe=ros)
    status = diagnostics.wait_for_match(
        lambda a: any(s.name == "fay/asr: text turn" for s in a.status), timeout=30, what="the text turn status"
    )
    found = next(s for s in status.status if s.name == "fay/asr: text turn")
    assert found.level == getattr(DiagnosticStatus, level) and found.message.startswith(says), found.message
    for collector in (finals, decisions):
        ros.wait_matched(collector, "asr")
    # Ordered by the audio, not by time (as in test_turns_real_recording): up to 0.45 s into the
    # thinking pause first; the asr judges the words once it has caught up with that audio.
    whole = turns[PAUSED.split("/")[0] + "/whole"]
    pause_at = int(np.flatnonzero(paused.audio[: len(whole.audio)] != whole.audio)[0])
    into_pause = pause_at + int(0.45 * RATE)
    _feed(ros, np.concatenate([paused.background(1.0), paused.audio[:into_pause]]))
    if level == "OK":
        held = decisions.wait_for_match(
            lambda m: m.message == "turn held open", timeout=60, what="the turn held open in the pause"
        )
        values = {kv.key: kv.value for kv in held.values}
        # the model held it: the words alone did not ("... been made." or "... have been")
        assert float(values["text_p"]) < 0.02 and values["text_cue"] != "incomplete", values
        assert not finals.messages, [m.text for m in finals.messages]
    # then digital silence, as bench_turns pads the real clips: this recording's looped background
    # has frames the WebRTC VAD takes for voice, so an asr behind the audio (a loaded machine)
    # skips the early decode and would keep the utterance open until more audio came
    _feed(ros, np.concatenate([paused.audio[into_pause:], paused.background(0.5), np.zeros(2 * RATE, np.int16)]))
    if level == "OK":
        final = finals.wait_for_match(
            lambda m: "himself" in m.text.lower(), timeout=90, what="the final of the sentence"
        )
        assert "made" in final.text.lower() and final is finals.messages[0], [m.text for m in finals.messages]
        refused = ros.set_parameters("asr", text_turn_unfinished=0.9)
        assert not refused[0].successful and "unfinished" in refused[0].reason, refused
    else:
        # The rules alone may end the turn in the pause (what the model is for); then the rest,
        # two words Whisper base hears differently by where the utterance was cut ("The Amiable
        # Himself.", "Daniel Bulim Self."), is a final of its own: the asr still hears it to its end.
        heard = finals.wait_for(
            lambda msgs: (lambda text: text if "self" in text else None)(" ".join(m.text.lower() for m in msgs)),
            timeout=90,
            what="finals up to the sentence's last word",
        )
        assert "might" in heard, heard  # (its first part: "made" has come back as "maids")
    assert asr.alive() and "Traceback" not in asr.output()


@pytest.mark.slow
def test_the_asr_node_reads_the_person_s_answer_after_the_robot_s_reply(ros, launch_node, turns):
    """The asr takes the robot's words from `reply`: the same real "Ten of clubs." that it holds
    open alone (a thinking pause, to the model) ends as soon as its short silence has passed once
    the robot has asked "Which card did you draw?"."""
    from diagnostic_msgs.msg import DiagnosticStatus
    from rclpy.duration import Duration

    from fay_msgs.msg import Transcript, Utterance
    from fay_ros.common import qos, topics

    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    decisions = ros.collect(DiagnosticStatus, topics.SPEECH_DECISIONS)
    asr = launch_node("fay_ros.nodes.asr", {"language": "en", "text_turn": True})
    asr.wait_ready(timeout=90, probe=ros)
    for collector in (finals, decisions):
        ros.wait_matched(collector, "asr")
    answer = turns["cards_001/whole"]
    # the voice with 0.3 s of its room after the recording's own 0.4 s: the short wait of a
    # finished turn (150 ms) has passed, the hold of an unsure one (over 1 s) has not
    said = np.concatenate([answer.background(1.0), answer.audio, answer.background(0.3)])
    rest = np.concatenate([answer.background(0.5), np.zeros(2 * RATE, np.int16)])

    _feed(ros, said)  # (no reply yet)
    held = decisions.wait_for_match(lambda m: m.message == "turn held open", timeout=60, what="the hold")
    assert float({kv.key: kv.value for kv in held.values}["text_p"]) < TextTurnSettings().finished
    assert not finals.messages, [m.text for m in finals.messages]
    _feed(ros, rest)
    finals.wait_for(lambda msgs: len(msgs) == 1, timeout=60, what="the first answer's final")

    reply = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    ros.wait_subscribed(reply, "asr")
    reply.publish(Utterance(conversation_id="r1", seq=0, is_first=True, is_end=True, text="Which card did you draw?"))
    # The robot's words must reach the asr before the answer's audio does: DDS orders nothing
    # across publishers, and an asr whose side of the match came late gets the question resent
    # after the audio (a CI run heard the answer alone, held it open and never ended it).
    assert reply.wait_for_all_acked(Duration(seconds=30)), "the robot's reply not acknowledged within 30 s"
    _feed(ros, said)  # the same audio, without the rest: it ends the turn now
    final = finals.wait_for(lambda msgs: msgs[1] if len(msgs) > 1 else None, timeout=60, what="the answer's final")
    # ("clubs", or Whisper's "clothes"; "10" where the int8 decoder runs without VNNI)
    assert final.text.lower().startswith(("ten of", "10 of")), final.text
    assert [m.message for m in decisions.messages].count("turn held open") == 1, [m.message for m in decisions.messages]

    assert ros.set_parameters("asr", text_turn_reply=False)[0].successful  # the words alone again
    _feed(ros, said)
    decisions.wait_for(
        lambda msgs: [m.message for m in msgs].count("turn held open") == 2, timeout=60, what="the hold again"
    )
    assert len(finals.messages) == 2, [m.text for m in finals.messages]
    assert asr.alive() and "Traceback" not in asr.output()


class _CountingServer:
    """The loaded model's llama.cpp server, with the requests that reach it."""

    def __init__(self, server) -> None:
        self.server, self.requests = server, []

    def handle_completions(self, request: dict) -> dict:
        self.requests.append(request)
        return self.server.handle_completions(request)


def test_words_held_open_are_read_ahead_and_the_same_words_are_not_asked_twice(model):
    counting = _CountingServer(model._server)
    spy = TextTurn(counting, model.path)
    turn, settings = TurnSettings(), TextTurnSettings()
    held = TurnJudgement(INCOMPLETE, UNKNOWN, turn.patience_ms)
    so_far = "He might even have been made amiable himself, and"
    assert judged_by_words(held, spy, settings, so_far, "en", turn) == held, "the rules keep it open"
    (ahead,) = counting.requests
    assert ahead["n_predict"] == 0 and ahead["prompt"].endswith(normalise(so_far)), ahead
    whole = "He might even have been made amiable himself and his wife."
    p = spy.probability(whole)
    assert p == pytest.approx(TextTurn.load(model.path)[0].probability(whole), abs=1e-4), "read ahead: same verdict"
    assert spy.probability(whole.upper()) == p and len(counting.requests) == 2, "the same words come from memory"
    assert not math.isnan(spy.probability(whole, "Tell me about him."))
    assert len(counting.requests) == 3, "after the robot's words it is another question"
    judged_by_words(held, spy, settings, "我想去", "zh", turn)
    assert len(counting.requests) == 3, "words of a language the model does not read are not computed"
    assert not spy.read_ahead("?!") and len(counting.requests) == 3
    assert not TextTurn(server=object(), path=Path("broken.gguf")).read_ahead(so_far), "a failed call is no error"
