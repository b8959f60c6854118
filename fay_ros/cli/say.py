"""`fay-ros say "TEXT" --wav out.wav --visemes out.json`: the tts node's voice, offline.

Runs the same sanitiser, engine and viseme builder as the tts node, without ROS, and writes
the audio and the viseme track (plus the timed phonemes it came from) for use elsewhere or
for checking lip-sync by eye or by script.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..common.wav import write_wav
from ..voice.engine_types import VoiceError, VoiceSettings, check_voice_name
from ..voice.engines import ENGINES, create_engine
from ..voice.sanitize import sanitize_for_speech
from ..voice.visemes import build_track, track_from_energy

# About five minutes of speech. The audio and the phoneme events are held in memory whole
# (100 kB of text took two minutes and 800 MB), so longer text is refused, not truncated.
MAX_SAY_CHARS = 5000


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("say", help="synthesize text offline: WAV audio and a viseme track (JSON)")
    p.add_argument("text", nargs="?", help="what to say (markdown, URLs, code and <think> are not spoken)")
    p.add_argument("--wav", type=Path, help="write the audio here (16-bit mono WAV)")
    p.add_argument("--visemes", type=Path, help="write the viseme track and timed phonemes here (JSON)")
    p.add_argument("--engine", choices=ENGINES, default="espeak-ng", help="synthesis engine (default espeak-ng)")
    p.add_argument("--english-voice", default="en-us", help="espeak-ng voice for English text")
    p.add_argument("--chinese-voice", default="cmn-latn-pinyin", help="espeak-ng voice for Chinese text")
    p.add_argument("--rate", type=int, default=175, help="words per minute (default 175)")
    p.add_argument("--id", default="say:0", help="utterance id written into the viseme track")
    p.add_argument(
        "--max-chars",
        type=int,
        default=MAX_SAY_CHARS,
        help=f"refuse text longer than this many characters (default {MAX_SAY_CHARS})",
    )
    p.add_argument("--play", action="store_true", help="also play it on the default sound device")
    p.add_argument("--list-voices", action="store_true", help="list the engine's voices and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = VoiceSettings(check_voice_name(args.english_voice), check_voice_name(args.chinese_voice), args.rate)
        if not 80 <= args.rate <= 450:
            raise ValueError(f"--rate must be 80..450 words per minute, got {args.rate}")
        if args.max_chars < 1:
            raise ValueError(f"--max-chars must be at least 1, got {args.max_chars}")
        if args.text is not None and len(args.text) > args.max_chars:
            raise ValueError(
                f"the text is {len(args.text)} characters; the limit is {args.max_chars} "
                f"(--max-chars): split it, or raise the limit"
            )
        engine = create_engine(args.engine, settings)
    except (ValueError, VoiceError) as exc:
        print(f"fay-ros say: {exc}", file=sys.stderr)
        return 2
    if args.list_voices:
        print("\n".join(engine.voices()))
        return 0
    if args.text is None:
        print("fay-ros say: give the TEXT to say (or --list-voices)", file=sys.stderr)
        return 2
    cleaned = sanitize_for_speech(args.text)
    if cleaned.changed:
        print(f"fay-ros say: not spoken: {cleaned.summary()}", file=sys.stderr)
    if not cleaned.text:
        print("fay-ros say: nothing speakable is left after sanitising", file=sys.stderr)
        return 1
    synthesis = engine.synthesize(cleaned.text)
    if synthesis.has_timings:
        track = build_track(args.id, synthesis.phonemes, synthesis.duration)
    else:
        track = track_from_energy(args.id, synthesis.samples, synthesis.sample_rate)
    if args.wav:
        write_wav(args.wav, synthesis.samples, synthesis.sample_rate)
    if args.visemes:
        doc = {
            **track.as_dict(),
            "engine": engine.name,
            "timing": "phoneme events" if synthesis.has_timings else "loudness (engine gives no phoneme timings)",
            "sample_rate": synthesis.sample_rate,
            "text": cleaned.text,
            "dropped": {kind: {"count": c, "chars": n} for kind, (c, n) in cleaned.dropped.items()},
            "runs": [
                {"language": r.language, "voice": r.voice, "text": r.text, "start": round(r.start, 4)}
                for r in synthesis.runs
            ],
            "phonemes": [{"start": round(p.start, 4), "ipa": p.ipa} for p in synthesis.phonemes],
        }
        args.visemes.parent.mkdir(parents=True, exist_ok=True)
        args.visemes.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    print(
        f"{synthesis.duration:.2f} s of audio at {synthesis.sample_rate} Hz, {len(track.frames)} viseme frames "
        f"({', '.join(r.voice for r in synthesis.runs)})"
        + (f"; audio -> {args.wav}" if args.wav else "")
        + (f"; visemes -> {args.visemes}" if args.visemes else "")
    )
    if args.play:
        return _play(synthesis.samples, synthesis.sample_rate)
    return 0


def _play(samples, sample_rate: int) -> int:
    try:
        import sounddevice as sd

        sd.query_devices(kind="output")
        sd.play(samples, sample_rate, blocking=True)
    except Exception as exc:  # noqa: BLE001 - PortAudio raises several types for "no device"
        print(f"fay-ros say: cannot play: no usable audio output device ({exc})", file=sys.stderr)
        return 1
    return 0
