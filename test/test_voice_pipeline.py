"""SpeechPipeline with the real espeak-ng engine on the headless real-time output: order,
viseme tracks stamped with the audio start, speaking state, sanitising, replace/interrupt,
one reply cancelled, what became of each sentence (its events), and WAVs written where the
audio goes."""

from __future__ import annotations

import re
import threading

import pytest

from fay_ros.common.wav import read_wav
from fay_ros.voice.engine_types import VoiceSettings
from fay_ros.voice.engines import create_engine
from fay_ros.voice.pipeline import FINAL_KINDS, SentenceRequest, SpeechPipeline
from fay_ros.voice.playback import SimulatedSink
from harness import wait_until


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.lock = threading.Lock()

    def track(self, track, start):
        with self.lock:
            self.events.append(("track", track.utterance_id, start, track))

    def speaking(self, speaking, uid, when):
        with self.lock:
            self.events.append(("speaking", speaking, uid, when))

    def log(self, level, message):
        with self.lock:
            self.events.append(("log", level, message))

    def sentence(self, event):
        with self.lock:
            self.events.append(("sentence", event.kind, event.utterance_id, event.when))

    def of(self, kind):
        with self.lock:
            return [e for e in self.events if e[0] == kind]

    def logs(self):
        return "\n".join(e[2] for e in self.of("log"))

    def wait(self, predicate, what, timeout=20.0):
        return wait_until(lambda: predicate(self), timeout, message=lambda: f"{what}; events: {self.events}")


@pytest.fixture(scope="module")
def engine():
    return create_engine("espeak-ng", VoiceSettings())


@pytest.fixture
def speech(engine, tmp_path):
    recorder = Recorder()
    # A generous lookahead: the next sentence is handed over a second before the current one
    # ends, so a loaded test machine stalling the worker cannot open a gap between them.
    pipeline = SpeechPipeline(
        engine,
        SimulatedSink(engine.sample_rate),
        on_track=recorder.track,
        on_speaking=recorder.speaking,
        log=recorder.log,
        wav_dir=tmp_path / "wav",
        lookahead=1.0,
        on_sentence=recorder.sentence,
    )
    yield pipeline, recorder, tmp_path / "wav"
    pipeline.close()


def speaking_states(recorder):
    return [(e[1], e[2]) for e in recorder.of("speaking")]


def sentence_events(recorder, uid=None):
    return [(e[1], e[2]) for e in recorder.of("sentence") if uid is None or e[2] == uid]


def ended(recorder, *uids):
    """Every one of `uids` has had its final event."""
    return all(any(kind in FINAL_KINDS for kind, _u in sentence_events(recorder, uid)) for uid in uids)


def test_two_sentences_play_in_order_gapless_with_stamped_tracks(speech):
    pipeline, rec, wav_dir = speech
    pipeline.submit(SentenceRequest("c", 0, "Hello, I am Fay.", is_first=True))
    pipeline.submit(SentenceRequest("c", 1, "你好，很高兴认识你。", is_end=True))
    rec.wait(lambda r: (False, "") in speaking_states(r), "speaking back to false")
    tracks = rec.of("track")
    assert [t[1] for t in tracks] == ["c:0", "c:1"]
    assert speaking_states(rec) == [(True, "c:0"), (True, "c:1"), (False, "")]
    (_, _, start0, track0), (_, _, start1, track1) = tracks
    states = rec.of("speaking")
    assert states[0][3] == start0 and states[1][3] == start1, "speaking=true exactly at each first sample"
    assert start1 == pytest.approx(start0 + track0.duration, abs=1e-4), "sentence 2 follows without a gap"
    assert states[2][3] == pytest.approx(start1 + track1.duration, abs=1e-4), "false after the last sample"
    for uid, track in (("c_0", track0), ("c_1", track1)):
        audio = read_wav(wav_dir / f"{uid}.wav")
        samples, rate = audio.samples, audio.sample_rate
        assert len(samples) / rate == pytest.approx(track.duration, abs=1e-3)
    assert "c:1: audio written to" in rec.logs()
    timings = list(pipeline.timings)
    assert [t.utterance_id for t in timings] == ["c:0", "c:1"]
    assert all(t.received <= t.audio_ready <= t.start for t in timings)


