"""The tts node as a real process on a real DDS graph (headless output, WAVs kept):
Utterances in -> audio, one VisemeTrack per sentence and an exact speaking sequence out;
an interrupt mid-sentence stops it and drops the rest; invalid parameters stop it at start-up."""

from __future__ import annotations

import re

import pytest
from std_msgs.msg import Empty, String

from fay_msgs.msg import SpeechState, Utterance, VisemeTrack
from fay_ros.common import qos, topics
from fay_ros.common.rostime import from_time_msg
from fay_ros.common.wav import read_wav
from harness import wait_until

TTS = "fay_ros.nodes.tts"


def start_tts(launch_node, ros, wav_dir, **params):
    node = launch_node(TTS, {"output_device": "none", "wav_dir": str(wav_dir), **params})
    node.wait_ready()
    speaking = ros.collect(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    tracks = ros.collect(VisemeTrack, topics.VISEMES)
    replies = ros.publisher(Utterance, topics.REPLY)
    interrupt = ros.publisher(Empty, topics.INTERRUPT)
    ros.wait_for_subscribers(replies)
    ros.wait_for_subscribers(interrupt)
    # Our subscriptions are matched once the latched initial state has arrived.
    speaking.wait_for_match(lambda m: not m.speaking, what="the latched initial speaking=false")
    wait_until(lambda: ros.node.count_publishers(ros.resolve(topics.VISEMES)) >= 1, message="visemes publisher")
    return node, speaking, tracks, replies, interrupt


def utterance(conversation, seq, text, *, first=False, end=False, replace=False):
    return Utterance(
        user_id="user",
        conversation_id=conversation,
        seq=seq,
        text=text,
        is_first=first,
        is_end=end,
        replace=replace,
        source="llm",
    )


def states(collector):
    return [(m.speaking, m.utterance_id) for m in collector.messages]


def test_two_utterances_give_audio_two_tracks_and_an_exact_speaking_sequence(ros, launch_node, tmp_path):
    # lookahead 1 s: sentence 2 is handed over long before sentence 1 ends, even on a loaded
    # machine, so "no gap" is a property of the scheduler, not of luck.
    node, speaking, tracks, replies, _ = start_tts(launch_node, ros, tmp_path, lookahead=1.0)
    replies.publish(utterance("conv", 0, "Hello, I am Fay. Nice to meet you!", first=True))
    replies.publish(utterance("conv", 1, "我喜欢用Python编程。", end=True))
    speaking.wait_for(lambda msgs: len(msgs) >= 4 and not msgs[-1].speaking, what="speaking true, true, false")
    assert states(speaking) == [(False, ""), (True, "conv:0"), (True, "conv:1"), (False, "")]
    # A track announced later than the player's lead (a loaded machine) is published again with
    # its later, true start (fay_ros.voice.playback): the last track of an utterance counts.
    got = list(
        {
            t.utterance_id: t
            for t in tracks.wait_for(lambda ts: len({t.utterance_id for t in ts}) >= 2 and ts, what="two tracks")
        }.values()
    )
    assert [t.utterance_id for t in got] == ["conv:0", "conv:1"]
    first, second = got
    on0, on1, off = (from_time_msg(m.header.stamp) for m in speaking.messages[1:])
    assert from_time_msg(first.header.stamp) == pytest.approx(on0, abs=1e-6), "track stamp = its first sample"
    assert from_time_msg(second.header.stamp) == pytest.approx(on1, abs=1e-6)
    assert on1 == pytest.approx(on0 + first.duration, abs=1e-3), "no gap between the sentences"
    assert off == pytest.approx(on1 + second.duration, abs=1e-3), "false after the last sample"
    for track in got:
        assert track.frames[0].start == 0.0 and track.frames[-1].name == "sil"
        assert {f.name for f in track.frames} > {"sil", "aa"}
        assert all(a.start < b.start for a, b in zip(track.frames, track.frames[1:]))
    # The audio went where the node said: one WAV per sentence, as long as its track.
    for track in got:
        audio = read_wav(tmp_path / f"{track.utterance_id.replace(':', '_')}.wav")
        samples, rate = audio.samples, audio.sample_rate
        assert len(samples) / rate == pytest.approx(track.duration, abs=1e-3)
        assert abs(samples.astype(int)).max() > 1000, "real speech, not silence"
    output = node.output()
    assert "simulated real-time output" in output and str(tmp_path) in output


def test_interrupt_mid_sentence_stops_it_and_drops_the_queue(ros, launch_node, tmp_path):
    node, speaking, tracks, replies, interrupt = start_tts(launch_node, ros, tmp_path)
    replies.publish(
        utterance(
            "long",
            0,
            "This is a rather long sentence, and it will be interrupted before "
            "it reaches its end, because the user starts talking.",
            first=True,
        )
    )
    replies.publish(utterance("long", 1, "This sentence must never be heard."))
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "long:0", what="speaking long:0")
    interrupt.publish(Empty())
    stopped = speaking.wait_for(
        lambda msgs: msgs[-1] if not msgs[-1].speaking and len(msgs) >= 3 else None,
        what="speaking=false after the interrupt",
    )
    track = tracks.wait_for_count(1)[0]
    start = from_time_msg(track.header.stamp)
    assert from_time_msg(stopped.header.stamp) < start + track.duration, "cut mid-sentence"
    # Sentences still arriving for the interrupted reply are dropped; a new reply plays.
    replies.publish(utterance("long", 2, "Nor this one.", end=True))
    replies.publish(utterance("next", 0, "Yes?", first=True, end=True))
    speaking.wait_for_match(lambda m: m.utterance_id == "next:0", what="the next reply")
    assert states(speaking)[:4] == [(False, ""), (True, "long:0"), (False, ""), (True, "next:0")]
    # (a start announced later than its lead is announced again, by design: ids without repeats)
    tracks.wait_for(lambda msgs: any(t.utterance_id == "next:0" for t in msgs), what="the next reply's track")
    assert list(dict.fromkeys(t.utterance_id for t in tracks.messages)) == ["long:0", "next:0"]
    assert node.stop() == 0  # exited: everything it logged is in its output
    log = node.output()
    assert "next:0: audio written" in log
    assert "long:0 cut after" in log and "dropping long:2" in log
    delay = re.search(r"interrupt received: audio stops in (\d+) ms, (\d+) queued", log)
    assert delay is not None, log[-2000:]
    # The node computes this from the audio already handed to the output (one block plus
    # latency), not from a wall-clock race, so the 100 ms budget is checkable here.
    assert int(delay.group(1)) <= 100
    assert int(delay.group(2)) == 1, "the queued second sentence was dropped"


