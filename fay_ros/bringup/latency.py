"""Per-turn, per-stage latency of the voice pipeline (pure core, no ROS).

One turn runs: end of speech → final transcript → first reply sentence → first audio
sample. The tracker is fed the moments it observes on the graph (all in seconds of one
clock) and yields a TurnLatency once a turn has reached its first audio sample. The LLM's
time to first token is reported by the dialogue engine itself and attached when present.

Turns are matched by order: a final transcript opens a turn; the next first reply sentence
(is_first) answers it; the next speaking=true starts its audio. A new final transcript
before the reply abandons the open turn (the person spoke again).

Where the time of a turn goes, as moments after the end of speech (`milestones`): the
speculative text (the recogniser judged the turn probably complete and the dialogue may start
the model on it; absent when no speculation stood when the final came), the final (the end of
the turn decided), the LLM's first token (when the dialogue stamps it), the first reply sentence
and the first audio sample. With the speculative reply the first token can come before the
final, so these are told as times since the end of speech, not as differences of neighbours.

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


# The moments of a turn, in the order they usually come, as keys of TurnLatency.milestones.
MILESTONES = ("speculative", "final", "llm_first_token", "first_reply", "first_audio")


@dataclass
class TurnLatency:
    """Stage durations of one turn, in seconds (None when a stage was not observed)."""

    speech_end: float
    transcript: float
    first_reply: float | None = None
    conversation_id: str = ""  # of the reply that answered this turn
    first_audio: float | None = None
    llm_first_token: float | None = None  # seconds from request to first token, as reported
    speculative: float | None = None  # when the speculative text that stood at the final came
    llm_first_token_at: float | None = None  # when the first token came (the dialogue's stamp)
    from_model: bool = False  # the first reply is the model's: its timing is on its way
    stages: dict[str, float] = field(default_factory=dict)
    milestones: dict[str, float] = field(default_factory=dict)  # MILESTONES -> seconds after speech_end

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
        moments = {
            "speculative": self.speculative,
            "final": self.transcript,
            "llm_first_token": self.llm_first_token_at,
            "first_reply": self.first_reply,
            "first_audio": self.first_audio,
        }
        self.milestones = {k: at - self.speech_end for k, at in moments.items() if at is not None}
        return self


class LatencyTracker:
    """Places the moments of spoken turns, whatever order their topics arrive in: a turn whose
    first reply came from the model is complete only with the model's timing too (the dialogue
    publishes it before the sentence, but topics are not ordered against each other, and under
    load the first audio can be seen first), so it waits for it; the next final completes it
    without, should the timing never come."""

    def __init__(self) -> None:
        self._open: TurnLatency | None = None
        self._answered: TurnLatency | None = None
        self._held: TurnLatency | None = None  # first audio seen, the model's timing not yet
        self._speculative: float | None = None  # the speculative text standing for the next final

    def on_speculative(self, received: float, withdrawn: bool = False) -> None:
        """A speculative text came (the model may start on it), or was withdrawn (the person went on)."""
        self._speculative = None if withdrawn else received

    def on_final_transcript(self, speech_end: float, received: float) -> TurnLatency | None:
        """A new turn; returns the held turn before it, completed without the model's timing."""
        held, self._held = self._held, None
        self._open = TurnLatency(speech_end=min(speech_end, received), transcript=received)
        if self._speculative is not None and self._speculative <= received:
            self._open.speculative = self._speculative
        self._answered, self._speculative = None, None
        return held.compute() if held is not None else None

    def on_llm_first_token(
        self, seconds: float, at: float | None = None, conversation_id: str = ""
    ) -> TurnLatency | None:
        """The dialogue's time to first token; `at`: when that token came, if it says. Returns
        the turn it completes (its first audio was seen before it)."""
        held = self._held
        if held is not None and (not conversation_id or conversation_id == held.conversation_id):
            self._held = None
            held.llm_first_token, held.llm_first_token_at = seconds, at
            return held.compute()
        target = self._open or self._answered
        if target is not None and target.llm_first_token is None:
            target.llm_first_token = seconds
            target.llm_first_token_at = at
        return None

    def on_first_reply(self, received: float, conversation_id: str = "", from_model: bool = False) -> None:
        if self._open is not None and self._open.first_reply is None:
            self._open.first_reply = received
            self._open.conversation_id = conversation_id
            self._open.from_model = from_model
            self._answered, self._open = self._open, None

    def on_speaking(self, speaking: bool, stamp: float) -> TurnLatency | None:
        """Returns the completed turn when this is its first audio sample (unless it waits for
        the model's timing: then `on_llm_first_token` returns it)."""
        if speaking and self._answered is not None and self._answered.first_audio is None:
            turn, self._answered = self._answered, None
            turn.first_audio = stamp
            if turn.from_model and turn.llm_first_token is None:
                self._held = turn
                return None
            return turn.compute()
        return None