def test_markup_is_not_spoken_and_the_log_says_what_was_dropped(speech, engine):
    pipeline, rec, _ = speech
    pipeline.submit(
        SentenceRequest(
            "m",
            0,
            "<think>plan: call the weather tool</think>**Sunny** today, see https://weather.example/?key=abc123",
            is_first=True,
        )
    )
    pipeline.submit(SentenceRequest("m", 1, '{"name": "get_weather", "arguments": {"city": "Oslo"}}', is_end=True))
    rec.wait(
        lambda r: (False, "") in speaking_states(r) and "nothing speakable in m:1" in r.logs(), "the reply to finish"
    )
    assert [t[1] for t in rec.of("track")] == ["m:0"], "the tool-call-only sentence is not spoken"
    logs = rec.logs()
    assert "think block" in logs and "url" in logs and "markdown emphasis" in logs and "tool-call json" in logs
    assert "abc123" not in logs and "weather.example" not in logs and "Oslo" not in logs
    spoken = rec.of("track")[0][3]
    assert spoken.duration == pytest.approx(engine.synthesize("Sunny today, see").duration, abs=0.01), (
        "exactly the speakable words were synthesized"
    )


def test_replace_cuts_the_current_reply_and_speaks_the_new_one(speech):
    pipeline, rec, _ = speech
    pipeline.submit(
        SentenceRequest("old", 0, "This is a long sentence that is going to be replaced before it ends.", is_first=True)
    )
    pipeline.submit(SentenceRequest("old", 1, "This one is never heard."))
    rec.wait(lambda r: (True, "old:0") in speaking_states(r), "the first reply to start")
    pipeline.submit(SentenceRequest("new", 0, "Sorry, news first.", is_first=True, replace=True))
    # a sender may mark every sentence of the replacing reply: it replaces only once
    pipeline.submit(SentenceRequest("new", 1, "Here it is.", is_end=True, replace=True))
    pipeline.submit(SentenceRequest("old", 2, "A late sentence of the old reply.", is_end=True))
    rec.wait(
        lambda r: speaking_states(r)[-1:] == [(False, "")] and (True, "new:1") in speaking_states(r),
        "the new reply to finish",
    )
    assert speaking_states(rec) == [(True, "old:0"), (False, ""), (True, "new:0"), (True, "new:1"), (False, "")]
    assert [t[1] for t in rec.of("track")] == ["old:0", "new:0", "new:1"]
    stop_time = rec.of("speaking")[1][3]
    old_start, old_track = rec.of("track")[0][2], rec.of("track")[0][3]
    assert stop_time < old_start + old_track.duration, "cut mid-sentence"
    assert rec.of("track")[1][2] >= stop_time, "the new reply starts after the old audio stopped"
    logs = rec.logs()
    assert "replaced by new:0" in logs and "old:0 cut after" in logs and "dropping old:2" in logs


def test_interrupt_stops_and_drops_the_rest_of_the_reply(speech):
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("i", 0, "Let me tell you a rather long story about a robot.", is_first=True))
    pipeline.submit(SentenceRequest("i", 1, "It had a voice."))
    rec.wait(lambda r: (True, "i:0") in speaking_states(r), "speaking")
    stop_at = pipeline.interrupt("interrupt received")
    rec.wait(lambda r: speaking_states(r)[-1:] == [(False, "")], "speaking=false")
    assert rec.of("speaking")[-1][3] == stop_at
    pipeline.submit(SentenceRequest("i", 2, "And then it stopped.", is_end=True))
    pipeline.submit(SentenceRequest("j", 0, "Yes?", is_first=True, is_end=True))
    rec.wait(lambda r: (True, "j:0") in speaking_states(r), "the next reply to play")
    assert [t[1] for t in rec.of("track")] == ["i:0", "j:0"]
    assert "dropping i:2" in rec.logs()
    assert "1 queued sentence(s) dropped" in rec.logs()


