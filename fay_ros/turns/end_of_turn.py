"""End of turn from more than silence: the words so far, the voice's prosody, then silence.

When the speaker falls silent the recogniser decodes what it has (the speculative transcript,
AsrCore's early decode) and this module judges two cues:

- text (`text_cue`): the transcript ends a sentence or a question (. ? ! 。 ？ ！, or a Chinese
  closing particle 了 吗 呢 吧 ...) -> complete; it ends in a comma, an ellipsis, or a word that
  cannot end an utterance (a conjunction, filler or preposition: "and", "um", "to", "the",
  的, 然后, 嗯, 因为 ...; how sure depends on the punctuation the recogniser wrote after it:
  "What can you do?" and "Yes, I do." end, "I want to." and "I want" do not; a capital "A"
  inside a sentence is the letter, not the article) -> incomplete, when the recogniser was
  sure enough of the words (`OPEN_CONFIDENCE`; `SURE_CONFIDENCE` for the weakest endings);
  anything else -> unknown;
- prosody (`prosody_cue`, from the last ~300 ms of voice): the pitch falls by at least
  `fall_semitones` or the energy decays by at least `decay_db` -> final; the pitch rises by at
  least `rise_semitones` and the energy holds -> continuing; else unknown.

`TurnSettings.wait_ms` turns the two cues into the silence that ends the turn:

| text \\ prosody | final | unknown | continuing |
|---|---|---|---|
| complete | complete_ms | complete_ms | endpoint_ms (a question: complete_ms) |
| unknown | prosody_ms | endpoint_ms | endpoint_ms |
| incomplete | patience_ms | patience_ms | patience_ms |

so a finished sentence ends sooner than the two-step early endpoint did, a sentence that stops
on "and" / "um" / 然后 waits `patience_ms`, and silence alone (`endpoint_ms`) decides only
when neither cue says anything. The thresholds are the asr node's live parameters; the
defaults are tuned on test/data/turns (bench/bench_turns.py reports them).

With the end-of-turn model (fay_ros.turns.semantic_turn, Pipecat's smart-turn v3.2) the asr
also asks it once the silence lasts 200 ms, and its verdict moves this wait
(SemanticSettings.wait_ms); an open text keeps its patience either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

COMPLETE, INCOMPLETE, UNKNOWN = "complete", "incomplete", "unknown"
FINAL, CONTINUING = "final", "continuing"

SENTENCE_END = (".", "?", "!", "。", "？", "！")
TRAILING_OPEN = (",", "，", "、", ";", "；", ":", "：", "…", "...", "-", "—", "~")
# English words an utterance does not end on, by how sure that is. Whisper writes a full stop
# after a fragment too ("I want to."), a question mark nearly only after a question (a fragment
# whose words read as one is the exception: "Had he married a more amiable woman, he might have
# been made?" at a reader's pause).
# - fillers, conjunctions, articles and possessive determiners: open even before a question
#   mark ("Can you, um?", "Could you play the?"), and before a full stop too;
# - prepositions: open unless a question ends on them ("Where are you from?");
# - pronouns, auxiliaries and verbs that want more: open only with no punctuation at all
#   ("What can you do?", "Yes, I do.", "Thank you." end a turn; "I want" does not).
FILLERS_EN = frozenset("um uh er erm hmm mm ah eh".split())
OPEN_BEFORE_STOP_EN = FILLERS_EN | frozenset(
    """
and or but because although unless whereas than if the a an my your our their its every
""".split()
)
PREPOSITIONS_EN = frozenset(
    """
to of for with without from in on at about into onto by as over under after before between through
""".split()
)
OPEN_WITH_STOP_EN = OPEN_BEFORE_STOP_EN | PREPOSITIONS_EN  # open although a full stop or "!" follows
OPEN_UNPUNCTUATED_EN = OPEN_WITH_STOP_EN | frozenset(
    """
so since though when while then that which who whom whose like this these those some any
i we you he she they is are was were am be been being have has had do does did can could will would should
want wanna gonna need going
""".split()
)
# An open ending counts only when the recogniser was sure enough of the words. Whisper
# punctuates what it heard clearly, so an unsure, unpunctuated text ending on "you" is more
# often a garble than a fragment: the weakest endings (a pronoun, auxiliary or verb with no
# punctuation at all) need SURE_CONFIDENCE. Below OPEN_CONFIDENCE the words are mostly wrong,
# and so is their ending: espeak's "Good night Fay." decodes as "Don't I take a..." (0.28) or
# "Godite a" (0.19), while the fragments at the evaluation set's thinking pauses decode at
# 0.36 and more ("Can you play the..." 0.42, 我想要 0.38).
SURE_CONFIDENCE = 0.5
OPEN_CONFIDENCE = 0.3
# Chinese endings that leave the sentence open (longest first when matching): conjunctions,
# fillers, prepositions, and verbs whose object or complement is still to come ("你好，我叫…",
# "我觉得…", "这是…"; a bare 是 or 觉得 can end an answer: "是。", "我也这么觉得。").
OPEN_ENDINGS_ZH = tuple(
    sorted(
        """
