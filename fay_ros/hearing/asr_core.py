"""The recogniser pipeline without ROS: audio chunks in, partial and final transcripts out.

audio -> Segmenter (VAD + pre-roll) -> Recognizer (whisper | vosk) -> WakeWordGate -> events.
Times are floats on the clock of the chunk stamps (the node uses ROS time), so a final's
end_time is when the last voiced sample was captured.

Endpointing in two steps, so a finished sentence is answered fast and a pause inside a
sentence does not cut it: the recogniser decodes what it has speculatively after
`early_decode_ms` of silence (so the decode overlaps the wait; one silent VAD frame by
default, since the decode is the slowest step of a turn); once the silence reaches
`early_endpoint_ms`, an early decode whose text ends a sentence (. ? ! 。 ？ ！) makes the
utterance final at once. Otherwise it waits for the full `stop_ms` silence of the VAD
settings, and reuses the early decode when no voice came back in between.

With turn detection (`turn`, TurnSettings.enabled; fay_ros.turns.end_of_turn) the early decode is
judged instead: its text (complete sentence / open on "and", "um", 的, 然后 ...) and the
prosody of the last ~300 ms of voice set the silence that ends the utterance, from
`complete_ms` (a finished sentence) to `patience_ms` (a sentence left open), with the VAD's
`stop_ms` (endpoint_ms) when neither cue says anything. The VAD then only ends an utterance
after `patience_ms`; the turn judgement closes it sooner. With the end-of-turn model
(fay_ros.turns.semantic_turn) its verdict moves that wait, also before any early decode; with
the text turn model (fay_ros.turns.text_turn) a language model's verdict on the early decode's
words moves it too (a sentence stopped mid-way is held, a finished one ends at once), read as
an answer to the robot's last words (`robot_said`, while they are fresh: the person's voice
began within ROBOT_WORDS_FRESH_S of them or of the robot's voice ending). Each
silence in which the turn is held past `endpoint_ms` is reported once through `on_hold`
(TurnHold: the asr node's "turn held open" on speech/decisions).

Speculative transcripts: when the early decode is judged probably complete (turn detection:
any cue but a sentence left open; two-step: the text ends a sentence) its text goes out as a
`speculative` event once the silence has lasted `speculate_ms` (a gap inside a sentence is
often one silent frame: its decode is thrown away without starting the model), so the
dialogue can start the model while the endpoint still waits for silence; the final that
follows reuses the same decode, so it says the same. Voice coming back (or a decode that ends
as no final) withdraws it: a speculative event with "".

Words over the robot (`barged_in`: the mic barged in, the person talked over the robot's voice):
an utterance that is only a backchannel ("yeah", 嗯, 对: turns.backchannel) is no turn. It
ends as no final (and no speculation), so the dialogue does not answer it and the voice resumes
what the barge-in cut (turns.resume).

The robot's own voice (`robot_started_speaking`, the stamp of robot_speaking=true): the mic
mutes once it hears the robot speaks, but the audio it forwarded before can already carry the
robot's first syllables (the echo canceller lets its onset through for ~150 ms, and the first
played block may come after the audio of its time). An utterance whose voice begins at or after
the robot's is that voice: it is dropped unheard (no partial, decode or final), and it holds no
talk-over clip back. Measured in CI: the robot's "I am ..." opened an utterance, the mic muted,
and it stayed open under the robot's whole reply, so a "Stop!" over it was never judged and
"I'm" became the person's turn when the robot finished.

Live changes (the node's live parameters) come in through `set_wake` (the next final is
judged by the new rules; an open awake window stays open) and `reconfigure` (VAD and
endpointing: applied between utterances, so one utterance is cut by one set of rules).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

from ..common.wav import downmix
from ..turns.backchannel import is_backchannel
from ..turns.end_of_turn import SENTENCE_END, UNKNOWN, TurnJudgement, TurnSettings, judge
from ..turns.semantic_turn import WINDOW_S, SemanticSettings, SemanticTurn
from ..turns.text_turn import TextTurn, TextTurnSettings, judged_by_words
from ..turns.turn_timing import BARGED_UTTERANCE_S
from .audio import amplified, check_chunk, from_loud_onset, resample
from .recognition import Recognition, Recognizer, Word
from .segmenter import Segmenter
from .vad import VadSettings
from .wake import WakeWordGate, normalize

_Settings = TypeVar("_Settings", SemanticSettings, TextTurnSettings)  # an end-of-turn model's settings

# Silence (ms) before the early decode starts: one 30 ms VAD frame. The decode is the longest
# step between the last word and the reply, so it starts at the first sign of an end.
EARLY_DECODE_MS = 30
# Silence (ms) before a decode judged complete goes out as speech/speculative: a gap inside a
# sentence is often a single silent frame, and the model should not start on it.
SPECULATE_MS = 60
# A sound this short (ms, from the end of the voice an early decode heard to the end of the
# voice that followed it) after a sentence judged complete is taken for its tail, not for more
# words: the kept decode is speculated on while the new one runs.
SHORT_SOUND_MS = 120
# A sound after a decode judged complete whose voiced frames all stay this far below the voice's
# own level (VoiceActivityDetector.voice_level_db) is the fading tail of its last word (a breath,
# the room's echo; measured on the real recordings: 20-35 dB down, while every word has frames
# within 10 dB of it): the kept decode stands for the audio with it, and is not made again.
TAIL_DB = 20.0
# The robot's words are what the person answers when their voice begins within this many
# seconds of those words (or of the robot's voice ending, for a reply that took long to say):
# a companion's answers come within a few seconds, and words said after a long silence start
# something new rather than answer a question from minutes ago.
ROBOT_WORDS_FRESH_S = 30.0
# A long utterance's words before a pause are settled (the recogniser's `settle`: later decodes
# hear only the audio after them) when the person speaks on after a pause of this many ms (a
# real one: the closure of a stop consonant inside a word lasts under 100 ms) ...
SETTLE_PAUSE_MS = 240
# ... and its early decode heard at least this many seconds since the last settled point: a
# decode costs about 50 ms a second of audio, so a short turn is decoded whole at its end
# (its words read as one), and a long one only from its last settled pause.
SETTLE_AFTER_S = 5.0


def _ends_sentence(early: Recognition | None) -> bool:
    """The two-step endpoint's test: the decode ends in sentence punctuation."""
    return early is not None and early.text.rstrip().endswith(SENTENCE_END)