def test_an_empty_closing_marker_speaks_nothing(speech):
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("e", 0, "Done.", is_first=True))
    pipeline.submit(SentenceRequest("e", 1, "", is_end=True))
    rec.wait(lambda r: (False, "") in speaking_states(r), "done")
    assert [t[1] for t in rec.of("track")] == ["e:0"]
    assert not [e for e in rec.of("log") if e[1] == "error"]


def test_each_sentence_reports_when_it_starts_and_how_it_ends(speech):
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("s", 0, "Hello there.", is_first=True))
    pipeline.submit(SentenceRequest("s", 1, "```code only```"))
    pipeline.submit(SentenceRequest("s", 2, "Goodbye.", is_end=True))
    rec.wait(lambda r: ended(r, "s:0", "s:1", "s:2"), "every sentence to end")
    assert sentence_events(rec) == [
        ("skipped", "s:1"),
        ("started", "s:0"),
        ("finished", "s:0"),
        ("started", "s:2"),
        ("finished", "s:2"),
    ] or sentence_events(rec) == [
        ("started", "s:0"),
        ("skipped", "s:1"),
        ("finished", "s:0"),
        ("started", "s:2"),
        ("finished", "s:2"),
    ]
    tracks = {t[1]: (t[2], t[3]) for t in rec.of("track")}
    times = {(e[1], e[2]): e[3] for e in rec.of("sentence")}
    for uid in ("s:0", "s:2"):
        start, track = tracks[uid]
        assert times[("started", uid)] == start, "started = the first sample's time, as the track's stamp"
        assert times[("finished", uid)] == pytest.approx(start + track.duration, abs=1e-6)


def test_an_interrupt_reports_the_playing_sentence_cut_and_the_queued_ones_dropped(speech):
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("i", 0, "This is a long sentence that will not be finished today.", is_first=True))
    pipeline.submit(SentenceRequest("i", 1, "Second."))
    pipeline.submit(SentenceRequest("i", 2, "Third, never heard.", is_end=True))
    rec.wait(lambda r: ("started", "i:0") in sentence_events(r), "i:0 to start")
    stop_at = pipeline.interrupt()
    pipeline.submit(SentenceRequest("i", 3, "A late one."))
    rec.wait(lambda r: ended(r, "i:0", "i:1", "i:2", "i:3"), "every sentence to end")
    assert dict((u, k) for k, u in sentence_events(rec) if k in FINAL_KINDS) == {
        "i:0": "cut",
        "i:1": "dropped",
        "i:2": "dropped",
        "i:3": "dropped",
    }
    cut_at = next(e[3] for e in rec.of("sentence") if e[1] == "cut")
    assert cut_at == stop_at, "cut is reported with the moment the audio stopped"


def test_cancel_stops_one_reply_and_the_next_one_plays_whole(speech):
    pipeline, rec, _ = speech
    pipeline.submit(
        SentenceRequest("a", 0, "This long first sentence of reply a is cancelled while it plays.", is_first=True)
    )
    pipeline.submit(SentenceRequest("a", 1, "Nor is this one heard.", is_end=True))
    pipeline.submit(SentenceRequest("b", 0, "Reply b is queued behind it.", is_first=True))
    pipeline.submit(SentenceRequest("b", 1, "And it plays whole.", is_end=True))
    rec.wait(lambda r: ("started", "a:0") in sentence_events(r), "a:0 to start")
    stop_at = pipeline.cancel("a")
    assert stop_at is not None, "a was playing: the audio stops"
    rec.wait(lambda r: ended(r, "a:0", "a:1", "b:0", "b:1"), "every sentence to end")
    finals = dict((u, k) for k, u in sentence_events(rec) if k in FINAL_KINDS)
    assert finals == {"a:0": "cut", "a:1": "dropped", "b:0": "finished", "b:1": "finished"}
    assert speaking_states(rec) == [(True, "a:0"), (False, ""), (True, "b:0"), (True, "b:1"), (False, "")]
    assert rec.of("speaking")[1][3] == stop_at
    # A late sentence of the cancelled reply is dropped too.
    pipeline.submit(SentenceRequest("a", 2, "Late."))
    rec.wait(lambda r: ("dropped", "a:2") in sentence_events(r), "the late sentence dropped")


