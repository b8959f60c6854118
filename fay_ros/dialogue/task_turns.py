"""Background tasks in a conversation (Fay's ExecutionManager; setting `background_tasks`):
the glue between a turn and `tasks.TaskManager`.

In "dual" (only with a big model) or "always" mode, a judge verdict `tool` says the filler
and hands the tool loop to a background task of that user (`start`); the turn ends there and
the user talks on. When the task completes, its final reply streams into the original
conversation as a new stream (seq continues, source "task"), after the reply being spoken to
that user. While it runs, each chat message of that user is routed five ways (`route`,
`routing.py`). Pure Python, no ROS.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from ..llm.client import LlmError
from ..llm.profiles import CAPABLE
from . import routing
from .prompts import PromptContext
from .reply import Reply
from .reply_assembly import ReplyAssembly
from .session import Sessions
from .tasks import CANCELLED, COMPLETED, BackgroundTask, TaskBusy, TaskManager
from .tool_loop import ToolLoop
from .tools import ToolContext
from .trace import TurnTrace
from .wiring import Wiring

log = logging.getLogger("fay_ros.dialogue")


class TaskTurns:
    def __init__(
        self,
        wiring: Wiring,
        tasks: TaskManager,
        sessions: Sessions,
        assembly: ReplyAssembly,
        spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task],
    ) -> None:
        self.wiring = wiring
        self.tasks = tasks
        self.sessions = sessions
        self.assembly = assembly
        self._spawn = spawn  # runs a coroutine the engine's settle() waits for

    def enabled(self) -> bool:
        """A tool verdict becomes a background task (else the turn runs the tool loop)."""
        w = self.wiring
        mode = w.settings.background_tasks
        return w.settings.profile == CAPABLE and (mode == "always" or (mode == "dual" and w.big is not None))

    def start(
        self,
        reply: Reply,
        ctx: ToolContext,
        trace: TurnTrace,
        context: PromptContext,
        keyword: str,
        tool_loop: ToolLoop,
    ) -> None:
        """The tool loop as a background task: the filler ends this reply; the result comes as a
        new stream of this conversation (`_deliver`). A user with a running task is refused."""
        w = self.wiring
        if self.tasks.running(ctx.owner) is not None:
            trace.path = "task_busy"
            reply.end(w.persona.line("task_busy", ctx.language, ctx.turn), "task_status")
            return
        reply.end(w.persona.line("filler", ctx.language, ctx.turn), "filler")
        history = w.histories.of(ctx.owner)
        task_trace = TurnTrace(ctx.conversation_id, path="task")
        w.traces.append(task_trace)

        async def work(task: BackgroundTask) -> list[tuple[str, str]]:
            return await tool_loop.run(
                ctx,
                task_trace,
                w.persona.system_prompt,
                context,
                history,
                keyword,
                on_step=lambda steps, tool: self.tasks.step(task, steps, tool),
                instructions=task.instructions,
            )

        try:
            task = self.tasks.submit(
                BackgroundTask(ctx.owner, ctx.conversation_id, ctx.question, ctx.language, reply.seq),
                work,
                lambda done: self._done(done, ctx, task_trace),
            )
        except TaskBusy:  # cannot happen on one loop after the check above; kept for safety
            return
        log.info("background task %s started for conversation %s", task.id, ctx.conversation_id)

    def _done(self, task: BackgroundTask, ctx: ToolContext, trace: TurnTrace) -> None:
        """A task ended: a completed or failed one answers in its conversation; a cancelled one
        was already answered by the cancel route."""
        log.info(
            "background task %s of conversation %s: %s after %d step(s)",
            task.id,
            task.conversation_id,
            task.state,
            task.step,
        )
        if task.state == CANCELLED:
            trace.cancelled = True
            return
        session = self.sessions.of(task.user_id)
        previous = session.running

        async def deliver() -> None:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})  # let the reply being spoken to this user finish first
            me = asyncio.current_task()
            if me is not None:
                session.running = me  # the user's next input or an interrupt cuts the result
            try:
                await self._deliver(task, ctx, trace)
            finally:
                if session.running is me:
                    session.running = None

        self._spawn(deliver())

    async def _deliver(self, task: BackgroundTask, ctx: ToolContext, trace: TurnTrace) -> None:
        """The task's final reply, from the small model, as a new stream (source "task") of the
        conversation that started it."""
        w = self.wiring
        reply = Reply(
            w.emit,
            task.user_id,
            task.conversation_id,
            False,
            w.persona.line("no_answer", task.language, ctx.turn),
            start_seq=task.next_seq,
            source="task",
        )
        try:
            if task.state == COMPLETED:
                results: list[tuple[str, str]] = task.result or []
                if w.settings.fact_check and w.big is not None:
                    await self.assembly.checked_final_reply(reply, ctx, trace, results)
                else:
                    await self.assembly.final_reply(reply, ctx, trace, results)
            else:
                error = task.error
                trace.error = f"{type(error).__name__}: {error}" if error else "failed"
                if isinstance(error, LlmError):
                    log.error(
                        "background task %s: LLM failed (%s): %s; speaking the apology",
                        task.id,
                        error.kind,
                        error.reason,
                    )
                else:
                    log.error("background task %s failed: %s", task.id, trace.error)
                reply.end(w.persona.line("apology", task.language), "fallback")
        except asyncio.CancelledError:
            reply.cut()
            raise
        except LlmError as exc:
            trace.error = f"{exc.kind}: {exc.reason}"
            log.error(
                "LLM failed for the result of task %s (%s): %s; speaking the apology", task.id, exc.kind, exc.reason
            )
            reply.end(w.persona.line("apology", task.language), "fallback")
        w.histories.remember_turn(task.user_id, None, " ".join(reply.spoken))

    async def route(self, reply: Reply, ctx: ToolContext, trace: TurnTrace, task: BackgroundTask) -> bool:
        """Five-way routing of a message while the user's task runs; True when it was answered
        here, False for normal_chat (the usual flow goes on)."""
        w = self.wiring
        answer: str | None = None
        if w.small is not None:
            messages = routing.router_messages(task.question, task.step, ctx.question)
            try:
                answer = await asyncio.wait_for(
                    self.assembly.complete(
                        w.small, messages, max_tokens=40, temperature=0.0, response_format=self._route_format()
                    ),
                    w.settings.route_timeout,
                )
            except (TimeoutError, LlmError) as exc:
                log.warning(
                    "task routing by the model failed (%s); the keyword rules decide", getattr(exc, "kind", "timeout")
                )
        route = routing.decide(ctx.question, answer, w.settings.route_min_confidence)
        trace.route = f"{route.intent} by {route.by}"
        log.info("message of %s during task %s routed to %s", ctx.conversation_id, task.id, trace.route)
        if route.intent == routing.NORMAL_CHAT:
            return False
        trace.path = f"task:{route.intent}"
        if route.intent == routing.UPDATE_TASK:
            line = w.persona.line("task_updated", ctx.language, ctx.turn)
            if self.tasks.update(ctx.owner, ctx.question) is None:  # it ended meanwhile
                return False
        elif route.intent == routing.QUERY_PROGRESS:
            line = w.persona.line("task_progress", ctx.language, ctx.turn).format(steps=task.step)
        elif route.intent == routing.CANCEL_TASK:
            self.tasks.cancel(ctx.owner)
            line = w.persona.line("task_cancelled", ctx.language, ctx.turn)
        elif w.settings.new_task == "replace":  # new_task: drop the running one, take this one afresh
            self.tasks.cancel(ctx.owner)
            trace.path = "task:new_task replaced"
            log.info("task %s of %s cancelled for a new request", task.id, ctx.conversation_id)
            return False
        else:  # new_task: one running task per user (Fay's ExecutionManager.submit refuses a second)
            line = w.persona.line("task_busy", ctx.language, ctx.turn)
        self.assembly.speak_text(reply, line, "task_status")
        return True

    def _route_format(self) -> dict[str, Any] | None:
        judge_format = self.wiring.settings.judge_format
        if judge_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "task_route", "schema": routing.ROUTER_SCHEMA}}
        if judge_format == "json_object":
            return {"type": "json_object"}
        return None
