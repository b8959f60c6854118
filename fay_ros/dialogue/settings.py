"""The dialogue engine's settings: each default, bound and description written once.

`EngineConfig` (pydantic) is what a user sets: the dialogue node's `DialogueConfig` inherits
it (each field becomes a ROS parameter with its description), and `fay-ros chat` starts
from its defaults, overriding only its own options. `engine_settings(config, ...)` turns a
validated config into the `EngineSettings` the engine reads each turn (mutable: the node
applies live parameter changes to it). `EngineSettings()` has the same defaults, taken from
`EngineConfig`, so a test that builds one runs what users run.

Fields that only the engine has (no parameter sets them: memory_recall_n, prestart_timeout,
the tiny decoding, ...) keep their default in `EngineSettings`. Pure Python, no ROS.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..llm.profiles import CAPABLE, TinyDecoding, languages_of, resolve

TASK_MODES = ("off", "dual", "always")  # background tasks: never / with a big model (Fay) / always


class EngineConfig(BaseModel):
    """The user-settable engine settings (parameters of the dialogue node, defaults of the CLI)."""

    model_profile: Literal["auto", "tiny", "capable"] = Field(
        "auto",
        description="dialogue flow for the model: 'tiny' (one streamed call, facts resolved first, greedy "
        "decoding; for ~100M models like the embedded one), 'capable' (Fay's judge -> tool loop -> reply), 'auto' "
        "(tiny for the embedded endpoint or a model named like a tiny one, else capable)",
    )
    qa_script_tools: list[str] = Field(
        ["current_time"], description="tools a qa.csv script cell may name (scripts are never executed)"
    )
    judge: bool = Field(True, description="run the chat judge (false: always answer directly, no tools)")
    judge_format: Literal["none", "json_object", "json_schema"] = Field(
        "json_schema", description="structured-output request for the judge (what the endpoint supports)"
    )
    native_tools: bool = Field(True, description="offer OpenAI function calling in the tool loop too")
    max_tool_steps: int = Field(5, ge=1, le=30, description="most tool-loop steps per turn")
    tool_timeout: float = Field(10.0, gt=0.0, description="seconds one tool call may take")
    max_tokens: int = Field(150, ge=16, description="most tokens per LLM answer (spoken replies are short)")
    temperature: float = Field(
        0.7, ge=0.0, le=2.0, description="sampling temperature (capable profile; the tiny profile decodes greedily)"
    )
    frequency_penalty: float = Field(
        0.3, ge=-2.0, le=2.0, description="discourages repetition (0 = not sent to the endpoint)"
    )
    history_turns: int = Field(8, ge=0, description="turns of per-user history kept for the prompt")
    memory_timeout: float = Field(0.5, gt=0.0, description="seconds to wait for a memory service")
    default_language: str = Field("en", description="reply language when the input has none and no Chinese")
    sentence_min_chars: int = Field(4, ge=1, description="shorter sentences are merged with the next one")
    background_tasks: Literal["off", "dual", "always"] = Field(
        "dual",
        description="run the tool loop as a background task of the user while they talk on: 'dual' only "
        "with a big model (Fay), 'always', or 'off' (the turn waits for the tools)",
    )
    route_timeout: float = Field(
        5.0,
        gt=0.0,
        description="seconds the model may take to classify a message sent "
        "while a background task runs (then keyword rules decide)",
    )
    route_min_confidence: float = Field(
        0.6, ge=0.0, le=1.0, description="a less confident classification is decided by the keyword rules"
    )
    new_task: Literal["refuse", "replace"] = Field(
        "refuse",
        description="a new task asked for while the user's task runs: 'refuse' (Fay's rule: one task per "
        "user, the persona's task_busy line) or 'replace' (cancel the running task, take the new request)",
    )
    fact_check: bool = Field(
        False,
        description="dual-model: the big model checks a background task's final "
        "reply against the tool results before it is spoken",
    )
    core_memory_tokens: int = Field(
        300,
        ge=0,
        le=4000,
        description="tokens of the user's core memory (layered profile) in every capable-flow prompt; "
        "safety facts are never cut (0 = none)",
    )
    core_memory_tiny_tokens: int = Field(
        80, ge=0, le=1000, description="the same for the tiny flow (a small model's context is short)"
    )


def _default(name: str) -> Any:
    """The default of an `EngineConfig` field (the one place it is written)."""
    return EngineConfig.model_fields[name].get_default(call_default_factory=True)


@dataclass
class EngineSettings:
    judge: bool = _default("judge")
    judge_format: str = _default("judge_format")  # "none", "json_object", "json_schema"
    native_tools: bool = _default("native_tools")  # also offer OpenAI function calling in the tool loop
    max_tool_steps: int = _default("max_tool_steps")
    tool_timeout: float = _default("tool_timeout")
    history_turns: int = _default("history_turns")
    max_tokens: int = _default("max_tokens")
    temperature: float | None = _default("temperature")
    frequency_penalty: float = _default("frequency_penalty")
    memory_timeout: float = _default("memory_timeout")
    memory_recall_n: int = 5
    prestart_timeout: float = 3.0
    sentence_min_chars: int = _default("sentence_min_chars")
    default_language: str = _default("default_language")
    qa_script_tools: tuple[str, ...] = tuple(_default("qa_script_tools"))  # tools a qa.csv script cell may name
    llm_tools: tuple[str, ...] | None = None  # tools the tool loop may call (None = all)
    profile: str = CAPABLE  # "tiny" or "capable" (resolved from model_profile: engine_settings)
    tiny: TinyDecoding = field(default_factory=TinyDecoding)
    learn_facts: bool = True  # keep what the user says about themselves (short-term + memory)
    background_tasks: str = _default("background_tasks")  # TASK_MODES: the tool loop as a background task
    route_timeout: float = _default("route_timeout")  # seconds the classification may take before the rules decide
    route_min_confidence: float = _default("route_min_confidence")  # less confident: the rules decide
    fact_check: bool = _default("fact_check")  # dual-model: the big model checks a task's final reply
    # A new task while one runs: "refuse" (Fay's ExecutionManager.submit: the task_busy line) or
    # "replace" (the running task is cancelled and the message is handled as a fresh turn).
    new_task: str = _default("new_task")
    core_memory_tokens: int = _default("core_memory_tokens")  # core memory budget, capable flow
    core_memory_tiny_tokens: int = _default("core_memory_tiny_tokens")  # ... tiny flow


# EngineConfig fields that are EngineSettings fields of the same name (model_profile is not:
# it becomes `profile` once the endpoint is known).
SHARED_FIELDS = tuple(f.name for f in fields(EngineSettings) if f.name in EngineConfig.model_fields)


def engine_settings(config: EngineConfig, *, base_url: str, model: str, **engine_only: Any) -> EngineSettings:
    """The engine's settings from a validated config: the profile resolved for the endpoint
    and model (`profiles.resolve`, the same rule for the node and the CLI); `engine_only`:
    EngineSettings fields no parameter sets (llm_tools, ...)."""
    values: dict[str, Any] = {name: getattr(config, name) for name in SHARED_FIELDS}
    values["qa_script_tools"] = tuple(config.qa_script_tools)
    values["profile"] = resolve(config.model_profile, base_url, model)
    values["tiny"] = TinyDecoding(languages=languages_of(model))  # a Chinese turn on an English model gets a hint
    return EngineSettings(**{**values, **engine_only})
