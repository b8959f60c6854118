"""End-of-turn cues (fay_ros.hearing.turn): the transcript's completeness in English and
Chinese, prosody from the audio, and the silence each combination waits."""
from __future__ import annotations

import numpy as np
import pytest

from fay_ros.hearing.turn import (COMPLETE, CONTINUING, FINAL, INCOMPLETE, UNKNOWN, Prosody, TurnSettings, judge,
                                  prosody_cue, prosody_features, text_cue)

RATE = 16000


@pytest.mark.parametrize("text, cue", [
    ("What time is it now?", COMPLETE),
    ("Please turn on the light in the kitchen.", COMPLETE),
    ("I want to", INCOMPLETE),
    ("I want to.", INCOMPLETE),          # Whisper puts a full stop after a fragment too
    ("I went to the market and...", INCOMPLETE),
    ("Can you remind me, um", INCOMPLETE),
    ("Could you play the", INCOMPLETE),
    ("Yesterday I met my sister,", INCOMPLETE),
    ("I called out sleep because the neighbors were loud", UNKNOWN),
    ("What can you do?", COMPLETE),      # a question ends on an auxiliary, a pronoun ...
    ("Where are you from?", COMPLETE),   # ... or a preposition
    ("Yes, I do.", COMPLETE),
    ("Thank you.", COMPLETE),
    ("I want", INCOMPLETE),
    ("Can you, um?", INCOMPLETE),
    ("We could go to the park or.", INCOMPLETE),
    ("How dare you", INCOMPLETE),        # no punctuation: a pronoun may still go on
    ("I would like a", INCOMPLETE),
    ("I saw a.", INCOMPLETE),
    ("Goodnight, A.", COMPLETE),          # a capital A inside a sentence is the letter (a misheard name) ...
    ("God I T A", UNKNOWN),
    ("Yes. A", INCOMPLETE),               # ... but the article when it starts a sentence
    ("A", INCOMPLETE),
    ("", UNKNOWN),
    ("现在几点了？", COMPLETE),
    ("我有点累了", COMPLETE),             # a closing particle without punctuation
    ("你会唱歌吗", COMPLETE),
    ("这是我妈妈的", INCOMPLETE),
    ("我今天去了公园，然后", INCOMPLETE),
    ("我想听，嗯", INCOMPLETE),
    ("我想听，", INCOMPLETE),
    ("明天早上提醒我给妈妈打电话", UNKNOWN),
])
def test_text_cue(text, cue):
    assert text_cue(text) == cue


def test_waits_by_cue_and_thresholds_must_rise():
    s = TurnSettings()
    assert s.wait_ms(COMPLETE, UNKNOWN) == s.complete_ms < s.wait_ms(UNKNOWN, FINAL) == s.prosody_ms
    assert s.wait_ms(COMPLETE, CONTINUING) == s.wait_ms(UNKNOWN, UNKNOWN) == s.endpoint_ms
    assert s.wait_ms(INCOMPLETE, FINAL) == s.patience_ms > s.endpoint_ms
    with pytest.raises(ValueError, match="turn silences must rise"):
        TurnSettings(complete_ms=800).validate()
    with pytest.raises(ValueError, match="turn silences must rise"):
        TurnSettings(patience_ms=500).validate()


def _glide(f_start: float, f_end: float, seconds: float = 0.3, fade_db: float = 0.0) -> np.ndarray:
    """A voiced-like tone (fundamental + harmonics) gliding in pitch, optionally fading out."""
    t = np.arange(int(seconds * RATE)) / RATE
    f = np.linspace(f_start, f_end, len(t))
    phase = 2 * np.pi * np.cumsum(f) / RATE
    wave = sum(np.sin(k * phase) / k for k in (1, 2, 3))
    gain = 10 ** (-np.linspace(0, fade_db, len(t)) / 20)
    return (wave * gain * 8000).astype(np.int16)


