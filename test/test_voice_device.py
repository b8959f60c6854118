"""The tts node on a real sound device: a private PulseAudio server with a null sink (paced
in real time like a sound card), reached through ALSA's pulse plugin by sounddevice. The
sink's monitor is recorded and must contain the sentence the node synthesized; the node's
health names the device as its hardware id."""

from __future__ import annotations

import bisect
import os
import shutil
import subprocess

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray

from fay_msgs.msg import SpeechState, Utterance, VisemeTrack
from fay_ros.common import qos, topics
from fay_ros.common.rostime import from_time_msg
from fay_ros.common.wav import read_wav
from harness import wait_until

SINK = "fay_voice_test_sink"
RATE = 22050


@pytest.fixture(scope="module")
def pulse(tmp_path_factory):
    missing = [tool for tool in ("pulseaudio", "parec") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/apt-packages.txt lists pulseaudio)")
    home = tmp_path_factory.mktemp("pulse")
    socket = home / "native"
    env = {"HOME": str(home), "PULSE_RUNTIME_PATH": str(home), "XDG_RUNTIME_DIR": str(home)}
    log = open(home / "pulseaudio.log", "wb")
    server = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--disable-shm=yes",
            "--use-pid-file=no",
            "-L",
            f"module-null-sink sink_name={SINK} rate={RATE} channels=1",
            "-L",
            f"module-native-protocol-unix socket={socket} auth-anonymous=1",
        ],
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_until(lambda: socket.exists() or server.poll() is not None, 15, message="the PulseAudio socket")
        if server.poll() is not None:
            pytest.fail(f"pulseaudio exited: {(home / 'pulseaudio.log').read_text(errors='replace')[-2000:]}")
        asound = home / "asound.conf"
        asound.write_text("</usr/share/alsa/alsa.conf>\npcm.!default { type pulse }\nctl.!default { type pulse }\n")
        yield {**env, "PULSE_SERVER": f"unix:{socket}", "ALSA_CONFIG_PATH": str(asound)}
    finally:
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        log.close()


