"""Voice: time to first audio, synthesis real-time factor, interrupt-to-silence, lip-sync.

Baselines measured in the same run: `espeak-ng --stdout` run as a subprocess per sentence
(what shelling out to the TTS costs) and pyttsx3 2.99 (the portable engine, in its own
process because it drives the same libespeak-ng); the interrupt and lip-sync figures are
compared with their budgets (100 ms; 45 ms broadcast tolerance).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time

from bench.stats import ms, percentile

TITLE = "Voice: first audio, synthesis speed, interrupt, lip-sync"

ENGLISH = [
    "Hello, I am Fay. Nice to meet you!",
    "The weather today is sunny, with a light breeze from the west.",
    "Please wait a moment; I will check your calendar.",
    "Good morning! Did you sleep well?",
    "I can help you with music, news, and reminders.",
]
CHINESE = [
    "你好，很高兴认识你。",
    "今天天气很好，我们去公园散步吧。",
    "请稍等，我帮你查一下日历。",
    "早上好！你昨晚睡得好吗？",
    "我可以帮你放音乐，读新闻，还有设置提醒。",
]
REPEAT = 4

_PYTTSX3_TIMER = """
import json, sys, time
from fay_ros.voice.engines import create_engine
from fay_ros.voice.engine_types import VoiceSettings
engine = create_engine("pyttsx3", VoiceSettings())
out = []
for text in json.loads(sys.argv[1]):
    t0 = time.perf_counter()
    result = engine.synthesize(text)
    out.append([time.perf_counter() - t0, result.duration])
