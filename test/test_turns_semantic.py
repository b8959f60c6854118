"""The end-of-turn model (fay_ros.turns.semantic_turn, Pipecat's smart-turn v3.2) in the
recogniser's endpointing (AsrCore): its features are Whisper's, a sentence cut mid-word is held
open, the whole sentence ends, the model's verdict moves the rules' wait as the settings say,
and a missing model leaves today's rules (the node says so on /diagnostics).

Speech: the real recording test/data/turns/real/jfk.wav (SOURCES.md there), heard by the real
recogniser (Whisper base) and the real model. The turn is its second half, "what your country
can do for you, [0.8 s pause] ask what you can do for your country.": at the pause Whisper
hears "What your country can do for you?", a complete question that the word rules alone
end after 150 ms of silence; the model hears a voice that is not done."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fay_ros.common.wav import read_wav
from fay_ros.turns.end_of_turn import COMPLETE, INCOMPLETE, UNKNOWN, TurnSettings
from fay_ros.turns.semantic_turn import SemanticSettings, SemanticTurn, log_mel, window

RATE = 16000
JFK = Path(__file__).parent / "data" / "turns" / "real" / "jfk.wav"
TURN_FROM_S = 5.25  # "what your country can do for you, ask what you can do for your country."
PAUSE_AT_S = 7.6  # after "for you" (JFK goes on at ~8.4 s)
CUT_IN_CAN_S = 9.2  # inside "can" of "ask what you can do"


@pytest.fixture(scope="module")
def model() -> SemanticTurn:
    loaded, problem = SemanticTurn.load()
    assert loaded is not None, problem  # installed by `make setup` (scripts/post_setup.d/turns.sh)
    return loaded


@pytest.fixture(scope="module")
def jfk() -> np.ndarray:
    wav = read_wav(JFK)
    assert wav.sample_rate == RATE
    return wav.samples


@pytest.fixture(scope="module")
def whisper():
    from fay_ros.hearing.whisper_backend import WhisperRecognizer

    return WhisperRecognizer(language="en")


def _turn(jfk: np.ndarray, until_s: float | None = None) -> np.ndarray:
    return jfk[int(TURN_FROM_S * RATE) : int(until_s * RATE) if until_s else None]


class Said:
    """A recogniser that hears `text` at every decode."""

    sample_rate = RATE
    streaming = False
    language = "en"

    def __init__(self, text: str) -> None:
        self.text = text

    def start(self) -> None:
        pass

    def accept(self, samples) -> str:
        return ""

    def peek(self):
        from fay_ros.hearing.recognition import Recognition

        return Recognition(self.text, self.language, 0.9)

    finish = peek


def _core(recognizer, semantic: SemanticTurn | None, settings: SemanticSettings | None = None):
    from fay_ros.hearing.asr_core import AsrCore

    recognizer.start()
    return AsrCore(recognizer, turn=TurnSettings(), semantic=semantic, semantic_settings=settings or SemanticSettings())


def _finals(core, voice: np.ndarray, trail_s: float = 2.5) -> list[tuple[float, str]]:
    """(silence in ms after the last voice when it came, text) of each final."""
    audio = np.concatenate([np.zeros(int(0.5 * RATE), np.int16), voice, np.zeros(int(trail_s * RATE), np.int16)])
    speech_end = 0.5 + len(voice) / RATE
    return [
        (1000 * ((i + 480) / RATE - speech_end), e.text)
        for i in range(0, len(audio), 480)
        for e in core.feed(audio[i : i + 480], RATE, i / RATE)
        if e.is_final
    ]


def _final_after_ms(core, voice: np.ndarray) -> float | None:
    finals = _finals(core, voice)
    return finals[0][0] if finals else None


def test_the_features_are_whispers_log_mel_of_the_normalised_last_8_s():
    from faster_whisper.feature_extractor import FeatureExtractor

    rng = np.random.default_rng(1)
    audio = (rng.standard_normal(5 * RATE) * 3000).astype(np.int16)
    x = window(audio)
    assert x.shape == (8 * RATE,) and not x[: 3 * RATE].any(), "zero-padded at the start to 8 s"
    normalised = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    reference = FeatureExtractor(feature_size=80, chunk_length=8)(normalised.astype(np.float32), padding=0)
    ours = log_mel(x)
    assert ours.shape == (80, 800) == reference.shape
    np.testing.assert_allclose(ours, reference, atol=2e-3)
    assert np.array_equal(window(np.ones(9 * RATE, np.int16)), np.full(8 * RATE, 1 / 32768, np.float32))


def test_a_sentence_cut_mid_word_is_held_open(model, whisper, jfk):
    cut = _turn(jfk, CUT_IN_CAN_S)
    rules_alone = _finals(_core(whisper, None), cut)
    assert rules_alone and rules_alone[0][0] <= TurnSettings().endpoint_ms + 60, (
        f"the rules alone end it within the normal silence window: {rules_alone}"
    )
    held = _finals(_core(whisper, model), cut)
    assert held, "a turn is never held for ever"
    assert held[0][0] >= SemanticSettings().hold_ms - 60, f"ended inside the hold: {held}"


def test_the_whole_sentence_ends_the_turn_and_its_pause_does_not(model, whisper, jfk):
    rules_alone = _finals(_core(whisper, None), _turn(jfk))
    assert rules_alone[0][0] < -1000, f"the rules alone end the turn at the pause after 'for you': {rules_alone}"
    core = _core(whisper, model)
    finals = _finals(core, _turn(jfk))
    assert len(finals) == 1, finals
    ended, text = finals[0]
    assert "for you" in text and text.rstrip(".!").endswith("country"), (
        text
    )  # (Whisper base: "ask what you can to the country")
    assert 0 <= ended <= 600, f"the finished sentence ended {ended} ms into the silence"
    assert core.semantic_calls >= 2  # at the pause and at the end


def test_the_model_hears_a_finished_and_an_unfinished_sentence(model, jfk):
    lead, silence = np.zeros(int(0.3 * RATE), np.int16), np.zeros(int(0.2 * RATE), np.int16)
    finished = model.probability(np.concatenate([lead, _turn(jfk), silence]))
    paused = model.probability(np.concatenate([lead, _turn(jfk, PAUSE_AT_S), silence]))
    cut = model.probability(np.concatenate([lead, _turn(jfk, CUT_IN_CAN_S), silence]))
    assert finished >= SemanticSettings().finished, finished
    assert max(paused, cut) < SemanticSettings().unfinished, (paused, cut)


@pytest.mark.parametrize(
    "rules_ms, cue, language, p, wait",
    [
        (150, COMPLETE, "en", 0.95, 150),  # finished: at once (never later than the rules)
        (700, UNKNOWN, "en", 0.95, 200),  # finished: after the model was asked
        (150, COMPLETE, "en", 0.05, 1500),  # unfinished: held up to hold_ms
        (700, UNKNOWN, "en", 0.5, 700),  # unsure: the rules
        (1500, INCOMPLETE, "en", 0.95, 1500),  # the words leave it open: the rules' patience
        (400, UNKNOWN, "en", float("nan"), 400),  # no opinion (a failed run): the rules
        (700, UNKNOWN, "zh", 0.05, 700),  # Mandarin is not asked by default: the rules
        (150, COMPLETE, "zh", 0.95, 150),
    ],
)
def test_the_models_verdict_moves_the_rules_wait(rules_ms, cue, language, p, wait):
    assert SemanticSettings().wait_ms(rules_ms, cue, language, p) == wait


@pytest.mark.parametrize(
    "rules_ms, cue, p, wait",
    [
        (150, COMPLETE, 0.05, 150),  # a Mandarin sentence the words end is not held open
        (700, UNKNOWN, 0.05, 1500),
        (700, UNKNOWN, 0.95, 200),
    ],
)
def test_mandarin_when_asked_keeps_a_sentence_its_words_end(rules_ms, cue, p, wait):
    settings = SemanticSettings(languages=("en", "zh"))
    assert settings.asks(cue, "zh") and not settings.asks(INCOMPLETE, "zh")
    assert settings.wait_ms(rules_ms, cue, "zh", p) == wait


def test_settings_are_checked():
    with pytest.raises(ValueError, match="unfinished"):
        SemanticSettings(finished=0.3, unfinished=0.7).validate()
    with pytest.raises(ValueError, match="hold_ms"):
        SemanticSettings(after_ms=800, hold_ms=500).validate()
    with pytest.raises(ValueError, match="languages"):
        SemanticSettings(languages=()).validate()
    from fay_ros.hearing.asr_core import AsrCore

    with pytest.raises(ValueError, match="hold_ms"):
        AsrCore(Said("x"), turn=TurnSettings(), semantic_settings=SemanticSettings(after_ms=800, hold_ms=500))


def test_a_missing_or_broken_model_is_reported_and_the_rules_decide(tmp_path, jfk):
    missing, why = SemanticTurn.load(tmp_path / "nothing.onnx")
    assert missing is None and "not found" in why and "make setup" in why
    broken_file = tmp_path / "broken.onnx"
    broken_file.write_bytes(b"not a model")
    broken, why = SemanticTurn.load(broken_file)
    assert broken is None and "unusable" in why
    # no model, or the model off: a question ends as the word rules say (150 ms after it)
    said = "What your country can do for you?"
    assert _final_after_ms(_core(Said(said), None), _turn(jfk, PAUSE_AT_S)) == pytest.approx(150, abs=60)
    assert _final_after_ms(_core(Said(said), None, SemanticSettings(enabled=False)), _turn(jfk, PAUSE_AT_S)) == (
        pytest.approx(150, abs=60)
    )


class _Failing:
    path = Path("failing.onnx")

    def probability(self, audio) -> float:
        return float("nan")  # what SemanticTurn.probability gives when the run fails


def test_a_failing_model_run_leaves_the_rules_wait(jfk):
    said = Said("What your country can do for you?")
    ended = _final_after_ms(_core(said, _Failing()), _turn(jfk, PAUSE_AT_S))  # type: ignore[arg-type]
    assert ended == pytest.approx(SemanticSettings().after_ms, abs=60)  # the rules' 150 ms, once the model was asked


def test_a_model_run_that_raises_inside_onnxruntime_gives_no_opinion(model):
    class Broken:
        def run(self, *args):
            raise RuntimeError("onnxruntime failed")

        def get_inputs(self):
            return model._session.get_inputs()

    assert np.isnan(SemanticTurn(Broken(), model.path).probability(np.zeros(RATE, np.int16)))


def _feed(ros, samples: np.ndarray) -> float:
    """`samples` into audio/raw in 30 ms chunks, stamped from now on; the first one's stamp.
    Returns once every chunk is acknowledged by the subscribers: each call has a publisher of its
    own, and DDS orders nothing across publishers, so without it a second call's chunks could
    reach the asr before the first's (a reader that matched the first publisher late gets its
    chunks resent after the second's: a CI run heard a sentence's end before its beginning)."""
    from rclpy.duration import Duration

    from fay_msgs.msg import AudioChunk
    from fay_ros.common import qos, topics
    from fay_ros.common.rostime import to_time_msg

    pub = ros.publisher(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    ros.wait_for_subscribers(pub)
    clock = ros.node.get_clock().now().nanoseconds * 1e-9
    for i in range(0, len(samples), 480):
        msg = AudioChunk(sample_rate=RATE, channels=1)
        msg.header.stamp = to_time_msg(clock + i / RATE)
        msg.header.frame_id = "test"
        msg.data = samples[i : i + 480].tolist()
        pub.publish(msg)
    assert pub.wait_for_all_acked(Duration(seconds=30)), "audio/raw chunks not acknowledged within 30 s"
    return clock


@pytest.mark.parametrize(
    "semantic_model, level, says",
    [
        ("", "OK", "on (smart-turn-v3.2-cpu.onnx)"),
        ("/no/such/smart-turn.onnx", "WARN", "unavailable, rules alone: smart-turn v3.2 model not found"),
    ],
)
def test_the_asr_node_says_whether_the_model_takes_part_and_ends_the_turn_either_way(
    ros, launch_node, jfk, semantic_model, level, says
):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.qos import QoSProfile

    from fay_msgs.msg import Transcript
    from fay_ros.common import topics

    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    params = {"language": "en", "semantic_turn": True, **({"semantic_model": semantic_model} if semantic_model else {})}
    asr = launch_node("fay_ros.nodes.asr", params)
    asr.wait_ready(timeout=60)
    status = diagnostics.wait_for_match(
        lambda a: {"fay/asr: semantic turn", "fay/asr: vad"} <= {s.name for s in a.status},
        timeout=30,
        what="the semantic turn and vad statuses",
    )
    found = next(s for s in status.status if s.name == "fay/asr: semantic turn")
    assert found.level == getattr(DiagnosticStatus, level) and found.message.startswith(says), found.message
    vad = next(s for s in status.status if s.name == "fay/asr: vad")
    assert vad.level == DiagnosticStatus.OK and "Silero veto after 400 ms" in vad.message, vad
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    _feed(ros, np.concatenate([np.zeros(RATE // 2, np.int16), _turn(jfk), np.zeros(2 * RATE, np.int16)]))
    # (fed faster than real time the worker is behind, so no early decode: the 0.8 s pause after
    # "for you" may end the turn by the silence endpoint; the words Whisper hears vary)
    final = finals.wait_for_match(lambda m: "you" in m.text.lower(), timeout=60, what="a final")
    assert final.is_final and final.language == "en"
    if level == "OK":  # live: thresholds that cross are refused; a switch to the rules alone is said
        refused = ros.set_parameters("asr", semantic_unfinished=0.9)
        assert not refused[0].successful and "unfinished" in refused[0].reason, refused
        assert all(r.successful for r in ros.set_parameters("asr", semantic_turn=False))
        diagnostics.wait_for_match(
            lambda a: any(s.name == "fay/asr: semantic turn" and s.message.startswith("loaded, off") for s in a.status),
            timeout=30,
            what="the semantic turn status after semantic_turn:=false",
        )
    assert asr.alive() and "Traceback" not in asr.output()
