"""Pure hearing cores: VAD hysteresis, segmentation, resampling, WAV errors, half duplex /
barge-in, wake words, model lookup errors. Real audio buffers (espeak-ng speech, noise)."""

from __future__ import annotations

import struct
import wave

import numpy as np
import pytest

from fay_ros.common.wav import AudioFormatError, read_wav, write_wav
from fay_ros.hearing.audio import resample
from fay_ros.hearing.mic_core import MicCore
from fay_ros.hearing.models import ModelError, check_whisper_dir, resolve_vosk_model, resolve_whisper_model
from fay_ros.hearing.segmenter import Segmenter
from fay_ros.hearing.vad import VadSettings, VoiceActivityDetector
from fay_ros.hearing.wake import WakeWordGate
from fay_ros.turns.duplex_gate import DuplexSettings
from synthetic_speech import silence, speak

RATE = 16000


def trim(samples, threshold=300):
    voiced = np.flatnonzero(np.abs(samples) > threshold)
    return samples[voiced[0] : voiced[-1] + 1]


@pytest.fixture(scope="module")
def sentence():
    return trim(speak("Please turn on the light in the kitchen.", "en-us"))


def run_vad(vad, audio, chunk=480):
    events = []
    for i in range(0, len(audio), chunk):
        events += vad.process(audio[i : i + chunk])[0]
    return events


def test_vad_starts_and_stops_on_speech_with_hysteresis(sentence):
    audio = np.concatenate([silence(1.0), sentence, silence(1.0)])
    events = run_vad(VoiceActivityDetector(RATE, VadSettings(stop_ms=500)), audio)
    assert [e.kind for e in events] == ["start", "end"]
    start, end = events[0].sample / RATE, events[1].sample / RATE
    voiced = np.flatnonzero(np.abs(sentence) > 300)
    assert abs(start - (1.0 + voiced[0] / RATE)) < 0.15
    assert abs(end - (1.0 + voiced[-1] / RATE)) < 0.2


def test_vad_ignores_a_click_and_steady_noise():
    rng = np.random.default_rng(1)
    noise = (rng.normal(0, 300, RATE * 3)).astype(np.int16)  # steady hiss at about -40 dBFS
    noise[RATE : RATE + 480] = rng.normal(0, 12000, 480).astype(np.int16)  # one 30 ms click
    assert run_vad(VoiceActivityDetector(RATE), noise) == []


def test_vad_keeps_one_utterance_across_a_short_pause(sentence):
    audio = np.concatenate([silence(0.5), sentence, silence(0.25), sentence, silence(1.0)])
    events = run_vad(VoiceActivityDetector(RATE, VadSettings(stop_ms=500)), audio)
    assert [e.kind for e in events] == ["start", "end"]


