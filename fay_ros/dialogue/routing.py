"""Five-way routing of a message that arrives while the user's background task runs (Fay's
"意图分类" in dual-model mode): update_task, query_progress, cancel_task, new_task,
normal_chat.

The small model (the judge endpoint) classifies with a structured answer
`{"intent": "<one of the five>", "confidence": 0..1}` (read with `model_json`). When its
answer is missing, not one of the five, or less confident than the threshold, deterministic
keyword rules in English and Chinese decide (`keyword_route`); where they find nothing, a
valid model answer still stands, else it is normal_chat.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..llm.model_json import first_object

UPDATE_TASK, QUERY_PROGRESS, CANCEL_TASK, NEW_TASK, NORMAL_CHAT = (
    "update_task",
    "query_progress",
    "cancel_task",
    "new_task",
    "normal_chat",
)
INTENTS = (UPDATE_TASK, QUERY_PROGRESS, CANCEL_TASK, NEW_TASK, NORMAL_CHAT)

ROUTER = """You are an intent classifier. A background task is running for the user: {task}
Classify the user's new message. Output ONLY one JSON object:
{{"intent": "<intent>", "confidence": <0.0-1.0>}}
Intents:
- update_task: changes or adds to the running task's instructions ("also check tomorrow", "make it Paris instead")
- query_progress: asks how the running task is going or whether it is done
- cancel_task: asks to stop or cancel the running task
- new_task: asks for a different, unrelated task that needs tools
- normal_chat: anything else (small talk, feelings, thanks)"""

ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "enum": list(INTENTS)},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["intent"],
}

# Deterministic rules, in order (the first class with a hit wins). Latin keywords are matched
# as whole words on the lower-cased text, CJK ones as substrings.
_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        CANCEL_TASK,
        (
            "cancel",
            "abort",
            "never mind",
            "nevermind",
            "forget it",
            "stop that",
            "stop it",
            "stop this",
            "stop the task",
            "stop looking",
            "stop searching",
            "don't bother",
            "no longer need",
        ),
        ("取消", "别查了", "不用查了", "不用了", "算了", "停止", "停下", "不要查了"),
    ),
    (
        QUERY_PROGRESS,
        (
            "how is it going",
            "how's it going",
            "how is that going",
            "progress",
            "are you done",
            "is it done",
            "are you finished",
            "still working",
            "how long",
            "any news",
            "status",
            "found it yet",
            "anything yet",
        ),
        ("进度", "好了吗", "好了没", "怎么样了", "查到了吗", "查好了吗", "还要多久", "完成了吗", "做完了吗"),
    ),
    (
        UPDATE_TASK,
        ("also", "instead", "change it to", "make it", "rather", "as well", "add", "actually"),
        ("改成", "换成", "改为", "还要", "顺便", "再加", "也查", "也要"),
    ),
    (
        NEW_TASK,
        ("new task", "another task", "something else", "another question", "a different thing"),
        ("新任务", "另一个问题", "另外帮我", "再帮我查", "别的事"),
    ),
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _latin_hit(text: str, keyword: str) -> bool:
    return re.search(r"(?<![\w'])" + re.escape(keyword) + r"(?![\w'])", text) is not None


def keyword_route(text: str) -> str | None:
    """The class the keyword rules give `text`, or None when no rule matches."""
    lowered = text.lower().replace("’", "'")
    for intent, latin, cjk in _RULES:
        if _CJK.search(text) and any(k in text for k in cjk):
            return intent
        if any(_latin_hit(lowered, k) for k in latin):
            return intent
    return None


@dataclass(frozen=True)
class Route:
    intent: str
    by: str  # "model", "rules" or "default"
    model_answer: str = ""  # what the model said (for the trace; "" when it failed)


def parse_answer(answer: str) -> tuple[str | None, float]:
    """The model's intent (None when it is not one of the five) and its confidence (1.0 when
    the model did not say)."""
    found = first_object(answer)
    if found is None:
        return None, 0.0
    intent = found.get("intent")
    if not isinstance(intent, str) or intent.strip().lower() not in INTENTS:
        return None, 0.0
    confidence = found.get("confidence", 1.0)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        confidence = 0.0
    return intent.strip().lower(), float(confidence)


def decide(text: str, answer: str | None, min_confidence: float) -> Route:
    """Combine the model's answer (None: the call failed) with the rules."""
    intent, confidence = parse_answer(answer) if answer is not None else (None, 0.0)
    if intent is not None and confidence >= min_confidence:
        return Route(intent, "model", answer or "")
    ruled = keyword_route(text)
    if ruled is not None:
        return Route(ruled, "rules", answer or "")
    if intent is not None:
        return Route(intent, "model", answer or "")
    return Route(NORMAL_CHAT, "default", answer or "")


def router_messages(task_question: str, step: int, text: str) -> list[dict[str, str]]:
    task = f'"{task_question}" (tool-loop steps done: {step})'
    return [{"role": "system", "content": ROUTER.format(task=task)}, {"role": "user", "content": text}]
