"""`fay-ros transcribe FILE`: print the transcript of a recording (WAV, FLAC, MP3, Ogg, M4A,
WebM) with word timings (a quiet recording is raised to a microphone's usual level first, and
says so).

`fay-ros transcribe --bench DIR [--references LIST]`: transcribe every recording under DIR that
has a reference (NAME.txt beside it, a LibriSpeech CHAPTER.trans.txt under DIR, or its line in
LIST: "NAME text" lines or a Common Voice TSV), and print each clip's WER (English) or CER
(Chinese), the totals and the real-time factor (hearing.clip_bench, hearing.scoring).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("transcribe", help="transcribe a recording offline and print it with word timings")
    p.add_argument(
        "wav",
        nargs="?",
        default="",
        metavar="FILE",
        help="a recording: WAV (any PCM or float), FLAC, MP3, Ogg/Opus, M4A or WebM; any rate, mono or stereo",
    )
    p.add_argument(
        "--bench",
        metavar="DIR",
        default="",
        help="score every recording under DIR with a reference transcript (NAME.txt beside it, a LibriSpeech "
        "CHAPTER.trans.txt, or --references): WER/CER and RTF",
    )
    p.add_argument(
        "--references",
        metavar="LIST",
        default="",
        help="with --bench: a transcript list, 'NAME text' lines (Kaldi, AISHELL) or a TSV with path and "
        "sentence columns (Common Voice)",
    )
    p.add_argument("--backend", choices=("whisper", "vosk"), default="whisper", help="recogniser (default whisper)")
    p.add_argument("--model", default="", help="model directory or name under models/ ('' = packaged whisper base)")
    p.add_argument("--language", default="auto", help="language code (en, zh, ...) or auto (default)")
    p.add_argument("--endpoint-ms", type=int, default=500, help="silence that separates utterances (ms)")
    p.add_argument(
        "--chinese-script",
        choices=("simplified", "traditional", "as_is"),
        default="simplified",
        help="whisper: the script of Chinese transcripts (default simplified)",
    )
    p.add_argument("--hotwords", default="", help="whisper: words to favour, comma separated (names)")
    p.add_argument("--json", action="store_true", help="print one JSON object per utterance instead of text")
    p.set_defaults(func=run)


def _options(args: argparse.Namespace) -> dict:
    if args.backend != "whisper":
        return {}
    hotwords = [w.strip() for w in args.hotwords.split(",") if w.strip()]
    return {"chinese_script": args.chinese_script, "hotwords": hotwords}


def run(args: argparse.Namespace) -> int:
    from ..common.wav import AudioFormatError, read_audio
    from ..hearing.audio import recording_gain_db
    from ..hearing.clip_bench import transcribe_stream
    from ..hearing.models import ModelError
    from ..hearing.recognizer import create_recognizer

    if bool(args.wav) == bool(args.bench):
        print("fay-ros transcribe: give a recording or --bench DIR (one of them)", file=sys.stderr)
        return 2
    if args.references and not args.bench:
        print("fay-ros transcribe: --references goes with --bench DIR", file=sys.stderr)
        return 2
    try:
        wav = read_audio(args.wav) if args.wav else None
        recognizer = create_recognizer(args.backend, args.model, args.language, **_options(args))
    except (AudioFormatError, ModelError, ValueError) as exc:
        print(f"fay-ros transcribe: {exc}", file=sys.stderr)
        return 2
    if wav is None:
        return _bench(args, recognizer)
    gain_db = recording_gain_db(wav.samples, wav.sample_rate)
    if gain_db:
        print(f"(a quiet recording: raised by {gain_db:.0f} dB before the VAD hears it)", file=sys.stderr)
    finals = transcribe_stream(recognizer, wav.samples, wav.sample_rate, args.endpoint_ms, gain_db=gain_db)
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


def _bench(args: argparse.Namespace, recognizer) -> int:
    from ..common.wav import AudioFormatError
    from ..hearing.clip_bench import TranscriptListError, audio_files, find_clips, run_clip, totals

    if not Path(args.bench).is_dir():
        print(f"fay-ros transcribe: {args.bench}: no such folder", file=sys.stderr)
        return 2
    try:
        clips = find_clips(args.bench, args.references or None)
    except TranscriptListError as exc:
        print(f"fay-ros transcribe: {exc}", file=sys.stderr)
        return 2
    recordings = len(audio_files(args.bench))
    if not clips:
        print(
            f"fay-ros transcribe: none of the {recordings} recordings under {args.bench} has a reference "
            "(NAME.txt beside it, a CHAPTER.trans.txt, or its line in --references)",
            file=sys.stderr,
        )
        return 2
    if recordings > len(clips):
        print(f"({recordings - len(clips)} of {recordings} recordings have no reference: left out)", file=sys.stderr)
    results = []
    for clip in clips:
        try:
            r = run_clip(recognizer, clip, args.endpoint_ms)
        except AudioFormatError as exc:
            print(f"fay-ros transcribe: {clip.path}: {exc}", file=sys.stderr)
            return 2
        results.append(r)
        measure = "CER" if clip.chinese else "WER"
        if args.json:
            print(
                json.dumps(
                    {
                        "clip": str(clip.path),
                        "measure": measure,
                        "rate": round(r.score.rate, 4),
                        "errors": r.score.errors,
                        "length": r.score.length,
                        "rtf": round(r.rtf, 3),
                        "reference": clip.reference,
                        "hypothesis": r.hypothesis,
                    },
                    ensure_ascii=False,
                )
            )
            continue
        print(
            f"{clip.name:28s} {measure} {100 * r.score.rate:5.1f}% ({r.score.errors}/{r.score.length})  "
            f"{r.duration:5.1f} s  RTF {r.rtf:.2f}\n    ref: {clip.reference}\n    hyp: {r.hypothesis}"
        )
    t = totals(results)
    summary = []
    if t.english.length:
        summary.append(f"English WER {100 * t.english.rate:.1f}% ({t.english.errors}/{t.english.length} words)")
    if t.chinese.length:
        summary.append(f"Mandarin CER {100 * t.chinese.rate:.1f}% ({t.chinese.errors}/{t.chinese.length} chars)")
    summary.append(f"RTF {t.rtf:.2f} over {t.duration:.1f} s of audio, {len(results)} clips")
    print(("" if args.json else "\n") + "total: " + "; ".join(summary))
    return 0
