"""The tool loop (Fay's 工具循环): call tools until the model says it is done.

Each step asks the model (the big one in dual-model mode) with the tools offered and the
calls completed so far. It may answer with OpenAI function calls (streamed `tool_calls`,
answered with `role: tool` messages) or with Fay's JSON action
`{"action": "tool", "tool": ..., "args": {...}}` (answered with a user message); anything
else (`finish`, plain text) ends the loop. An identical call (name + arguments) is never run
twice: the model is told the earlier result instead, and a second repeat ends the loop. At
most `max_steps` steps. Tool failures are reported to the model, never raised.

Pure Python, no ROS.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from ..llm.client import ChatClient, ToolCall
from ..llm.model_json import first_object
from ..text.think import strip_think
from . import prompts
from .judge import TOOL
from .tools import Tool, ToolContext, ToolError, ToolRegistry, canonical_call
from .trace import TurnTrace

log = logging.getLogger("fay_ros.dialogue")


class ToolLoop:
    def __init__(
        self,
        client: ChatClient,
        tools: ToolRegistry,
        *,
        allowed: tuple[str, ...] | None = None,
        max_steps: int = 5,
        tool_timeout: float = 10.0,
        native_tools: bool = True,
        sampling: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.tools = tools
        self.allowed = allowed  # tools the model may call (None = every tool callable by an LLM)
        self.max_steps = max_steps
        self.tool_timeout = tool_timeout
        self.native_tools = native_tools  # also offer OpenAI function calling
        self.sampling = sampling or {}  # max_tokens, temperature, frequency_penalty of each step

    def offered(self) -> list[Tool]:
        """The tools the model is offered."""
        return self.tools.llm_tools(list(self.allowed) if self.allowed is not None else None)

    async def run(
        self,
        ctx: ToolContext,
        trace: TurnTrace,
        persona: str,
        context: prompts.PromptContext,
        history: list[dict[str, Any]],
        keyword: str = "",
        *,
        on_step: Callable[[int, str], None] | None = None,
        instructions: Callable[[], list[str]] | None = None,
    ) -> list[tuple[str, str]]:
        """Run tools until the model says finish; returns [(call description, result)]. The
        calls made and the repeats skipped are recorded in `trace` as they happen.

        Background tasks: `on_step(steps_done, tool)` is called before and after each tool runs, and
        `instructions()` (what the user added while the task runs) is read at every step and
        put into that step's request."""
        tools = self.offered()
        done: dict[str, str] = {}
        results: list[tuple[str, str]] = []
        loop_messages: list[dict[str, Any]] = []
        repeats = 0
        request = ctx.question + (f"\n(search keyword: {keyword})" if keyword else "")
        for step in range(self.max_steps):
            added = instructions() if instructions is not None else []
            step_request = request + "".join(f"\n(the user added while you worked: {a})" for a in added)
            messages = [
                *prompts.executor_messages(persona, context, tools, results, history, step_request),
                *loop_messages,
            ]
            content, calls = await self._ask(
                messages, [t.schema() for t in tools] if self.native_tools and tools else None
            )
            native = bool(calls)
            if not calls:
                action = first_object(content)
                if action is None or action.get("action") != TOOL:
                    break  # finish (or plain text): the loop is over
                args = action.get("args") if isinstance(action.get("args"), dict) else {}
                calls = [ToolCall(str(action.get("tool", "")), json.dumps(args, ensure_ascii=False))]
            if native:
                loop_messages.append(
                    {
                        "role": "assistant",
                        "content": content or None,
                        "tool_calls": [
                            {
                                "id": c.id or f"call_{step}_{i}",
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments or "{}"},
                            }
                            for i, c in enumerate(calls)
                        ],
                    }
                )
            else:
                loop_messages.append({"role": "assistant", "content": content})
            stop = False
            for i, call in enumerate(calls):
                try:
                    args = call.parsed_arguments()
                except ValueError as exc:
                    args, result = {}, f"error: arguments are not a JSON object ({exc})"
                else:
                    key = canonical_call(call.name, args)
                    if key in done:
                        repeats += 1
                        trace.skipped_repeats.append(prompts.describe_call(call.name, args))
                        result = (
                            f"NOT RUN: {call.name} was already called with exactly these arguments; its result "
                            f"was: {done[key][:300]}. Do not call it again; finish now."
                        )
                        log.info("tool loop %s: skipped repeated call %s", ctx.conversation_id, call.name)
                        stop = repeats >= 2
                    else:
                        if on_step is not None:
                            on_step(len(results), call.name)
                        result = await self._run_tool(call.name, args, ctx)
                        done[key] = result
                        results.append((prompts.describe_call(call.name, args), result))
                        if on_step is not None:
                            on_step(len(results), call.name)
                        trace.tool_calls.append(prompts.describe_call(call.name, args))
                if native:
                    loop_messages.append(
                        {"role": "tool", "tool_call_id": call.id or f"call_{step}_{i}", "content": result}
                    )
                else:
                    loop_messages.append({"role": "user", "content": f"Result of {call.name}: {result}"})
            if stop:
                break
        return results

    async def _ask(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[str, list[ToolCall]]:
        """One step's whole answer (reasoning removed) and the function calls it made."""
        parts: list[str] = []
        calls: list[ToolCall] = []
        async with contextlib.aclosing(self.client.stream(messages, tools=tools, **self.sampling)) as events:
            async for event in events:
                parts.append(event.content)
                if event.done:
                    calls = event.tool_calls
        return strip_think("".join(parts)).strip(), calls

    async def _run_tool(self, name: str, args: dict[str, Any], ctx: ToolContext) -> str:
        tool = self.tools.get(name)
        if tool is None or not tool.callable_by_llm or (self.allowed is not None and name not in self.allowed):
            return f"error: no tool named {name!r}; available: {', '.join(t.name for t in self.offered())}"
        try:
            return await self.tools.run(name, args, ctx, self.tool_timeout)
        except ToolError as exc:
            return f"error: {exc}"
        except Exception as exc:  # noqa: BLE001 - a broken tool is reported to the model, not fatal
            log.warning("tool %s failed: %s", name, exc)
            return f"error: {type(exc).__name__}: {exc}"
