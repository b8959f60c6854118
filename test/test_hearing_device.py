"""A real sounddevice InputStream: the mic node records from a private PulseAudio server's
null-sink monitor (through ALSA's pulse plugin) while a WAV is played into that sink, and the
same samples come back on audio/raw."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from fay_msgs.msg import AudioChunk
from fay_ros.common import qos, topics
from fay_ros.common.rostime import from_time_msg
from fay_ros.common.wav import read_wav
from harness import wait_until
from synthetic_speech import speak_to_wav

RATE = 16000
pytestmark = pytest.mark.skipif(not shutil.which("pulseaudio"), reason="needs pulseaudio (scripts/apt-packages.txt)")


@pytest.fixture
def pulse(tmp_path):
    """A private PulseAudio daemon (own runtime dir, own socket) with a 16 kHz mono null sink."""
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        XDG_RUNTIME_DIR=str(tmp_path),
        PULSE_RUNTIME_PATH=str(tmp_path / "pulse"),
        PULSE_STATE_PATH=str(tmp_path / "state"),
        PULSE_SERVER=f"unix:{tmp_path}/native",
    )
    daemon = subprocess.Popen(
        [
            "pulseaudio",
            "-n",
            "--daemonize=no",
            "--exit-idle-time=-1",
            "--use-pid-file=no",
            "--disallow-exit",
            "-L",
            f"module-native-protocol-unix socket={tmp_path}/native",
            "-L",
            "module-null-sink sink_name=fay_test rate=16000 format=s16le channels=1",
            "--log-target=stderr",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "pulse.log", "wb"),
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: (
                subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0
                or daemon.poll() is not None
            ),
            20,
            message="the private PulseAudio server",
        )
        assert daemon.poll() is None, (tmp_path / "pulse.log").read_text()
        subprocess.run(["pactl", "set-default-sink", "fay_test"], env=env, check=True)
        subprocess.run(["pactl", "set-default-source", "fay_test.monitor"], env=env, check=True)
        yield env
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        try:
            daemon.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait(5)


# Longer than the null sink monitor's delay between playing a sample and a capture reading it.
MONITOR_LATENCY_S = 0.3
# module-null-sink's maximum latency: the most a sink rewind can take from a new stream's start.
SINK_REWIND_MAX_S = 2.0


def test_real_input_stream_samples_arrive_on_audio_raw(ros, launch_node, pulse, tmp_path):
    wav = tmp_path / "speech.wav"
    # PulseAudio may drop the first stretch a new stream writes into the running sink (it rewinds
    # the audio it rendered ahead, which the monitor has already passed on): up to the null sink's
    # maximum latency, 2 s, as much as 0.31 s of a sentence under load. So the sentence comes after
    # more quiet than that, and every sample of it must arrive.
    lead_in_s = SINK_REWIND_MAX_S + 0.5
    played = speak_to_wav(wav, [lead_in_s, ("Please turn on the light in the kitchen.", "en-us")], rate=RATE)
    assert np.array_equal(read_wav(wav).samples, played)
    reference = played[int(lead_in_s * RATE) :].astype(np.int64)
    audio = ros.collect(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    mic = launch_node("fay_ros.nodes.mic", {"device": "pulse"}, env=pulse)
    mic.wait_ready()
    assert "mic configured: pulse" in mic.output()
    ros.wait_for_publishers(topics.AUDIO_RAW)
    subprocess.run(["paplay", "--device=fay_test", str(wav)], env=pulse, check=True, timeout=30)
    # paplay returns once the sink has played it all: every sample is in chunks captured before
    # a moment a little later (the monitor's latency), and chunks arrive in capture order. (The
    # number of samples received says nothing: the mic captured silence before paplay started.)
    played_by = ros.node.get_clock().now().nanoseconds * 1e-9 + MONITOR_LATENCY_S

    def received():
        return (
            np.concatenate([np.asarray(m.data, dtype=np.int64) for m in audio.messages])
            if audio.messages
            else np.zeros(0, dtype=np.int64)
        )

    wait_until(
        lambda: audio.messages and from_time_msg(audio.messages[-1].header.stamp) > played_by,
        20,
        message="audio/raw captured after the whole sentence played",
    )
    got = received()
    assert all(m.sample_rate == RATE and m.channels == 1 and m.header.frame_id == "mic" for m in audio.messages)
    # Align with a stretch from the middle of the sentence, then compare sample by sample.
    template = reference[len(reference) // 3 : len(reference) // 3 + RATE // 2]
    lag = int(np.argmax(np.correlate(got.astype(float), template.astype(float), "valid"))) - len(reference) // 3
    overlap_start = max(0, -lag)
    segment = got[max(lag, 0) : lag + len(reference)]
    # All of it, bit-exact (16 kHz s16 end to end, no resampling, unity volume).
    assert overlap_start == 0 and len(segment) == len(reference), (lag, len(segment), len(reference))
    assert np.array_equal(segment, reference)