def test_a_reply_cancel_stops_that_reply_and_the_other_users_reply_is_spoken(ros, launch_node, tmp_path):
    """reply/cancel (a cancelled `chat` goal) stops one conversation: its sentence playing is
    cut and its queued ones dropped, while another user's reply queued behind it is spoken."""
    node, speaking, tracks, replies, _ = start_tts(launch_node, ros, tmp_path)
    cancel = ros.publisher(String, topics.REPLY_CANCEL)
    ros.wait_for_subscribers(cancel)
    replies.publish(
        utterance(
            "carol-1",
            0,
            "This is a rather long sentence for carol, and her client cancels it before it "
            "reaches its end, because she no longer wants the answer.",
            first=True,
        )
    )
    replies.publish(utterance("carol-1", 1, "This sentence must never be heard.", end=True))
    replies.publish(utterance("dave-1", 0, "Dave's answer is spoken whole.", first=True, end=True))
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "carol-1:0", what="speaking carol-1:0")
    cancel.publish(String(data="carol-1"))
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "dave-1:0", what="dave's reply")
    speaking.wait_for(lambda msgs: not msgs[-1].speaking and len(msgs) >= 4 and msgs, what="silence after dave")
    spoken = [uid for on, uid in states(speaking) if on]
    assert spoken == ["carol-1:0", "dave-1:0"], "carol's second sentence dropped, dave's said"
    track = next(t for t in tracks.wait_for_count(1) if t.utterance_id == "carol-1:0")
    carols = next(i for i, m in enumerate(speaking.messages) if m.utterance_id == "carol-1:0")
    after_carol = speaking.messages[carols + 1]  # silence, or dave's sentence straight away
    assert from_time_msg(after_carol.header.stamp) < from_time_msg(track.header.stamp) + track.duration, "cut"
    assert node.stop() == 0
    log = node.output()
    assert "reply cancelled: carol-1: audio stops in" in log
    assert "dave-1:0: audio written" in log


# Invalid parameters (what the pydantic model refuses) stop the node; a voice the engine does
# not have or an output that does not open leave it alive and not ready (test_voice_ros_native).
@pytest.mark.parametrize(
    "params, reason",
    [
        ({"chinese_voice": "cmn"}, "broken on Debian 12"),
        ({"rate_wpm": 5}, "parameter 'rate_wpm'"),
    ],
)
def test_invalid_parameters_stop_the_node_at_start_up_with_the_reason(launch_node, params, reason):
    node = launch_node(TTS, params)
    assert node.wait_exit() == 2
    assert reason in node.output()


def test_the_pyttsx3_engine_speaks_through_the_same_node(ros, launch_node, tmp_path):
    node, speaking, tracks, replies, _ = start_tts(launch_node, ros, tmp_path, engine="pyttsx3")
    assert "engine pyttsx3" in node.output()
    replies.publish(utterance("py", 0, "Hello from pyttsx3, 你好。", first=True, end=True))
    speaking.wait_for(lambda msgs: len(msgs) >= 3 and not msgs[-1].speaking, what="speaking true then false")
    assert states(speaking) == [(False, ""), (True, "py:0"), (False, "")]
    track = tracks.wait_for_count(1)[0]
    on, off = (from_time_msg(m.header.stamp) for m in speaking.messages[1:])
    assert from_time_msg(track.header.stamp) == pytest.approx(on, abs=1e-6)
    assert off - on == pytest.approx(track.duration, abs=1e-3)
    assert any(f.name != "sil" for f in track.frames), "the loudness-driven track still moves the mouth"
    audio = read_wav(tmp_path / "py_0.wav")
    samples, rate = audio.samples, audio.sample_rate
    assert len(samples) / rate == pytest.approx(track.duration, abs=1e-3)


