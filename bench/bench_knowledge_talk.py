"""Answers from the user's documents with the embedded model: the tiny profile's extractive
answer (the best sentence of the best passage, `dialogue.knowledge_talk`) against, in the same
run, (a) the lead sentence of the best passage and (b) the embedded SmolLM2-135M writing the
answer itself from the same passages given before its one call (Fay's prestart route, through
the real DialogueEngine and the embedded server).

The shop of test/data/knowledge_shop (English and Chinese) indexed into a real SQLite knowledge
base with the default embedder. Questions: the fact's words, paraphrases, and questions the
documents do not answer (the right answer is "I don't know"). A reply is right when it holds
every expected word of the fact (numbers as written in the document), or, for an unanswerable
question, when it says it does not know and holds no figure.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import tempfile
import time
from pathlib import Path

from bench.stats import percentile

TITLE = "Knowledge in the conversation: extractive answers vs the tiny model's own (shop documents, EN and ZH)"

SHOP = Path(__file__).resolve().parents[1] / "test" / "data" / "knowledge_shop"
# (question, words the answer must hold; () = the documents do not answer it)
QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("When does the shop open on Saturday?", ("10 am",)),
    ("What time do you close on Saturdays?", ("6 pm",)),
    ("Is the shop open on Sunday?", ("Sunday", "closed")),
    ("What are your opening hours on weekdays?", ("9 am", "7 pm")),
    ("Until what time does the workshop take repairs?", ("5 pm",)),
    ("Are you open on public holidays?", ("closed",)),
    ("How much does it cost to rent a city bike?", ("15 euros",)),
    ("What is the daily price of an electric bike?", ("35 euros",)),
    ("Do I have to pay for a helmet?", ("free",)),
    ("How much is fixing a flat tyre?", ("12 euros",)),
    ("How long does a full service take?", ("two days",)),
    ("What does a full service cost?", ("60 euros",)),
    ("Where is the shop?", ("Canal Street",)),
    ("Where can I park my car?", ("yard",)),
    ("Where are the toilets?", ("first floor",)),
    ("Do you sell skateboards?", ()),
    ("Can I rent a canoe here?", ()),
    ("What is the wifi password?", ()),
    ("周六几点开门？", ("十点",)),
    ("周日营业吗？", ("周日", "不营业")),
    ("平日晚上几点关门？", ("七点",)),
    ("电动自行车租一天多少钱？", ("三十五欧元",)),
    ("补胎要多少钱？", ("十二欧元",)),
    ("全面保养要几天？", ("两天",)),
    ("店在什么地方？", ("运河街",)),
    ("你们卖滑板吗？", ()),
    ("可以租皮划艇吗？", ()),
]
DONT_KNOW = re.compile(r"don't (?:know|have)|do not (?:know|have)|not sure|no information|不知道|没有", re.I)
FIGURE = re.compile(r"\d|[一二三四五六七八九十两]+(?:点|欧元|天)")


def dialogue_threshold() -> float:
    """The dialogue node's knowledge_threshold default: what a user of `make run` gets."""
    from fay_ros.nodes.dialogue import DialogueConfig

    return float(DialogueConfig.model_fields["knowledge_threshold"].default)


def right(answer: str, expected: tuple[str, ...]) -> bool:
    if not expected:
        return bool(DONT_KNOW.search(answer)) and not FIGURE.search(answer)
    return all(word.lower() in answer.lower() for word in expected)