def test_vad_ends_sooner_only_from_the_sample_asked_and_for_that_voice(sentence):
    """`end_sooner` (a long utterance near its maximum): a 250 ms pause after the sample given
    ends the voice; the same pause before it does not; the next voice has stop_ms again."""
    pause = silence(0.25)
    audio = np.concatenate([silence(0.5), sentence, pause, sentence, silence(1.0), sentence, pause, sentence])
    first_pause = int(0.5 * RATE) + len(sentence)

    def ends(from_sample):
        vad = VoiceActivityDetector(RATE, VadSettings(stop_ms=500))
        found = []
        for i in range(0, len(audio), 480):
            for event in vad.process(audio[i : i + 480])[0]:
                if event.kind == "start" and not found:
                    vad.end_sooner(from_sample, 150)
                found.append(event)
        return [e.sample for e in found if e.kind == "end"]

    assert len(ends(len(audio))) == 1  # never sooner: only the 1 s silence ends a voice
    sooner = ends(first_pause - RATE // 2)
    # the first voice ends in its pause, the rest of it at the 1 s silence; the last voice is
    # not asked to end sooner, so its pause does not end it (the recording ends in its words)
    assert len(sooner) == 2 and abs(sooner[0] - first_pause) < 0.15 * RATE, sooner
    assert len(ends(first_pause + RATE // 2)) == 1  # the pause came before the sample asked


def test_vad_works_at_a_rate_webrtc_does_not_take(sentence):
    audio = resample(np.concatenate([silence(0.5), sentence, silence(1.0)]), RATE, 44100)
    events = run_vad(VoiceActivityDetector(44100), audio, chunk=1323)
    assert [e.kind for e in events] == ["start", "end"]


def test_bad_vad_settings_are_rejected():
    with pytest.raises(ValueError, match="frame_ms"):
        VoiceActivityDetector(RATE, VadSettings(frame_ms=25))


def test_segmenter_includes_preroll_and_all_speech(sentence):
    audio = np.concatenate([silence(1.0), sentence, silence(1.0)])
    seg = Segmenter(RATE, VadSettings(stop_ms=400), preroll_ms=300)
    events = []
    for i in range(0, len(audio), 480):
        events += seg.feed(audio[i : i + 480])
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and kinds.count("start") == 1
    got = np.concatenate([e.samples for e in events if e.kind == "audio"])
    start = events[0].sample
    first_voiced = RATE + np.flatnonzero(np.abs(sentence) > 300)[0]
    assert first_voiced - start >= int(0.25 * RATE)  # pre-roll before the first syllable
    assert np.array_equal(got, audio[start : start + len(got)])  # exactly the captured samples
    assert start + len(got) >= RATE + np.flatnonzero(np.abs(sentence) > 300)[-1]


def test_segmenter_cuts_an_endless_utterance(sentence):
    seg = Segmenter(RATE, preroll_ms=0, max_utterance_s=2.0)
    audio = np.concatenate([sentence] * 4)
    kinds = []
    for i in range(0, len(audio), 480):
        kinds += [e.kind for e in seg.feed(audio[i : i + 480])]
    assert kinds.count("end") >= 2


def test_resample_keeps_pitch_and_length():
    t = np.arange(22050) / 22050.0
    tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    out = resample(tone, 22050, RATE)
    assert abs(len(out) - RATE) <= 1
    spectrum = np.abs(np.fft.rfft(out.astype(float)))
    assert abs(np.argmax(spectrum) * RATE / len(out) - 440) < 2


def test_wav_errors_name_the_file(tmp_path):
    with pytest.raises(AudioFormatError, match="no such WAV file"):
        read_wav(tmp_path / "missing.wav")
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"this is not audio")
    with pytest.raises(AudioFormatError, match="junk.wav: not a PCM WAV"):
        read_wav(junk)
    from test_recordings import wav_bytes

    floats = tmp_path / "float.wav"  # WAVE_FORMAT_IEEE_FLOAT (3), as some editors export
    floats.write_bytes(wav_bytes(struct.pack("<HHIIHH", 3, 1, RATE, 4 * RATE, 4, 32), np.zeros(160, "<f4").tobytes()))
    with pytest.raises(AudioFormatError, match=r"float\.wav: not a PCM WAV file .*float samples\? convert with: sox"):
        read_wav(floats)


@pytest.mark.parametrize("width", [1, 3, 4])
def test_a_recorders_8_24_and_32_bit_wav_is_heard_as_16_bit(tmp_path, width):
    """A real recording written with `width` bytes per sample reads as its 16-bit samples (8-bit:
    their top 8 bits; 8-bit WAV is unsigned)."""
    from test_hearing_real_speech import DATA

    samples = read_wav(DATA / "en" / "goforward.wav").samples
    wide = samples.astype(np.int32) << 16  # the 16-bit samples at the top of 32 bits
    if width == 1:
        raw = ((samples.astype(np.int32) >> 8) + 128).astype(np.uint8).tobytes()
        expected = ((samples.astype(np.int32) >> 8) << 8).astype(np.int16)
    else:
        raw = wide.astype("<i4").view(np.uint8).reshape(-1, 4)[:, 4 - width :].tobytes()
        expected = samples
    path = tmp_path / f"{8 * width}bit.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(width), w.setframerate(RATE), w.writeframes(raw)
    heard = read_wav(path)
    assert heard.sample_rate == RATE and heard.samples.dtype == np.int16
    assert np.array_equal(heard.samples, expected)


def test_wav_that_ends_mid_sample_is_a_format_error_naming_the_file(tmp_path):
    whole = tmp_path / "whole.wav"
    write_wav(whole, np.arange(1000, dtype=np.int16), RATE)
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:-1])  # the header still promises 2000 bytes of data
    with pytest.raises(AudioFormatError, match=r"cut\.wav: the audio data ends in the middle of a sample"):
        read_wav(cut)
    zero_rate = tmp_path / "zero_rate.wav"
    data = whole.read_bytes()
    zero_rate.write_bytes(data[:24] + (0).to_bytes(4, "little") + data[28:])  # fmt chunk: sample rate 0
    with pytest.raises(AudioFormatError, match=r"zero_rate\.wav: sample rate 0 Hz"):
        read_wav(zero_rate)


