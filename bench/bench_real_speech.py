"""Hearing on real recordings: WER (English) / CER (Mandarin) and real-time factor of every
Whisper model present, on the human recordings of test/data/speech (SOURCES.md there), decoded
the way the asr node hears them (VAD segmenter -> recogniser; hearing.clip_bench)."""

from __future__ import annotations

import os
from pathlib import Path

TITLE = "Hearing on real recordings: WER / CER and real-time factor per model"
DATA = Path(__file__).resolve().parents[1] / "test" / "data" / "speech"
AIMS = "aims with the embedded model: English WER ≤ 5 %, Mandarin CER ≤ 12 %"


def whisper_models() -> list[tuple[str, str]]:
    """(label, model spec): the embedded base, then every other CTranslate2 Whisper directory
    in the model folders (a model.bin beside a tokenizer.json)."""
    from fay_ros.hearing.models import default_whisper_dir, search_dirs

    found = [("whisper base (embedded)", "")]
    seen = {default_whisper_dir().resolve()}
    for folder in search_dirs():
        if not folder.is_dir():
            continue
        for d in sorted(p for p in folder.iterdir() if p.is_dir()):
            if (d / "model.bin").is_file() and (d / "tokenizer.json").is_file() and d.resolve() not in seen:
                seen.add(d.resolve())
                found.append((d.name, str(d)))
    return found


def _pct(score) -> str:
    return f"{100 * score.rate:.1f} % ({score.errors}/{score.length})" if score.length else "—"


def _long_recording(label: str, recognizer, pause_s: float = 0.6, language: str = "en") -> str:
    """One row: the five LibriVox sentences ("en") or ten Mandarin phrases ("zh",
    test/zh_syllables.py) joined with `pause_s` pauses, decoded as one utterance."""
    import time

    import numpy as np

    from fay_ros.common.wav import read_wav
    from fay_ros.hearing.scoring import score
    from zh_syllables import long_turn

    if language == "zh":
        audio, reference = long_turn(pause_s)
    else:
        gap = np.zeros(int(16000 * pause_s), dtype=np.int16)
        parts, refs = [], []
        for n in ("0870", "0880", "0890", "0920", "0930"):
            parts += [read_wav(str(DATA / "en" / f"librivox_austen_{n}.wav")).samples, gap]
            refs.append((DATA / "en" / f"librivox_austen_{n}.txt").read_text(encoding="utf-8").strip())
        audio, reference = np.concatenate(parts), " ".join(refs)
    recognizer.language = language
    t0 = time.perf_counter()
    text = recognizer.transcribe(audio).text
    seconds = time.perf_counter() - t0
    recognizer.language = "auto"
    s = score(reference, text)
    tail = text.rstrip()[-8:] if language == "zh" else " ".join(text.split()[-3:])
    rtf = seconds * 16000 / len(audio)
    measure = "CER" if language == "zh" else "WER"
    return (
        f"| {label} | {language}: {len(audio) / 16000:.1f} s, {pause_s:.1f} s pauses | {measure} "
        f"{100 * s.rate:.1f} % ({s.errors}/{s.length}) | {tail} | {seconds:.2f} | {rtf:.2f} |"
    )


def _cut_rows(recognizer) -> list[str]:
    """Recordings longer than the longest utterance, streamed through the segmenter as
    `fay-ros transcribe` and the asr do: the English recordings back to back (their own pauses
    only), cut at a pause in the last quarter of max_utterance_s (now) or where the maximum
    falls (before). A cut in a word: the 120 ms after an utterance's last voice are louder than
    a fifth of the recording's level."""
    import numpy as np

    from fay_ros.common.wav import read_wav
    from fay_ros.hearing import segmenter
    from fay_ros.hearing.clip_bench import joined, transcribe_stream
    from fay_ros.hearing.scoring import score

    names = ["jfk_inaugural"] + [f"librivox_austen_{n}" for n in ("0870", "0880", "0890", "0920", "0930")]
    six = [read_wav(str(DATA / "en" / f"{n}.wav")).samples for n in names]
    refs = [(DATA / "en" / f"{n}.txt").read_text(encoding="utf-8").strip() for n in names]
    recordings = [
        ("six recordings", np.concatenate(six), " ".join(refs), (12.0, 20.0)),
        ("six recordings, three times", np.concatenate(six * 3), " ".join(refs * 3), (30.0,)),
    ]
    recognizer.language = "en"
    rows = []
    fraction = segmenter.CUT_SEARCH_FRACTION
    try:
        for name, audio, reference, maxima in recordings:
            level = float(np.sqrt(np.mean(audio.astype(float) ** 2)))
            for longest in maxima:
                for how, share in (("at a pause (now)", fraction), ("where the maximum falls (before)", 0.0)):
                    segmenter.CUT_SEARCH_FRACTION = share
                    finals = transcribe_stream(recognizer, audio, 16000, endpoint_ms=700, max_utterance_s=longest)
                    in_words = 0
                    for final in finals[:-1]:
                        a = int(final.end_time * 16000)
                        after = audio[a : a + int(0.12 * 16000)].astype(float)
                        in_words += bool(len(after)) and float(np.sqrt(np.mean(after**2))) > 0.2 * level
                    rows.append(
                        f"| {name}, {len(audio) / 16000:.0f} s | {longest:.0f} s | {how} | {len(finals) - 1} | "
                        f"{in_words} | {_pct(score(reference, joined(finals)))} |"
                    )
    finally:
        segmenter.CUT_SEARCH_FRACTION = fraction
        recognizer.language = "auto"
    return rows


