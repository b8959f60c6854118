"""What happened in one turn: the path it took, tool calls, timings, what was dropped
(for logs, /diagnostics and tests; never the words of the conversation)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TurnTrace:
    """What happened in one turn (for logs and tests)."""

    conversation_id: str
    # "qa", "finish", "tool", "text", "direct", "tiny", "memory", "language", "broadcast", "observation",
    # "fallback", "task" (a background task's run and result), "task_busy", "task:<route>" (a message
    # routed while a background task runs: update_task, query_progress, cancel_task, new_task)
    path: str = ""
    route: str = ""  # how a message during a background task was classified: "<intent> by <model|rules|default>"
    tool_calls: list[str] = field(default_factory=list)
    skipped_repeats: list[str] = field(default_factory=list)
    error: str = ""
    cancelled: bool = False
    first_token_at: float = 0.0  # monotonic time the first content token of the spoken stream arrived
    llm_request_at: float = 0.0  # monotonic time the turn's first LLM request was sent
    context_seconds: float = 0.0  # memory recall, rules, profile and prestart tools before the model call
    finish_reason: str = ""  # of the last spoken stream ("stop", "length", "" when cut by the guard)
    guard: str = ""  # what the reply guard dropped, by reason (never content)
    outbound: str = ""  # what the outbound sanitiser removed, by kind (never content)

    @property
    def llm_time_to_first_token(self) -> float | None:
        """Seconds from the turn's first LLM request to its first content token."""
        if self.llm_request_at and self.first_token_at:
            return self.first_token_at - self.llm_request_at
        return None
