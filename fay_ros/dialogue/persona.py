"""The persona file (`config/persona.yaml`): who Fay is, and her stock lines.

Fields:
- `name`, `system_prompt`: the persona / system prompt put in front of every LLM call.
- `max_sentences`: the most sentences one answer may have (the reply guard enforces it).
- `emoji`: whether answers may contain emoji (default false: the guard removes them).
- `fillers`: per language, what she says while the tool loop runs ("let me check").
- `apologies`: per language, the spoken fallback when the LLM fails (unreachable, timeout...).
- `no_answer`: per language, what she says when the model answered but nothing of it could
  be spoken (all of it was dropped by the reply guard): plain words, not the outage apology.
- `unsupported_language`: per language, the honest answer when the model cannot speak the
  user's language (the tiny embedded model speaks English only); it should say how to
  get a model that can. The first line is said the first time in a session, the second
  (shorter) one every time after (`fay-ros models pull|use qwen2.5-1.5b-instruct`).
- `memory_unreachable`: per language, the answer to a question about the user's own facts
  when memory cannot be reached (instead of "you haven't told me", which would be untrue).
- `no_forecast`: per language, the tiny flow's answer to a question about the weather to come
  when no tool reads a forecast (the embedded model made one up).
- `jokes`: per language, short jokes the tiny flow tells in turn when asked for one in a
  language its model cannot speak ("讲个笑话吧" on the embedded English-only model), instead of
  the language apology.
- Background tasks (a tool loop running while the user talks on; `tasks.py`), per language:
  `task_busy` (a second task was asked for while one runs: refused), `task_progress` (the
  answer to "how is it going", `{steps}` = tool steps done so far), `task_cancelled`,
  `task_updated` (the running task got the user's new instruction).
- `prestart`: tools run before the LLM on every question, results fed to the prompt; the
  arguments may contain `{{question}}`, replaced by the user's words. `include_history`
  keeps the result in the conversation history.

The file is read with the strict YAML loader (`fay_ros.common.yaml_loader`): a duplicate or
unknown key (a misspelt field would otherwise silently keep its default) is a PersonaError
naming the file, the key and its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..common.errors import TableError
from ..common.yaml_loader import load_model

# The bilingual model of `fay-ros models` and the commands that make it the companion's.
BILINGUAL_MODEL = "qwen2.5-1.5b-instruct"
ZH_MODEL_HINT = (
    "抱歉，我现在的离线小模型只会说英文。想用中文聊天，请先运行 fay-ros models pull "
    f"{BILINGUAL_MODEL} 下载中文模型，再运行 fay-ros models use {BILINGUAL_MODEL}。"
)
ZH_MODEL_HINT_SHORT = f"抱歉，这个小模型只会说英文。换中文模型：fay-ros models use {BILINGUAL_MODEL}。"


class PersonaError(TableError):
    """A persona file that cannot be used; the message names the file, the field and its line."""


class PrestartSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    include_history: bool = False

    def render_args(self, question: str) -> dict[str, Any]:
        return _render(self.args, question)


class Persona(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "Fay"
    system_prompt: str = "You are Fay, a warm and friendly companion robot."
    max_sentences: int = Field(3, ge=1, le=20)
    emoji: bool = False
    fillers: dict[str, list[str]] = Field(
        default_factory=lambda: {"en": ["Let me check that for you, one moment."], "zh": ["我来帮你查一下，稍等。"]}
    )
    apologies: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["Sorry, I can't answer right now. Please ask me again in a moment."],
            "zh": ["抱歉，我现在回答不了，请稍后再问我一次。"],
        }
    )
    no_answer: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["Sorry, I couldn't find good words for that. Could you ask me another way?"],
            "zh": ["抱歉，这个我没想好怎么回答，你可以换个说法再问我吗？"],
        }
    )
    unsupported_language: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["Sorry, the small offline model I am running on only speaks English."],
            "zh": [ZH_MODEL_HINT, ZH_MODEL_HINT_SHORT],
        }
    )
    memory_unreachable: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["I can't reach my memory just now, so I can't check that. Please ask me again in a moment."],
            "zh": ["我现在连不上我的记忆，没法确认这个。请过一会儿再问我一次。"],
        }
    )
    no_forecast: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": [
                "I can't see a weather forecast from here, I'm afraid. The radio or a look out of the window "
                "will tell you more than I can."
            ],
            "zh": ["我这里看不到天气预报。听听广播或者看看窗外，会比我清楚。"],
        }
    )
    jokes: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["Why don't eggs tell jokes? They'd crack each other up."],
            "zh": [
                "小明问爸爸：“爸爸，我是不是傻孩子啊？”爸爸说：“傻孩子，你怎么会是傻孩子呢？”",
                "老师问小明：“你今天怎么又迟到了？”小明说：“路上有块牌子写着：前方学校，慢行。”",
                "顾客说：“服务员，我的汤里有只苍蝇！”服务员说：“别担心，它喝不了多少。”",
                "儿子问爸爸：“天上的星星为什么不会掉下来？”爸爸说：“因为它们都抓得很紧。”",
            ],
        }
    )
    task_busy: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["I'm still working on your earlier request. Say cancel if you want me to drop it, then ask again."],
            "zh": ["我还在处理你刚才的请求。想换一件事的话，先说取消，再告诉我。"],
        }
    )
    task_progress: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "en": ["I'm still on it, {steps} steps done so far. I'll tell you as soon as I have it."],
            "zh": ["还在处理，已经完成了 {steps} 步，一有结果我就告诉你。"],
        }
    )
    task_cancelled: dict[str, list[str]] = Field(
        default_factory=lambda: {"en": ["Okay, I've stopped that."], "zh": ["好的，已经取消了。"]}
    )
    task_updated: dict[str, list[str]] = Field(
        default_factory=lambda: {"en": ["Got it, I'll take that into account."], "zh": ["好的，我会把这个也考虑进去。"]}
    )
    prestart: list[PrestartSpec] = Field(default_factory=list)

    @field_validator(
        "fillers",
        "apologies",
        "no_answer",
        "unsupported_language",
        "memory_unreachable",
        "no_forecast",
        "jokes",
        "task_busy",
        "task_progress",
        "task_cancelled",
        "task_updated",
    )
    @classmethod
    def _lines_present(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        if not value or not all(lines and all(line.strip() for line in lines) for lines in value.values()):
            raise ValueError("needs at least one non-empty line per language")
        return value

    @field_validator("task_progress")
    @classmethod
    def _progress_placeholders(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for lines in value.values():
            for line in lines:
                try:
                    line.format(steps=0)
                except (KeyError, IndexError, ValueError) as exc:
                    raise ValueError(f"line {line!r}: only the placeholder {{steps}} is known ({exc!r})") from None
        return value

    def line(self, kind: str, language: str, index: int = 0) -> str:
        """One stock line: kind "filler", "apology", "no_answer", "unsupported_language",
        "memory_unreachable", "no_forecast", "jokes", "task_busy", "task_progress" (still with its
        `{steps}` placeholder), "task_cancelled" or "task_updated"."""
        table = {
            "filler": self.fillers,
            "apology": self.apologies,
            "no_answer": self.no_answer,
            "unsupported_language": self.unsupported_language,
            "memory_unreachable": self.memory_unreachable,
            "no_forecast": self.no_forecast,
            "jokes": self.jokes,
            "task_busy": self.task_busy,
            "task_progress": self.task_progress,
            "task_cancelled": self.task_cancelled,
            "task_updated": self.task_updated,
        }[kind]
        lines = (
            table.get(language) or table.get(language.split("-")[0]) or table.get("en") or next(iter(table.values()))
        )
        return lines[index % len(lines)]

    @classmethod
    def load(cls, path: str | Path) -> Persona:
        return load_model(path, cls, error=PersonaError)


def _render(value: Any, question: str) -> Any:
    if isinstance(value, str):
        return value.replace("{{question}}", question)
    if isinstance(value, dict):
        return {k: _render(v, question) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, question) for v in value]
    return value