HUM_LEVELS_DBFS = (-37.0, -32.0, -27.0)
HUM_DC = 1500  # a cheap microphone's offset, in samples


def with_hum(samples, rate: int, dbfs: float, before_s: float = 1.0, after_s: float = 2.0):
    """`samples` between stretches of 50 Hz mains hum, with its third harmonic and a DC offset
    under the whole recording, at `dbfs` RMS (a real microphone's: the WebRTC VAD calls it
    speech from about -32 dBFS)."""
    import numpy as np

    speech = np.concatenate(
        [np.zeros(int(before_s * rate)), np.asarray(samples, np.float64), np.zeros(int(after_s * rate))]
    )
    t = np.arange(len(speech)) / rate
    amplitude = 32768 * 10 ** (dbfs / 20) / np.sqrt(0.5 * 1.25)  # the two tones' RMS at dbfs
    hum = amplitude * (np.sin(2 * np.pi * 50 * t) + 0.5 * np.sin(2 * np.pi * 150 * t)) + HUM_DC
    return np.clip(speech + hum, -32768, 32767).astype(np.int16)


def _hum_rows(recognizer, clips) -> list[str]:
    """The embedded model's WER on the English clips under mains hum, and how many recordings
    the VAD kept open past their voice (ended by the recording's end, not by its silence)."""
    from fay_ros.common.wav import read_wav
    from fay_ros.hearing.clip_bench import joined, transcribe_stream
    from fay_ros.hearing.scoring import Score, score

    rows = []
    english = [c for c in clips if not c.chinese]
    for dbfs in HUM_LEVELS_DBFS:
        total, held = Score(0, 0, "word"), 0
        for clip in english:
            wav = read_wav(str(clip.path))
            audio = with_hum(wav.samples, wav.sample_rate, dbfs)
            finals = transcribe_stream(recognizer, audio, wav.sample_rate)
            got = score(clip.reference, joined(finals), False)
            total = Score(total.errors + got.errors, total.length + got.length, "word")
            end_of_voice = 1.0 + len(wav.samples) / wav.sample_rate
            held += bool(finals) and finals[-1].end_time > end_of_voice + 1.0
        rows.append(f"| {dbfs:.0f} dBFS | {_pct(total)} | {held} of {len(english)} |")
    return rows


def _heard(recognizer, clips, altered, gain_db: float | None = None):
    """(English score, Mandarin score, clips with no words at all) of every clip's recording as
    `altered(clip, samples, rate)` makes it, through `transcribe_stream` (`gain_db` None: a quiet
    recording raised first, as `fay-ros transcribe` does)."""
    from fay_ros.common.wav import read_wav
    from fay_ros.hearing.clip_bench import joined, transcribe_stream
    from fay_ros.hearing.scoring import Score, score

    en, zh, lost = Score(0, 0, "word"), Score(0, 0, "char"), 0
    for clip in clips:
        wav = read_wav(str(clip.path))
        audio = altered(clip, wav.samples, wav.sample_rate)
        finals = transcribe_stream(recognizer, audio, wav.sample_rate, gain_db=gain_db)
        got = score(clip.reference, joined(finals), clip.chinese)
        lost += not finals
        if clip.chinese:
            zh += got
        else:
            en += got
    return en, zh, lost