的 然后 嗯 呃 额 那个 这个 就是 和 跟 与 及 以及 或者 还是 因为 所以 但是 可是 不过 而且 并且 还有 如果 要是 虽然
然而 于是 接着 在 把 被 给 对 从 向 往 我想 我要 我们 你们 他们 想 要 去 让 请 帮我 关于 比如
叫 告诉 打算 我觉得 你觉得 我是 这是 那是
""".split(),
        key=len,
        reverse=True,
    )
)
# Particles that close a Chinese sentence even when the recogniser wrote no punctuation.
CLOSING_PARTICLES_ZH = ("了", "吗", "呢", "吧", "啊", "呀", "啦", "嘛")
_WORD = re.compile(r"[A-Za-z']+")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class TurnSettings:
    """Silences (ms) that end a turn, by what the cues say; and the prosody thresholds."""

    enabled: bool = True
    complete_ms: int = 150  # the text ends a sentence (and the voice does not rise)
    prosody_ms: int = 400  # no text cue, but the voice falls or fades
    endpoint_ms: int = 700  # neither cue: silence alone
    patience_ms: int = 1500  # the text stops on a conjunction, filler or comma
    fall_semitones: float = 2.0  # final pitch fall over the last ~300 ms that counts as final
    rise_semitones: float = 3.5  # final pitch rise that counts as continuing (not after a question)
    decay_db: float = 10.0  # energy decay over the last ~300 ms that counts as final

    def validate(self) -> None:
        if not 0 < self.complete_ms <= self.prosody_ms <= self.endpoint_ms <= self.patience_ms:
            raise ValueError(
                f"turn silences must rise: 0 < complete_ms ({self.complete_ms}) <= prosody_ms "
                f"({self.prosody_ms}) <= endpoint_ms ({self.endpoint_ms}) <= patience_ms "
                f"({self.patience_ms})"
            )
        if self.fall_semitones <= 0 or self.rise_semitones <= 0 or self.decay_db <= 0:
            raise ValueError("fall_semitones, rise_semitones and decay_db must be > 0")

    def wait_ms(self, text: str, prosody: str) -> int:
        if text == INCOMPLETE:
            return self.patience_ms
        if text == COMPLETE:
            return self.endpoint_ms if prosody == CONTINUING else self.complete_ms
        return self.prosody_ms if prosody == FINAL else self.endpoint_ms


def text_cue(text: str, confidence: float = 1.0) -> str:
    """complete / incomplete / unknown for a (speculative) transcript, English or Chinese, of
    the recogniser's `confidence` (0..1)."""
    t = text.strip()
    if not t:
        return UNKNOWN
    cue = _text_cue(t, confidence)
    if cue == INCOMPLETE and confidence < OPEN_CONFIDENCE:
        return UNKNOWN  # a garble's ending, not a fragment's
    return cue


def _text_cue(t: str, confidence: float) -> str:
    if t.endswith(TRAILING_OPEN):
        return INCOMPLETE
    body = t.rstrip("".join(SENTENCE_END) + " \"'”’」』)）")
    if not body:
        return UNKNOWN
    if _CJK.search(body[-1]):
        if body.endswith(OPEN_ENDINGS_ZH):
            return INCOMPLETE
        if t.endswith(SENTENCE_END) or body.endswith(CLOSING_PARTICLES_ZH):
            return COMPLETE
        return UNKNOWN
    words = _WORD.findall(body)
    last = words[-1].lower() if words else ""
    if words and _letter_a(body, words[-1]):
        last = ""  # not the article: nothing open about it
    if t.endswith(("?", "？")):
        open_words = OPEN_BEFORE_STOP_EN  # "Can you, um?", "Could you play the?"; not "Where are you from?"
    elif t.endswith(SENTENCE_END):
        open_words = OPEN_WITH_STOP_EN
    else:
        open_words = OPEN_UNPUNCTUATED_EN
    if last in open_words:
        if open_words is OPEN_UNPUNCTUATED_EN and last not in OPEN_WITH_STOP_EN and confidence < SURE_CONFIDENCE:
            return UNKNOWN  # a garble, not a fragment ("How old are you?" heard as "How do you")
        return INCOMPLETE
    return COMPLETE if t.endswith(SENTENCE_END) else UNKNOWN