def _checked_speculate_ms(speculate_ms: int) -> int:
    if speculate_ms < 0:
        raise ValueError(f"speculate_ms must be >= 0 (got {speculate_ms})")
    return speculate_ms


@dataclass
class TranscriptEvent:
    is_final: bool
    text: str
    language: str
    confidence: float
    start_time: float  # capture time of the utterance's first sample (incl. pre-roll)
    end_time: float  # capture time of the last voiced sample
    words: list[Word] = field(default_factory=list)  # relative to start_time
    speculative: bool = False  # the early text of a turn judged complete ("" = withdrawn)


@dataclass(frozen=True)
class TurnHold:
    """Turn detection holds a turn open past the silence endpoint."""

    text_cue: str  # what the words say (fay_ros.turns.end_of_turn: complete / incomplete / unknown)
    wait_ms: int  # the silence that will end it now
    semantic_p: float | None  # the end-of-turn model's probability (None: not asked)
    voice_end: float  # capture time of the last voiced sample before this silence
    text_p: float | None = None  # the text turn model's probability (None: not asked)


class AsrCore:
    def __init__(
        self,
        recognizer: Recognizer,
        vad: VadSettings | None = None,
        wake: WakeWordGate | None = None,
        preroll_ms: int = 300,
        max_utterance_s: float = 20.0,
        early_endpoint_ms: int = 0,
        early_decode_ms: int | None = None,
        turn: TurnSettings | None = None,
        on_speculative: Callable[[TranscriptEvent], None] | None = None,
        speculate_ms: int = SPECULATE_MS,
        on_no_turn: Callable[[str], None] | None = None,
        semantic: SemanticTurn | None = None,
        semantic_settings: SemanticSettings | None = None,
        text_turn: TextTurn | None = None,
        text_turn_settings: TextTurnSettings | None = None,
        settle_after_s: float = SETTLE_AFTER_S,
    ) -> None:
        if settle_after_s < 0:
            raise ValueError(f"settle_after_s must be >= 0 (got {settle_after_s})")
        self.recognizer = recognizer
        self.settle_after_s = settle_after_s  # (0: never settle; each decode hears the whole utterance)
        # dB the audio is raised by before the VAD and the recogniser hear it: a microphone at
        # low gain (the VAD's room status says when a voice is too quiet; audio.amplified)
        self.input_gain_db = 0.0
        # Speculative events go here the moment they exist (before the final's word alignment
        # in the same chunk) instead of into feed()'s result.
        self.on_speculative = on_speculative
        # Called with the text of a barged-in utterance that was only a backchannel (no final).
        self.on_no_turn = on_no_turn
        # Called once per silence when turn detection holds the turn open past the silence
        # endpoint (the words or the end-of-turn model say the person is not done). The node
        # reports it on speech/decisions.
        self.on_hold: Callable[[TurnHold], None] | None = None
        self._held = False
        self.rate = recognizer.sample_rate
        self.turn = turn if turn is not None and turn.enabled else None
        if self.turn is not None:
            self.turn.validate()
        # The end-of-turn model (turns.semantic_turn), with turn detection only; None = the rules alone.
        self.semantic = semantic if self.rate == 16000 else None  # (the model hears 16 kHz)
        self.semantic_settings = self._checked(semantic_settings)
        self.semantic_p: float | None = None  # its probability for the current silence (None: not asked)
        self.semantic_calls = 0  # (statistics)
        # The text turn model (turns.text_turn), with turn detection only; None = the rules alone.
        self.text_turn = text_turn
        self.text_turn_settings: TextTurnSettings | None = None
        self.set_text_turn(text_turn_settings)
        # The robot's last words (its last reply, "" = none yet; `robot_said`) and when they
        # were said or the robot's voice ended, whichever is later (the chunks' clock): the
        # model reads the person's words as an answer to them while they are fresh.
        self.robot_words = ""
        self._robot_words_at = 0.0
        self.segmenter = Segmenter(
            self.rate,
            self._vad_for_turn(vad or VadSettings()),
            preroll_ms=preroll_ms,
            max_utterance_s=max_utterance_s,
            history_ms=1000 * WINDOW_S if self.semantic is not None else 0,
        )
        self.wake = wake or WakeWordGate("always")
        self._anchor_index = 0
        self._anchor_time = 0.0
        self._utt_start = 0
        self._onset = 0.0
        self._last_partial = ""
        self._set_early(early_endpoint_ms, early_decode_ms, _checked_speculate_ms(speculate_ms))
        self._early: Recognition | None = None  # the early decode of the current silence, if any
        self._early_tried = False
        self._speculation_due = False  # the early decode is judged worth speculating on, once the silence lasts
        self._guess = ""  # the text of the speculation out for this utterance ("" = none)
        self._early_end = 0  # the last voiced sample the early decode heard
        self._early_index = 0  # the sample the early decode heard up to
        self._settled_index = 0  # the sample the utterance's settled words reach (0: none settled)
        self._pause_ms = 0  # the silence so far (the pause, once the voice comes back)
        self._stale: tuple[Recognition, int] | None = None  # see _voice_again
        self._behind = False  # more audio waits after the chunk being fed
        self._over_robot: float | None = None  # the last barge-in, while utterances may still be its words
        self._robot_since: float | None = None  # robot_speaking=true's stamp, until robot_speaking=false
        self._robot_voice = False  # the open utterance is the robot's own voice (dropped unheard)
        self.robot_voice_dropped = 0  # utterances dropped as the robot's own voice (statistics)
        # Called when one is (the node reports it on speech/decisions).
        self.on_robot_voice: Callable[[], None] | None = None
        self.room_dropped = 0  # utterances in which Silero heard no speech (statistics)
        # Called when one is dropped (the node reports it on speech/decisions).
        self.on_room: Callable[[], None] | None = None
        self._voiced_at = 0  # the open utterance's first voiced sample
        self.early_finals = 0  # utterances ended by the early endpoint (statistics)
        self.backchannels_over_robot = 0  # barged-in utterances that were only a backchannel (statistics)
        self.judgement: TurnJudgement | None = None  # turn detection: the cues of the current silence
        self._pending: (
            tuple[VadSettings, int, float, int, int | None, TurnSettings | None, int, SemanticSettings | None] | None
        ) = None

    @property
    def _speculated(self) -> bool:
        """A speculative event went out for this utterance and still stands."""
        return bool(self._guess)

    @staticmethod
    def _checked(settings: _Settings | None) -> _Settings | None:
        """A model's settings when enabled (validated: ValueError for out of range), else None."""
        if settings is None or not settings.enabled:
            return None
        settings.validate()
        return settings

    def set_text_turn(self, settings: TextTurnSettings | None) -> None:
        """New text turn settings, from the next early decode on (None or disabled: off).
        Raises ValueError for settings out of range."""
        self.text_turn_settings = self._checked(settings)

    def _semantic_on(self) -> SemanticSettings | None:
        """The model's settings when it takes part: loaded, enabled, and with turn detection."""
        return self.semantic_settings if self.semantic is not None and self.turn is not None else None

    def _vad_for_turn(self, vad: VadSettings) -> VadSettings:
        """With turn detection the VAD waits `patience_ms` (or the model's `hold_ms`, when longer);
        the judgement ends turns sooner."""
        if self.turn is None:
            return vad
        semantic = self._semantic_on()
        hold = semantic.hold_ms if semantic is not None else 0
        return replace(vad, stop_ms=max(vad.stop_ms, self.turn.patience_ms, hold))

    def _set_early(self, early_endpoint_ms: int, early_decode_ms: int | None, speculate_ms: int) -> None:
        self.early_endpoint_ms = early_endpoint_ms
        decode = EARLY_DECODE_MS if early_decode_ms is None else early_decode_ms
        self.early_decode_ms = min(self.turn.complete_ms if self.turn else early_endpoint_ms, decode)
        self.speculate_ms = speculate_ms

    @property
    def speaking(self) -> bool:
        """An utterance is open (the VAD heard voice and has not heard its end yet), not the
        robot's own voice."""
        return self.segmenter.active and not self._robot_voice

    def set_wake(self, wake: WakeWordGate) -> None:
        """New wake-word rules from the next final on; an open awake window stays open."""
        if wake.mode == "window" and self.wake.mode == "window":
            wake.awake_until = self.wake.awake_until
        self.wake = wake

    def reconfigure(
        self,
        vad: VadSettings,
        preroll_ms: int,
        max_utterance_s: float,
        early_endpoint_ms: int,
        early_decode_ms: int | None = None,
        turn: TurnSettings | None = None,
        speculate_ms: int = SPECULATE_MS,
        semantic_settings: SemanticSettings | None = None,
    ) -> None:
        """New VAD, endpointing and turn-detection settings: at once between utterances, else
        once the open utterance has ended. Raises ValueError for settings the VAD refuses."""
        vad.validate()
        if turn is not None and turn.enabled:
            turn.validate()
        semantic = self._checked(semantic_settings)
        if max_utterance_s <= 0:
            raise ValueError("max_utterance_s must be > 0")
        self._pending = (
            vad,
            preroll_ms,
            max_utterance_s,
            early_endpoint_ms,
            early_decode_ms,
            turn,
            _checked_speculate_ms(speculate_ms),
            semantic,
        )
        if not self.segmenter.active:
            self._apply_pending()

    def _apply_pending(self) -> None:
        if self._pending is None:
            return
        vad, preroll_ms, max_utterance_s, early_endpoint_ms, early_decode_ms, turn, speculate_ms, semantic = (
            self._pending
        )
        self._pending = None
        self.turn = turn if turn is not None and turn.enabled else None
        self.semantic_settings = semantic
        self.segmenter.update(self._vad_for_turn(vad), preroll_ms, max_utterance_s)
        self._set_early(early_endpoint_ms, early_decode_ms, speculate_ms)

    def transcribe_clip(self, samples: np.ndarray, sample_rate: int, channels: int = 1) -> Recognition | None:
        """Recognise a short clip heard apart from the stream (what a person said over the
        robot, fay_ros.turns.stop_request); None while an utterance is open, whose words the
        recogniser is busy with (and that utterance is heard anyway)."""
        samples = np.asarray(samples, dtype=np.int16)
        check_chunk(sample_rate, channels, len(samples), "talk-over clip")
        if self._robot_voice:
            self._drop_utterance()  # (no speculation goes out for the robot's voice)
        if self.segmenter.active:
            return None
        if channels > 1:
            samples = downmix(samples.reshape(-1, channels))
        if sample_rate != self.rate:
            samples = resample(samples, sample_rate, self.rate)
        samples = from_loud_onset(amplified(samples, self.input_gain_db), self.rate)  # (not the robot's residue)
        transcribe = getattr(self.recognizer, "transcribe", None)
        if transcribe is not None:  # (whisper: one decode, no partials)
            return transcribe(samples, words=False)
        self.recognizer.start()
        self.recognizer.accept(samples)
        return self.recognizer.finish()

    def barged_in(self, at: float) -> None:
        """The person barged in over the robot at `at` (the chunk stamps' clock): the open
        utterance and those that start within BARGED_UTTERANCE_S after (the mic publishes the
        barge-in before the audio it held; "yeah, yeah ... okay" may be cut in two) were said
        over it."""
        self._over_robot = at
        if self._robot_voice:  # the person's words come next, from their start
            self._drop_utterance()

    def _no_turn(self, text: str) -> bool:
        """Words over the robot that are only a backchannel: no turn (no final, no speculation)."""
        return self._over_robot is not None and is_backchannel(text)

    def abandon(self) -> None:
        """Drop an open utterance unheard (the node stopped listening): nothing is published
        for it, and the next audio starts afresh."""
        self.segmenter.abandon()
        self.recognizer.start()
        self._over_robot = None
        self._robot_voice = False
        self._forget_early()
        self._apply_pending()

    def _forget_early(self) -> None:
        """A new utterance (or none): no early decode, pending speculation, kept decode or
        settled words."""
        self._early, self._early_tried, self._speculation_due, self._stale = None, False, False, None
        self.semantic_p, self._held = None, False
        self._settled_index, self._pause_ms = 0, 0

    def _time(self, index: int) -> float:
        return self._anchor_time + (index - self._anchor_index) / self.rate

    def feed(
        self,
        samples: np.ndarray,
        sample_rate: int,
        first_sample_time: float,
        channels: int = 1,
        *,
        behind: bool = False,
    ) -> list[TranscriptEvent]:
        """Feed interleaved int16 samples. A chunk that cannot be audio (rate, channel count or
        length out of range) raises AudioFormatError before any state changes, so the caller
        can drop it and go on. `behind`: more audio is already waiting after this chunk (the
        worker fell behind, usually during a decode); the early decode then waits until it has
        caught up, since that audio may already hold the voice coming back, and a decode of a
        past moment would only delay the decode of the present one."""
        samples = np.asarray(samples, dtype=np.int16)
        check_chunk(sample_rate, channels, len(samples))
        if channels > 1:
            samples = downmix(samples.reshape(-1, channels))
        if sample_rate != self.rate:
            samples = resample(samples, sample_rate, self.rate)
        samples = amplified(samples, self.input_gain_db)
        if self._pending is not None and not self.segmenter.active:
            self._apply_pending()
        self._anchor_index = self.segmenter.end_index
        self._anchor_time = first_sample_time
        self._behind = behind
        out = self._handle(self.segmenter.feed(samples))
        if self._robot_voice or (self.segmenter.active and self._heard_nothing()):
            return out  # (no early decode of what is no one's words)
        if self.segmenter.active and self.turn is not None:
            out += self._turn_endpoint(self.turn)
        elif self.early_endpoint_ms and self.segmenter.active:
            out += self._early_endpoint()
        return out

    def _turn_endpoint(self, turn: TurnSettings) -> list[TranscriptEvent]:
        silent = self._silence()
        if silent is None:
            return self._voice_again()
        out: list[TranscriptEvent] = []
        if not self._early_tried and not self._behind:

            def complete(early: Recognition | None) -> bool:
                self.judgement = judge(
                    early.text if early else "",
                    self.segmenter.recent_voice(300),
                    self.rate,
                    turn,
                    early.confidence if early else 1.0,
                )
                if early is not None and early.text.strip():
                    self.judgement = judged_by_words(
                        self.judgement,
                        self.text_turn,
                        self.text_turn_settings,
                        early.text,
                        self._language(),
                        turn,
                        self._answered_words(),
                    )
                return self.judgement.wait_ms < turn.patience_ms

            out += self._decode_early(complete)
        # No early decode yet (the worker is behind the audio): silence alone, unless the model,
        # which costs far less than a decode, hears the voice go on. Without words it only
        # holds a turn open: ending one sooner waits for the words, which may leave it open.
        wait = self.judgement.wait_ms if self.judgement else turn.endpoint_ms
        cue = self.judgement.text if self.judgement else UNKNOWN
        semantic = self._semantic_on()
        if semantic is not None and semantic.asks(cue, self._language()) and not self._held_by_words():
            wait = self._semantic_wait(semantic, wait, cue, silent)
        out += self._speculate_when_due(silent, closing=silent >= wait)
        if silent >= wait:
            self.early_finals += 1
            return out + self._handle(self.segmenter.close_now())
        if wait > turn.endpoint_ms and not self._held:
            self._held = True
            if self.on_hold is not None:
                voice_end = self._time(self.segmenter.vad.last_voiced_end)
                text_p = self.judgement.text_p if self.judgement else None
                self.on_hold(TurnHold(cue, wait, self.semantic_p, voice_end, text_p))
        return out

    def _held_by_words(self) -> bool:
        """The text turn model called these words unfinished: the sound of the voice may not end
        the turn sooner (smart-turn's "finished" at "he might even have been made" cut real
        thinking pauses the words had held)."""
        settings, judged = self.text_turn_settings, self.judgement
        return settings is not None and judged is not None and settings.holds(judged.text_p)

    def _semantic_wait(self, semantic: SemanticSettings, rules_ms: int, cue: str, silent: int) -> int:
        """The rules' wait as the end-of-turn model moves it: until the silence reaches
        `after_ms` the rules wait for the model; then it hears the utterance's last 8 s (once
        per silence) and its probability ends the turn now, holds it open or leaves the rules'
        wait (SemanticSettings.wait_ms)."""
        if self.semantic_p is None:
            if silent < semantic.after_ms or self.semantic is None:
                return max(rules_ms, semantic.after_ms)
            self.semantic_p = self.semantic.probability(self.segmenter.utterance_audio(1000 * WINDOW_S))
            self.semantic_calls += 1
        wait = semantic.wait_ms(rules_ms, cue, self._language(), self.semantic_p)
        return wait if self.judgement is not None else max(wait, rules_ms)

    def _language(self) -> str:
        """The language of the early decode (else the recogniser's)."""
        language = self._early.language if self._early is not None else ""
        return language or getattr(self.recognizer, "language", "") or ""

    def _early_endpoint(self) -> list[TranscriptEvent]:
        silent = self._silence()
        if silent is None:
            return self._voice_again()
        out: list[TranscriptEvent] = []
        if not self._early_tried and not self._behind:
            out += self._decode_early(_ends_sentence)
        closing = silent >= self.early_endpoint_ms and _ends_sentence(self._early)
        out += self._speculate_when_due(silent, closing)
        if silent < self.early_endpoint_ms:
            return out
        if closing:
            self.early_finals += 1
            return out + self._handle(self.segmenter.close_now())
        return out

    def _silence(self) -> int | None:
        """The silence (ms) of the open utterance, kept as the pause so far (`_settle`); None
        while the voice goes on (or a gap shorter than `early_decode_ms`)."""
        silent = self.segmenter.vad.silent_ms
        if silent < max(self.early_decode_ms, 1):
            return None
        self._pause_ms = silent
        return silent

    def _voice_again(self) -> list[TranscriptEvent]:
        """Voice after a silence: its early decode is stale, and a speculation on it is
        withdrawn. A decode judged worth speculating on is kept aside (`_stale`): if only a short
        sound follows (a plosive's release after its closure, a click), the next silence
        speculates on it again at once instead of after its own decode."""
        if self._early is not None and (self._speculation_due or self._speculated):
            self._stale = (self._early, self._early_end)
        self._settle()
        self._early, self._early_tried, self.judgement = None, False, None
        self._speculation_due, self.semantic_p, self._held = False, None, False
        return self._withdraw()

    def _settle(self) -> None:
        """The voice came back after a pause: a long utterance's early decode of that pause is
        settled (SETTLE_PAUSE_MS, `settle_after_s`; backends that can: Whisper's `settle`)."""
        pause, self._pause_ms = self._pause_ms, 0
        settle = getattr(self.recognizer, "settle", None)
        if settle is None or self._early is None or pause < SETTLE_PAUSE_MS or not self.settle_after_s:
            return
        since = self._early_index - max(self._utt_start, self._settled_index)
        if since >= self.settle_after_s * self.rate and settle():
            self._settled_index = self._early_index

    def _decode_early(self, worth_speculating: Callable[[Recognition | None], bool]) -> list[TranscriptEvent]:
        """The early decode of this silence (once). A decode kept aside before a short sound
        goes out as the speculation first, while this one runs; this one then confirms it,
        replaces it (other words) or withdraws it (judged unfinished)."""
        self._early_tried = True
        out: list[TranscriptEvent] = []
        voiced_end = self.segmenter.vad.last_voiced_end
        stale, self._stale = self._stale, None
        tail = stale is not None and self._only_tail_since(stale[1])
        if stale is not None and (tail or voiced_end - stale[1] <= SHORT_SOUND_MS * self.rate // 1000):
            out += self._speculate(stale[0])
        if stale is not None and tail:
            self._early = stale[0]  # (the tail adds no words: no decode)
        else:
            self._early = self.recognizer.peek()
            self._early_index = self.segmenter.end_index
        self._early_end = voiced_end
        due = worth_speculating(self._early)
        if self._speculated:
            if not due:
                out += self._withdraw()
            elif self._early is not None and self._early.text.strip() == self._guess:
                due = False  # the speculation out already says it
        self._speculation_due = due
        return out

    def _only_tail_since(self, voiced_end: int) -> bool:
        """The voice since input sample `voiced_end` stayed TAIL_DB below the voice's own level."""
        vad = self.segmenter.vad
        level = vad.voice_level_db
        return level is not None and vad.loudest_voiced_since(voiced_end) < level - TAIL_DB

    def _speculate_when_due(self, silent: int, closing: bool = False) -> list[TranscriptEvent]:
        """Speculate on the early decode once the silence has lasted `speculate_ms` (the decode
        itself may have started on a gap that the next frame ends) and the worker has caught up
        with the audio (what waits may already be the voice coming back). `closing`: the
        utterance ends on this chunk, so the text is no guess any more: it goes out now, ahead
        of the final's word alignment, whatever waits."""
        if not self._speculation_due or silent < self.speculate_ms or (self._behind and not closing):
            return []
        self._speculation_due = False
        return self._speculate(self._early)

    def _speculate(self, early: Recognition | None) -> list[TranscriptEvent]:
        """An early decode as a speculative event: the text its final would carry."""
        if early is None:
            return []
        end = self._time(self.segmenter.vad.last_voiced_end)
        text = self.wake.preview(early.text.strip(), end) if early.text.strip() else None
        if not text or self._no_turn(text):
            return []
        self._guess = early.text.strip()
        return self._speculation(
            TranscriptEvent(
                False, text, early.language, early.confidence, self._time(self._utt_start), end, speculative=True
            )
        )

    def _withdraw(self) -> list[TranscriptEvent]:
        """Withdraw the speculative event of this utterance, if one went out."""
        if not self._speculated:
            return []
        self._guess = ""
        return self._speculation(
            TranscriptEvent(
                False, "", "", 0.0, self._time(self._utt_start), self._time(self._utt_start), speculative=True
            )
        )

    def _speculation(self, event: TranscriptEvent) -> list[TranscriptEvent]:
        if self.on_speculative is None:
            return [event]
        self.on_speculative(event)
        return []

    def flush(self) -> list[TranscriptEvent]:
        """End of input: finish an open utterance."""
        return self._handle(self.segmenter.flush())

    def robot_started_speaking(self, at: float) -> list[TranscriptEvent]:
        """The robot's voice started playing at `at` (the chunks' clock). An open utterance whose
        voice began then or later is that voice, forwarded before the mic muted: it is dropped
        (the events withdraw a speculation it had). Later ones are dropped as they begin."""
        self._robot_since = at
        if self.segmenter.active and not self._robot_voice and self._began_with_robot(at):
            self._dropped_robot_voice()
            return self._drop_utterance()
        return []

    def robot_said(self, words: str, at: float) -> None:
        """The robot's reply so far (fay_ros.turns.text_turn.RobotWords), said at `at` (the
        chunks' clock)."""
        self.robot_words, self._robot_words_at = words, at

    def _answered_words(self) -> str:
        """The robot's words the open utterance answers: "" when its voice began more than
        ROBOT_WORDS_FRESH_S after them."""
        began = self._time(self._utt_start) + self._onset
        return self.robot_words if began - self._robot_words_at <= ROBOT_WORDS_FRESH_S else ""

    def robot_finished_speaking(self, now: float) -> None:
        if self.robot_words:
            self._robot_words_at = max(self._robot_words_at, now)
        self._robot_since = None
        if self._robot_voice:  # the person's next words are theirs
            self._drop_utterance()
        self.wake.extend(now)

    def _heard_nothing(self) -> bool:
        """Silero listens and has not been sure of speech since the open (or just ended)
        utterance's voice began: the room's noise (a clatter, a fan's swell, the murmur after a
        voice), whose decode Whisper fills with phantom words ("La la la", "Let's do it.")."""
        vad = self.segmenter.vad
        return vad.classifier.hears_speech and vad.last_sure_end <= self._voiced_at

    def _dropped_robot_voice(self) -> None:
        self.robot_voice_dropped += 1
        if self.on_robot_voice is not None:
            self.on_robot_voice()

    def _began_with_robot(self, at: float) -> bool:
        """The open utterance's voice began when the robot's did (at `at`) or later: in the VAD
        frame that holds `at` (frames start where they start) or after it."""
        frame_s = self.segmenter.vad.settings.frame_ms / 1000
        return self._time(self._utt_start) + self._onset > at - frame_s

    def _is_robot_voice(self) -> bool:
        """The utterance just begun began with the robot speaking and no barge-in since."""
        since = self._robot_since
        if since is None or not self._began_with_robot(since):
            return False
        return self._over_robot is None or self._over_robot < since

    def _drop_utterance(self) -> list[TranscriptEvent]:
        """Drop the open utterance unheard: the robot's own voice."""
        out = self._withdraw()
        self.segmenter.abandon()
        self.recognizer.start()
        self._robot_voice = False
        self._forget_early()
        self._apply_pending()
        return out

    def _handle(self, segment_events) -> list[TranscriptEvent]:
        out: list[TranscriptEvent] = []
        for ev in segment_events:
            if ev.kind == "start":
                if self._over_robot is not None and self._time(ev.sample) > self._over_robot + BARGED_UTTERANCE_S:
                    self._over_robot = None  # (a turn of its own, not the words that barged in)
                self._forget_early()
                self._utt_start = ev.sample
                self._onset = (ev.voiced - ev.sample) / self.rate
                self._voiced_at = ev.voiced
                self._last_partial = ""
                self.recognizer.start()
                self._robot_voice = self._is_robot_voice()
                if self._robot_voice:
                    self._dropped_robot_voice()
            elif self._robot_voice:  # (its audio and end: nothing heard)
                self._robot_voice = ev.kind != "end"
            elif ev.kind == "audio":
                partial = self.recognizer.accept(ev.samples)
                if partial and partial != self._last_partial:
                    self._last_partial = partial
                    end = self._time(ev.sample + len(ev.samples))
                    if self.wake.peek(partial, end):
                        out.append(
                            TranscriptEvent(
                                False,
                                partial,
                                getattr(self.recognizer, "language", ""),
                                0.0,
                                self._time(self._utt_start),
                                end,
                            )
                        )
            elif self._heard_nothing():  # (its end: no decode, no final)
                self.recognizer.start()
                self._early = None
                self.room_dropped += 1
                if self.on_room is not None:
                    self.on_room()
                out += self._withdraw()
            else:
                final = self._finish(ev.sample)
                if final and self._no_turn(final.text):
                    self.backchannels_over_robot += 1
                    if self.on_no_turn is not None:
                        self.on_no_turn(final.text)
                    final = None
                if final:
                    self._guess = ""  # the final carries it now
                    out.append(final)
                else:
                    out += self._withdraw()
        return out

    def _finish(self, last_voiced: int) -> TranscriptEvent | None:
        if self._early is not None:  # decoded at the early endpoint; only silence came since
            result, self._early = self._early.with_words(), None
            self.recognizer.start()  # drop the buffered audio
        else:
            result = self.recognizer.finish()
        text = result.text.strip()
        if not text:
            return None
        end_time = self._time(last_voiced)
        admitted = self.wake.admit(text, end_time)
        if not admitted:
            return None
        # No word starts before the voice does (Whisper's alignment puts the first word at 0,
        # i.e. at the start of the pre-roll).
        words = [
            Word(w.word, max(w.start, self._onset), max(w.end, w.start, self._onset), w.confidence)
            for w in result.words
        ]
        removed = len(normalize(text)) - len(normalize(admitted))
        if removed > 0:  # the wake word was cut from the text: cut its words too
            seen, keep_from = 0, len(words)
            for i, w in enumerate(words):
                if seen >= removed:
                    keep_from = i
                    break
                seen += len(normalize(w.word))
            words = words[keep_from:]
        return TranscriptEvent(
            True, admitted, result.language, result.confidence, self._time(self._utt_start), end_time, list(words)
        )
