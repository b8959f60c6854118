"""Delay the dialogue engine adds between the LLM's first token and the first Utterance.

A scripted OpenAI-compatible server on loopback stamps (time.monotonic, system-wide on
Linux) the moment it writes the first content chunk; that chunk holds a whole first
sentence, so any delay after it is ours, not the model's. Baseline: the same stream read
by the bare OpenAI client (HTTP + SSE + JSON parsing) in the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time

from bench.stats import ms, percentile

TITLE = "Dialogue: first token → first Utterance"
ROUNDS = 40


def run() -> str:
    from werkzeug.wrappers import Response

    import dialogue_fake_llm as fake
    from fay_msgs.msg import Transcript, Utterance
    from fay_ros.common import topics
    from fay_ros.dialogue.engine import DialogueEngine, EngineSettings
    from fay_ros.dialogue.persona import Persona
    from fay_ros.llm.client import ChatClient, Endpoint
    from harness import NodeProcess, RosProbe

    sent: list[float] = []

    def first_sentence_stream(judge: bool, tail_tokens: int = 0, gap: float = 0.0):
        message = "Hello there, nice to see you again."
        head = '{"action": "finish", "message": "' + message + " " if judge else message + " "
        tail = [f"word{i} " for i in range(tail_tokens)] + (['done."}'] if judge else ["done."])

        def make(item):
            def generate():
                yield fake._chunk({"role": "assistant", "content": ""})
                sent.append(time.monotonic())
                yield fake._chunk({"content": head})
                for token in tail:
                    if gap:
                        time.sleep(gap)  # the model's token pace (server side, not a test wait)
                    yield fake._chunk({"content": token})
                item.finished.set()
                yield fake._chunk({}, "stop") + "data: [DONE]\n\n"

            return Response(generate(), mimetype="text/event-stream")

        return fake.Scripted(make)

    llm = fake.ScriptedLlm()
    results: dict[str, list[float]] = {
        "raw": [],
        "judge": [],
        "direct": [],
        "node": [],
        "own_judge": [],
        "own_direct": [],
    }
    streaming: list[tuple[float, float]] = []
    try:

        async def in_process() -> None:
            client = ChatClient(Endpoint(llm.base_url, "bench"))
            for _ in range(ROUNDS):  # baseline: bare client
                llm.script(first_sentence_stream(judge=False))
                async with contextlib.aclosing(client.stream([{"role": "user", "content": "hi"}])) as events:
                    async for event in events:
                        if event.content:
                            results["raw"].append(time.monotonic() - sent[-1])
                            break
            # One list for every engine's emit callback, emptied before each turn (never rebound,
            # so the callbacks below need not bind it).
            firsts: list[float] = []
            for mode in ("judge", "direct"):
                engine = DialogueEngine(
                    Persona(),
                    client,
                    lambda p: firsts.append(time.monotonic()),
                    settings=EngineSettings(judge=mode == "judge"),
                )
                for _ in range(ROUNDS):
                    firsts.clear()
                    llm.script(first_sentence_stream(judge=mode == "judge"))
                    trace = await engine.run_turn("bench", "hi", "en")
                    results[mode].append(firsts[0] - sent[-1])
                    # the engine's own share: client yielded the chunk -> first Utterance emitted
                    results[f"own_{mode}"].append(firsts[0] - trace.first_token_at)
            # streaming: a 40-token reply at 20 ms/token; when does the first Utterance go out?
            engine = DialogueEngine(
                Persona(), client, lambda p: firsts.append(time.monotonic()), settings=EngineSettings(judge=True)
            )
            for _ in range(5):
                firsts.clear()
                llm.script(first_sentence_stream(judge=True, tail_tokens=40, gap=0.02))
                await engine.run_turn("bench", "hi", "en")
                streaming.append((firsts[0] - sent[-1], firsts[-1] - sent[-1]))
            # failures: turn start -> spoken apology, against turn start -> first normal Utterance
            import socket

            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                closed_port = sock.getsockname()[1]
            refused = ChatClient(Endpoint(f"http://127.0.0.1:{closed_port}/v1", "bench"))
            scripts = {
                "normal reply (baseline)": lambda: first_sentence_stream(judge=True),
                "connection refused": None,
                "HTTP 500": lambda: fake.status(500),
                "malformed stream": fake.malformed,
            }
            for name, script in scripts.items():
                engine = DialogueEngine(
                    Persona(), client if script else refused, lambda p: firsts.append(time.monotonic())
                )
                for _ in range(10):
                    firsts.clear()
                    if script:
                        llm.script(script())
                    t0 = time.monotonic()
                    await engine.run_turn("bench", "hi", "en")
                    failures.setdefault(name, []).append(firsts[0] - t0)
            await refused.close()
            await client.close()

        failures: dict[str, list[float]] = {}
        logging.getLogger("fay_ros.dialogue").setLevel(logging.CRITICAL)  # the apologies' error lines
        asyncio.run(in_process())

        # end to end through the node process and DDS
        probe = RosProbe("bench_dialogue_probe")
        node = NodeProcess(
            "fay_ros.nodes.dialogue", {"base_url": llm.base_url, "model": "bench", "memory": False, "qa_file": "none"}
        )
        try:
            node.wait_ready(probe=probe)
            got = threading.Event()
            arrived: list[float] = []

            def on_reply(msg) -> None:
                if msg.is_first:
                    arrived.append(time.monotonic())
                if msg.is_end:
                    got.set()

            probe.node.create_subscription(Utterance, topics.REPLY, on_reply, 50)
            pub = probe.publisher(Transcript, topics.TEXT_INPUT)
            probe.wait_for_subscribers(pub)
            probe.wait_for_publishers(topics.REPLY)
            for i in range(ROUNDS + 5):
                got.clear()
                arrived.clear()
                llm.script(first_sentence_stream(judge=True))
                pub.publish(Transcript(text=f"hi {i}", user_id=f"bench{i}", language="en"))
                if not got.wait(20):
                    raise RuntimeError(f"no reply from the dialogue node:\n{node.output()[-2000:]}")
                if i >= 5:  # warm-up excluded
                    results["node"].append(arrived[0] - sent[-1])
        finally:
            node.stop()
            probe.close()
    finally:
        llm.close()

    p50 = {k: percentile(v, 0.5) for k, v in results.items()}
    p95 = {k: percentile(v, 0.95) for k, v in results.items()}
    added_judge = p50["judge"] - p50["raw"]
    added_direct = p50["direct"] - p50["raw"]
    first_stream = percentile([a for a, _b in streaming], 0.5)
    last_stream = percentile([b for _a, b in streaming], 0.5)
    return (
        "Time from the server writing the first content chunk (a whole first sentence) to ...\n\n"
        "| measure | p50 | p95 |\n|---|---|---|\n"
        f"| baseline: ... the bare OpenAI client yielding it (HTTP + SSE) | {ms(p50['raw'])} | {ms(p95['raw'])} |\n"
        f"| ... the engine emitting the first Utterance, judge path (streamed JSON) | "
        f"{ms(p50['judge'])} | {ms(p95['judge'])} |\n"
        f"| ... the engine emitting the first Utterance, direct path (no judge) | "
        f"{ms(p50['direct'])} | {ms(p95['direct'])} |\n"
        f"| ... a probe receiving the first Utterance from the dialogue node process (+ DDS) | "
        f"{ms(p50['node'])} | {ms(p95['node'])} |\n"
        f"| engine's own processing: client yields the chunk → first Utterance emitted, judge path | "
        f"{ms(p50['own_judge'])} | {ms(p95['own_judge'])} |\n"
        f"| engine's own processing, direct path | {ms(p50['own_direct'])} | {ms(p95['own_direct'])} |\n\n"
        f"Engine-added delay: **{ms(p50['own_judge'])}** (judge path, p50), "
        f"{p50['own_judge'] / p50['raw']:.2f}× the bare client's own HTTP+SSE latency; end-to-end difference "
        f"against the baseline {ms(added_judge)} (judge) / {ms(added_direct)} (direct), i.e. within the noise of "
        f"a loaded machine. Through the node and one DDS hop: {p50['node'] / p50['raw']:.1f}× the bare client.\n\n"
        "Failures: time from the start of a turn to the first Utterance (p50 of 10).\n\n"
        "| case | p50 | ratio to the normal reply |\n|---|---|---|\n"
        + "".join(
            f"| {name} | {ms(percentile(v, 0.5))} | "
            f"{percentile(v, 0.5) / percentile(failures['normal reply (baseline)'], 0.5):.1f}× |\n"
            for name, v in failures.items()
        )
        + "\nThe apology goes out as soon as the failure is known (no retries, no back-off); a server "
        "that accepts and then stays silent is bounded by `first_token_timeout` / `idle_timeout` instead.\n\n"
        f"Streaming: with a 40-token reply paced at 20 ms/token, the first Utterance goes out after "
        f"{ms(first_stream)} and the last after {ms(last_stream)} (p50 of 5): speech can start "
        f"{last_stream / first_stream:.0f}× sooner than if the whole answer were awaited."
    )
