"""Latency with the embedded model (SmolLM2-135M served by `fay-ros llm`, llama.cpp), in one run:

1. baseline: the bare server's time to first token (OpenAI client, streamed, a persona-sized
   system prompt that stays the same and a short, varied user line);
2. a typed line (text_input) → the first answer sentence (reply), through the dialogue node
   (tiny profile) and the memory node as real processes;
3. voice → first audio through the whole graph (mic → asr → dialogue → tts) with the same
   server, broken down by stage from the latency_monitor's /diagnostics.

The server is started as the bring-up starts it (no --threads: llama.cpp decodes on one core fewer
than there are, `fay_ros.llm.embedded.default_threads`, and computes the prompt on every core,
`default_batch_threads`). Servers with the earlier defaults (the prompt on the decoding threads
too; every core for both) are compared with it on the same spoken turns, and on the same bare
requests taken in turns, with the rest of the machine as it is and with one core kept busy by
another process (the recogniser or the voice of a real turn).
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path

from bench.stats import percentile

TITLE = "Embedded model: typed and spoken turn latency (SmolLM2-135M, tiny profile)"

# Small talk: nothing the qa table answers, nothing about the user's own facts.
BASELINE_LINES = [
    "How are you today?",
    "Tell me about your day.",
    "Do you like music?",
    "What makes you happy?",
    "I just got back from a walk.",
    "What should I cook tonight?",
    "It is raining outside.",
    "Tell me something nice.",
    "Do you ever get bored?",
    "I am a bit tired.",
    "What is your favourite colour?",
    "Can you cheer me up?",
    "I watched a film last night.",
    "Do you like cats or dogs?",
    "What do you do all day?",
    "The weather is lovely.",
]
TYPED_LINES = [
    "Hi Fay, how are you doing?",
    "I had a long day at work.",
    "Do you like the rain?",
    "What did you do this morning?",
    "I am thinking about learning the guitar.",
    "Tell me a fun fact.",
    "My coffee went cold again.",
    "Do you ever dream?",
    "What is your favourite season?",
    "I might go for a run later.",
    "Can you tell me a joke?",
    "The garden looks nice today.",
    "I feel a bit sleepy.",
    "What makes a good friend?",
    "Do you like stories?",
    "Thanks for chatting.",
]
FACT_STATEMENT = "My name is Tom."
FACT_QUESTIONS = ["What's my name?", "Do you remember my name?", "What is my name?", "Say my name.", "Who am I?"]
VOICE_LINES = [
    "How are you today?",
    "Do you like music?",
    "Tell me something nice.",
    "What makes you happy?",
    "I am a bit tired.",
    "Do you like the rain?",
    "What is your favourite season?",
    "Can you cheer me up?",
]
VOICE_PAUSE = 17.0  # seconds after each spoken line: three spoken sentences take ~13-15 s (the mic mutes meanwhile)
# The moments of a voice turn after the end of speech (fay_ros.bringup.latency.MILESTONES).
MILESTONE_LABELS = {
    "speculative": "voice: end of speech → speculative text out (the model may start; turns that had one)",
    "final": "voice: end of speech → end of turn decided (the final transcript)",
    "llm_first_token": "voice: end of speech → the model's first token",
    "first_reply": "voice: end of speech → first answer sentence (or clause)",
    "first_audio": "**voice → first audio**",
}
# Where the time goes, per turn: each moment after the one before it.
STEP_LABELS = {
    "turn": "... step: end of speech → end of turn decided",
    "first_token": "... step: end of turn decided → first token (negative: the speculative reply was ahead)",
    "first_piece": "... step: first token → first sentence (decoding it)",
    "audio": "... step: first sentence → first audio (TTS)",
}
STAGES = [
    "speech_end_to_transcript_ms",
    "llm_time_to_first_token_ms",
    "transcript_to_first_reply_ms",
    "first_reply_to_first_audio_ms",
    "voice_to_first_audio_ms",
    "pipeline_share_ms",
]
SENTENCE_END = re.compile(r"[.!?](\s|$)")


def _start_server():
    from harness import start_llm

    return start_llm()  # threads as the bring-up: default


def _metrics(url: str) -> dict[str, float]:
    """llama.cpp's /metrics counters (prompt tokens computed / taken from the cache, seconds)."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
    with opener.open(url.removesuffix("/v1") + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^llamacpp:(\w+) ([-\d.e+]+)$", text, re.M)}


def _baseline(url: str, system_prompt: str) -> dict[str, list[float]]:
    """Time to first content token / first sentence end / whole answer of the bare server (s)."""
    from openai import OpenAI

    from fay_ros.llm.embedded import EMBEDDED_MODEL

    client = OpenAI(base_url=url, api_key="none", max_retries=0, timeout=30)
    out: dict[str, list[float]] = {"ttft": [], "sentence": [], "total": [], "first": [], "words": []}
    try:
        for i, line in enumerate(BASELINE_LINES):
            t0 = time.monotonic()
            first = sentence = None
            text = ""
            stream = client.chat.completions.create(
                model=EMBEDDED_MODEL,
                stream=True,
                max_tokens=40,
                temperature=0.0,
                messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": line}],
            )
            for chunk in stream:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if not piece:
                    continue
                now = time.monotonic()
                first = first or now
                text += piece
                if sentence is None and (m := SENTENCE_END.search(text)):
                    sentence = now
                    out["words"].append(len(text[: m.end()].split()))
            end = time.monotonic()
            if i == 0:  # the very first request fills the prompt cache with the system prompt
                out["first"].append(first - t0)
                continue
            out["ttft"].append(first - t0)
            out["sentence"].append((sentence or end) - t0)
            out["total"].append(end - t0)
    finally:
        client.close()
    return out


THREAD_ROUNDS = 5  # bare requests per server and condition (the first idle one fills the cache)
THREAD_TOKENS = 24
# The servers compared: label -> `fay-ros llm` options (None: the default server, already running).
DEFAULT_SERVER = "default"
BEFORE_SERVER = "before"
EVERY_CORE_SERVER = "every core"


def thread_servers(cores: int) -> dict[str, tuple[str, ...]]:
    """The `fay-ros llm` options of each server compared (the default one takes none)."""
    from fay_ros.llm.embedded import default_threads

    return {
        DEFAULT_SERVER: (),
        BEFORE_SERVER: ("--threads", str(default_threads()), "--batch-threads", str(default_threads())),
        EVERY_CORE_SERVER: ("--threads", str(cores), "--batch-threads", str(cores)),
    }


def thread_label(name: str, cores: int) -> str:
    from fay_ros.llm.embedded import default_batch_threads, default_threads

    threads, batch = {
        DEFAULT_SERVER: (default_threads(), default_batch_threads()),
        BEFORE_SERVER: (default_threads(), default_threads()),
        EVERY_CORE_SERVER: (cores, cores),
    }[name]
    plural = "s" if threads > 1 else ""
    if batch != threads:
        return f"{threads} thread{plural}, the prompt on {batch} (default)"
    return (
        f"{threads} thread{plural} for both"
        + {
            DEFAULT_SERVER: " (default)",
            BEFORE_SERVER: " (the default until the prompt had every core)",
            EVERY_CORE_SERVER: " (the first default)",
        }[name]
    )


def _threads_compared(url: str, system_prompt: str, cores: int) -> dict[tuple[str, bool], list[tuple[float, float]]]:
    """(server, one core busy) -> [(time to first token, time to THREAD_TOKENS tokens)] in s, for
    the default server at `url` and the others of `thread_servers`, asked in turns."""
    import subprocess
    import sys

    from openai import OpenAI

    from fay_ros.llm.embedded import EMBEDDED_MODEL
    from harness import start_llm

    others = {name: start_llm(*options) for name, options in thread_servers(cores).items() if options}
    servers = [(DEFAULT_SERVER, url), *((name, other_url) for name, (_p, other_url) in others.items())]
    out: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    busy = None
    try:
        clients = [(name, OpenAI(base_url=u, api_key="none", max_retries=0, timeout=120)) for name, u in servers]
        for round_ in range(2 * THREAD_ROUNDS):
            loaded = round_ % 2 == 1
            if loaded:  # a stand-in for Whisper or the voice on the other core
                busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for i, (name, client) in enumerate(clients):
                # a new line per request and server: ~15 new prompt tokens after the cached persona
                line = BASELINE_LINES[(round_ * len(clients) + i) % len(BASELINE_LINES)]
                t0, first = time.monotonic(), None
                stream = client.chat.completions.create(
                    model=EMBEDDED_MODEL,
                    stream=True,
                    max_tokens=THREAD_TOKENS,
                    temperature=0.0,
                    messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": line}],
                )
                for chunk in stream:
                    if first is None and chunk.choices and chunk.choices[0].delta.content:
                        first = time.monotonic()
                end = time.monotonic()
                if round_ > 0:  # the first fills the prompt cache with the persona
                    out.setdefault((name, loaded), []).append(((first or end) - t0, end - t0))
            if busy is not None:
                busy.kill()
                busy.wait()
                busy = None
        for _n, client in clients:
            client.close()
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        for process, _url in others.values():
            process.stop()
    return out


def _history_baseline(url: str, system_prompt: str, exchanges: list[tuple[str, str]]) -> list[float]:
    """Time to first token of the bare server for a prompt shaped like a later dialogue turn's
    (the persona, three of the dialogue's own exchanges, a new line) computed without the prompt
    cache (`cache_prompt: false`): what a turn costs when its history is not in the cache."""
    import random

    from openai import OpenAI

    from fay_ros.llm.embedded import EMBEDDED_MODEL

    rng = random.Random(7)
    client = OpenAI(base_url=url, api_key="none", max_retries=0, timeout=30)
    out = []
    try:
        for line in BASELINE_LINES[:8]:
            history = []
            for user, answer in rng.sample(exchanges, 3):
                history += [{"role": "user", "content": user}, {"role": "assistant", "content": answer}]
            t0 = time.monotonic()
            stream = client.chat.completions.create(
                model=EMBEDDED_MODEL,
                stream=True,
                max_tokens=40,
                temperature=0.0,
                extra_body={"cache_prompt": False},
                messages=[{"role": "system", "content": system_prompt}, *history, {"role": "user", "content": line}],
            )
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    out.append(time.monotonic() - t0)
                    break
            stream.close()
    finally:
        client.close()
    return out


def _typed(url: str, tmp: Path) -> dict:
    """typed line → first non-empty Utterance of the new conversation, through the node processes."""
    from fay_msgs.msg import LlmLatency, Transcript, Utterance
    from fay_ros.common import qos, topics
    from harness import Collector, NodeProcess, RosProbe, wait_until

    before = _metrics(url)
    memory = NodeProcess("fay_ros.nodes.memory", {"db_path": str(tmp / "typed_memory.db"), "embedder": "hashed"})
    dialogue = NodeProcess("fay_ros.nodes.dialogue", {"base_url": url})
    probe = RosProbe("bench_embedded_probe")
    replies = Collector()
    probe.node.create_subscription(
        Utterance, topics.REPLY, lambda m: replies._on_message((time.monotonic(), m)), qos.EVENTS
    )
    llm_ttft: dict[str, float] = {}  # conversation_id -> the dialogue's own time to first token (s)

    def on_llm_latency(msg) -> None:
        llm_ttft[msg.conversation_id] = msg.time_to_first_token

    probe.node.create_subscription(LlmLatency, topics.LLM_LATENCY, on_llm_latency, qos.EVENTS)
    result: dict = {
        "chat": [],
        "chat_ttft": [],
        "words": [],
        "facts": [],
        "exchanges": [],
        "first_turn": None,
        "sources": {},
    }
    try:
        memory.wait_ready(timeout=60, probe=probe)
        dialogue.wait_ready(timeout=60, probe=probe)
        pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(pub, count=2)  # dialogue + memory (it records typed input)
        probe.wait_for_publishers(topics.REPLY, count=1)
        seen: set[str] = set()

        def turn(text: str) -> tuple[float, str, str]:
            start = len(replies.messages)
            t0 = time.monotonic()
            pub.publish(Transcript(text=text, user_id="tom", language="en"))

            def first(msgs):
                return next(((t, m) for t, m in msgs[start:] if m.conversation_id not in seen and m.text.strip()), None)

            t_first, msg = replies.wait_for(first, timeout=60, what=f"a reply to {text!r}")
            cid = msg.conversation_id
            replies.wait_for(
                lambda msgs: any(m.conversation_id == cid and m.is_end for _t, m in msgs[start:]),
                timeout=60,
                what=f"the end of the reply to {text!r}",
            )
            seen.add(cid)
            spoken = " ".join(m.text for _t, m in replies.messages[start:] if m.conversation_id == cid and m.text)
            result["last_cid"] = cid
            result["last_words"] = len(msg.text.split())
            return t_first - t0, msg.source, spoken

        for i, line in enumerate(TYPED_LINES):
            latency, source, spoken = turn(line)
            result["sources"][source] = result["sources"].get(source, 0) + 1
            result["exchanges"].append((line, spoken))
            if i == 0:  # the first turn: the memory service's first discovery, a cold slot
                result["first_turn"] = (latency, source)
            elif source == "llm":
                result["chat"].append(latency)
                result["words"].append(result["last_words"])
                with contextlib.suppress(TimeoutError):  # the dialogue's /diagnostics for this turn
                    wait_until(lambda: result["last_cid"] in llm_ttft, timeout=2.0, interval=0.005)
                    result["chat_ttft"].append(llm_ttft[result["last_cid"]])
        turn(FACT_STATEMENT)
        for line in FACT_QUESTIONS:
            latency, source, _spoken = turn(line)
            if source == "memory":
                result["facts"].append(latency)
        after = _metrics(url)
        result["metrics"] = {k: after[k] - before.get(k, 0.0) for k in after}
    finally:
        dialogue.stop()
        memory.stop()
        probe.close()
    return result


def _voice(url: str, tmp: Path) -> tuple[dict[str, list[float]], int, list[dict[str, float]]]:
    import yaml

    from fay_msgs.msg import TurnLatency
    from fay_ros.bringup.latency import stages_ms
    from fay_ros.common import topics
    from fay_ros.hearing.audio import ASR_RATE
    from harness import REPO, NodeProcess, RosProbe
    from synthetic_speech import speak_to_wav

    parts: list = [0.5]
    for line in VOICE_LINES:
        parts += [(line, "en-us"), VOICE_PAUSE]
    wav_seconds = len(speak_to_wav(tmp / "voice.wav", parts)) / ASR_RATE
    config = yaml.safe_load((REPO / "config/companion.yaml").read_text())
    config["/**/memory"]["ros__parameters"]["db_path"] = str(tmp / "voice_memory.db")
    # as in `make run` (llm_base_url ''): the tiny embedded model is not asked to reflect
    config["/**/memory"]["ros__parameters"]["llm_base_url"] = ""
    config["/**/timeline"]["ros__parameters"]["typed_input"] = False
    (tmp / "companion.yaml").write_text(yaml.safe_dump(config))

    def measured(messages):
        return list(messages)

    probe = RosProbe("bench_embedded_voice_probe")
    turns = probe.collect(TurnLatency, topics.TURN_LATENCY)
    moments = _MomentProbe(probe)
    up = NodeProcess(
        "fay_ros.cli",
        ros=False,
        args=[
            "up",
            f"config:={tmp / 'companion.yaml'}",
            f"audio_source:={tmp / 'voice.wav'}",
            f"llm_base_url:={url}",
            "asr_language:=en",
            "use_web:=false",
            "use_rosbridge:=false",
            "use_llm_server:=false",
            "nodes:=memory,dialogue,action_semantics,tts,asr,mic,latency_monitor",
        ],
    )
    try:
        try:
            turns.wait_for(
                lambda arrays: len(measured(arrays)) >= len(VOICE_LINES),
                timeout=wav_seconds + 45,
                what=f"{len(VOICE_LINES)} measured turns",
            )
        except TimeoutError:  # a line spoken while the robot was still answering is muted: use what was measured
            if len(measured(turns.messages)) < 3:
                raise RuntimeError(
                    f"only {len(measured(turns.messages))} voice turns measured:\n{up.output()[-4000:]}"
                ) from None
        got = measured(list(turns.messages))
    finally:
        up.stop(timeout=20)
        probe.close()
    samples: dict[str, list[float]] = {k: [] for k in STAGES}
    for turn in got:
        for key, value in stages_ms(turn).items():
            if key in samples:
                samples[key].append(value)
    return samples, len(got), [{k: v * 1000 for k, v in t.milestones.items()} for t in moments.turns]


def _steps(moments: list[dict[str, float]]) -> dict[str, list[float]]:
    """Per turn (ms): end of speech → final, final → first token, first token → first sentence,
    first sentence → first audio; a turn without a moment gives no value for its steps."""
    pairs = {
        "turn": ("", "final"),
        "first_token": ("final", "llm_first_token"),
        "first_piece": ("llm_first_token", "first_reply"),
        "audio": ("first_reply", "first_audio"),
    }
    out: dict[str, list[float]] = {k: [] for k in pairs}
    for m in moments:
        for key, (a, b) in pairs.items():
            if b in m and (not a or a in m):
                out[key].append(m[b] - (m[a] if a else 0.0))
    return out


class _MomentProbe:
    """The turn's moments after the end of speech (fay_ros.bringup.latency.MILESTONES), from the
    topics the latency monitor watches, fed to the same tracker in this process: the speculative
    text and the first token's time are not on latency/turns."""

    def __init__(self, probe) -> None:
        from fay_msgs.msg import LlmLatency, SpeechState, Transcript, Utterance
        from fay_ros.bringup.latency import LatencyTracker
        from fay_ros.common import qos, reply_sources, topics
        from fay_ros.common.rostime import from_time_msg

        self.tracker = LatencyTracker()
        self.turns: list = []
        clock = probe.node.get_clock()

        def now() -> float:
            return clock.now().nanoseconds * 1e-9

        def done(turn) -> None:
            if turn is not None:
                self.turns.append(turn)

        def on_final(msg) -> None:
            done(self.tracker.on_final_transcript(from_time_msg(msg.header.stamp), now()))

        def on_reply(msg) -> None:
            if msg.is_first and msg.source not in reply_sources.UNPROMPTED:
                self.tracker.on_first_reply(now(), msg.conversation_id, from_model=msg.source == reply_sources.LLM)

        def on_llm(msg) -> None:
            done(
                self.tracker.on_llm_first_token(
                    msg.time_to_first_token, from_time_msg(msg.header.stamp), msg.conversation_id
                )
            )

        def on_speaking(msg) -> None:
            done(self.tracker.on_speaking(msg.speaking, from_time_msg(msg.header.stamp)))

        node = probe.node
        node.create_subscription(
            Transcript,
            topics.SPEECH_SPECULATIVE,
            lambda msg: self.tracker.on_speculative(now(), withdrawn=not msg.text),
            qos.EVENTS,
        )
        node.create_subscription(Transcript, topics.SPEECH_FINAL, on_final, qos.EVENTS)
        node.create_subscription(
            LlmLatency,
            topics.LLM_LATENCY,
            on_llm,
            qos.EVENTS,
        )
        node.create_subscription(Utterance, topics.REPLY, on_reply, qos.EVENTS)
        node.create_subscription(SpeechState, topics.ROBOT_SPEAKING, on_speaking, qos.LATCHED)


class _LoadSampler:
    """The 1-minute load average every few seconds while the bench runs (others may share the machine)."""

    def __init__(self, period: float = 5.0) -> None:
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(period,), daemon=True)
        self._thread.start()

    def _run(self, period: float) -> None:
        while not self._stop.wait(period):
            self.samples.append(os.getloadavg()[0])

    def close(self) -> str:
        self._stop.set()
        self._thread.join(1)
        return (
            f"1-minute load average {min(self.samples):.1f}–{max(self.samples):.1f} "
            f"(mean {sum(self.samples) / len(self.samples):.1f}) on {os.cpu_count()} cores during the run"
        )


