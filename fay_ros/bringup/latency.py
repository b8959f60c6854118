"""Per-turn, per-stage latency of the voice pipeline (pure core, no ROS).

One turn runs: end of speech → final transcript → first reply sentence → first audio
sample. The tracker is fed the moments it observes on the graph (all in seconds of one
clock) and yields a TurnLatency once a turn has reached its first audio sample. The LLM's
time to first token is reported by the dialogue engine itself and attached when present.

Turns are matched by order: a final transcript opens a turn; the next first reply sentence
(is_first) answers it; the next speaking=true starts its audio. A new final transcript
before the reply abandons the open turn (the person spoke again).

A turn is known by the reply's conversation_id only: the latency topic is for anyone, so
what the person said never goes into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The stages, as the fields of fay_msgs/TurnLatency are named (seconds).
STAGE_FIELDS = (
    "speech_end_to_transcript",
    "transcript_to_first_reply",
    "first_reply_to_first_audio",
    "voice_to_first_audio",
    "llm_time_to_first_token",
    "pipeline_share",
)


def stages_ms(message: object) -> dict[str, float]:
    """The observed stages of a fay_msgs/TurnLatency as `<stage>_ms` -> milliseconds (NaN left out)."""
    values = {f"{name}_ms": float(getattr(message, name)) * 1000.0 for name in STAGE_FIELDS}
    return {k: v for k, v in values.items() if v == v}


@dataclass
class TurnLatency:
    """Stage durations of one turn, in seconds (None when a stage was not observed)."""

    speech_end: float
    transcript: float
    first_reply: float | None = None
    conversation_id: str = ""  # of the reply that answered this turn
    first_audio: float | None = None
    llm_first_token: float | None = None  # seconds from request to first token, as reported
    stages: dict[str, float] = field(default_factory=dict)

    def compute(self) -> TurnLatency:
        self.stages = {"speech_end_to_transcript": self.transcript - self.speech_end}
        if self.first_reply is not None:
            self.stages["transcript_to_first_reply"] = self.first_reply - self.transcript
        if self.first_reply is not None and self.first_audio is not None:
            self.stages["first_reply_to_first_audio"] = self.first_audio - self.first_reply
        if self.first_audio is not None:
            self.stages["voice_to_first_audio"] = self.first_audio - self.speech_end
        if self.llm_first_token is not None:
            self.stages["llm_time_to_first_token"] = self.llm_first_token
            if "transcript_to_first_reply" in self.stages:
                self.stages["pipeline_share"] = (
                    self.stages["voice_to_first_audio"] - self.llm_first_token
                    if "voice_to_first_audio" in self.stages
                    else self.stages["transcript_to_first_reply"] - self.llm_first_token
                )
        return self


class LatencyTracker:
    def __init__(self) -> None:
        self._open: TurnLatency | None = None
        self._answered: TurnLatency | None = None

    def on_final_transcript(self, speech_end: float, received: float) -> None:
        self._open = TurnLatency(speech_end=min(speech_end, received), transcript=received)
        self._answered = None

    def on_llm_first_token(self, seconds: float) -> None:
        target = self._open or self._answered
        if target is not None and target.llm_first_token is None:
            target.llm_first_token = seconds

    def on_first_reply(self, received: float, conversation_id: str = "") -> None:
        if self._open is not None and self._open.first_reply is None:
            self._open.first_reply = received
            self._open.conversation_id = conversation_id
            self._answered, self._open = self._open, None

    def on_speaking(self, speaking: bool, stamp: float) -> TurnLatency | None:
        """Returns the completed turn when this is its first audio sample."""
        if speaking and self._answered is not None and self._answered.first_audio is None:
            turn, self._answered = self._answered, None
            turn.first_audio = stamp
            return turn.compute()
        return None