def test_cancelling_a_queued_reply_leaves_the_playing_one_alone(speech):
    pipeline, rec, _ = speech
    pipeline.submit(
        SentenceRequest("p", 0, "The reply that is playing goes on to its end.", is_first=True, is_end=True)
    )
    pipeline.submit(SentenceRequest("q", 0, "A queued reply,", is_first=True))
    pipeline.submit(SentenceRequest("q", 1, "cancelled before it plays.", is_end=True))
    rec.wait(lambda r: ("started", "p:0") in sentence_events(r), "p:0 to start")
    assert pipeline.cancel("q") is None, "none of q was in the player: the audio is not touched"
    rec.wait(lambda r: ended(r, "p:0", "q:0", "q:1"), "every sentence to end")
    finals = dict((u, k) for k, u in sentence_events(rec) if k in FINAL_KINDS)
    assert finals == {"p:0": "finished", "q:0": "dropped", "q:1": "dropped"}
    assert speaking_states(rec) == [(True, "p:0"), (False, "")]


def test_cancel_while_the_next_reply_is_already_handed_over_speaks_it_again(speech):
    """With a lookahead longer than the cancelled reply, the next reply's first sentence is
    already in the player when the cancel stops it: it is synthesized again, not lost."""
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("x", 0, "Short one, cancelled.", is_first=True, is_end=True))
    pipeline.submit(SentenceRequest("y", 0, "The next reply.", is_first=True, is_end=True))
    rec.wait(lambda r: [t[1] for t in r.of("track")] == ["x:0", "y:0"], "both handed to the player")
    pipeline.cancel("x")
    rec.wait(lambda r: ended(r, "x:0", "y:0"), "both to end")
    finals = dict((u, k) for k, u in sentence_events(rec) if k in FINAL_KINDS)
    assert finals["y:0"] == "finished" and finals["x:0"] in ("cut", "dropped")
    assert [t[1] for t in rec.of("track")] == ["x:0", "y:0", "y:0"], "y:0 announced again with its new start"
    assert sentence_events(rec, "y:0") == [("started", "y:0"), ("finished", "y:0")]


def test_the_language_of_a_request_reads_text_without_letters(speech):
    pipeline, rec, _ = speech
    pipeline.submit(SentenceRequest("n", 0, "123", is_first=True, language="zh"))
    pipeline.submit(SentenceRequest("n", 1, "123", is_end=True))
    rec.wait(lambda r: ended(r, "n:0", "n:1"), "both to end")
    logs = rec.logs()
    assert re.search(r"n:0: [\d.]+ s of audio \(cmn-latn-pinyin\)", logs), logs
    assert re.search(r"n:1: [\d.]+ s of audio \(en-us\)", logs), "no language: the default (en)"