def run() -> str:
    from fay_ros.common.paths import config_file
    from fay_ros.dialogue.persona import Persona
    from fay_ros.llm.embedded import MAX_THREADS
    from harness import start_llm

    every_core = max(1, min(MAX_THREADS, os.cpu_count() or 1))
    system_prompt = Persona.load(config_file("persona.yaml")).system_prompt.strip()
    tmp = Path(tempfile.mkdtemp(prefix="fay_bench_embedded_"))
    load = _LoadSampler()
    server, url = _start_server()
    try:
        base = _baseline(url, system_prompt)
        threads_compared = _threads_compared(url, system_prompt, every_core)
        typed = _typed(url, tmp)
        history_ttft = _history_baseline(url, system_prompt, typed["exchanges"][: len(TYPED_LINES)])
        voice, n_voice, moments = _voice(url, tmp)
        server.stop()
        # the same spoken turns with the servers of earlier defaults
        other_moments: dict[str, list[dict[str, float]]] = {}
        for name, options in thread_servers(every_core).items():
            if not options:
                continue
            server, other_url = start_llm(*options)
            (tmp / name).mkdir()
            other_moments[name] = _voice(other_url, tmp / name)[2]
            server.stop()
    finally:
        server.stop()
        load_text = load.close()

    def p(values: list[float], q: float) -> float:
        return percentile(values, q) * 1000

    ttft50, ttft95 = p(base["ttft"], 0.5), p(base["ttft"], 0.95)
    typed50, typed95 = p(typed["chat"], 0.5), p(typed["chat"], 0.95)
    v = {k: (percentile(x, 0.5), percentile(x, 0.95)) for k, x in voice.items() if x}
    rows = [
        ("baseline: bare server, time to first token", ttft50, ttft95, len(base["ttft"])),
        (
            "bare server, time to the first sentence end",
            p(base["sentence"], 0.5),
            p(base["sentence"], 0.95),
            len(base["sentence"]),
        ),
        ("bare server, whole answer (≤ 40 tokens)", p(base["total"], 0.5), p(base["total"], 0.95), len(base["total"])),
        (
            "bare server, time to first token, persona + 3 exchanges + a new line computed without the prompt cache",
            p(history_ttft, 0.5),
            p(history_ttft, 0.95),
            len(history_ttft),
        ),
        ("typed line → first answer sentence (model)", typed50, typed95, len(typed["chat"])),
    ]
    if typed["chat_ttft"]:
        rows.append(
            (
                "... of it, the model's time to first token inside the dialogue (its own measure)",
                p(typed["chat_ttft"], 0.5),
                p(typed["chat_ttft"], 0.95),
                len(typed["chat_ttft"]),
            )
        )
    if typed["facts"]:
        rows.append(
            (
                "typed question about the user's own facts → answer (from memory, no model)",
                p(typed["facts"], 0.5),
                p(typed["facts"], 0.95),
                len(typed["facts"]),
            )
        )
    at = {k: [m[k] for m in moments if k in m] for k in MILESTONE_LABELS}
    for key, label in MILESTONE_LABELS.items():
        if at[key]:
            rows.append((label, p(at[key], 0.5) / 1000, p(at[key], 0.95) / 1000, len(at[key])))
    if "llm_time_to_first_token_ms" in v:
        rows.append(
            (
                "voice: the model's own time to first token (request → token; with the speculative reply the "
                "request went out on the speculative text)",
                v["llm_time_to_first_token_ms"][0],
                v["llm_time_to_first_token_ms"][1],
                len(voice["llm_time_to_first_token_ms"]),
            )
        )
    other_audio = {name: [m["first_audio"] for m in got if "first_audio" in m] for name, got in other_moments.items()}
    for name, audio in other_audio.items():
        if audio:
            rows.append(
                (
                    f"voice → first audio with the model on {thread_label(name, every_core)}",
                    percentile(audio, 0.5),
                    percentile(audio, 0.95),
                    len(audio),
                )
            )
    steps = _steps(moments)
    for key, label in STEP_LABELS.items():
        if steps[key]:
            rows.append((label, p(steps[key], 0.5) / 1000, p(steps[key], 0.95) / 1000, len(steps[key])))
    table = "| measure | p50 | p95 | n |\n|---|---|---|---|\n" + "".join(
        f"| {label} | {a:.0f} ms | {b:.0f} ms | {n} |\n" for label, a, b, n in rows
    )

    order = list(thread_servers(every_core))
    thread_rows = "".join(
        f"| {thread_label(name, every_core)} | "
        f"{'one core busy' if loaded else 'as it is'} | {p([a for a, _b in x], 0.5):.0f} ms | "
        f"{p([b for _a, b in x], 0.5):.0f} ms | {len(x)} |\n"
        for (name, loaded), x in sorted(
            threads_compared.items(), key=lambda item: (item[0][1], order.index(item[0][0]))
        )
    )
    thread_table = (
        f"| llama.cpp threads | the rest of the machine | time to first token p50 | {THREAD_TOKENS} tokens p50 "
        "| n |\n|---|---|---|---|---|\n" + thread_rows
    )
    aim_typed = 2 * ttft50 + 100
    typed_verdict = "meets" if typed50 <= aim_typed else "misses"
    voice50, voice95 = (
        (percentile(at["first_audio"], 0.5), percentile(at["first_audio"], 0.95))
        if at["first_audio"]
        else v["voice_to_first_audio_ms"]
    )
    voice_verdict = "meets" if voice50 <= 500 and voice95 <= 900 else "misses"
    step50 = {k: percentile(x, 0.5) if x else 0.0 for k, x in steps.items()}
    lead = [m["final"] - m["speculative"] for m in moments if "speculative" in m]
    gap = voice50 - 500
    first_turn = typed["first_turn"]
    first_bare = base["first"][0] * 1000 if base["first"] else float("nan")
    sources = ", ".join(f"{k} {n}" for k, n in sorted(typed["sources"].items()))
    m = typed.get("metrics", {})
    computed, cached = m.get("prompt_tokens_total", 0.0), m.get("prompt_tokens_cached_total", 0.0)
    calls = len(TYPED_LINES) + 2  # every typed line, the fact statement and the dialogue's start-up warm-up
    cache_text = (
        f"Over the typed conversation the server computed {computed:.0f} prompt tokens and took "
        f"{cached:.0f} from its cache ({cached / (computed + cached):.0%} reused; about {computed / calls:.0f} "
        f"computed per model call, at {m['prompt_seconds_total'] * 1000 / computed:.1f} ms each)."
        if computed and "prompt_seconds_total" in m
        else ""
    )
    closing = (
        f"Voice → first audio is {voice50:.0f} ms p50 / {voice95:.0f} ms p95, **{gap:+.0f} ms** from 500 ms p50 "
        f"and **{voice95 - 900:+.0f} ms** from 900 ms p95. Per turn (p50): the end of the turn is decided "
        f"{step50['turn']:.0f} ms after the end of speech (the early Whisper decode and the turn judgement), the "
        f"first token comes {step50['first_token']:+.0f} ms after that"
        + (
            f" (the speculative text went out {percentile(lead, 0.5):.0f} ms before the final in {len(lead)} of "
            f"{len(moments)} turns, and the model started on it)"
            if lead
            else " (no speculative text went out ahead of a final)"
        )
        + f", the first sentence {step50['first_piece']:.0f} ms after the first token, and its first audio "
        f"{step50['audio']:.0f} ms after that. "
    )
    levers = sorted(
        [
            (
                step50["turn"],
                f"the end of the turn ({step50['turn']:.0f} ms): the 30 ms of silence before the early decode and "
                "Whisper base's decode on one thread, on the same 2 cores the model needs",
            ),
            (
                step50["first_token"],
                f"the first token after the turn is decided ({step50['first_token']:.0f} ms): the prompt tokens "
                "computed per turn"
                + (
                    f" (about {computed / calls:.0f} in the typed conversation, at "
                    f"{m['prompt_seconds_total'] * 1000 / computed:.1f} ms each in this run)"
                    if computed and "prompt_seconds_total" in m
                    else ""
                )
                + ": the recalled memories and the question are new every turn, and a model that reads them "
                "sooner or fewer of them is what would shorten this; then the memory round trip before the request",
            ),
            (
                step50["first_piece"],
                f"decoding up to the first sentence ({step50['first_piece']:.0f} ms; one of 24+ characters is "
                "released at its first comma): the decode speed of the model on 2 busy cores",
            ),
            (step50["audio"], f"synthesis of the first sentence ({step50['audio']:.0f} ms)"),
        ],
        key=lambda item: -item[0],
    )
    for name, audio in other_audio.items():
        if audio:
            other50, other95 = percentile(audio, 0.5), percentile(audio, 0.95)
            closing += (
                f"With the model on {thread_label(name, every_core)} the same spoken turns took {other50:.0f} ms "
                f"p50 / {other95:.0f} ms p95 in this run, {other50 / voice50:.2f}× the default's. "
            )
    closing += ("What would close the rest" if gap > 0 else "Further cuts") + ", largest first: "
    closing += "; ".join(text for _ms, text in levers) + "."
    closing += " Per spoken turn with the default server, in order (ms after the end of speech: end of turn "
    closing += "decided / first token / first sentence / first audio): "
    closing += "; ".join(
        " / ".join(f"{m[k]:.0f}" if k in m else "—" for k in ("final", "llm_first_token", "first_reply", "first_audio"))
        for m in moments
    )
    closing += "."
    return (
        f"One `fay-ros llm` server (SmolLM2-135M Q4_1, llama.cpp via xllamacpp, "
        f"{thread_label(DEFAULT_SERVER, every_core)}, as the bring-up starts it) serves all three measurements in "
        f"turn; the spoken turns are then run again with a server on "
        + " and then on ".join(
            f"{thread_label(name, every_core)} ({len(audio)} measured)" for name, audio in other_audio.items()
        )
        + f". Baseline: {len(base['ttft'])} streamed chat requests "
        f"with the OpenAI client (the persona's system prompt, the same every time, plus a short varied user line, "
        f"max_tokens 40, greedy), after one request that fills the prompt cache ({first_bare:.0f} ms to its first "
        f"token). Typed: the dialogue node (default parameters: model profile auto → tiny) and the memory node "
        f"(hashed embedder) as processes; a probe publishes a line on `text_input` (user `tom`) and times the first "
        f"non-empty `reply` Utterance of the new conversation; each turn waits for the reply's end, and history "
        f"builds up as in a conversation. The first typed turn ({first_turn[0] * 1000:.0f} ms, {first_turn[1]}) is "
        f"left out; first-sentence sources: {sources}. Voice: {n_voice} espeak-ng lines in a WAV through mic → "
        f"asr (Whisper base) → dialogue (+memory) → tts, stages from the latency monitor. Machine: "
        f"{load_text} (the bench itself accounts for up to about 2 of it).\n\n" + table + "\n"
        f"Typed → first answer sentence is {typed50:.0f} ms, **{typed50 / ttft50:.1f}×** the bare server's time to "
        f"first token ({ttft50:.0f} ms); the bare server itself needs {p(base['sentence'], 0.5):.0f} ms to reach "
        f"the end of its first sentence, which is what the dialogue has to wait for before it can say anything."
        + (
            f" Inside the dialogue the model's own time to first token is {p(typed['chat_ttft'], 0.5):.0f} ms p50 "
            f"({p(typed['chat_ttft'], 0.5) / ttft50:.1f}× the bare request, whose prompt is only the persona and a "
            f"line); its prompt also carries the recent turns and recalled memories, which the server's prompt cache "
            f"covers in part (the same kind of prompt computed without the cache takes {p(history_ttft, 0.5):.0f} ms; "
            f"its p95, {p(typed['chat_ttft'], 0.95):.0f} ms, is turns where much of the prompt was computed "
            f"again). {cache_text} The rest is the memory calls before the model call and decoding up to the end of "
            f"the first sentence the dialogue speaks: {statistics.median(typed['words']):.0f} words (median) against "
            f"{statistics.median(base['words']):.0f} for the bare server's first sentence. A question answered "
            f"from the user's facts makes the same memory calls and no model call: {p(typed['facts'], 0.5):.0f} ms "
            f"p50, {p(typed['facts'], 0.95):.0f} ms p95"
            + (
                ": more than the few tens of ms these calls take when the memory node answers at once, so it was "
                "slow to answer some of them (the dialogue waits up to its 0.5 s memory_timeout), and the same stall "
                "delays the chat turns it falls on."
                if p(typed["facts"], 0.95) > 100
                else "."
            )
            if typed["chat_ttft"] and typed["words"] and base["words"] and typed["facts"]
            else ""
        )
        + "\n\n"
        f'- Aim "typed → first answer ≤ 2× the bare server\'s TTFT + 100 ms": {typed50:.0f} ms against '
        f"{aim_typed:.0f} ms — **{typed_verdict}**.\n"
        f'- Aim "voice → first audio p50 ≤ 500 ms, p95 ≤ 900 ms": {voice50:.0f} / {voice95:.0f} ms — '
        f"**{voice_verdict}**.\n\n" + closing + "\n\n"
        f"llama.cpp's threads, the same bare requests (persona + a short line, {THREAD_TOKENS} tokens) to the default "
        f"server and to the earlier defaults', in turns; every other round one core is kept busy by another process "
        f"(what the recogniser or the voice does during a real turn):\n\n" + thread_table
    )
