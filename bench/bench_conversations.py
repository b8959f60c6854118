"""Conversation quality: scripted multi-turn conversations (bench/data/conversations/*.yaml,
half Chinese) through the real DialogueEngine, in-process as `fay-ros chat` runs it (the node's
default settings for the endpoint and model: `engine_settings`), against each model present:
the embedded SmolLM2-135M (served in-process by `LocalLlmConfig(port=0).start()`) and any
other GGUF in $FAY_MODELS_DIR or <venv>/share/fay_ros/models (absent ones are listed as such).

Each turn's answer is checked for:
- recall: a fact the user stated earlier is said back (the turn's `recall` words are in it);
- invented: no name, home, job or family fact about the user that they did not state (the
  answer's sentences put in the user's voice and read by the user's own rules,
  `self_facts.in_the_users_voice` + `extract_self_facts`);
- leak: no system-prompt text, no "You are Fay", no role tags or template tokens;
- answered: when an answer is due, not only a filler, the no_answer line or the apology.

Latency: typed → first answer (submitting the turn to the first reply piece with text), as a
ratio against the bare server's time to first token (the persona as system prompt, a short
user line) measured in the same run.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bench.stats import percentile

TITLE = "Conversation quality: recall, invented facts, leaks, answers (scripted conversations, EN and ZH)"

DATA = Path(__file__).resolve().parent / "data" / "conversations"
KINDS = ("recall", "invented", "leak", "answered")
PERSONAL = ("name", "home", "occupation", "workplace")
LEAK = re.compile(
    r"\byou are fay\b|\bsystem prompt\b|<\||\|>|<think|"
    r"\b(?:user|assistant|system|human)\s*[:：]|用户\s*[:：]|助手\s*[:：]",
    re.I,
)
# answered without a model call (facts, clock, the language hint): not in the latency figures
INSTANT = {"memory", "clock", "language", "qa"}
BASELINE_LINES = ["How are you today?", "Tell me something nice.", "Do you like music?", "I am a bit tired."] * 3


def load() -> list[dict[str, Any]]:
    conversations: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.yaml")):
        with open(path, encoding="utf-8") as f:
            conversations += yaml.safe_load(f)
    return conversations


def model_files() -> tuple[list[tuple[Path, str]], list[str]]:
    """Other GGUFs found, each with the name it is served under (a model `fay-ros models pull`
    keeps in a folder: the folder's name, its catalogue name; a loose file: its stem), and the
    places looked at."""
    dirs = [Path(os.environ["FAY_MODELS_DIR"]).expanduser()] if os.environ.get("FAY_MODELS_DIR") else []
    dirs.append(Path(sys.prefix) / "share" / "fay_ros" / "models")
    found: dict[Path, str] = {}
    for d in (d for d in dirs if d.is_dir()):
        found.update({p: p.stem for p in d.glob("*.gguf")})
        found.update({p: p.parent.name for p in d.glob("*/*.gguf")})
    labels = (["$FAY_MODELS_DIR"] if os.environ.get("FAY_MODELS_DIR") else []) + ["<venv>/share/fay_ros/models"]
    return sorted(found.items()), labels


# -- checks -----------------------------------------------------------------------------------


def invented(answer: str, stated: dict[str, str]) -> list[str]:
    """Personal facts the answer states about the user that they never stated (or stated
    otherwise): keys of `self_facts`, read from the answer in the user's voice."""
    from fay_ros.memory.self_facts import contradicted, extract_self_facts, in_the_users_voice
    from fay_ros.text.sentences import split_sentences

    out = []
    for sentence in split_sentences(answer) or [answer]:
        said = in_the_users_voice(sentence)
        if said == sentence:
            continue  # not said to the user about them
        for fact in extract_self_facts(said):
            personal = fact.key in PERSONAL or (fact.key.startswith("family:") and fact.key.count(":") == 1)
            if personal and fact.key not in stated:
                out.append(fact.key)
        out += contradicted(sentence, stated)
    return out


def leaks(answer: str, persona_prompt: str) -> bool:
    words = re.findall(r"[\w']+", answer.lower())
    prompt = re.findall(r"[\w']+", persona_prompt.lower())
    grams = {tuple(prompt[i : i + 6]) for i in range(len(prompt) - 5)}
    return bool(LEAK.search(answer)) or any(tuple(words[i : i + 6]) in grams for i in range(len(words) - 5))


def stock_only(pieces: list[tuple[str, str]], persona: Any, language: str) -> bool:
    """Nothing but a filler, the no_answer line or the apology."""
    stock = {
        line
        for table in (persona.fillers, persona.no_answer, persona.apologies)
        for ls in table.values()
        for line in ls
    }
    said = [text for text, _source in pieces if text.strip()]
    return not said or all(text in stock or any(text in line for line in stock) for text in said)


# -- one model ------------------------------------------------------------------------------------


async def _converse(base_url: str, model: str, conversations: list[dict[str, Any]]) -> dict[str, Any]:
    from fay_ros.common.paths import config_file
    from fay_ros.dialogue.engine import DialogueEngine
    from fay_ros.dialogue.persona import Persona
    from fay_ros.dialogue.settings import EngineConfig, engine_settings
    from fay_ros.dialogue.toolbox import builtin_tools
    from fay_ros.llm.client import ChatClient, Endpoint
    from fay_ros.memory.self_facts import extract_self_facts

    persona = Persona.load(config_file("persona.yaml"))
    pieces: list[tuple[str, str]] = []
    first_text: list[float] = []

    def emit(piece) -> None:
        if piece.text and not first_text and piece.source != "filler":
            first_text.append(time.monotonic())
        pieces.append((piece.text, piece.source))

    # as `fay-ros models use` runs it: the embedded server (tiny profile), under the model's name
    settings = engine_settings(EngineConfig(model_profile="tiny"), base_url=base_url, model=model)
    engine = DialogueEngine(
        persona,
        ChatClient(Endpoint(base_url, model, "", first_token_timeout=60)),
        emit,
        tools=builtin_tools(),
        settings=settings,
    )
    passed = dict.fromkeys(KINDS, 0)
    total = dict.fromkeys(KINDS, 0)
    latencies: list[float] = []
    invented_turns: list[str] = []
    failures: list[str] = []
    try:
        for n, conversation in enumerate(conversations):
            user, language = f"bench{n}", conversation["language"]
            stated: dict[str, str] = {}
            for turn in conversation["turns"]:
                for fact in extract_self_facts(turn["say"]):
                    stated[fact.key] = fact.content
                pieces.clear()
                first_text.clear()
                t0 = time.monotonic()
                trace = await engine.run_turn(user, turn["say"], language)
                answer = " ".join(text for text, source in pieces if text and source != "filler")
                if first_text and trace.path not in INSTANT:
                    latencies.append(first_text[0] - t0)
                where = f"{conversation['id']}: {turn['say']!r} -> {answer!r}"
                checks = {
                    "invented": not invented(answer, stated),
                    "leak": not leaks(answer, persona.system_prompt),
                }
                if turn.get("recall"):
                    checks["recall"] = all(w.lower() in answer.lower() for w in turn["recall"])
                if turn.get("answer", True):
                    checks["answered"] = not stock_only(pieces, persona, language)
                for kind, ok in checks.items():
                    total[kind] += 1
                    passed[kind] += ok
                    if not ok:
                        failures.append(f"{kind}: {where}")
                if not checks["invented"]:
                    invented_turns.append(where)
    finally:
        await engine.small.close()
    return {
        "passed": passed,
        "total": total,
        "latencies": latencies,
        "invented": invented_turns,
        "failures": failures,
        "turns": sum(len(c["turns"]) for c in conversations),
        "profile": settings.profile,
        "languages": settings.tiny.languages,
    }


def _baseline(base_url: str, model: str, system_prompt: str) -> list[float]:
    """The bare server's time to first content token (s), first request (cache fill) left out."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="none", max_retries=0, timeout=60)
    out = []
    try:
        for i, line in enumerate(BASELINE_LINES):
            t0 = time.monotonic()
            stream = client.chat.completions.create(
                model=model,
                stream=True,
                max_tokens=16,
                temperature=0.0,
                messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": line}],
            )
            first = None
            for chunk in stream:
                if first is None and chunk.choices and chunk.choices[0].delta.content:
                    first = time.monotonic()
            if i and first is not None:
                out.append(first - t0)
    finally:
        client.close()
    return out


def _one_model(model_file: str, model_name: str, conversations: list[dict[str, Any]]) -> dict[str, Any]:
    from fay_ros.common.paths import config_file
    from fay_ros.dialogue.persona import Persona
    from fay_ros.llm.embedded import EMBEDDED_MODEL, LocalLlmConfig

    server = LocalLlmConfig(port=0, model_file=model_file, model_name=model_name or EMBEDDED_MODEL).start()
    try:
        base = _baseline(server.base_url, server.model, Persona.load(config_file("persona.yaml")).system_prompt)
        result = asyncio.run(_converse(server.base_url, server.model, conversations))
    finally:
        server.close()
    result["baseline"] = base
    result["model"] = server.model
    return result


def run() -> str:
    from fay_ros.llm.embedded import MODEL_FILE

    conversations = load()
    others, looked = model_files()
    # a pulled model is served under its folder's name (its catalogue name), a loose file under its stem
    runs = [("", MODEL_FILE, "")] + [(str(p), p.name, served_as) for p, served_as in others]
    rows = []
    notes = []
    for path, name, served_as in runs:
        r = _one_model(path, served_as, conversations)
        p, t = r["passed"], r["total"]
        base50 = statistics.median(r["baseline"])
        lat = r["latencies"]
        p50, p90 = percentile(lat, 0.5), percentile(lat, 0.9)
        rows.append(
            f"| {name} ({r['profile']}, speaks {'+'.join(r['languages'])}) | "
            + " | ".join(f"{p[k]}/{t[k]}" for k in KINDS)
            + f" | {sum(p.values())}/{sum(t.values())} | {len(r['invented'])}/{r['turns']} | "
            f"{p50 * 1000:.0f} / {p90 * 1000:.0f} ms (n={len(lat)}) | {base50 * 1000:.0f} ms | "
            f"{p50 / base50:.1f}x / {p90 / base50:.1f}x |"
        )
        for failure in r["failures"][:12]:
            notes.append(f"- {name}: {failure}")
        print(f"{name}: {sum(p.values())}/{sum(t.values())} checks; failures: {r['failures']}", flush=True)
    n_turns = sum(len(c["turns"]) for c in conversations)
    zh = sum(c["language"] == "zh" for c in conversations)
    lines = [
        f"{len(conversations)} scripted conversations ({zh} in Chinese), {n_turns} typed turns, through the "
        "DialogueEngine in-process with the node's default settings for each model (as `fay-ros chat`); "
        "no memory node (the session's own facts). Checks per turn: **recall** (a stated fact said back), "
        "**invented** (no name/home/job/family fact about the user that they did not state), **leak** (no "
        'system-prompt text, "You are Fay", role tags), **answered** (not only a filler / the no_answer line '
        "when an answer was due). Latency: typed → first reply piece with text, over the turns the model "
        "answered (n), against the bare server's time to first token (persona as system prompt, short line) "
        "in the same run; turns answered from the facts, the clock or the language hint take ~0 ms.",
        "",
        "| model | recall | invented (none) | leak (none) | answered | all checks | turns with an invented fact "
        "| typed → first answer p50 / p90 | baseline TTFT p50 | ratio p50 / p90 |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Other GGUF models looked for in {', '.join(looked)}: "
        + (
            ", ".join(f"{p.name} (served as {served_as})" for p, served_as in others)
            if others
            else "none present (only the embedded model was run)"
        )
        + ". A Chinese turn on the English-only embedded model is answered from the facts where it asks for "
        "one, else with the hint naming `fay-ros models pull|use qwen2.5-1.5b-instruct` (counted as answered).",
    ]
    if notes:
        lines += ["", "Failed checks (first ones):", "", *notes]
    return "\n".join(lines)
