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
    from ..hearing.clip_bench import stream_finals
    from ..hearing.models import ModelError
    from ..hearing.recognizer import create_recognizer

    if bool(args.wav) == bool(args.bench):
        print("fay-ros transcribe: give a recording or --bench DIR (one of them)", file=sys.stderr)
        return 2
    if args.references and not args.bench:
        print("fay-ros transcribe: --references goes with --bench DIR", file=sys.stderr)
        return 2
    if args.wav and Path(args.wav).is_dir():
        print(
            f"fay-ros transcribe: {args.wav} is a folder; to score its recordings: --bench {args.wav}", file=sys.stderr
        )
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
    heard = stream_finals(recognizer, wav.samples, wav.sample_rate, args.endpoint_ms, gain_db=gain_db)
    bar = _progress(wav.duration, "s", Path(args.wav).name, PROGRESS_FROM_S)
    any_speech = False
    for finals, done in heard:
        bar.update(round(done - bar.n, 1))
        for ev in finals:
            any_speech = True
            with bar.external_write_mode():
                print(_utterance(ev, args.json), flush=True)
    bar.close()
    if not any_speech:
        print("(no speech found)", file=sys.stderr)
    return 0


# A recording at least this long shows a progress bar on a terminal (its utterances are printed
# as they are heard either way).
PROGRESS_FROM_S = 20.0


def _progress(total: float, unit: str, desc: str, shown_from: float = 0.0):
    """tqdm on stderr, only on a terminal and for work of at least `shown_from` units."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=unit,
        desc=desc,
        leave=False,
        disable=not sys.stderr.isatty() or total < shown_from,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} {unit} [{elapsed}<{remaining}]",
    )


def _utterance(ev, as_json: bool) -> str:
    """One final as `fay-ros transcribe` prints it: a JSON object, or a heading and its words."""
    if as_json:
        return json.dumps(
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
    lines = [f"[{ev.start_time:7.2f} - {ev.end_time:7.2f}] ({ev.language or '?'}) {ev.text}"]
    lines += [
        f"    {ev.start_time + w.start:7.2f} {ev.start_time + w.end:7.2f}  {w.word}  ({w.confidence:.2f})"
        for w in ev.words
    ]
    return "\n".join(lines)


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
    results, unreadable = [], 0
    bar = _progress(len(clips), "clip", "scoring")
    for clip in clips:
        try:
            r = run_clip(recognizer, clip, args.endpoint_ms)
        except AudioFormatError as exc:  # (one broken file of a corpus: said, and the rest scored)
            unreadable += 1
            with bar.external_write_mode():
                print(f"fay-ros transcribe: {exc}", file=sys.stderr)
            bar.update(1)
            continue
        results.append(r)
        with bar.external_write_mode():
            print(_clip_line(r, args.json), flush=True)
        bar.update(1)
    bar.close()
    if not results:
        print(f"fay-ros transcribe: none of the {len(clips)} recordings could be read", file=sys.stderr)
        return 2
    t = totals(results)
    summary = []
    if t.english.length:
        summary.append(f"English WER {100 * t.english.rate:.1f}% ({t.english.errors}/{t.english.length} words)")
    if t.chinese.length:
        summary.append(f"Mandarin CER {100 * t.chinese.rate:.1f}% ({t.chinese.errors}/{t.chinese.length} chars)")
    summary.append(f"RTF {t.rtf:.2f} over {t.duration:.1f} s of audio, {len(results)} clips")
    if unreadable:
        summary.append(f"{unreadable} recordings unreadable (above)")
    print(("" if args.json else "\n") + "total: " + "; ".join(summary))
    return 1 if unreadable else 0


def _clip_line(r, as_json: bool) -> str:
    """One scored clip as `--bench` prints it: a JSON object, or its score, reference and hypothesis."""
    measure = "CER" if r.clip.chinese else "WER"
    if as_json:
        return json.dumps(
            {
                "clip": str(r.clip.path),
                "measure": measure,
                "rate": round(r.score.rate, 4),
                "errors": r.score.errors,
                "length": r.score.length,
                "rtf": round(r.rtf, 3),
                "reference": r.clip.reference,
                "hypothesis": r.hypothesis,
            },
            ensure_ascii=False,
        )
    return (
        f"{r.clip.name:28s} {measure} {100 * r.score.rate:5.1f}% ({r.score.errors}/{r.score.length})  "
        f"{r.duration:5.1f} s  RTF {r.rtf:.2f}\n    ref: {r.clip.reference}\n    hyp: {r.hypothesis}"
    )