def test_a_reply_waits_to_start_while_the_person_talks_again_and_is_dropped_if_they_go_on(speech):
    """The person went on after a pause the recogniser took for the end of their turn: a reply
    about to start from silence waits for them (no audio, robot_speaking still false, so a
    half-duplex mic keeps listening); it plays once they stop, and a cancel (the tts node's, when
    their next final comes) drops it unheard."""
    pipeline, rec, _ = speech
    pipeline.wait_for_person_s = 10.0
    pipeline.set_person_talking(True)
    pipeline.submit(SentenceRequest("w", 0, "An answer to half a sentence.", is_first=True, is_end=True))
    wait_until(lambda: pipeline.waiting_for_person == "w", message="w waiting for the person")
    assert rec.of("speaking") == [] and rec.of("track") == []
    pipeline.cancel("w", "the person went on")
    rec.wait(lambda r: ended(r, "w:0"), "w:0 to end")
    assert sentence_events(rec, "w:0") == [("dropped", "w:0")] and rec.of("speaking") == []
    assert "w:0: waited" in rec.logs() and "dropped meanwhile" in rec.logs()
    # the next reply waits too, and plays once the person has finished
    pipeline.submit(SentenceRequest("x", 0, "The answer to all of it.", is_first=True, is_end=True))
    wait_until(lambda: pipeline.waiting_for_person == "x", message="x waiting for the person")
    assert rec.of("speaking") == []
    pipeline.set_person_talking(False)
    rec.wait(lambda r: ended(r, "x:0"), "x:0 to end")
    assert sentence_events(rec, "x:0") == [("started", "x:0"), ("finished", "x:0")]
    assert pipeline.waiting_for_person == ""


def test_unstarted_replies_are_those_with_nothing_in_the_player_yet(speech):
    """What the tts node drops when the person's final shows they went on: the replies none of
    whose sentences has reached the player (waiting for the person, queued, more to come), not
    one that has begun, even once its playing sentence is over."""
    pipeline, rec, _ = speech
    assert pipeline.unstarted_replies() == []
    pipeline.submit(SentenceRequest("a", 0, "Heard first.", is_first=True))  # (more of it to come)
    rec.wait(lambda r: ended(r, "a:0"), "a:0 to end")
    pipeline.wait_for_person_s = 10.0
    pipeline.set_person_talking(True)
    pipeline.submit(SentenceRequest("b", 0, "An answer still to come.", is_first=True, is_end=True))
    pipeline.submit(SentenceRequest("c", 0, "Another one.", is_first=True))
    wait_until(lambda: sorted(pipeline.unstarted_replies()) == ["b", "c"], message=pipeline.unstarted_replies)
    pipeline.cancel("b")
    assert pipeline.unstarted_replies() == ["c"], "a: open, but begun"
    pipeline.set_person_talking(False)
    rec.wait(lambda r: sentence_events(r, "c:0") == [("started", "c:0")], "c:0 to start")
    assert pipeline.unstarted_replies() == []


def test_a_later_sentence_of_a_reply_does_not_wait_for_the_person(speech):
    # (a "yeah" in the gap between two sentences brings no final: the reply would stall)
    pipeline, rec, _ = speech
    pipeline.wait_for_person_s = 10.0
    pipeline.submit(SentenceRequest("m", 0, "One.", is_first=True))
    rec.wait(lambda r: ended(r, "m:0"), "m:0 to end")
    pipeline.set_person_talking(True)
    pipeline.submit(SentenceRequest("m", 1, "And two.", is_end=True))
    rec.wait(lambda r: ended(r, "m:1"), "m:1 to end")
    assert sentence_events(rec, "m:1") == [("started", "m:1"), ("finished", "m:1")]
    assert "waited" not in rec.logs()


def test_a_reply_waits_for_the_person_at_most_wait_for_person_s(speech):
    pipeline, rec, _ = speech
    pipeline.wait_for_person_s = 0.3
    pipeline.set_person_talking(True)  # (a voice activity that never ends: a noisy room)
    pipeline.submit(SentenceRequest("n", 0, "Spoken after the wait.", is_first=True, is_end=True))
    rec.wait(lambda r: ended(r, "n:0"), "n:0 to end")
    assert sentence_events(rec, "n:0") == [("started", "n:0"), ("finished", "n:0")]
    assert "speaking anyway (wait_for_person_s)" in rec.logs()
    timing = pipeline.timings[-1]
    assert timing.start - timing.audio_ready >= 0.3
    # off (0): never waits
    pipeline.wait_for_person_s = 0.0
    pipeline.submit(SentenceRequest("o", 0, "At once.", is_first=True, is_end=True))
    rec.wait(lambda r: ended(r, "o:0"), "o:0 to end")
    assert "o:0: waited" not in rec.logs()