def test_asr_core_refuses_a_malformed_chunk_and_keeps_going(sentence):
    """A chunk that cannot be audio raises AudioFormatError before touching any state."""
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.recognition import Recognition

    class Recorder:
        sample_rate = RATE
        language = "en"

        def __init__(self):
            self.audio = []

        def start(self):
            self.audio = []

        def accept(self, samples):
            self.audio.append(samples)
            return ""

        def peek(self):
            return None

        def finish(self):
            return Recognition(f"{sum(map(len, self.audio))} samples", "en", 1.0)

    rec = Recorder()
    core = AsrCore(rec, VadSettings(stop_ms=300))
    bad = [
        (silence(0.03), 0, 1, "sample rate 0 Hz"),
        (silence(0.03), 4_000_000_000, 1, "sample rate"),
        (silence(0.03), RATE, 0, "0 channels"),
        (np.zeros(481, np.int16), RATE, 2, "not whole frames"),
    ]
    for samples, rate, channels, reason in bad:
        with pytest.raises(AudioFormatError, match=reason):
            core.feed(samples, rate, 0.0, channels)
    assert core.segmenter.end_index == 0, "a refused chunk moved the stream"
    audio = np.concatenate([silence(0.5), sentence, silence(1.0)])
    events = [e for i in range(0, len(audio), 480) for e in core.feed(audio[i : i + 480], RATE, i / RATE)]
    assert [e.is_final for e in events] == [True]
    assert int(events[0].text.split()[0]) >= len(sentence), "the speech after the bad chunks was heard whole"


def test_stereo_wav_is_downmixed(tmp_path):
    stereo = np.stack([np.full(100, 1000, np.int16), np.full(100, 3000, np.int16)], axis=1)
    write_wav(tmp_path / "s.wav", stereo, RATE)
    assert np.all(read_wav(tmp_path / "s.wav").samples == 2000)


# ---------------------------------------------------------------------------- half duplex


def feed_mic(core, audio, t0=0.0, chunk=480):
    """Feed audio as 30 ms chunks; returns (published sample count, interrupts, voice states)."""
    published, interrupts, states = 0, 0, []
    for n, i in enumerate(range(0, len(audio), chunk)):
        out = core.process(audio[i : i + chunk], n, t0 + i / RATE)
        published += sum(len(c) for c, _ in out.chunks)
        interrupts += out.interrupt
        if out.voice_active is not None:
            states.append(out.voice_active)
    return published, interrupts, states


def scaled(samples, gain_db):
    return np.clip(samples.astype(float) * 10 ** (gain_db / 20), -32768, 32767).astype(np.int16)


@pytest.fixture(scope="module")
def robot_voice():
    return trim(speak("I am the robot and I am talking about the weather for a while now.", "en-us"))


