"""Turn-taking: when does the recogniser decide that the person has finished? On the
evaluation set test/data/turns (English and Chinese, with and without pauses inside the
sentence), synthesised with the project's own espeak-ng speech, for three endpointing
strategies in the same run: silence only, today's two-step early endpoint, and turn detection
(text + prosody + silence, fay_ros.turns.end_of_turn). Also the head start of the speculative reply."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.stats import percentile

TITLE = "Turn-taking: cut-offs, late ends and extra wait by endpointing strategy"
RATE = 16000
CHUNK = 480
EVAL_SET = Path(__file__).resolve().parents[1] / "test" / "data" / "turns" / "utterances.json"
LATE_MS = 600  # ending later than this after the last word feels sluggish (a human gap is ~200 ms)
LEAD_S, TRAIL_S = 0.5, 2.5
CUT_MARGIN_S = 0.3  # a final whose voice ends this much before the turn's last voiced sample cut it off


@dataclass
class Clip:
    id: str
    language: str
    audio: np.ndarray
    last_part_start: float  # seconds: the last part's speech starts here
    speech_end: float  # seconds: the last voiced sample of the whole turn
    pauses: list[float]  # seconds of each pause inside the turn


def voiced_bounds(samples: np.ndarray, threshold: float = 300.0) -> tuple[int, int]:
    """First and last sample of the 30 ms frames louder than `threshold` RMS."""
    frames = len(samples) // CHUNK
    rms = np.sqrt(np.mean(samples[: frames * CHUNK].astype(np.float64).reshape(frames, CHUNK) ** 2, axis=1))
    loud = np.flatnonzero(rms > threshold)
    if not len(loud):
        return 0, 0
    return int(loud[0]) * CHUNK, (int(loud[-1]) + 1) * CHUNK


def load_clips() -> list[Clip]:
    from synthetic_speech import silence, speak

    clips = []
    for item in json.loads(EVAL_SET.read_text(encoding="utf-8"))["utterances"]:
        pieces = [silence(LEAD_S)]
        last_start = 0.0
        for part in item["parts"]:
            if isinstance(part, (int, float)):
                pieces.append(silence(float(part)))
            else:
                said = speak(part, item["voice"])
                first, last = voiced_bounds(said)
                said = said[first:last]  # espeak-ng pads its output with silence: the pause is the pause
                last_start = sum(len(p) for p in pieces) / RATE
                pieces.append(said)
        speech_end = sum(len(p) for p in pieces) / RATE
        pieces.append(silence(TRAIL_S))
        clips.append(
            Clip(
                item["id"],
                item["id"][:2],
                np.concatenate(pieces),
                last_start,
                speech_end,
                [float(p) for p in item["parts"] if isinstance(p, (int, float))],
            )
        )
    return clips


@dataclass
class Outcome:
    cut_off: bool
    extra_wait_s: float  # when the final was ready minus the end of speech (not cut off)
    speculative_lead_s: float  # final ready minus the moment its speculative text was ready
    discarded_speculations: int  # speculative decodes the person talked on after
    texts: list[str] = field(default_factory=list)


def replay(clip: Clip, core) -> Outcome:
    """The asr worker's view: chunk i arrives when its last sample is captured and is processed
    when the worker is free; decoding time counts. Speculative events (speech/speculative) are
    timed as the worker hands them out (through `on_speculative`, as the node publishes them:
    before the rest of that chunk's work, such as the final's word alignment)."""
    guesses: list[tuple[float, str]] = []  # (ready at, text; "" = withdrawn)
    busy_until = 0.0
    clock = {"start": 0.0, "t0": 0.0}
    core.on_speculative = lambda e: guesses.append((clock["start"] + time.perf_counter() - clock["t0"], e.text))
    for i in range(0, len(clip.audio), CHUNK):
        arrival = (i + CHUNK) / RATE
        busy_until = max(busy_until, arrival)
        behind = (i + 2 * CHUNK) / RATE <= busy_until  # the next chunk has arrived already
        clock["start"], clock["t0"] = busy_until, time.perf_counter()
        events = core.feed(clip.audio[i : i + CHUNK], RATE, i / RATE, behind=behind)
        busy_until += time.perf_counter() - clock["t0"]
        finals = [e for e in events if e.is_final]
        if finals:
            final = finals[0]
            # cut off: the final's last voiced sample lies before the person's last words
            cut = final.end_time < clip.speech_end - CUT_MARGIN_S
            used = bool(guesses and guesses[-1][1] and guesses[-1][1] == final.text)
            lead = busy_until - guesses[-1][0] if used else 0.0
            discarded = sum(1 for _, text in guesses if text) - used
            return Outcome(cut, busy_until - clip.speech_end, lead, discarded, [final.text])
    return Outcome(False, float("nan"), 0.0, 0)


def strategies():
    from fay_ros.hearing.asr_core import AsrCore
    from fay_ros.hearing.vad import VadSettings
    from fay_ros.turns.end_of_turn import TurnSettings

    return [
        ("silence only (700 ms)", lambda rec: AsrCore(rec, VadSettings(stop_ms=700), early_endpoint_ms=0)),
        (
            "two-step (early 250 ms if the text ends a sentence, else 700 ms)",
            lambda rec: AsrCore(rec, VadSettings(stop_ms=700), early_endpoint_ms=250),
        ),
        (
            "turn detection (text + prosody + silence; defaults)",
            lambda rec: AsrCore(rec, VadSettings(stop_ms=700), early_endpoint_ms=250, turn=TurnSettings()),
        ),
    ]


def evaluate(recognizers: dict, clips: list[Clip]) -> list[tuple[str, list[tuple[Clip, Outcome]]]]:
    results = []
    for label, make in strategies():
        rows = []
        for clip in clips:
            rec = recognizers[clip.language]
            rows.append((clip, replay(clip, make(rec))))
        results.append((label, rows))
    return results


def summarise(rows: list[tuple[Clip, Outcome]]) -> dict[str, float]:
    cut = [o.cut_off for _, o in rows]
    waits = [o.extra_wait_s for _, o in rows if not o.cut_off and not np.isnan(o.extra_wait_s)]
    late = [w * 1000 > LATE_MS for w in waits]
    leads = [o.speculative_lead_s for _, o in rows if not o.cut_off and o.speculative_lead_s > 0]
    return {
        "cut_off_rate": float(np.mean(cut)),
        "late_rate": float(np.mean(late)) if late else float("nan"),
        "mean_wait_ms": 1000 * float(np.mean(waits)) if waits else float("nan"),
        "p95_wait_ms": 1000 * percentile(waits, 0.95) if waits else float("nan"),
        "lead_ms": 1000 * float(np.mean(leads)) if leads else 0.0,
        "lead_share": len(leads) / max(1, len(waits)),
        "discarded": float(sum(o.discarded_speculations for _, o in rows)),
    }


def run() -> str:
    from fay_ros.hearing.whisper_backend import WhisperRecognizer

    clips = load_clips()
    english = WhisperRecognizer(language="en")
    chinese = WhisperRecognizer(language="zh")
    english.transcribe(clips[0].audio[:RATE])  # warm-up
    results = evaluate({"en": english, "zh": chinese}, clips)
    pauses = [p for c in clips for p in c.pauses]
    paused = sum(bool(c.pauses) for c in clips)
    lines = [
        f"{len(clips)} utterances from `test/data/turns/utterances.json` ({paused} with a pause of "
        f"{min(pauses):.1f}–{max(pauses):.1f} s inside the sentence, half English, half Chinese), espeak-ng speech, "
        "Whisper base on 2 shared cores, "
        "replayed as the asr worker sees them (decoding time counts). Cut-off: the final came before the "
        f"person's last words. Late: the final came more than {LATE_MS} ms after the last voiced sample. "
        "Extra wait: final ready minus last voiced sample (utterances not cut off).",
        "",
        "| endpointing | cut-off rate | late-end rate | mean extra wait | p95 extra wait |",
        "|---|---|---|---|---|",
    ]
    figures = {}
    for label, rows in results:
        s = summarise(rows)
        figures[label] = s
        lines.append(
            f"| {label} | {s['cut_off_rate']:.0%} | {s['late_rate']:.0%} | {s['mean_wait_ms']:.0f} ms | "
            f"{s['p95_wait_ms']:.0f} ms |"
        )
    base, turn = figures[results[1][0]], figures[results[2][0]]
    lines += [
        "",
        "Per utterance (turn detection): "
        + ", ".join(f"{c.id} {'CUT' if o.cut_off else f'{o.extra_wait_s * 1000:.0f} ms'}" for c, o in results[2][1])
        + ".",
        "",
    ]
    lines.append(
        f"Against today's two-step endpoint in the same run, turn detection changes the mean extra wait from "
        f"{base['mean_wait_ms']:.0f} ms to **{turn['mean_wait_ms']:.0f} ms** and the cut-off rate from "
        f"{base['cut_off_rate']:.0%} to **{turn['cut_off_rate']:.0%}**."
    )
    lines += [
        "",
        "Speculative reply (asr `speech/speculative` → dialogue `speculative_reply`): the recogniser "
        "sends the early text of a turn it judges complete as soon as it is decoded, the model starts on "
        "it, and the final that says the same takes that stream over. The model starts earlier than on "
        "the final by:",
        "",
        "| endpointing | turns answered from the speculative stream | mean head start | "
        "speculative starts discarded (the person went on) |",
        "|---|---|---|---|",
    ]
    for label, _rows in results:
        s = figures[label]
        lines.append(f"| {label} | {s['lead_share']:.0%} | {s['lead_ms']:.0f} ms | {s['discarded']:.0f} |")
    return "\n".join(lines)