def test_talking_again_is_talk_since_the_last_final_whose_own_final_is_due():
    from fay_ros.turns.talking_again import FINAL_DUE_S, TalkingAgain

    watch = TalkingAgain()
    watch.voice(True, 1.0)
    assert watch.waiting(1.1)  # talking, no turn of theirs has ended yet
    watch.final(2.0)
    assert not watch.waiting(2.1)  # their turn ended; the voice is still on (hangover)
    watch.voice(False, 2.5)
    assert not watch.waiting(2.6)
    watch.voice(True, 3.0)
    assert watch.waiting(3.1)  # they went on after the pause
    watch.voice(False, 4.0)
    assert watch.waiting(4.1), "their voice ended before the recogniser's final: still due"
    watch.final(4.3)
    assert not watch.waiting(4.4)  # ... and that became a turn too
    watch.voice(True, 6.0)  # a cough the recogniser makes nothing of
    watch.voice(False, 6.2)
    assert watch.waiting(6.2 + FINAL_DUE_S - 0.01) and not watch.waiting(6.2 + FINAL_DUE_S)


def test_talking_again_counts_talk_that_began_before_the_last_final_came():
    """A recogniser 2 s behind: the first half's final (its speech ended at 2.0) comes at 4.0,
    after the person went on at 2.6; that final does not cover the second half."""
    from fay_ros.turns.talking_again import TalkingAgain

    watch = TalkingAgain()
    watch.voice(True, 1.0)
    watch.voice(False, 2.5)  # (500 ms after the last word)
    watch.voice(True, 2.6)  # they went on
    watch.final(4.0, behind_s=2.0)  # the first half's final
    assert watch.waiting(4.1), "the second half's final is still due"
    watch.voice(False, 4.5)
    assert watch.waiting(4.6)
    watch.final(6.0, behind_s=2.0)  # the second half's own final (its speech ended at 4.0)
    assert not watch.waiting(6.1)
    # without a stamp a final covers everything up to its arrival, as before
    watch.voice(True, 7.0)
    watch.final(8.0)
    assert not watch.waiting(8.1)


def test_talking_again_waits_longer_for_a_recogniser_that_runs_behind():
    """A loaded machine: the last final came 3 s after the end of its speech, so the next talk's
    final is due 1.5 times that after its voice falls, and never more than FINAL_DUE_MAX_S."""
    from fay_ros.turns.talking_again import FINAL_DUE_MAX_S, FINAL_DUE_S, TalkingAgain

    watch = TalkingAgain()
    watch.voice(True, 1.0)
    watch.final(4.0, behind_s=3.0)  # the first half's final, 3 s behind its speech
    assert watch.final_due_s() == 4.5
    watch.voice(False, 4.1)  # (the voice activity's hangover)
    assert not watch.waiting(4.2)
    watch.voice(True, 5.5)  # they went on
    watch.voice(False, 6.5)
    assert watch.waiting(6.5 + FINAL_DUE_S + 1.0), "a fixed 1.5 s would have stopped waiting here"
    assert watch.waiting(6.5 + 4.49) and not watch.waiting(6.5 + 4.5)
    watch.final(9.0, behind_s=2.5)  # it came, 2.5 s behind
    assert not watch.waiting(9.1) and watch.final_due_s() == 3.75
    watch.final(30.0, behind_s=19.5)  # a recogniser stalled for 19.5 s: still no more than the cap
    assert watch.final_due_s() == FINAL_DUE_MAX_S
    watch.final(31.0, behind_s=-3.0)  # a stamp from another clock says nothing of the pace
    assert watch.final_due_s() == FINAL_DUE_MAX_S
    watch.final(32.0, behind_s=0.2)
    assert watch.final_due_s() == FINAL_DUE_S
