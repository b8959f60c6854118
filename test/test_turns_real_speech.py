"""The real-speech end-of-turn set (test/real_turns.py, test/data/turns/real_speech.json) and
what the end-of-turn model does with it in the recogniser's endpointing (AsrCore) when the
worker is behind the audio and has no early decode to judge."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fay_ros.turns.end_of_turn import TurnSettings
from fay_ros.turns.semantic_turn import SemanticSettings, SemanticTurn
from real_turns import RATE, SET_FILE, frame_rms, load_real_turns
from test_turns_semantic import Said


@pytest.fixture(scope="module")
def turns():
    return {t.id: t for t in load_real_turns()}


def test_the_set_is_whole_clips_cuts_and_pauses_of_real_speech(turns):
    kinds = [t.kind for t in turns.values()]
    assert kinds.count("whole") == 12 and kinds.count("cut") >= 10 and kinds.count("pause") >= 8
    whole = turns["librivox_austen_0920/whole"]
    cut = turns["librivox_austen_0920/cut-after-16"]  # "... still more respectable than"
    assert np.array_equal(cut.audio, whole.audio[: len(cut.audio)]), "a cut is the recording's own start"
    assert not cut.finished and whole.finished
    assert cut.speech_end < whole.speech_end - 0.3


def test_an_inserted_pause_is_the_recordings_background_not_digital_silence(turns):
    whole, paused = turns["librivox_austen_0920/whole"], turns["librivox_austen_0920/pause-after-12"]
    (pause,) = paused.pauses
    assert len(paused.audio) == len(whole.audio) + round(pause * RATE)
    at = int(np.flatnonzero(paused.audio[: len(whole.audio)] != whole.audio)[0])
    added = paused.audio[at : at + round(pause * RATE)]
    floor = np.percentile(frame_rms(whole.audio), 20)
    level = frame_rms(added)
    assert np.all(level > 0), "not digital silence"
    assert np.median(level) <= 2 * floor, (np.median(level), floor)


def test_a_set_entry_that_names_the_wrong_word_is_refused(tmp_path):
    spec = json.loads(SET_FILE.read_text(encoding="utf-8"))
    spec["turns"] = [{"clip": "goforward", "kind": "cut", "after": 2, "word": "backward"}]
    bad = tmp_path / "set.json"
    bad.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="word 2 of goforward is 'forward'"):
        load_real_turns(bad)


def _finals_while_behind(turn, semantic) -> list[float]:
    """Seconds after the turn's last voice at which finals came, every chunk fed as one the
    worker is behind on (no early decode; the final's words are not what is tested)."""
    from fay_ros.hearing.asr_core import AsrCore

    recognizer = Said("Words.")
    core = AsrCore(recognizer, turn=TurnSettings(), semantic=semantic, semantic_settings=SemanticSettings())
    audio = np.concatenate([np.zeros(RATE // 2, np.int16), turn.audio, np.zeros(2 * RATE, np.int16)])
    return [
        (i + 480) / RATE - (0.5 + turn.speech_end)
        for i in range(0, len(audio), 480)
        for e in core.feed(audio[i : i + 480], RATE, i / RATE, behind=True)
        if e.is_final
    ]


def test_behind_the_audio_the_model_still_holds_a_real_sentence_cut_midway_open(turns):
    model, problem = SemanticTurn.load()
    assert model is not None, problem  # installed by `make setup` (scripts/post_setup.d/turns.sh)
    cut = turns["librivox_austen_0930/cut-after-5"]  # "He might even have been"
    alone = _finals_while_behind(cut, None)
    assert alone and alone[0] < 1.0, f"silence alone (700 ms) ends the turn: {alone}"
    held = _finals_while_behind(cut, model)
    assert len(held) == 1 and held[0] >= SemanticSettings().hold_ms / 1000, f"the model held it open: {held}"


def test_behind_the_audio_a_finished_verdict_waits_for_the_words(turns):
    model, problem = SemanticTurn.load()
    assert model is not None, problem
    cut = turns["cards_002/cut-after-3"]  # "four, queen of": the model hears a finished list item
    lead = np.zeros(RATE // 2, np.int16)
    assert model.probability(np.concatenate([lead, cut.audio, np.zeros(RATE // 5, np.int16)])) >= (
        SemanticSettings().finished
    )
    ended = _finals_while_behind(cut, model)
    assert ended and ended[-1] >= TurnSettings().endpoint_ms / 1000, f"ended before the silence endpoint: {ended}"