@pytest.fixture(scope="module")
def person_voice():
    return trim(speak("Stop, wait a moment please.", "en-us"))


def test_half_duplex_mutes_while_the_robot_speaks(sentence):
    core = MicCore(RATE, duplex=DuplexSettings(barge_in=False, echo_tail_ms=300))
    core.set_robot_speaking(True, 0.0)
    published, interrupts, states = feed_mic(core, np.concatenate([sentence, silence(0.5)]))
    assert (published, interrupts, states) == (0, 0, [])
    core.set_robot_speaking(False, 10.0)
    published, _, _ = feed_mic(core, silence(0.2), t0=10.0)
    assert published == 0  # still inside the echo tail
    published, _, states = feed_mic(core, np.concatenate([sentence, silence(1.0)]), t0=10.4)
    assert published > len(sentence) and states == [True, False]


def test_robot_echo_alone_never_barges_in(robot_voice):
    core = MicCore(RATE, duplex=DuplexSettings(barge_in=True))
    core.set_robot_speaking(True, 0.0)
    echo = scaled(robot_voice, -6)  # the robot's own voice, loud at the microphone
    published, interrupts, _ = feed_mic(core, np.concatenate([echo, echo]))
    assert interrupts == 0 and published == 0


def test_person_talking_over_the_robot_barges_in_once_with_preroll(robot_voice, person_voice):
    core = MicCore(RATE, duplex=DuplexSettings(barge_in=True, margin_db=10.0, min_ms=300), preroll_ms=300)
    core.set_robot_speaking(True, 0.0)
    echo = scaled(np.tile(robot_voice, 3), -22)
    feed_mic(core, echo[: 2 * RATE])  # the robot talks alone for 2 s
    overlap = echo[2 * RATE : 2 * RATE + len(person_voice)].astype(np.int32)
    mix = np.clip(overlap + person_voice, -32768, 32767).astype(np.int16)
    published, interrupts, states = feed_mic(core, np.concatenate([mix, silence(1.0)]), t0=2.0)
    assert interrupts == 1
    assert states and states[0] is True
    # Everything from shortly before the barge-in is published: the person's words are kept.
    assert published >= len(mix) - int(0.3 * RATE)


def test_barge_in_learns_the_echo_level_and_needs_a_clear_margin(robot_voice):
    core = MicCore(RATE, duplex=DuplexSettings(barge_in=True, margin_db=10.0))
    core.set_robot_speaking(True, 0.0)
    feed_mic(core, scaled(robot_voice, -20))
    assert core.gate.echo_threshold_db > -45.0
    # The same voice 4 dB louder (the robot raising its volume) is still echo.
    _, interrupts, _ = feed_mic(core, scaled(robot_voice, -16), t0=10.0)
    assert interrupts == 0


# ---------------------------------------------------------------------------- wake words


def test_wake_mode_always_forwards_everything():
    gate = WakeWordGate("always")
    assert gate.admit("what time is it", 0.0) == "what time is it"


def test_wake_mode_prefix_strips_the_wake_word():
    gate = WakeWordGate("prefix", ["fay", "菲菲"])
    assert gate.admit("Fay, what time is it?", 0.0) == "what time is it?"
    assert gate.admit("菲菲，现在几点了？", 1.0) == "现在几点了？"
    assert gate.admit("what time is it?", 2.0) is None
    assert gate.admit("Fay.", 3.0) is None
    assert gate.peek("Fay what", 4.0) and not gate.peek("what", 4.0)


def test_wake_mode_window_opens_extends_and_closes():
    gate = WakeWordGate("window", ["hey fay"], awake_window_s=10.0)
    assert gate.admit("tell me a joke", 0.0) is None
    assert gate.admit("Hey Fay!", 1.0) is None  # wake word alone: opens the window
    assert gate.admit("tell me a joke", 5.0) == "tell me a joke"
    gate.extend(14.0)  # the robot finished its answer
    assert gate.admit("another one", 23.0) == "another one"
    assert gate.admit("and again", 40.0) is None  # window closed