def test_an_oversized_reply_is_cut_to_the_limit_and_the_node_goes_on(ros, launch_node, tmp_path):
    from fay_ros.voice.say_verbatim import MAX_SENTENCE_CHARS

    node, speaking, tracks, replies, interrupt = start_tts(launch_node, ros, tmp_path)
    huge = "This is a very long reply that nobody should have to hear in full. " * 1500  # about 100 kB
    replies.publish(utterance("huge", 0, huge, first=True, end=True))
    # Uncut, this takes minutes to synthesise (and the track would last about two hours).
    track = tracks.wait_for_match(lambda t: t.utterance_id == "huge:0", timeout=30, what="the track of huge:0")
    words = MAX_SENTENCE_CHARS / 5.5  # espeak-ng at 175 words per minute
    assert 0.5 * words / 175 * 60 < track.duration < 2.0 * words / 175 * 60
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "huge:0", what="speaking huge:0")
    interrupt.publish(Empty())
    speaking.wait_for(lambda msgs: len(msgs) >= 3 and not msgs[-1].speaking, what="speaking=false after the interrupt")
    replies.publish(utterance("next", 0, "Yes?", first=True, end=True))
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "next:0", what="the next reply")
    assert node.alive()
    assert f"huge:0: reply of {len(huge)} characters cut to" in node.output()
    audio = read_wav(tmp_path / "huge_0.wav")
    samples, rate = audio.samples, audio.sample_rate
    assert len(samples) / rate == pytest.approx(track.duration, abs=1e-3)


def test_bound_text_cuts_at_the_best_boundary_within_the_limit():
    from fay_ros.voice.say_verbatim import bound_text

    assert bound_text("Short.", 20) == "Short."
    assert bound_text("One two. Three four, five six seven eight", 30) == "One two. Three four,"
    assert bound_text("Alpha beta gamma delta epsilon zeta", 20) == "Alpha beta gamma"
    assert bound_text("一二三四五六七八九十。一二三四五六七八九十", 15) == "一二三四五六七八九十。"
    assert bound_text("x" * 100, 20) == "x" * 20  # no boundary: cut hard, never longer than the limit
    assert bound_text("Hi. " + "y" * 100, 40) == "Hi. " + "y" * 36  # a boundary too early is not used


def test_a_talk_over_hold_goes_on_by_itself_after_hold_max_s_and_loses_nothing(ros, launch_node, tmp_path):
    from std_msgs.msg import Bool

    node, speaking, tracks, replies, _ = start_tts(launch_node, ros, tmp_path, hold_max_s=0.6)
    talk_over = ros.publisher(Bool, topics.TALK_OVER)
    ros.wait_for_subscribers(talk_over)
    replies.publish(
        utterance(
            "held",
            0,
            "This sentence is held for a moment by someone talking over it, and then it goes on to its very end.",
            first=True,
            end=True,
        )
    )
    speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "held:0", what="speaking held:0")
    talk_over.publish(Bool(data=True))  # and no release, no interrupt: the mic went away
    end = speaking.wait_for(
        lambda msgs: len(msgs) >= 3 and not msgs[-1].speaking and msgs[-1],
        timeout=30,
        what="speaking=false after the whole sentence",
    )
    assert states(speaking)[:3] == [(False, ""), (True, "held:0"), (False, "")], "held, never stopped"

    # the hold closed the mouth (a silent track), then the track came again with its start moved
    # by the hold, and the sentence ends with it
    # (a stalled machine announces a sentence twice before it plays, each time with its true
    # start: Player.submit; the held track is the closed one, between the last announcement and
    # the moved one)
    def closed(track) -> bool:
        return [f.name for f in track.frames] == ["sil"] and track.duration == 0.0

    tracks.wait_for(lambda msgs: any(closed(m) for m in msgs[1:-1]), what="a track, the closed one, then the moved one")
    published = list(tracks.messages)
    at = next(i for i, m in enumerate(published) if closed(m))
    first, held, last = published[at - 1], published[at], published[at + 1]
    assert closed(held) and not closed(first) and not closed(last)
    assert first.header.stamp.sec <= held.header.stamp.sec and first.frames == last.frames
    moved = from_time_msg(last.header.stamp) - from_time_msg(first.header.stamp)
    # (seconds since the epoch as floats carry ~0.2 µs of rounding: 0.6 s may read 0.5999999)
    assert moved >= 0.6 - 1e-6 and from_time_msg(end.header.stamp) == pytest.approx(
        from_time_msg(last.header.stamp) + last.duration, abs=1e-3
    )
    assert node.stop() == 0
    assert "talk-over: the voice holds" in node.output() and "held 0.6 s with no release" in node.output()
