"""Turn-taking scenarios on a simulated clock: no processes, no sleeps, no real time.

The whole-graph tests (test_hearing_bargein.py's `rig`, test_bringup_e2e.py) run the tts and mic
nodes in real time, and a busy machine moves their timing. Here the same loop runs on explicit
times: the robot's voice (`SimVoice`, the tts pipeline as turn-taking sees it) plays its reply
block by block and hands each block to the mic's core (MicCore with the echo canceller and the
simulated room, test/room_mix.py) as `audio/played` would; the person's espeak-ng recording is
mixed in at a known time; every 30 ms chunk is processed at its capture time, and the mic's
decisions go straight to the tts side's turn-taking (turns.voice_hold.VoiceHold,
turns.resume.ResumeKeeper) and to the recogniser's core (AsrCore with a scripted recogniser, fed
in the order turns.asr_order says), whose timers are polled every 50 ms of the simulated clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
import pytest

from fay_ros.hearing.asr_core import AsrCore
from fay_ros.hearing.echo import EchoCanceller, RoomEcho
from fay_ros.hearing.mic_core import MicCore
from fay_ros.hearing.recognition import Recognition
from fay_ros.turns.asr_order import BargeInsFirst, behind
from fay_ros.turns.end_of_turn import TurnSettings
from fay_ros.turns.resume import ResumeKeeper, ResumeSettings
from fay_ros.turns.stop_request import is_stop_request
from fay_ros.turns.voice_hold import HoldSettings, VoiceHold
from room_mix import BLOCK, CHUNK, PERSON_GAIN, RATE, ROBOT_TEXTS, ROOMS, SETTINGS, TTS_RATE, first_sound
from synthetic_speech import silence, speak

CHUNK_S = CHUNK / RATE
BLOCK_S = BLOCK / TTS_RATE
AHEAD_S = 0.05  # a block is committed to the device (and published as played) this long before it plays
TIMER_S = 0.05  # the tts node's timer (VoiceHold.due, ResumeKeeper.due)
RESUME_AFTER_S = 1.0  # (the rig test's resume_after_s)
CLIP_DECODE_S = 0.2  # the recogniser's decode of a talk-over clip (a short one on Whisper base)
T0 = 10.0  # the simulated clock when the robot starts its reply
ROBOT_REPLY = [
    "I am the robot and I am talking about the weather for a while now.",
    "It will be sunny tomorrow and warm in the afternoon, so you can go for a walk.",
    "In the evening a light wind comes from the sea and the air gets cooler.",
]

_SPOKEN: dict[tuple[str, str, int], np.ndarray] = {}


def spoken(text: str, voice: str = "en-us", rate: int = RATE) -> np.ndarray:
    key = (text, voice, rate)
    if key not in _SPOKEN:
        _SPOKEN[key] = speak(text, voice, rate=rate)
    return _SPOKEN[key]


class SimVoice:
    """The robot's voice as turn-taking sees it (voice.pipeline + the player): sentences played
    in BLOCK-sample blocks at exact times. A block is committed AHEAD_S before it plays; `hold`
    commits no more (what is committed still plays), `release` plays on from the first sample
    not yet committed, `interrupt` stops and returns the sentences taken off (the cut one
    first), `resume` queues them again from their start."""

    def __init__(self, sentences: list[np.ndarray]) -> None:
        self.sentences = sentences
        self.queue: deque[int] = deque()
        self.pos = 0  # samples of the queue's first sentence committed
        self.next_at = 0.0  # when the next block plays
        self.state = "idle"  # idle | playing | held
        self.committed_until = float("-inf")  # the end of the last committed block
        self.blocks: list[tuple[float, float, int]] = []  # (start, end, sentence) of every committed block
        self.samples_played = 0

    def say(self, indices: list[int], now: float) -> None:
        self.queue.extend(indices)
        self.pos, self.state, self.next_at = 0, "playing", max(now, self.committed_until)

    def commit(self, until: float) -> list[tuple[np.ndarray, float]]:
        """The blocks that start before `until` (to the device, and on audio/played)."""
        out = []
        while self.state == "playing" and self.queue and self.next_at < until:
            sentence = self.sentences[self.queue[0]]
            block = sentence[self.pos : self.pos + BLOCK]
            out.append((block, self.next_at))
            end = self.next_at + len(block) / TTS_RATE
            self.blocks.append((self.next_at, end, self.queue[0]))
            self.samples_played += len(block)
            self.committed_until, self.next_at = end, end
            self.pos += len(block)
            if self.pos >= len(sentence):
                self.queue.popleft()
                self.pos = 0
        return out

    def speaking(self, now: float) -> bool:
        """robot_speaking: a sentence is queued or held, or committed audio still plays."""
        return (self.state != "idle" and bool(self.queue)) or self.committed_until > now

    def hold(self, now: float) -> float | None:
        if self.state != "playing" or not self.queue:
            return None
        self.state = "held"
        return max(now, self.committed_until)

    def release(self, now: float) -> float | None:
        if self.state != "held":
            return None
        self.state, self.next_at = "playing", max(now, self.committed_until)
        return self.next_at

    def interrupt(self, now: float) -> list[int]:
        cut = list(self.queue)
        self.queue.clear()
        self.pos, self.state = 0, "idle"
        self.committed_until = min(self.committed_until, now + BLOCK_S)  # (the player stops within a block)
        return cut

    def quiet_from(self, after: float) -> float:
        """When the robot's audio stopped after `after`: the end of the block before the first gap."""
        blocks = sorted((start, end) for start, end, _ in self.blocks)
        for (_start, end), (next_start, _) in zip(blocks, blocks[1:] + [(float("inf"), 0.0)]):
            if end > after and next_start > end + 0.03:
                return end
        raise AssertionError("the robot's audio never stopped")