def _reverberant_rows(recognizer, clips) -> list[str]:
    """The embedded model's WER / CER on every clip heard across a reverberant room
    (test/reverberant_room.py)."""
    from reverberant_room import ROOMS, reverberant, room_seed

    rows = []
    for room, rt60, drr in ROOMS:
        en, zh, lost = _heard(
            recognizer,
            clips,
            lambda clip, x, rate, rt60=rt60, drr=drr: reverberant(x, rt60, drr, room_seed(clip.name), rate),
        )
        rows.append(f"| {room} | {_pct(en)} | {_pct(zh)} | {lost} of {len(clips)} |")
    return rows


def _codec_rows(recognizer, clips) -> list[str]:
    """The embedded model's WER / CER on every clip stored as a phone, messenger or Common Voice
    stores a recording (test/encoded.py: FFmpeg's own encoders, read back by read_audio)."""
    from encoded import FORMATS, through_codec

    rows = []
    for label, container, codec, suffix, rate, bit_rate in FORMATS:
        en, zh, lost = _heard(
            recognizer,
            clips,
            lambda _clip, x, _rate, f=(container, codec, suffix, rate, bit_rate): through_codec(x, *f),
        )
        rows.append(f"| {label} | {_pct(en)} | {_pct(zh)} | {lost} of {len(clips)} |")
    return rows


QUIET_LEVELS_DB = (-20.0, -30.0, -40.0)


def _quiet_rows(recognizer, clips) -> list[str]:
    """The embedded model's WER / CER on every clip turned down (a microphone at low gain), as
    heard (gain 0) and raised to a microphone's usual level first (`transcribe_stream`'s
    default, audio.recording_gain_db)."""
    from fay_ros.common.wav import read_wav
    from fay_ros.hearing.audio import amplified, recording_gain_db

    rows = []
    for down in QUIET_LEVELS_DB:
        cells = []
        for gain_db in (0.0, None):
            en, zh, lost = _heard(recognizer, clips, lambda _clip, x, _rate, down=down: amplified(x, down), gain_db)
            cells.append(f"{_pct(en)} | {_pct(zh)} | {lost} of {len(clips)}")
        gains = [recording_gain_db(amplified(read_wav(str(c.path)).samples, down), 16000) for c in clips]
        rows.append(f"| {down:.0f} dB | {cells[0]} | {cells[1]} | {min(gains):.0f}-{max(gains):.0f} dB |")
    return rows


