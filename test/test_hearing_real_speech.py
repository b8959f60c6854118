"""The recogniser on real human recordings (test/data/speech, SOURCES.md there): accuracy
bounds, no speech lost in a long recording, no repetition loops, Chinese in the script asked
for, hot words reaching the decoder, and `fay-ros transcribe --bench`. The Mandarin clips are a
person's recorded syllables joined into phrases (test/zh_syllables.py), not continuous speech."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fay_ros.cli import main as cli_main
from fay_ros.common.wav import read_wav
from fay_ros.hearing import segmenter
from fay_ros.hearing.clip_bench import find_clips, joined, run_clip, totals, transcribe_stream
from fay_ros.hearing.scoring import max_repeats, score
from fay_ros.hearing.whisper_backend import ZH_PROMPT, WhisperRecognizer, convert_script
from fay_ros.text.words import CJK_CHAR
from zh_syllables import long_turn

DATA = Path(__file__).resolve().parent / "data" / "speech"
AUSTEN = ["0870", "0880", "0890", "0920", "0930"]  # five consecutive sentences of one chapter


@pytest.fixture(scope="module")
def whisper():
    return WhisperRecognizer("", language="auto")


def _chinese_characters(text: str) -> int:
    return len(CJK_CHAR.findall(text))


def _austen_joined(pause_s: float = 0.6) -> tuple[np.ndarray, str]:
    """The five LibriVox sentences as one 27.7 s recording, and its reference."""
    gap = np.zeros(int(16000 * pause_s), dtype=np.int16)
    parts, refs = [], []
    for n in AUSTEN:
        parts += [read_wav(str(DATA / "en" / f"librivox_austen_{n}.wav")).samples, gap]
        refs.append((DATA / "en" / f"librivox_austen_{n}.txt").read_text(encoding="utf-8").strip())
    return np.concatenate(parts), " ".join(refs)


def test_the_set_is_there_with_its_sources():
    clips = find_clips(DATA)
    english = [c for c in clips if not c.chinese]
    assert len(english) >= 8
    assert len([c for c in clips if c.chinese]) >= 10
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    for clip in clips:
        assert clip.name in sources or clip.name.rsplit("_", 1)[0] in sources, clip.name
        wav = read_wav(str(clip.path))
        assert wav.sample_rate == 16000 and wav.samples.ndim == 1


def test_english_recordings_within_bounds(whisper):
    results = [run_clip(whisper, c) for c in find_clips(DATA) if not c.chinese]
    t = totals(results)
    report = "\n".join(f"{r.clip.name}: {r.score.rate:.2f} {r.hypothesis!r}" for r in results)
    assert t.english.rate <= 0.06, report  # measured 3.4 % (docs/BENCHMARKS.md); aim 5 %
    for r in results:
        assert r.score.rate <= 0.34, report  # no clip lost (the worst short clip: 1 word in 3-4)
        assert r.repeats <= max(r.reference_repeats, 1), report  # no repetition loop


def test_mandarin_phrases_within_bounds_in_simplified_characters(whisper):
    """A person's Mandarin syllables joined into phrases: Whisper base hears 60 % of the
    characters (docs/BENCHMARKS.md, real speech; far from the 12 % CER aimed at, and joined
    syllables are harder than a sentence said in one breath), every phrase comes out in
    Simplified characters (the default `chinese_script`), and none loops."""
    results = [run_clip(whisper, c) for c in find_clips(DATA) if c.chinese]
    report = "\n".join(f"{r.clip.name}: {r.score.rate:.2f} {r.hypothesis!r}" for r in results)
    assert len(results) >= 10
    assert totals(results).chinese.rate <= 0.5, report  # measured 40 %
    for r in results:
        assert r.hypothesis and convert_script(r.hypothesis, "simplified") == r.hypothesis, report
        assert r.repeats <= max(r.reference_repeats, 1), report
    assert sum(r.score.errors == 0 for r in results) >= 2, report  # "明天见", "谢谢你" come out whole


@pytest.mark.parametrize("stream", [False, True], ids=["one decode", "through the segmenter"])
def test_a_long_mandarin_recording_loses_no_speech(whisper, monkeypatch, stream):
    """Ten Mandarin phrases with 0.6 s pauses (27 s; the issue's 12 s Mandarin recording came
    out as its first 3.6 s): as many characters come back as were said, within a tenth, and the
    last phrase is there."""
    audio, reference = long_turn()
    monkeypatch.setattr(whisper, "language", "zh")
    if stream:
        finals = transcribe_stream(whisper, audio, 16000, endpoint_ms=700)
        text = joined(finals)
        assert finals[-1].end_time > len(audio) / 16000 - 2.0, text  # heard to the end
    else:
        text = whisper.transcribe(audio).text
    assert _chinese_characters(text) >= 0.9 * _chinese_characters(reference), text
    assert score(reference, text, chinese=True).rate <= 0.5, text
    assert text.rstrip("。.!！ ").endswith("明天见"), text
    assert max_repeats(text) <= 1, text


@pytest.mark.parametrize("pause_s", [0.6, 1.0])
def test_a_long_recording_loses_no_speech_in_one_decode(whisper, monkeypatch, pause_s):
    """27.7-29.7 s with pauses decoded as one utterance (a long turn): every sentence is there,
    the last one too (the one-pass decode without timestamps lost words: WER 8-10 % here)."""
    audio, reference = _austen_joined(pause_s)
    monkeypatch.setattr(whisper, "language", "en")
    result = whisper.transcribe(audio)
    s = score(reference, result.text)
    assert s.rate <= 0.05, result.text
    assert "amiable himself" in result.text.lower(), result.text
    assert max_repeats(result.text) <= 1, result.text


def test_a_decode_that_stops_early_is_completed(whisper, monkeypatch):
    """Whisper without timestamps may end a long utterance after its first sentence (a 12 s
    Mandarin recording came out as its first 3.6 s): the backend sees a transcript far
    shorter than the speech and decodes the rest."""
    audio, reference = _austen_joined()
    real = whisper._generate

    def first_sentence_only(*args, **kwargs):
        tokens, logprob, no_speech = real(*args, **kwargs)
        return tokens[:10], logprob, no_speech

    monkeypatch.setattr(whisper, "_generate", first_sentence_only)
    monkeypatch.setattr(whisper, "language", "en")
    monkeypatch.setattr(whisper, "long_form_s", 60.0)  # (the one-pass decode, as up to 10 s)
    result = whisper.transcribe(audio)
    assert score(reference, result.text).rate <= 0.12, result.text
    assert "amiable himself" in result.text.lower(), result.text
    # the completing decode reads the prompt the cut one read (the words said before this audio)
    prompts: list[str | None] = []
    real_long_form = whisper._model.transcribe

    def spy(*args, **kwargs):
        prompts.append(kwargs.get("initial_prompt"))
        return real_long_form(*args, **kwargs)

    monkeypatch.setattr(whisper._model, "transcribe", spy)
    assert "amiable himself" in whisper.transcribe(audio, previous="Chapter one.").text.lower()
    assert prompts == ["Chapter one."]
    # and a whole decode is not decoded twice
    monkeypatch.setattr(whisper, "_generate", real)
    monkeypatch.setattr(whisper, "_long_form", lambda *a, **k: pytest.fail("decoded twice"))
    assert score(reference, whisper.transcribe(audio).text).rate <= 0.12


def test_a_long_recording_loses_no_speech_through_the_segmenter(whisper):
    audio, reference = _austen_joined()
    finals = transcribe_stream(whisper, audio, 16000, endpoint_ms=700)
    text = joined(finals)
    assert score(reference, text).rate <= 0.05, text
    assert finals[-1].end_time > 26.0  # heard to the end


def test_a_long_turn_is_cut_between_two_words_not_in_one(whisper, monkeypatch):
    """Six recordings back to back (35.7 s, their own pauses only) under a 12 s maximum: each
    cut falls in a pause (the 120 ms after an utterance's last voice are quiet) and the words
    come back; cut where the maximum falls, they do not ("Mr. John And Dashwood")."""
    names = ["jfk_inaugural"] + [f"librivox_austen_{n}" for n in AUSTEN]
    audio = np.concatenate([read_wav(str(DATA / "en" / f"{n}.wav")).samples for n in names])
    reference = " ".join((DATA / "en" / f"{n}.txt").read_text(encoding="utf-8").strip() for n in names)
    monkeypatch.setattr(whisper, "language", "en")

    def loudness_after_cuts() -> tuple[list[float], str]:
        finals = transcribe_stream(whisper, audio, 16000, endpoint_ms=700, max_utterance_s=12.0)
        after = []
        for final in finals[:-1]:
            a = int(final.end_time * 16000)
            after.append(float(np.sqrt(np.mean(audio[a : a + int(0.12 * 16000)].astype(float) ** 2))))
        return after, joined(finals)

    speech = float(np.sqrt(np.mean(audio.astype(float) ** 2)))
    after, text = loudness_after_cuts()
    assert len(after) >= 2, text  # the maximum did cut it
    assert max(after) < 0.2 * speech, (after, speech)
    assert score(reference, text).rate <= 0.05, text
    monkeypatch.setattr(segmenter, "CUT_SEARCH_FRACTION", 0.0)  # cut where the maximum falls
    hard, _ = loudness_after_cuts()
    assert max(hard) > 0.5 * speech, (hard, speech)


def test_jfk_keeps_its_ending(whisper):
    clip = next(c for c in find_clips(DATA) if c.name == "jfk_inaugural")
    r = run_clip(whisper, clip)
    assert r.score.rate <= 0.1, r.hypothesis
    assert "for your country" in r.hypothesis.lower(), r.hypothesis


def test_chinese_prompt_and_script_follow_the_setting(whisper, monkeypatch):
    assert whisper._initial_prompt("zh") == ""  # off by default (it leaked into transcripts)
    monkeypatch.setattr(whisper, "zh_prompt", ZH_PROMPT)
    assert whisper._initial_prompt("zh") == ZH_PROMPT
    assert whisper._initial_prompt("en") == ""
    assert whisper._script("這個軟體們說話", "zh") == "这个软体们说话"
    assert whisper._script("這個", "en") == "這個"  # only Chinese is converted
    monkeypatch.setattr(whisper, "chinese_script", "traditional")
    assert whisper._script("这个后面说话", "zh") == "這個後面說話"
    assert whisper._initial_prompt("zh") == "以下是普通話的句子。"


def test_mandarin_comes_out_in_the_script_asked_for(whisper, monkeypatch):
    """A person's "谢谢你" (joined syllables): the script end to end through the model, both ways."""
    audio = read_wav(str(DATA / "zh" / "syllables_xiexie.wav")).samples
    monkeypatch.setattr(whisper, "language", "zh")
    simplified = whisper.transcribe(audio).text
    assert simplified and convert_script(simplified, "simplified") == simplified  # no Traditional-only character
    monkeypatch.setattr(whisper, "chinese_script", "traditional")
    traditional = whisper.transcribe(audio).text
    assert convert_script(traditional, "traditional") == traditional
    assert convert_script(traditional, "simplified") != traditional  # Traditional characters in it


def test_hotwords_reach_the_decoder_prompt(whisper, monkeypatch):
    seen = []
    real = whisper._model.get_prompt

    def spy(*args, **kwargs):
        seen.append(kwargs.get("hotwords"))
        return real(*args, **kwargs)

    monkeypatch.setattr(whisper._model, "get_prompt", spy)
    monkeypatch.setattr(whisper, "hotwords", "Fay, Dashwood")
    audio = read_wav(str(DATA / "en" / "librivox_austen_0870.wav")).samples
    text = whisper.transcribe(audio).text
    assert seen == ["Fay, Dashwood"]
    assert "Dashwood" in text


def _bench_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "transcribe", "--bench", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_transcribe_bench_cli(tmp_path, capsys):
    for name in ("goforward", "cards_001"):
        for ext in (".wav", ".txt"):
            shutil.copy(DATA / "en" / f"{name}{ext}", tmp_path / f"{name}{ext}")
    shutil.copy(DATA / "en" / "cards_002.wav", tmp_path / "no_reference.wav")
    # A Mandarin clip dropped in, in its own folder, is scored by CER at once.
    zh = tmp_path / "zh"
    zh.mkdir()
    for ext in (".wav", ".txt"):
        shutil.copy(DATA / "zh" / f"syllables_xiexie{ext}", zh / f"thanks{ext}")
    out = _bench_cli(str(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines if "WER" in line and not line.startswith("total")] == [
        "cards_001",
        "goforward",
    ]
    assert [line.split()[:2] for line in lines if " CER " in line and not line.startswith("total")] == [
        ["thanks", "CER"]
    ], out.stdout
    simplified = lines[lines.index(next(line for line in lines if line.startswith("thanks"))) + 2]
    assert simplified.startswith("    hyp: ") and convert_script(simplified, "simplified") == simplified
    total = lines[-1]
    assert total.startswith("total: English WER") and "Mandarin CER" in total, total
    assert "RTF" in total and "3 clips" in total, total
    # the Traditional option, in this process (the command's own entry point, one model load less)
    assert cli_main(["transcribe", "--bench", str(zh), "--chinese-script", "traditional", "--json"]) == 0
    clip = json.loads(capsys.readouterr().out.splitlines()[0])
    assert clip["measure"] == "CER" and clip["hypothesis"], clip
    assert convert_script(clip["hypothesis"], "simplified") != clip["hypothesis"], clip  # Traditional asked for
    empty = subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "transcribe", "--bench", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert empty.returncode == 2 and "none: no such folder" in empty.stderr


def _decodes(recognizer, monkeypatch) -> list[float]:
    """The seconds of audio each of `recognizer`'s decodes hears from now on (in the test)."""
    heard: list[float] = []
    decode = recognizer.transcribe

    def counted(samples, *args, **kwargs):
        heard.append(len(samples) / 16000)
        return decode(samples, *args, **kwargs)

    monkeypatch.setattr(recognizer, "transcribe", counted)
    return heard


def _turn_finals(core, audio: np.ndarray) -> list:
    return [e for i in range(0, len(audio), 480) for e in core.feed(audio[i : i + 480], 16000, i / 16000) if e.is_final]


def test_a_long_turn_is_settled_at_its_pauses_and_keeps_every_word(whisper, monkeypatch):
    """JFK's line (11 s with pauses) through the recogniser's turn endpointing: the words before a
    pause the person spoke on after are settled, later decodes hear only the audio after them,
    and the one final has every word, timed from the utterance's start to its end."""
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.turns.end_of_turn import TurnSettings

    recognizer = whisper
    heard = _decodes(recognizer, monkeypatch)
    clip = next(c for c in find_clips(DATA) if c.name == "jfk_inaugural")
    voice = read_wav(str(clip.path)).samples
    audio = np.concatenate([np.zeros(8000, np.int16), voice, np.zeros(32000, np.int16)])
    patient = TurnSettings(complete_ms=1200, prosody_ms=1200, endpoint_ms=1200)  # (the orator's pauses: one turn)
    core = AsrCore(recognizer, turn=patient)
    (final,) = _turn_finals(core, audio)
    assert score(clip.reference, final.text).rate <= 0.1, final.text
    assert "for your country" in final.text.lower(), final.text
    assert core._settled_index > 0, "a pause of the long turn was settled"
    assert max(heard) < 8.0, f"no decode heard the whole {len(voice) / 16000:.1f} s again: {heard}"
    starts = [w.start for w in final.words]
    assert starts == sorted(starts) and final.words[-1].word.lower().startswith("country"), final.words
    assert final.words[-1].end > len(voice) / 16000 - 1.0, "the last word is timed from the utterance's start"

    whole = AsrCore(recognizer, turn=patient, settle_after_s=0)  # never settled: decoded whole
    heard.clear()
    (again,) = _turn_finals(whole, audio)
    assert whole._settled_index == 0 and max(heard) > len(voice) / 16000, heard
    assert score(clip.reference, again.text).rate <= 0.1, again.text


def test_a_short_turn_is_decoded_whole(whisper):
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.turns.end_of_turn import TurnSettings

    recognizer = whisper
    clip = next(c for c in find_clips(DATA) if c.name == "cards_002")  # "four, queen of clubs": a pause after four
    audio = np.concatenate([np.zeros(8000, np.int16), read_wav(str(clip.path)).samples, np.zeros(32000, np.int16)])
    core = AsrCore(recognizer, turn=TurnSettings())
    (final,) = _turn_finals(core, audio)
    assert core._settled_index == 0 and "queen" in final.text.lower(), final.text
    with pytest.raises(ValueError, match=r"settle_after_s must be >= 0 \(got -1\)"):
        AsrCore(recognizer, settle_after_s=-1)


def test_settled_parts_join_as_one_transcript():
    from fay_ros.hearing.whisper_backend import join_texts

    assert join_texts(["He might have been made...", "still more respectable."], "en") == (
        "He might have been made still more respectable."
    )
    assert join_texts(["And so, my fellow Americans,", "ask not."], "en") == "And so, my fellow Americans, ask not."
    assert join_texts(["我想…", "去公园。"], "zh") == "我想去公园。"
    assert join_texts(["Yes.", ""], "en") == "Yes."
    assert join_texts(["Wait...", "..."], "en") == "Wait ...", "only a settled part's pause mark goes"


def test_the_fading_tail_of_a_real_last_word_needs_no_second_decode(whisper, monkeypatch):
    """ "Seven of clubs." (cards_003): a moment after the last word's first silent frame the WebRTC
    VAD hears the recording's fading tail as voice again (20-35 dB under the voice). It adds no
    words: the decode made at that first silent frame is the final, with no second one."""
    from fay_ros.hearing import asr_core
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.vad import DEFAULT_SILERO_VETO_MS, VadSettings
    from fay_ros.turns.end_of_turn import TurnSettings

    decodes = _decodes(whisper, monkeypatch)
    clip = next(c for c in find_clips(DATA) if c.name == "cards_003")
    audio = np.concatenate([np.zeros(8000, np.int16), read_wav(str(clip.path)).samples, np.zeros(40000, np.int16)])

    def finals() -> list[str]:
        vad = VadSettings(stop_ms=700, silero_veto_ms=DEFAULT_SILERO_VETO_MS)  # (the asr's defaults)
        return [e.text for e in _turn_finals(AsrCore(whisper, vad, turn=TurnSettings()), audio)]

    tail_db = asr_core.TAIL_DB
    monkeypatch.setattr(asr_core, "TAIL_DB", 200.0)  # no sound is a tail: the tail is decoded again
    assert finals() == ["Seven of clubs."] and len(decodes) == 2, decodes
    decodes.clear()
    monkeypatch.setattr(asr_core, "TAIL_DB", tail_db)
    assert finals() == ["Seven of clubs."] and len(decodes) == 1, decodes
