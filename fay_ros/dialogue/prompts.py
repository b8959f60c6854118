"""The prompts of Fay's three-stage flow (see the seeds' "Prompt设计文档"), in English so a
small local model follows them; every reply is asked for in the user's language.
"""
from __future__ import annotations

import json

JUDGE = """You are a chat judge. Decide whether the user's message is small talk. Output ONLY one valid JSON object, nothing else.
Two formats only:
1. Small talk: {"action": "finish", "message": "<your reply to the user>"}
2. Not small talk: {"action": "tool", "keyword": "<search keyword>"}
Small talk (finish): greetings, feelings ("I'm tired"), thanks and goodbyes, simple confirmations.
Not small talk (tool): asking what something is, asking to look up or fetch anything, the time or date, anything about the user's own past facts or preferences, anything that needs a tool to answer exactly, and requests to remember or forget something.
When unsure, output tool.
Write the message in the user's language, in the persona's voice, short and spoken (no markdown, no emoji)."""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["finish", "tool"]},
        # bounded so a small model cannot ramble inside the JSON (servers that enforce the
        # schema, e.g. llama.cpp, stop the string there)
        "message": {"type": "string", "maxLength": 400},
        "keyword": {"type": "string", "maxLength": 80},
    },
    "required": ["action"],
}

EXECUTOR = """You are a task executor. Call tools step by step to complete the user's request. Output ONLY valid JSON, or use the provided function-calling interface.
Two formats only:
1. Another tool call is needed: {"action": "tool", "tool": "<tool name>", "args": {...}}
2. The task is done: {"action": "finish", "message": "<short summary of the results>"}
Rules:
- Check the user's original request: are all of its parts satisfied?
- STRICT: look at the list of completed tool calls first. Never call a tool again with the same name and the same arguments.
- The current user is known to the tools; never pass a user or owner argument."""

FINAL = """You already told the user "let me check, one moment"; the tools have finished now.
Answer the user based on the tool results below. Do not repeat "let me check". Speak plainly in everyday words, never mention tools or function calls, and answer in the user's language in 1-3 short sentences.

User message: {request}
What was done: {calls}
Tool results:
{results}"""

DIRECT = "Answer in the user's language, briefly and conversationally, as spoken words (no markdown, no emoji)."


def context_block(memories: list[str], rules: list[str], prestart: list[str], tools: list[str] | None = None) -> str:
    parts = []
    if rules:
        parts.append("Rules the user asked you to follow:\n" + "\n".join(f"- {r}" for r in rules))
    if memories:
        parts.append("What you remember about this user (confirmed):\n" + "\n".join(f"- {m}" for m in memories))
    if prestart:
        parts.append("Context fetched for this question:\n" + "\n".join(prestart))
    if tools is not None:
        parts.append("Available tools: " + (", ".join(tools) if tools else "none"))
    return "\n\n".join(parts)


def describe_call(name: str, args: dict) -> str:
    return f"{name}({json.dumps(args, ensure_ascii=False, sort_keys=True)})"