def run() -> str:
    from fay_ros.hearing.clip_bench import find_clips, run_clip, totals
    from fay_ros.hearing.whisper_backend import LONG_FORM_S, WhisperRecognizer

    load = os.getloadavg()[0]  # other work on the machine slows every decode: RTFs scale with it
    clips = find_clips(DATA)
    rows = [
        "| model | English WER | Mandarin CER | worst clip | most repeats of a phrase | RTF |",
        "|---|---:|---:|---|---:|---:|",
    ]
    details: list[str] = []
    long_rows = []
    hum_rows: list[str] = []
    quiet_rows: list[str] = []
    reverb_rows: list[str] = []
    codec_rows: list[str] = []
    cut_rows: list[str] = []
    models = whisper_models()
    runs = [(label, spec, ()) for label, spec in models]
    runs.insert(1, ("whisper base + hotwords Fay, 菲菲", "", ("Fay", "菲菲")))
    for label, spec, hotwords in runs:
        recognizer = WhisperRecognizer(spec, language="auto", hotwords=hotwords)
        results = [run_clip(recognizer, clip) for clip in clips]
        t = totals(results)
        worst = max(results, key=lambda r: r.score.rate)
        repeats = max(r.repeats for r in results)
        rows.append(
            f"| {label} | {_pct(t.english)} | {_pct(t.chinese)} | {worst.clip.name} "
            f"{100 * worst.score.rate:.0f} % | {repeats} | {t.rtf:.2f} |"
        )
        long_rows += [_long_recording(label, recognizer, pause) for pause in (0.6, 1.0)]
        long_rows.append(_long_recording(label, recognizer, 0.6, "zh"))
        if not spec and not hotwords:  # the one-pass decode without timestamps, as before 10 s
            recognizer.long_form_s = 60.0
            long_rows += [_long_recording(label + ", one pass (before)", recognizer, p) for p in (0.6, 1.0)]
            recognizer.long_form_s = LONG_FORM_S
        if not spec and not hotwords:
            cut_rows = _cut_rows(recognizer)
            hum_rows = _hum_rows(recognizer, clips)
            quiet_rows = _quiet_rows(recognizer, clips)
            reverb_rows = _reverberant_rows(recognizer, clips)
            codec_rows = _codec_rows(recognizer, clips)
            details = [
                "| clip | s | WER/CER | transcript |",
                "|---|---:|---:|---|",
                *(
                    f"| {r.clip.name} | {r.duration:.1f} | {100 * r.score.rate:.0f} % | {r.hypothesis} |"
                    for r in results
                ),
            ]
    en = sum(not c.chinese for c in clips)
    zh = len(clips) - en
    return "\n".join(
        [
            f"{en} English and {zh} Mandarin human recordings ({AIMS}); language detection on "
            "(auto among en, zh), greedy decoding, 1 CPU thread, int8. WER over words after lower "
            "case, punctuation, number and British -> American spelling normalisation; CER over "
            "characters after Traditional -> "
            "Simplified and numeral folding (fay_ros.hearing.scoring). The Mandarin recordings are a "
            "person's recorded syllables joined into phrases (Debian gcin-voice, CC-BY-3.0; "
            "test/zh_syllables.py): a real Mandarin voice, not continuous or spontaneous Mandarin, "
            "which no registry reachable here ships (test/data/speech/SOURCES.md). "
            f"Load average when the run started: {load:.1f} on {os.cpu_count()} cores (the decode "
            "times and RTFs grow with it; the error rates do not change).",
            "",
            f"Other Whisper models present (FAY_MODELS_DIR, models/, <prefix>/share/fay_ros/models): "
            f"{', '.join(label for label, spec in models if spec) or 'none'}. No package registry ships "
            "a complete stronger one (models/README.md); a model pulled or copied there is measured here.",
            "",
            *rows,
            "",
            "One long recording decoded as one utterance (the five LibriVox sentences, or ten of the "
            "Mandarin phrases, joined with pauses; a long turn). From 10 s on the backend decodes with "
            "timestamps (faster-whisper's long form); 'one pass' is the decode without timestamps it used before:",
            "",
            "| model | recording | WER / CER | last words heard | decode s | RTF |",
            "|---|---|---:|---|---:|---:|",
            *long_rows,
            "",
            "Longer than the longest utterance (`max_utterance_s`: 20 s live, 30 s in `fay-ros "
            "transcribe`), streamed through the segmenter, embedded model: the English recordings "
            "back to back with their own pauses only. Now an utterance that reaches its last quarter "
            "closes at a 150 ms pause; before, it was cut where the maximum fell. A cut in a word: "
            "the 120 ms after an utterance's last voice are louder than a fifth of the recording's level:",
            "",
            "| recording | max_utterance_s | cut | cuts | cuts in a word | WER |",
            "|---|---:|---|---:|---:|---:|",
            *cut_rows,
            "",
            "Under a microphone's mains hum (50 Hz and 150 Hz, a DC offset of "
            f"{HUM_DC}, 1 s of it before each English recording and 2 s after), embedded model; "
            "held open: the last utterance ended more than 1 s after the voice (the hum kept it "
            "open until the recording ended). The VAD measures the level on the whole band or from "
            "250 Hz up, and never calls a steady sound voice (docs/hearing.md):",
            "",
            "| hum | English WER | recordings held open by the hum |",
            "|---|---:|---:|",
            *hum_rows,
            "",
            "Quiet recordings: every clip turned down (a microphone at low gain, a phone on the table, "
            "a far speaker), embedded model, heard as it is and raised first to a microphone's usual "
            "level (the loudest 300 ms at -15 dBFS, by at most 40 dB: what `fay-ros transcribe` and "
            "`--bench` do, fay_ros.hearing.audio.recording_gain_db; live, the asr node's "
            "input_gain_db, which its room status on /diagnostics suggests). The VAD takes no frame "
            "under -50 dBFS for voice; lost: no words at all:",
            "",
            "| turned down by | as heard: English WER | Mandarin CER | lost | raised first: English WER "
            "| Mandarin CER | lost | raised by |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            *quiet_rows,
            "",
            "Stored as people send recordings (each clip encoded by FFmpeg's own encoder and read "
            "back by `fay-ros transcribe`'s reader, fay_ros.common.wav.read_audio; test/encoded.py), "
            "embedded model, the WAV in the first table:",
            "",
            "| format | English WER | Mandarin CER | lost |",
            "|---|---:|---:|---:|",
            *codec_rows,
            "",
            "Across a reverberant room (the recordings convolved with a statistical room impulse "
            "response, test/reverberant_room.py: a person a few metres from the robot), embedded model, "
            "dry recordings in the first table. Nothing is done against reverberation (no dereverberation):",
            "",
            "| room | English WER | Mandarin CER | lost |",
            "|---|---:|---:|---:|",
            *reverb_rows,
            "",
            "Per clip, embedded model:",
            "",
            *details,
        ]
    )