def test_tts_plays_through_a_sound_device(ros, launch_node, pulse, tmp_path):
    recording = tmp_path / "monitor.raw"
    with open(recording, "wb") as out:
        recorder = subprocess.Popen(
            ["parec", "-d", f"{SINK}.monitor", "--format=s16le", f"--rate={RATE}", "--channels=1", "--latency-msec=20"],
            stdout=out,
            env={**os.environ, **pulse},
        )
        diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
        try:
            # A roomy device buffer: this test is about the audio path, not interrupt speed, and
            # the shared test machine is busy enough to starve a 40 ms buffer now and then.
            node = launch_node(
                "fay_ros.nodes.tts",
                {"output_device": "auto", "wav_dir": str(tmp_path), "device_latency": 0.15},
                env=pulse,
            )
            node.wait_ready()
            assert "audio goes to sound device" in node.output(), node.output()
            # Its health names the device it opened (the hardware id: the output's description).
            state = diagnostics.wait_for_match(
                lambda a: any(s.name == "fay/tts: state" and s.message == "ready" for s in a.status),
                what="fay/tts: state ready on /diagnostics",
            )
            [status] = [s for s in state.status if s.name == "fay/tts: state"]
            assert status.hardware_id.startswith("sound device "), status.hardware_id
            speaking = ros.collect(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
            tracks = ros.collect(VisemeTrack, topics.VISEMES)
            replies = ros.publisher(Utterance, topics.REPLY)
            ros.wait_for_subscribers(replies)
            speaking.wait_for_match(lambda m: not m.speaking, what="the latched initial state")
            # The recorder connects asynchronously; it records silence once it is listening.
            wait_until(lambda: recording.stat().st_size >= RATE // 5 * 2, 10, message="the monitor recorder to start")
            replies.publish(
                Utterance(
                    conversation_id="dev", seq=0, text="Testing the speaker, one two three.", is_first=True, is_end=True
                )
            )
            speaking.wait_for_match(lambda m: m.speaking, what="speaking=true")
            recorded_at_start = recording.stat().st_size
            speaking.wait_for(lambda msgs: len(msgs) >= 3 and not msgs[-1].speaking, what="speaking true then false")
            # The monitor reaches the recorder a little after the speaker: wait for the tail.
            needed = recorded_at_start + 2 * len(read_wav(tmp_path / "dev_0.wav").samples) + 2 * RATE // 2
            wait_until(
                lambda: recording.stat().st_size >= needed,
                10,
                message=lambda: f"{needed} bytes recorded, have {recording.stat().st_size}",
            )
        finally:
            recorder.terminate()
            recorder.wait(5)
    assert [(m.speaking, m.utterance_id) for m in speaking.messages] == [(False, ""), (True, "dev:0"), (False, "")]
    track = tracks.wait_for_count(1)[0]
    on, off = (from_time_msg(m.header.stamp) for m in speaking.messages[1:])
    assert from_time_msg(track.header.stamp) == pytest.approx(on, abs=1e-6)
    assert off - on == pytest.approx(track.duration, abs=1e-3)
    played = read_wav(tmp_path / "dev_0.wav").samples
    heard = np.fromfile(recording, dtype="<i2").astype(np.float64)
    # Find the sentence in the recording by its loudness envelope (10 ms RMS): the path
    # through PulseAudio may resample, which changes samples near Nyquist but not the
    # envelope. A different sentence scores about 0.4 here; the played one about 1.0.
    # A starved device buffer (the 2-core machine is busy) makes the sink play digital silence
    # for a moment and shifts the rest of the sentence. Runs of digital silence are cut from
    # both signals before comparing, so a gap in playback is not taken for another sentence.
    heard_env, played_env = _envelope(_without_silence(heard)), _envelope(_without_silence(played.astype(np.float64)))
    # An underrun on a starved machine can also lose a moment of the sentence (the CI log then
    # says "ALSA ... underrun occurred"): most of it must still be there, and match.
    assert len(heard_env) >= 0.6 * len(played_env), (
        f"the recording holds {len(heard_env)} of the sentence's {len(played_env)} envelope frames"
    )
    if len(heard_env) >= len(played_env):
        # Nothing lost: the whole sentence is in the recording, in one piece.
        windows = (heard_env[k : k + len(played_env)] for k in range(len(heard_env) - len(played_env) + 1))
        # (A window of digital silence has no correlation, NaN, and would stop max() on the first
        # window: the recording starts long before the sentence when the machine is slow to speak.)
        similarity = max((np.corrcoef(window, played_env)[0, 1] for window in windows if window.std() > 0), default=0)
        # (a different sentence scores about 0.4)
        assert similarity > 0.95, (
            f"the device did not play the synthesized sentence (envelope correlation {similarity:.2f})"
        )
    else:
        # A lost moment joins the sentence's pieces on either side of it, so no one alignment
        # fits the whole (one lost 200 ms scored 0.37 against it): each quarter second of the
        # recording must be found in the sentence, in its order (a different sentence: under half
        # found; three lost moments in 1.8 s of speech: 80% found, 75% of those in order).
        found, order = _pieces_in_order(heard_env, played_env)
        assert found >= 0.7 and order >= 0.7, (
            f"the device did not play the synthesized sentence ({found:.0%} of the recording's quarter "
            f"seconds found in it, {order:.0%} in its order)"
        )


def _pieces_in_order(heard_env: np.ndarray, played_env: np.ndarray, piece: int = 25) -> tuple[float, float]:
    """Of the recording's pieces (`piece` envelope frames, 250 ms) that are not digital silence:
    the share found in the played envelope (correlation >= 0.9 at some offset), and the share of
    the found pieces that are in the sentence's order."""
    offsets, pieces = [], 0
    for start in range(0, len(heard_env) - piece + 1, piece):
        window = heard_env[start : start + piece]
        if window.std() == 0:
            continue
        pieces += 1
        candidates = (
            (np.corrcoef(window, played_env[k : k + piece])[0, 1], k)
            for k in range(len(played_env) - piece + 1)
            if played_env[k : k + piece].std() > 0
        )
        similarity, offset = max(candidates, default=(0.0, -1))
        if similarity >= 0.9:
            offsets.append(offset)
    # the longest run of them in the sentence's order (a longest increasing subsequence)
    tails: list[int] = []
    for offset in offsets:
        at = bisect.bisect_left(tails, offset)
        tails[at : at + 1] = [offset]
    return len(offsets) / max(1, pieces), len(tails) / max(1, len(offsets))


def _envelope(audio: np.ndarray, hop: int = RATE // 100) -> np.ndarray:
    frames = len(audio) // hop
    return np.sqrt((audio[: frames * hop].reshape(frames, hop) ** 2).mean(axis=1))


def _without_silence(audio: np.ndarray, run: int = RATE // 200) -> np.ndarray:
    """The audio without its runs of digital silence (|sample| <= 1) of 5 ms or more."""
    quiet = np.abs(audio) <= 1
    # Length of the quiet run each sample belongs to: label runs by their start, count each label.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]])))
    keep = np.ones(len(audio), dtype=bool)
    for begin, stop in zip(edges[::2], edges[1::2]):
        if stop - begin >= run:
            keep[begin:stop] = False
    return audio[keep]