def test_prosody_hears_a_fall_a_rise_and_a_fade():
    s = TurnSettings()
    falling = prosody_features(_glide(220, 120), RATE)
    rising = prosody_features(_glide(120, 220), RATE)
    level = prosody_features(_glide(150, 150), RATE)
    assert falling.pitch_change_st <= -s.fall_semitones and prosody_cue(falling, s) == FINAL
    assert rising.pitch_change_st >= s.rise_semitones and prosody_cue(rising, s) == CONTINUING
    assert abs(level.pitch_change_st) < 0.5 and prosody_cue(level, s) == UNKNOWN
    fading = prosody_features(_glide(150, 150, fade_db=30), RATE)
    assert fading.energy_decay_db >= s.decay_db and prosody_cue(fading, s) == FINAL
    assert prosody_cue(Prosody(float("nan"), 0.0), s) == UNKNOWN   # too little voice to tell


def test_a_question_is_complete_whatever_its_final_rise():
    rising = _glide(120, 220)
    assert judge("Do you remember my name?", rising, RATE, TurnSettings()).wait_ms == TurnSettings().complete_ms
    assert judge("Yesterday I met my sister.", rising, RATE, TurnSettings()).wait_ms == TurnSettings().endpoint_ms
    assert judge("I want to", rising, RATE, TurnSettings()).wait_ms == TurnSettings().patience_ms


class ScriptedRecognizer:
    """A recogniser that 'hears' the texts it is given, one per early decode (peek)."""
    sample_rate = RATE
    streaming = False
    language = "en"

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.peeks = 0

    def start(self) -> None:
        pass

    def accept(self, samples) -> str:
        return ""

    def peek(self):
        from fay_ros.hearing.types import Recognition
        text = self.texts[min(self.peeks, len(self.texts) - 1)]
        self.peeks += 1
        return Recognition(text, "en", 0.9)

    def finish(self):
        from fay_ros.hearing.types import Recognition
        return Recognition(self.texts[-1], "en", 0.9)


def _said(text: str) -> np.ndarray:
    from synthetic_speech import speak
    samples = speak(text, "en-us")
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > 300)
    return samples[loud[0]:loud[-1] + 1]


def _events(core, audio: np.ndarray) -> list:
    return [e for i in range(0, len(audio), 480) for e in core.feed(audio[i:i + 480], RATE, i / RATE)]


def test_a_turn_judged_complete_is_sent_ahead_and_its_final_says_the_same():
    from fay_ros.hearing.asr_core import AsrCore
    from synthetic_speech import silence

    core = AsrCore(ScriptedRecognizer(["Turn on the light in the kitchen."]), turn=TurnSettings())
    events = _events(core, np.concatenate([silence(0.4), _said("Turn on the light in the kitchen."), silence(1.0)]))
    assert [(e.speculative, e.is_final, e.text) for e in events] == [
        (True, False, "Turn on the light in the kitchen."), (False, True, "Turn on the light in the kitchen.")]
    assert events[0].end_time == pytest.approx(events[1].end_time, abs=0.03)


def test_a_speculation_is_withdrawn_when_the_voice_comes_back_and_never_made_for_an_open_sentence():
    from fay_ros.hearing.asr_core import AsrCore
    from synthetic_speech import silence

    # "I called out sleep" has no text cue (the prosody decides: at least 400 ms), so the
    # person's next words 300 ms later come back inside the wait; "and" leaves it open.
    recognizer = ScriptedRecognizer(["I called out sleep", "I called out sleep and then", "I called out sleep and "
                                     "then went home."])
    # (the scripted recogniser always hears whole phrases: an early decode in the gap between
    # "went" and "home" would be taken as the end, which a real one would not hear as complete)
    core = AsrCore(recognizer, turn=TurnSettings(), early_decode_ms=90)
    audio = np.concatenate([silence(0.4), _said("I called out sleep"), silence(0.3), _said("and then"),
                            silence(0.5), _said("went home."), silence(1.6)])
    events = _events(core, audio)
    assert [(e.speculative, e.text) for e in events] == [
        (True, "I called out sleep"), (True, ""), (True, "I called out sleep and then went home."),
        (False, "I called out sleep and then went home.")], [(e.speculative, e.text) for e in events]