class ScriptedRecognizer:
    """Hears `text` in every utterance (the recogniser is not what these tests are about)."""

    sample_rate = RATE
    streaming = False

    def __init__(self, text: str) -> None:
        self.text = text

    def start(self) -> None:
        pass

    def accept(self, samples) -> None:
        return None

    def peek(self) -> Recognition:
        return Recognition(self.text, "en", 0.9)

    def finish(self) -> Recognition:
        return Recognition(self.text, "en", 0.9)


@dataclass
class Run:
    """What happened, in seconds on the simulated clock."""

    onset: float | None  # the person's first sound
    talk_over: list[tuple[bool, float]] = field(default_factory=list)  # the mic's (hold?, when)
    holds: list[float] = field(default_factory=list)  # when the voice held
    go_ons: list[tuple[float, float]] = field(default_factory=list)  # (when the voice went on, held for)
    barge_ins: list[float] = field(default_factory=list)
    interrupts: list[float] = field(default_factory=list)  # by a barge-in
    stop_requests: list[float] = field(default_factory=list)  # interrupts for a stop request in a talk-over clip
    clips_heard: list[str] = field(default_factory=list)  # what the recogniser read in each talk-over clip
    resumed: list[tuple[float, list[int]]] = field(default_factory=list)
    voice_fell: list[float] = field(default_factory=list)  # the mic's voice activity fell
    finals: list[str] = field(default_factory=list)
    no_turns: list[str] = field(default_factory=list)
    voice: SimVoice | None = None
    total_samples: int = 0