print(json.dumps(out))
"""


def run() -> str:
    from fay_ros.voice import alignment
    from fay_ros.voice.engine_types import VoiceSettings
    from fay_ros.voice.engines import create_engine
    from fay_ros.voice.visemes import build_track

    settings = VoiceSettings()
    engine = create_engine("espeak-ng", settings)
    engine.synthesize("warm up")
    rows = []
    for language, sentences, voice in (
        ("English", ENGLISH, settings.english_voice),
        ("Chinese", CHINESE, settings.chinese_voice),
    ):
        first_audio, synth_rtf, cli_seconds, cli_rtf = _pipeline_first_audio(engine, sentences), [], [], []
        for text in sentences * REPEAT:
            t0 = time.perf_counter()
            result = engine.synthesize(text)
            synth_rtf.append((time.perf_counter() - t0) / result.duration)
        for text in sentences * REPEAT:
            t0 = time.perf_counter()
            wav = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True).stdout
            cli_seconds.append(time.perf_counter() - t0)
            cli_rtf.append(cli_seconds[-1] / ((len(wav) - 44) / 2 / 22050))
        pyttsx3 = json.loads(
            subprocess.run(
                [sys.executable, "-c", _PYTTSX3_TIMER, json.dumps(sentences * REPEAT)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        py_seconds = [s for s, _d in pyttsx3]
        py_rtf = [s / d for s, d in pyttsx3]
        rows.append((language, first_audio, synth_rtf, cli_seconds, cli_rtf, py_seconds, py_rtf))

    lines = [
        "| language | received → first sample ready (p50 / p95) | received → first sample plays (p50) | "
        "RTF in process (p50) | baseline: `espeak-ng --stdout` subprocess, whole sentence (p50) | RTF | "
        "pyttsx3 2.99, whole sentence (p50) | RTF |",
        "|---|---|---|---|---|---|---|---|",
    ]
    summary = []
    for language, first_audio, synth_rtf, cli_seconds, cli_rtf, py_seconds, py_rtf in rows:
        ready = [t.audio_ready - t.received for t in first_audio]
        plays = [t.start - t.received for t in first_audio]
        lines.append(
            f"| {language} | {ms(percentile(ready, 0.5))} / {ms(percentile(ready, 0.95))} | "
            f"{ms(percentile(plays, 0.5))} | {percentile(synth_rtf, 0.5):.4f} | {ms(percentile(cli_seconds, 0.5))} | "
            f"{percentile(cli_rtf, 0.5):.3f} | {ms(percentile(py_seconds, 0.5))} | {percentile(py_rtf, 0.5):.3f} |"
        )
        summary.append(
            f"{language}: first sample ready {percentile(cli_seconds, 0.5) / percentile(ready, 0.5):.0f}× "
            f"sooner than the subprocess baseline has its audio, "
            f"{percentile(py_seconds, 0.5) / percentile(ready, 0.5):.1f}× sooner than pyttsx3"
        )

    stops = _interrupt_latency(engine)
    corpus = [engine.synthesize(t) for t in ENGLISH + CHINESE]
    boundaries = []
    for result in corpus:
        boundaries += alignment.measure(
            build_track("b:0", result.phonemes, result.duration), result.samples, result.sample_rate
        )
    errors = sorted(b.error for b in boundaries)
    stop_audio = [s for s, _n in stops]
    stop_notice = [n for _s, n in stops]
    return (
        "\n".join(lines)
        + "\n\n"
        + "; ".join(summary)
        + (
            '. "Ready" is synthesis of the whole sentence (espeak-ng is far faster than real time, so it is not '
            'streamed within a sentence); "plays" adds the scheduling lead (one 20 ms block of the headless '
            "output plus a 10 ms margin; a sound device adds its own latency).\n\n"
            "| measure | p50 | p95 | budget | p95 / budget |\n|---|---|---|---|---|\n"
            f"| interrupt → audio silent ({len(stops)} interrupts, headless output) | "
            f"{ms(percentile(stop_audio, 0.5))} | "
            f"{ms(percentile(stop_audio, 0.95))} | 100 ms | {percentile(stop_audio, 0.95) / 0.1:.2f} |\n"
            f"| interrupt → speaking=false reported | {ms(percentile(stop_notice, 0.5))} | "
            f"{ms(percentile(stop_notice, 0.95))} | 100 ms | {percentile(stop_notice, 0.95) / 0.1:.2f} |\n"
            f"| lip-sync: viseme open/close vs energy envelope ({len(errors)} boundaries, EN+ZH) | "
            f"{ms(statistics.median(errors))} | {ms(percentile(errors, 0.95))} | 45 ms | "
            f"{percentile(errors, 0.95) / 0.045:.2f} (worst {ms(errors[-1])}) |\n"
        )
    )


def _pipeline_first_audio(engine, sentences):
    """Submit each sentence to an idle pipeline; its timing says when audio was ready."""
    from fay_ros.voice.pipeline import SentenceRequest, SpeechPipeline
    from fay_ros.voice.playback import SimulatedSink

    started = threading.Event()
    pipeline = SpeechPipeline(
        engine,
        SimulatedSink(engine.sample_rate),
        on_track=lambda _t, _s: started.set(),
        on_speaking=lambda *_a: None,
        log=lambda *_a: None,
    )
    try:
        for i, text in enumerate(sentences * REPEAT):
            started.clear()
            pipeline.submit(SentenceRequest(f"bench{i}", 0, text, is_first=True, is_end=True))
            if not started.wait(5):
                raise RuntimeError("no viseme track within 5 s")
            pipeline.interrupt("bench reset")  # idle again for the next sample
        return list(pipeline.timings)
    finally:
        pipeline.close()


def _interrupt_latency(engine, trials: int = 12):
    """(interrupt -> audio silent, interrupt -> speaking=false callback), seconds."""
    from fay_ros.voice.pipeline import SentenceRequest, SpeechPipeline
    from fay_ros.voice.playback import SimulatedSink

    speaking = threading.Event()
    silent = threading.Event()

    def on_speaking(state, _uid, _when):
        (speaking if state else silent).set()

    pipeline = SpeechPipeline(
        engine,
        SimulatedSink(engine.sample_rate),
        on_track=lambda *_a: None,
        on_speaking=on_speaking,
        log=lambda *_a: None,
    )
    out = []
    try:
        for i in range(trials):
            speaking.clear()
            silent.clear()
            pipeline.submit(
                SentenceRequest(
                    f"long{i}",
                    0,
                    "This sentence is long enough to be interrupted somewhere in the middle of it.",
                    is_first=True,
                )
            )
            if not speaking.wait(5):
                raise RuntimeError("never started speaking")
            time.sleep(0.1 + 0.037 * i)  # interrupt at a different point of the block cycle each time
            t0 = time.monotonic()
            stop_at = pipeline.interrupt("bench")
            if not silent.wait(5):
                raise RuntimeError("speaking=false never came")
            out.append((max(0.0, stop_at - t0), time.monotonic() - t0))
    finally:
        pipeline.close()
    return out