def test_wake_mode_needs_wake_words():
    with pytest.raises(ValueError, match="at least one"):
        WakeWordGate("prefix", [" "])
    with pytest.raises(ValueError, match="wake mode"):
        WakeWordGate("sometimes", ["fay"])


# ---------------------------------------------------------------------------- model lookup


def test_missing_vosk_model_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("FAY_MODELS_DIR", str(tmp_path))
    (tmp_path / "vosk-model-small-cn-0.22").mkdir()
    with pytest.raises(ModelError) as err:
        resolve_vosk_model("vosk-model-small-en-us-0.15")
    message = str(err.value)
    assert "not found" in message and str(tmp_path / "vosk-model-small-en-us-0.15") in message
    assert "vosk-model-small-cn-0.22" in message  # lists what is there
    with pytest.raises(ModelError, match="needs a model"):
        resolve_vosk_model("")


def test_incomplete_vosk_model_names_missing_files(tmp_path):
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"x")
    with pytest.raises(ModelError, match=r"incomplete: missing conf/model.conf, graph/HCLG.fst"):
        resolve_vosk_model(str(tmp_path))


def test_incomplete_whisper_model_refuses_to_download(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"x")
    with pytest.raises(ModelError, match="missing config.json, tokenizer.json"):
        check_whisper_dir(tmp_path)
    with pytest.raises(ModelError, match="not found"):
        resolve_whisper_model(str(tmp_path / "nope"))


def test_default_whisper_model_is_assembled_and_verified():
    path = resolve_whisper_model("")
    assert (path / "model.bin").stat().st_size == 145_217_532
    check_whisper_dir(path)


# ---------------------------------------------------------------------------- live changes


class _Recorder:
    """A recogniser that reports how many samples it was given (no model needed)."""

    sample_rate = RATE
    language = "en"

    def __init__(self):
        self.audio = []

    def start(self):
        self.audio = []

    def accept(self, samples):
        self.audio.append(samples)
        return ""

    def peek(self):
        return None

    def finish(self):
        from fay_ros.hearing.recognition import Recognition

        return Recognition(f"{sum(map(len, self.audio))} samples", "en", 1.0)


def test_a_vad_change_applies_from_the_next_frame_and_keeps_the_noise_floor(sentence):
    vad = VoiceActivityDetector(RATE, VadSettings(stop_ms=500))
    run_vad(vad, silence(0.5))
    floor = vad.classifier.noise_floor_db
    vad.update(VadSettings(stop_ms=200, aggressiveness=3))
    assert vad.classifier.noise_floor_db == floor and vad._stop_needed == round(200 / 30)
    events = run_vad(vad, np.concatenate([sentence, silence(0.5)]))
    assert [e.kind for e in events] == ["start", "end"]
    with pytest.raises(ValueError, match="frame_ms cannot change"):
        vad.update(VadSettings(frame_ms=20))
    with pytest.raises(ValueError, match="stop_ms"):
        vad.update(VadSettings(stop_ms=0))


def test_asr_core_reconfigures_between_utterances_only(sentence):
    from fay_ros.hearing.asr_core import AsrCore

    core = AsrCore(_Recorder(), VadSettings(stop_ms=700), max_utterance_s=20.0)
    audio = np.concatenate([silence(0.5), sentence])
    for i in range(0, len(audio), 480):
        core.feed(audio[i : i + 480], RATE, i / RATE)
    assert core.speaking
    # Mid-utterance: a 0.6 s limit would cut this utterance at once; it waits for the next one.
    core.reconfigure(VadSettings(stop_ms=300), preroll_ms=300, max_utterance_s=0.6, early_endpoint_ms=0)
    assert core.segmenter.vad.settings.stop_ms == 700
    tail = silence(1.0)
    events = [e for i in range(0, len(tail), 480) for e in core.feed(tail[i : i + 480], RATE, 10.0 + i / RATE)]
    assert [e.is_final for e in events] == [True] and int(events[0].text.split()[0]) >= len(sentence)
    more = silence(0.06)
    core.feed(more, RATE, 20.0)
    assert core.segmenter.vad.settings.stop_ms == 300 and core.segmenter.max_samples == int(0.6 * RATE)
    with pytest.raises(ValueError, match="stop_ms"):
        core.reconfigure(VadSettings(stop_ms=0), 300, 20.0, 0)