def converse(
    person: np.ndarray | None,
    at_s: float,
    *,
    heard_as: str = "",
    seconds: float = 20.0,
    resume_after_s: float = RESUME_AFTER_S,
    reply: list[tuple[str, str]] | None = None,
    room_echo: tuple[float, float] = (-3.0, 50.0),
) -> Run:
    """The robot says `reply` (ROBOT_REPLY) from T0 in a room whose echo is `room_echo` (dB under
    the played audio, delay in ms); the person's recording starts `at_s` into it; the
    recogniser hears `heard_as` in any utterance it gets."""
    sentences = [spoken(text, voice, rate=TTS_RATE) for text, voice in reply or [(t, "en-us") for t in ROBOT_REPLY]]
    voice = SimVoice(sentences)
    core = MicCore(RATE, duplex=SETTINGS, echo=EchoCanceller(RATE, 30), room_echo=RoomEcho(*room_echo))
    hold = VoiceHold(HoldSettings())
    keeper: ResumeKeeper[int] = ResumeKeeper(ResumeSettings(resume_after_s=resume_after_s))
    run = Run(None, voice=voice, total_samples=sum(len(s) for s in sentences))
    asr = AsrCore(ScriptedRecognizer(heard_as), turn=TurnSettings(), on_no_turn=run.no_turns.append)
    order = BargeInsFirst()
    clips: list[tuple[float, np.ndarray]] = []  # (decoded when, clip): audio/talk_over_clip to the recogniser
    room = np.zeros(int(seconds * RATE), dtype=np.int16)
    if person is not None:
        at = int(at_s * RATE)
        room[at : at + len(person)] = (PERSON_GAIN * person[: len(room) - at]).astype(np.int16)
        run.onset = T0 + at_s + first_sound(person)
    voice.say(list(range(len(sentences))), T0)
    core.set_robot_speaking(True, T0)
    speaking, next_tick = True, T0 + TIMER_S
    for i in range(0, len(room) - CHUNK + 1, CHUNK):
        captured = T0 + i / RATE
        for block, start in voice.commit(captured + AHEAD_S):
            core.add_played(block, TTS_RATE, start)
        out = core.process(room[i : i + CHUNK], captured, captured, captured=captured)
        now = captured + CHUNK_S  # (the chunk's decisions are known at its end)
        if out.talk_over is not None:
            run.talk_over.append((out.talk_over, now))
            if hold.talk_over(out.talk_over, now) and voice.hold(now) is not None:
                hold.held(now)
                run.holds.append(now)
        if out.interrupt:
            # the mic publishes audio/barge_in, then interrupt; the tts pairs them
            run.barge_ins.append(now)
            run.interrupts.append(now)
            order.barge_in(now)
            keeper.barge_in(now)
            hold.interrupted()
            keeper.interrupted(voice.interrupt(now), now)
        if out.talk_over_clip is not None:
            clips.append((now + CLIP_DECODE_S, out.talk_over_clip))
        while clips and clips[0][0] <= now:  # the asr node's _judge_clip: a stop request interrupts
            decoded, clip = clips.pop(0)
            heard = asr.transcribe_clip(clip, RATE)
            run.clips_heard.append(heard.text if heard is not None else "(busy)")
            if heard is not None and is_stop_request(heard.text):
                run.stop_requests.append(decoded)
                hold.interrupted()
                keeper.interrupted(voice.interrupt(now), now)  # (no barge-in: nothing to resume)
        if out.voice_active is not None:
            keeper.voice(out.voice_active, now)
            if not out.voice_active:
                run.voice_fell.append(now)
        for chunk, stamp in out.chunks:  # audio/raw, to the recogniser's worker
            for barged_at in order.before_next():
                asr.barged_in(barged_at)
            for ev in asr.feed(chunk, RATE, stamp, behind=behind(0, stamp, len(chunk) / RATE, now)):
                if ev.is_final:
                    run.finals.append(ev.text)
                    keeper.heard(ev.text)
        while next_tick <= now:  # the tts node's timer
            go_on = hold.due(next_tick)
            if go_on is not None and voice.release(next_tick) is not None:
                run.go_ons.append((next_tick, go_on.held_s))
            due = keeper.due(next_tick)
            if due:
                run.resumed.append((next_tick, due))
                voice.say(due, next_tick)
            next_tick += TIMER_S
        if voice.speaking(now) != speaking:
            speaking = not speaking
            core.set_robot_speaking(speaking, now)
    return run


INTERRUPTION = ("Stop, wait a moment please.", "en-us")
BACKCHANNELS = [("yeah", "en-us"), ("嗯", "cmn-latn-pinyin"), ("对", "cmn-latn-pinyin")]


# -- (a) the robot's own voice ------------------------------------------------------------------
ROOM_IDS = [f"echo{db:+g}dB-{ms:g}ms" for db, ms in ROOMS]


REPLIES = {
    "en": [(text, "en-us") for text in ROBOT_REPLY],
    "zh": ROBOT_TEXTS[4:5],
    # (嗯 after a pause: the canceller took only 2-6 dB out of it for a while, and it held itself)
    "zh-hm": ROBOT_TEXTS[11:12],
}


@pytest.mark.parametrize("room", ROOMS, ids=ROOM_IDS)
@pytest.mark.parametrize("reply", list(REPLIES))
def test_the_robots_own_voice_never_holds_or_barges_in(reply, room):
    run = converse(None, 0.0, reply=REPLIES[reply], room_echo=room)
    assert run.talk_over == [] and run.holds == [] and run.interrupts == [], run.talk_over
    assert run.finals == [] and run.resumed == [] and run.stop_requests == [] and run.clips_heard == []
    assert run.voice is not None and run.voice.samples_played == run.total_samples, "the whole reply played once"
    assert not run.voice.speaking(T0 + 20.0), "said to its end"


