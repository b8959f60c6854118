"""`fay-ros transcribe FILE.wav`: print the transcript of a WAV file with word timings."""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("transcribe", help="transcribe a WAV file offline and print it with word timings")
    p.add_argument("wav", help="16-bit PCM WAV file (any rate, mono or stereo)")
    p.add_argument("--backend", choices=("whisper", "vosk"), default="whisper", help="recogniser (default whisper)")
    p.add_argument("--model", default="", help="model directory or name under models/ ('' = packaged whisper base)")
    p.add_argument("--language", default="auto", help="language code (en, zh, ...) or auto (default)")
    p.add_argument("--endpoint-ms", type=int, default=500, help="silence that separates utterances (ms)")
    p.add_argument("--json", action="store_true", help="print one JSON object per utterance instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..common.wav import AudioFormatError, read_wav
    from ..hearing.asr_core import AsrCore
    from ..hearing.models import ModelError
    from ..hearing.recognizer import create_recognizer
    from ..hearing.vad import VadSettings

    try:
        wav = read_wav(args.wav)
        recognizer = create_recognizer(args.backend, args.model, args.language)
    except (AudioFormatError, ModelError, ValueError) as exc:
        print(f"fay-ros transcribe: {exc}", file=sys.stderr)
        return 2
    core = AsrCore(recognizer, VadSettings(stop_ms=args.endpoint_ms))
    chunk = wav.sample_rate // 10
    finals = []
    for i in range(0, len(wav.samples), chunk):
        finals += [e for e in core.feed(wav.samples[i : i + chunk], wav.sample_rate, i / wav.sample_rate) if e.is_final]
    finals += [e for e in core.flush() if e.is_final]
    for ev in finals:
        if args.json:
            print(
                json.dumps(
                    {
                        "start": round(ev.start_time, 3),
                        "end": round(ev.end_time, 3),
                        "language": ev.language,
                        "confidence": round(ev.confidence, 3),
                        "text": ev.text,
                        "words": [
                            {
                                "word": w.word,
                                "start": round(ev.start_time + w.start, 3),
                                "end": round(ev.start_time + w.end, 3),
                                "confidence": round(w.confidence, 3),
                            }
                            for w in ev.words
                        ],
                    },
                    ensure_ascii=False,
                )
            )
            continue
        print(f"[{ev.start_time:7.2f} - {ev.end_time:7.2f}] ({ev.language or '?'}) {ev.text}")
        for w in ev.words:
            print(f"    {ev.start_time + w.start:7.2f} {ev.start_time + w.end:7.2f}  {w.word}  ({w.confidence:.2f})")
    if not finals:
        print("(no speech found)", file=sys.stderr)
    return 0