def test_new_wake_rules_keep_an_open_window():
    from fay_ros.hearing.asr_core import AsrCore

    core = AsrCore(_Recorder(), wake=WakeWordGate("window", ["computer"], awake_window_s=10.0))
    assert core.wake.admit("Computer, hello", 100.0) == "hello"
    core.set_wake(WakeWordGate("window", ["robot"], awake_window_s=30.0))
    assert core.wake.admit("still there?", 105.0) == "still there?"  # the window opened before stays open
    assert core.wake.admit("Computer, hi", 200.0) is None  # the old wake word is gone
    core.set_wake(WakeWordGate("prefix", ["robot"]))
    assert core.wake.admit("hello", 201.0) is None and core.wake.admit("Robot, hi", 202.0) == "hi"


def test_barge_in_turned_on_while_the_robot_speaks(robot_voice, person_voice):
    core = MicCore(RATE, duplex=DuplexSettings(barge_in=False), preroll_ms=300)
    core.set_robot_speaking(True, 0.0)
    echo = scaled(np.tile(robot_voice, 3), -22)
    assert feed_mic(core, echo[:RATE])[:2] == (0, 0)  # muted, nothing learned
    core.update(core.vad.settings, DuplexSettings(barge_in=True, margin_db=10.0, min_ms=300), preroll_ms=300)
    feed_mic(core, echo[RATE : 3 * RATE], t0=1.0)  # learns the echo from now on
    overlap = echo[3 * RATE : 3 * RATE + len(person_voice)].astype(np.int32)
    mix = np.clip(overlap + person_voice, -32768, 32767).astype(np.int16)
    _, interrupts, _ = feed_mic(core, np.concatenate([mix, silence(1.0)]), t0=3.0)
    assert interrupts == 1


def test_voice_ids_are_ros_name_tokens_and_keep_users_apart():
    import re

    from fay_ros.hearing.voices import ANONYMOUS_VOICE, voice_id

    assert voice_id("user") == "user" and voice_id("") == ANONYMOUS_VOICE == "anonymous_speaker"
    ids = [voice_id(u) for u in ("张三", "李四", "3po", "alice.b", "alice_b", "a__b")]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[A-Za-z](?:_?[A-Za-z0-9])*", i) for i in ids), ids
    assert voice_id("alice_b") == "alice_b" and voice_id("张三") == voice_id("张三")


def test_audio_lost_before_anyone_heard_it_is_a_warning_while_recent():
    """The mic's `capture` status: input overflows and dropped chunks warn for RECENT_S after the
    count last grew, then stay counted."""
    from fay_ros.hearing.audio_loss import RECENT_S, AudioLoss

    loss = AudioLoss()
    assert loss.status(0, 0, 100.0) == ("ok", "no audio lost", {"input_overflows": "0", "dropped_chunks": "0"})
    level, message, values = loss.status(1, 0, 101.0)
    assert level == "warning" and "1 input overflows" in message and values["input_overflows"] == "1"
    assert loss.status(1, 0, 101.0 + RECENT_S - 0.1)[0] == "warning"
    level, message, _ = loss.status(1, 0, 101.0 + RECENT_S)
    assert level == "ok" and "earlier (1 times)" in message
    level, message, values = loss.status(1, 3, 200.0)  # the busy worker dropped three chunks
    assert level == "warning" and "3 chunks dropped" in message and values["dropped_chunks"] == "3"