async def _answers(db: str, base_url: str, model: str) -> dict[str, list[tuple[bool, float, str]]]:
    from fay_ros.common.paths import config_file
    from fay_ros.dialogue.engine import DialogueEngine
    from fay_ros.dialogue.knowledge_talk import KnowledgeDesk, prestart_block, sentences_of
    from fay_ros.dialogue.persona import Persona, PrestartSpec
    from fay_ros.dialogue.settings import EngineConfig, engine_settings
    from fay_ros.dialogue.toolbox import builtin_tools
    from fay_ros.dialogue.tools import Tool
    from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
    from fay_ros.llm.client import ChatClient, Endpoint

    desk = KnowledgeDesk(lambda: KnowledgeBase(KnowledgeSettings(db=db, threshold=dialogue_threshold())))
    await desk.open()
    out: dict[str, list[tuple[bool, float, str]]] = {"extractive": [], "lead": [], "model": []}

    # the model's own answer: the same passages as a prestart result before its one call
    async def passages(args, _ctx) -> str:
        return prestart_block(await desk.search(str(args["question"])))

    tools = builtin_tools()
    tools.add(Tool("documents", "The shop's documents.", {}, passages, callable_by_llm=False))
    persona = Persona.load(config_file("persona.yaml"))
    persona.prestart = [PrestartSpec(tool="documents", args={"question": "{{question}}"})]
    said: list[str] = []
    engine = DialogueEngine(
        persona,
        ChatClient(Endpoint(base_url, model, "", first_token_timeout=60)),
        lambda piece: said.append(piece.text) if piece.text and piece.source != "filler" else None,
        tools=tools,
        settings=engine_settings(EngineConfig(model_profile="tiny"), base_url=base_url, model=model),
    )
    try:
        for n, (question, expected) in enumerate(QUESTIONS):
            t0 = time.perf_counter()
            answer = await desk.answer(f"b{n}", question, "", extractive=True)
            text = answer.text if answer is not None else ""
            out["extractive"].append((right(text, expected), time.perf_counter() - t0, text))

            found = await desk.search(question)
            lead = next((s for p in found[:1] for s in sentences_of(p.text)), "")
            out["lead"].append((right(lead, expected), 0.0, lead))

            said.clear()
            t0 = time.perf_counter()
            await engine.run_turn(f"m{n}", question, "")
            text = " ".join(said)
            out["model"].append((right(text, expected), time.perf_counter() - t0, text))
    finally:
        await engine.small.close()
        desk.close()
    return out


def run() -> str:
    from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
    from fay_ros.llm.embedded import LocalLlmConfig

    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "knowledge.db")
        kb = KnowledgeBase(KnowledgeSettings(db=db))
        kb.add([SHOP])
        kb.close()
        server = LocalLlmConfig(port=0).start()
        try:
            results = asyncio.run(_answers(db, server.base_url, server.model))
        finally:
            server.close()

    def score(name: str, zh: bool | None = None, answerable: bool | None = None) -> str:
        rows = [
            ok
            for (q, expected), (ok, _s, _t) in zip(QUESTIONS, results[name])
            if (zh is None or bool(re.search(r"[\u4e00-\u9fff]", q)) == zh)
            and (answerable is None or bool(expected) == answerable)
        ]
        return f"{sum(rows)}/{len(rows)}"

    names = {
        "extractive": "extractive (best sentence of the best passage; the tiny profile's answer)",
        "lead": "baseline: the first sentence of the best passage",
        "model": "baseline: SmolLM2-135M answering from the same passages (prestart, one call)",
    }
    rows = [
        f"| {label} | {score(n, False, True)} | {score(n, True, True)} | {score(n, None, False)} | {score(n)} |"
        for n, label in names.items()
    ]
    extractive_s = [s for _ok, s, _t in results["extractive"]]
    # the English questions only: a Chinese one gets the language hint at once on that route
    model_s = [s for (q, _e), (_ok, s, _t) in zip(QUESTIONS, results["model"]) if not re.search(r"[\u4e00-\u9fff]", q)]
    ratio = statistics.median(model_s) / statistics.median(extractive_s)
    wrong = {
        name: [
            f"- {name}: {q!r} -> {text[:160]!r}" for (q, _e), (ok, _s, text) in zip(QUESTIONS, results[name]) if not ok
        ]
        for name in ("extractive", "model")
    }
    answerable = sum(bool(e) for _q, e in QUESTIONS)
    lines = [
        f"{len(QUESTIONS)} questions about the shop of test/data/knowledge_shop ({answerable} the documents answer, "
        f"{len(QUESTIONS) - answerable} they do not; English and Chinese), one real SQLite knowledge base with "
        f"the default embedder searched at the dialogue's knowledge_threshold ({dialogue_threshold():g}), the "
        "embedded server started in the same run. Right: the reply holds every word of "
        "the fact as the document writes it; for a question the documents do not answer, it says it does not "
        "know and gives no figure.",
        "",
        "| answerer | EN answerable | ZH answerable | not in the documents (says so) | all |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"Time per turn, p50: extractive {statistics.median(extractive_s) * 1000:.1f} ms (search + sentence, no "
        f"model), the model from passages (English questions) {statistics.median(model_s) * 1000:.0f} ms (p90 "
        f"{percentile(model_s, 0.9) * 1000:.0f} ms); ratio {ratio:.0f}x. The embedded model speaks English only: a "
        "Chinese question gets the persona's language hint on that route. A model answer ending in the apology "
        "timed out (the machine's load in this run).",
    ]
    if wrong["extractive"] or wrong["model"]:
        # every wrong extractive answer; the model's first ten (its Chinese ones are the language hint)
        lines += ["", "Wrong answers:", "", *wrong["extractive"], *wrong["model"][:10]]
    return "\n".join(lines)