def _letter_a(body: str, word: str) -> bool:
    """A capital "A" that does not start a sentence is the letter (an initial, or a name the
    recogniser heard as one: "Good night, Fay." as "Goodnight, A."), not the article."""
    if word != "A":
        return False
    before = body[: body.rfind(word)].rstrip()
    return bool(before) and not before.endswith(SENTENCE_END)


@dataclass(frozen=True)
class Prosody:
    pitch_change_st: float  # last ~100 ms vs the ~200 ms before, semitones (nan: too little voice)
    energy_decay_db: float  # loudest of the last ~300 ms minus its last ~60 ms (>0: fading)


FRAME_S, HOP_S = 0.040, 0.010
F0_MIN, F0_MAX = 70.0, 400.0


def _pitch(frame: np.ndarray, rate: int) -> float:
    """F0 in Hz by normalised autocorrelation, nan when the frame is not clearly periodic."""
    x = frame - frame.mean()
    energy = float(np.dot(x, x))
    if energy <= 1e-9:
        return float("nan")
    ac = np.correlate(x, x, "full")[len(x) - 1 :] / energy
    lo, hi = int(rate / F0_MAX), min(int(rate / F0_MIN), len(ac) - 1)
    if hi <= lo:
        return float("nan")
    lag = lo + int(np.argmax(ac[lo:hi]))
    return rate / lag if ac[lag] >= 0.5 else float("nan")


def prosody_features(voice: np.ndarray, rate: int, span_ms: int = 300) -> Prosody:
    """Prosody of the end of `voice` (int16 mono ending at the last voiced sample)."""
    x = np.asarray(voice, dtype=np.float64)[-int(rate * span_ms / 1000) :] / 32768.0
    flen, hop = int(rate * FRAME_S), int(rate * HOP_S)
    if len(x) < flen + 4 * hop:
        return Prosody(float("nan"), 0.0)
    starts = range(0, len(x) - flen + 1, hop)
    levels = np.array([10 * np.log10(np.mean(x[s : s + flen] ** 2) + 1e-12) for s in starts])
    f0 = np.array([_pitch(x[s : s + flen], rate) for s in starts])
    loud = levels >= levels.max() - 25.0  # pitch only where there is voice
    st = np.where(loud & ~np.isnan(f0), 12 * np.log2(np.where(np.isnan(f0), 1.0, f0) / 100.0), np.nan)
    n = len(st)
    tail, head = st[-max(1, n // 3) :], st[: max(1, n - n // 3)]
    if np.count_nonzero(~np.isnan(tail)) >= 2 and np.count_nonzero(~np.isnan(head)) >= 2:
        change = float(np.nanmedian(tail) - np.nanmedian(head))
    else:
        change = float("nan")
    decay = float(levels.max() - np.mean(levels[-max(1, int(0.06 / HOP_S)) :]))
    return Prosody(change, decay)


def prosody_cue(p: Prosody, settings: TurnSettings) -> str:
    if p.energy_decay_db >= settings.decay_db or (
        not np.isnan(p.pitch_change_st) and p.pitch_change_st <= -settings.fall_semitones
    ):
        return FINAL
    if not np.isnan(p.pitch_change_st) and p.pitch_change_st >= settings.rise_semitones:
        return CONTINUING
    return UNKNOWN


@dataclass(frozen=True)
class TurnJudgement:
    text: str  # the text cue
    prosody: str  # the prosody cue
    wait_ms: int  # silence after the last voiced sample that ends this turn
    text_p: float | None = None  # the text turn model's P(finished) (fay_ros.turns.text_turn; None: not asked)


def judge(
    transcript: str, voice: np.ndarray, rate: int, settings: TurnSettings, confidence: float = 1.0
) -> TurnJudgement:
    """The cues of a speculative transcript (of the recogniser's `confidence`) and the voice
    that ends at its last voiced sample."""
    text = text_cue(transcript, confidence)
    prosody = prosody_cue(prosody_features(voice, rate), settings)
    if text == COMPLETE and transcript.rstrip().endswith(("?", "？")):
        prosody = UNKNOWN  # a question's pitch rises at its end: no sign of going on
    return TurnJudgement(text, prosody, settings.wait_ms(text, prosody))