@pytest.mark.xfail(
    strict=True,
    reason="known: in a room whose echo is 3 dB over the played audio, a Mandarin "
    "sentence right after another holds the robot's voice on itself",
)
def test_two_mandarin_sentences_back_to_back_in_a_loud_room_do_not_hold_the_voice():
    # Found by these scenarios (each sentence alone, as the open-loop test plays it, holds nothing):
    # ~2 s into the second sentence a frame of the robot's own echo stands 10 dB over the echo
    # level of the last 3 s (the level rule; the double-talk and consonant rules play no part),
    # and the voice holds for ~480 ms, then goes on.
    run = converse(None, 0.0, reply=ROBOT_TEXTS[4:5] * 2, room_echo=(3.0, 120.0))
    assert run.talk_over == [], run.talk_over


# -- (b) a backchannel over the robot ------------------------------------------------------------
@pytest.mark.parametrize("text,voice", BACKCHANNELS)
def test_a_backchannel_holds_the_voice_briefly_and_is_no_barge_in_and_no_turn(text, voice):
    run = converse(spoken(text, voice), 5.0, heard_as="Yeah.")
    assert run.onset is not None
    assert run.interrupts == [] and run.barge_ins == [], "no barge-in"
    assert run.clips_heard and set(run.clips_heard) == {"Yeah."} and run.stop_requests == [], "read, and no stop"
    # held at most briefly (the mic's release_ms and the tts's release_grace_s), then went on
    assert len(run.go_ons) == len(run.holds), (run.holds, run.go_ons)
    assert all(held_for <= 1.0 for _at, held_for in run.go_ons), run.go_ons
    assert [held for held, _at in run.talk_over] == [True, False] * (len(run.talk_over) // 2), run.talk_over
    # no turn: the words over the robot never reached the recogniser, and nothing was resumed
    assert run.finals == [] and run.no_turns == [] and run.resumed == []
    assert run.voice is not None and run.voice.samples_played == run.total_samples, "nothing lost, nothing twice"


@pytest.mark.parametrize("room", ROOMS, ids=ROOM_IDS)
def test_backchannels_over_the_robot_as_in_the_rig_test(room):
    # test_hearing_bargein's rig: "yeah", 嗯, 对 over the robot from 5 s on, 1.5 s apart
    person = np.concatenate(
        [spoken("yeah"), silence(1.5), spoken("嗯", "cmn-latn-pinyin"), silence(1.5), spoken("对", "cmn-latn-pinyin")]
    )
    run = converse(person, 5.0, heard_as="Yeah.", room_echo=room)
    assert run.onset is not None and run.voice is not None
    assert run.interrupts == [] and run.stop_requests == [] and run.finals == [] and run.resumed == []
    # the robot's own voice never held it: nothing before the first backchannel
    assert run.talk_over and all(at > run.onset for _held, at in run.talk_over), (run.onset, run.talk_over)
    assert [held for held, _at in run.talk_over] == [True, False] * (len(run.talk_over) // 2), run.talk_over
    assert all(held_for <= 1.0 for _at, held_for in run.go_ons) and len(run.go_ons) == len(run.holds)
    assert run.voice.samples_played == run.total_samples and not run.voice.speaking(T0 + 20.0)


# -- (c) a real interruption ---------------------------------------------------------------------
def test_a_real_interruption_holds_the_voice_within_150_ms_then_barges_in():
    run = converse(spoken(*INTERRUPTION), 6.0)
    assert run.onset is not None and run.voice is not None
    assert run.holds and run.interrupts, (run.holds, run.interrupts)
    assert run.holds[0] < run.interrupts[0], "the voice holds before the barge-in is decided"
    quiet = run.voice.quiet_from(run.onset)
    assert quiet - run.onset <= 0.150, f"silent {(quiet - run.onset) * 1000:.0f} ms after the person began"
    assert 0.3 <= run.interrupts[0] - run.onset <= 1.8, "the barge-in waits for enough speech, then comes"
    assert len(run.interrupts) == 1 and run.go_ons == [], "stopped once, and the hold never went on"
    assert run.stop_requests == []


def test_an_interruption_whose_hold_a_pause_released_is_stopped_by_its_words_within_the_grace():
    # 4 s in, the canceller has not converged: the voice holds on "Stop," (it goes quiet), the
    # comma's pause releases the hold before the barge-in, and "wait a moment please" over the
    # quiet voice never stands out of the robot's echo level. The held clip reads as a stop
    # request, and the recogniser's interrupt comes within release_grace_s: the voice never
    # went on. (In the open loop, robot_mix, the robot's voice plays on over the person and the
    # long hold barges in.)
    run = converse(spoken(*INTERRUPTION), 4.0, heard_as="Stop, wait a moment please.")
    assert run.onset is not None and run.voice is not None
    assert run.barge_ins == [] and [held for held, _at in run.talk_over][:2] == [True, False], run.talk_over
    # (quiet as soon as the committed audio has played: 4 s in, the hold comes ~190 ms after the "S")
    assert run.voice.quiet_from(run.onset) <= run.talk_over[0][1] + AHEAD_S + BLOCK_S
    released = run.talk_over[1][1]
    assert len(run.stop_requests) == 1 and run.stop_requests[0] < released + HoldSettings().release_grace_s
    assert run.go_ons == [] and run.resumed == [], "the voice never went on, and is not resumed"


# -- (d) resuming after a false interruption -----------------------------------------------------
def test_after_a_false_interruption_the_robot_resumes_resume_after_s_after_the_person_fell_quiet():
    # The words that barged in were only a backchannel to the recogniser: no final, no turn.
    run = converse(spoken(*INTERRUPTION), 6.0, heard_as="Yeah, yeah.")
    assert run.interrupts and run.finals == [] and run.no_turns == ["Yeah, yeah."], (run.finals, run.no_turns)
    [(resumed_at, sentences)] = run.resumed
    fell = [t for t in run.voice_fell if t > run.interrupts[0]][0]
    assert fell + RESUME_AFTER_S <= resumed_at < fell + RESUME_AFTER_S + TIMER_S, (fell, resumed_at)
    cut = [index for _start, end, index in run.voice.blocks if end <= run.interrupts[0] + BLOCK_S][-1]
    assert sentences == list(range(cut, len(ROBOT_REPLY))), "the cut sentence again, and the rest"
    assert not run.voice.speaking(T0 + 20.0), "and said to the end"


def test_after_a_real_turn_the_robot_does_not_resume():
    run = converse(spoken(*INTERRUPTION), 6.0, heard_as="Stop, wait a moment please.")
    assert run.interrupts and run.finals == ["Stop, wait a moment please."]
    assert run.resumed == []


# -- (e) never held before the person speaks -----------------------------------------------------
@pytest.mark.parametrize(
    "text,voice,at_s",
    [(*INTERRUPTION, 4.0), (*INTERRUPTION, 7.0), ("yeah", "en-us", 3.0), ("嗯", "cmn-latn-pinyin", 8.0)],
)
def test_a_talk_over_is_never_held_before_the_person_speaks(text, voice, at_s):
    run = converse(spoken(text, voice), at_s)
    assert run.onset is not None and run.talk_over, "the person was heard"
    first = run.talk_over[0][1]
    # (a decision is known at the end of the chunk the person's first sound is in, at the earliest)
    assert first >= run.onset, f"held {(run.onset - first) * 1000:.0f} ms before the person spoke"


# -- (f) a barge-in behind queued audio ----------------------------------------------------------
def _released_audio() -> tuple[list[tuple[np.ndarray, float]], float]:
    """The audio the mic releases at the barge-in on "Stop, wait a moment please." 6 s into the
    robot's reply (MicCore.process's `chunks` with the interrupt), then the live audio after it
    (to 3 s after the barge-in), and when the barge-in was decided."""
    sentences = [spoken(text, rate=TTS_RATE) for text in ROBOT_REPLY]
    robot = np.concatenate(sentences)
    core = MicCore(RATE, duplex=SETTINGS, echo=EchoCanceller(RATE, 30), room_echo=RoomEcho(-3.0, 50.0))
    person = spoken(*INTERRUPTION)
    room = np.zeros(int(14 * RATE), dtype=np.int16)
    room[6 * RATE : 6 * RATE + len(person)] = (PERSON_GAIN * person).astype(np.int16)
    core.set_robot_speaking(True, T0)
    fed, released, barged = 0, [], None
    for i in range(0, len(room) - CHUNK + 1, CHUNK):
        captured = T0 + i / RATE
        while barged is None and fed < len(robot) and T0 + fed / TTS_RATE < captured + AHEAD_S:
            core.add_played(robot[fed : fed + BLOCK], TTS_RATE, T0 + fed / TTS_RATE)
            fed += BLOCK
        out = core.process(room[i : i + CHUNK], captured, captured, captured=captured)
        if out.interrupt:
            barged = captured + CHUNK_S
            core.set_robot_speaking(False, barged)
        if barged is not None:
            released.extend(out.chunks)
            if captured > barged + 3.0:
                break
    assert barged is not None
    return released, barged


def _asr_worker(
    items: list[tuple[np.ndarray, float]], barged: float, barge_in_at: float, busy_until: float, barge_ins_first: bool
) -> tuple[list[str], list[bool]]:
    """The asr node's worker over `items` (audio/raw in order: the audio released at `barged`
    arrives then, the live audio at the end of its chunk). The barge-in's callback runs at
    `barge_in_at` (its topic is not ordered with the audio); the worker takes nothing before
    `busy_until` (a decode), then a millisecond a chunk. With `barge_ins_first` the barge-in
    goes to the core before the worker's next item, as the node does (BargeInsFirst); else it
    is queued behind the audio already waiting. Returns the finals and, per chunk, whether it
    was fed as behind."""
    asr = AsrCore(ScriptedRecognizer("Yeah, yeah."), turn=TurnSettings())
    order = BargeInsFirst()
    arrivals: list[tuple[float, int, tuple[str, object]]] = [
        (max(stamp + CHUNK_S, barged), 0, ("audio", (chunk, stamp))) for chunk, stamp in items
    ]
    pending = deque(sorted(arrivals + [(barge_in_at, 1, ("barge_in", barged))], key=lambda a: (a[0], a[1])))
    queue: deque[tuple[str, object]] = deque()
    finals, behinds = [], []
    now = busy_until
    while pending or queue:
        if not queue:
            now = max(now, pending[0][0])
        while pending and pending[0][0] <= now:
            item = pending.popleft()[2]
            if item[0] == "barge_in" and barge_ins_first:
                order.barge_in(item[1])  # type: ignore[arg-type]
            else:
                queue.append(item)
        kind, payload = queue.popleft()
        for at in order.before_next():
            asr.barged_in(at)
        if kind == "barge_in":
            asr.barged_in(payload)  # type: ignore[arg-type]
            continue
        chunk, stamp = payload  # type: ignore[misc]
        now += 0.001
        behinds.append(behind(len(queue), stamp, len(chunk) / RATE, now))
        finals += [ev.text for ev in asr.feed(chunk, RATE, stamp, behind=behinds[-1]) if ev.is_final]
    return finals, behinds


def test_a_barge_in_arriving_behind_queued_audio_is_handed_to_the_recogniser_first():
    released, barged = _released_audio()
    assert len(released) > 40, "the held words, then the live audio"
    # As it comes: the mic publishes the barge-in, then the audio it held (queued at once). The
    # words are "Yeah, yeah." to the recogniser: over the robot, no turn.
    finals, behinds = _asr_worker(released, barged, barged + 0.01, barged, barge_ins_first=True)
    assert finals == [], finals
    stamps = [stamp for _chunk, stamp in released]
    assert stamps[0] < barged - 1.0, "the released audio goes back to the person's first words"
    old = [fed_behind for fed_behind, stamp in zip(behinds, stamps) if stamp + CHUNK_S < barged - 0.3]
    live = [fed_behind for fed_behind, stamp in zip(behinds, stamps) if stamp > barged + 0.1]
    assert old and all(old) and live and not any(live), "the released audio is behind, the live audio is not"
    # The barge-in delivered 2.5 s late while the worker decoded for 3 s: the end of the words
    # (and the silence that ends them) waits in the queue before it. Still handed over first:
    finals, _behinds = _asr_worker(released, barged, barged + 2.5, barged + 3.0, barge_ins_first=True)
    assert finals == [], finals
    # (queued behind that audio instead, the words were a turn)
    finals, _behinds = _asr_worker(released, barged, barged + 2.5, barged + 3.0, barge_ins_first=False)
    assert finals == ["Yeah, yeah."], finals
