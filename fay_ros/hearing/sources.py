"""Where the microphone's samples come from: a sounddevice input stream or a recording (a WAV,
or any format common.wav's `read_audio` decodes) played in real time (so the whole graph runs
on a headless machine)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..common.errors import ConfigError
from ..common.wav import AudioFormatError, read_audio
from .audio import resample

# callback(samples int16 (frames,) or (frames, channels), capture_time_monotonic)
ChunkCallback = Callable[[np.ndarray, float], None]


class NoInputDevice(ConfigError, RuntimeError):
    """No usable input device; the message lists the devices sounddevice sees."""


def describe_devices() -> str:
    import sounddevice as sd

    try:
        devices = sd.query_devices()
    except Exception as exc:  # noqa: BLE001 - PortAudio errors vary by host API
        return f"  (cannot list devices: {exc})"
    if len(devices) == 0:
        return "  (none: PortAudio sees no audio devices at all)"
    lines = []
    for d in devices:
        kind = []
        if d["max_input_channels"]:
            kind.append(f"in {d['max_input_channels']}ch")
        if d["max_output_channels"]:
            kind.append(f"out {d['max_output_channels']}ch")
        lines.append(
            f"  [{d['index']}] {d['name']} ({', '.join(kind) or 'no channels'}, {d['default_samplerate']:.0f} Hz)"
        )
    return "\n".join(lines)


def resolve_input_device(spec: str) -> int:
    """'' = the default input; a number = that index; text = first input whose name contains it."""
    import sounddevice as sd

    try:
        devices = list(sd.query_devices())
    except Exception:  # noqa: BLE001
        devices = []
    inputs = [d for d in devices if d["max_input_channels"] > 0]
    hint = (
        "devices seen:\n"
        + describe_devices()
        + "\nSet parameter 'device' to one of the input devices, or use source:=<file.wav> to stream a WAV file."
    )
    if not inputs:
        raise NoInputDevice("no audio input device found; " + hint)
    if spec.strip() == "":
        default = sd.default.device[0] if isinstance(sd.default.device, (list, tuple)) else sd.default.device
        if isinstance(default, int) and default >= 0 and devices[default]["max_input_channels"] > 0:
            return default
        return inputs[0]["index"]
    if spec.strip().lstrip("-").isdigit():
        index = int(spec)
        if any(d["index"] == index for d in inputs):
            return index
        raise NoInputDevice(f"audio device {index} is not an input device; " + hint)
    for d in inputs:
        if spec.lower() in d["name"].lower():
            return d["index"]
    raise NoInputDevice(f"no input device matches {spec!r}; " + hint)


class SoundDeviceSource:
    """A real PortAudio input stream; chunks arrive on PortAudio's thread."""

    def __init__(self, device: str, sample_rate: int, chunk_size: int, channels: int, callback: ChunkCallback) -> None:
        import sounddevice as sd

        self.device = resolve_input_device(device)
        self.name = sd.query_devices(self.device)["name"]
        self._callback = callback
        self.overflows = 0
        try:
            self._stream = sd.InputStream(
                device=self.device,
                samplerate=sample_rate,
                blocksize=chunk_size,
                channels=channels,
                dtype="int16",
                callback=self._on_audio,
            )
        except Exception as exc:  # noqa: BLE001 - PortAudio error text is the useful part
            raise NoInputDevice(
                f"cannot open input device [{self.device}] {self.name} at {sample_rate} Hz, "
                f"{channels} channel(s): {exc}; devices seen:\n{describe_devices()}"
            ) from None

    def _on_audio(self, indata, frames, time_info, status) -> None:
        if status.input_overflow:
            self.overflows += 1
        data = indata.copy()
        self._callback(data[:, 0] if data.shape[1] == 1 else data, time.monotonic() - frames / self._stream.samplerate)

    def start(self) -> None:
        """Start (or resume) capturing."""
        if not self._stream.active:
            self._stream.start()

    def pause(self) -> None:
        """Stop capturing; the device stays open (a lifecycle node that is deactivated)."""
        if self._stream.active:
            self._stream.stop()

    def stop(self) -> None:
        """Stop and release the device."""
        if not self._stream.closed:
            self._stream.close()


class WavFileSource:
    """Streams a WAV file in real time, chunk by chunk, as a microphone would.

    At the end of the file it loops (loop=True) or keeps streaming silence, like an open
    microphone in a quiet room, so voice activity and the recogniser see the speech end.
    """

    def __init__(
        self,
        path: str,
        sample_rate: int,
        chunk_size: int,
        channels: int,
        callback: ChunkCallback,
        loop: bool = False,
        realtime: bool = True,
    ) -> None:
        wav = read_audio(path, mono=channels == 1)
        data = wav.samples
        if channels > 1 and data.ndim == 1:
            data = np.repeat(data[:, None], channels, axis=1)
        if channels > 1 and data.shape[1] != channels:
            raise AudioFormatError(f"{path}: {data.shape[1]} channels, but the mic is set to {channels}")
        if wav.sample_rate != sample_rate:
            data = (
                resample(data, wav.sample_rate, sample_rate)
                if data.ndim == 1
                else np.stack([resample(data[:, c], wav.sample_rate, sample_rate) for c in range(channels)], axis=1)
            )
        self.name = f"wav:{Path(path).name}"
        self.samples = data
        self.rate, self.chunk, self.loop, self.realtime = sample_rate, chunk_size, loop, realtime
        self._callback = callback
        self._stop = threading.Event()
        self._playing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wav-source", daemon=True)
        self.finished = threading.Event()  # set when the file has been played once

    def start(self) -> None:
        """Start playing, or resume where it paused."""
        self._playing.set()
        if self._thread.ident is None:
            self._thread.start()

    def pause(self) -> None:
        """Hold the file where it is (a lifecycle node that is deactivated)."""
        self._playing.clear()

    def _run(self) -> None:
        period = self.chunk / self.rate
        t0 = time.monotonic()
        pos, n = 0, 0
        silence_shape = (self.chunk,) + self.samples.shape[1:]
        while not self._stop.is_set():
            if not self._playing.is_set():
                self._playing.wait()
                t0 = time.monotonic() - n * period  # resumed: pace from now on
                continue
            if pos < len(self.samples):
                block = self.samples[pos : pos + self.chunk]
                if len(block) < self.chunk:
                    block = np.concatenate([block, np.zeros((self.chunk - len(block),) + block.shape[1:], np.int16)])
                pos += self.chunk
                if pos >= len(self.samples):
                    self.finished.set()
                    if self.loop:
                        pos = 0
            else:
                block = np.zeros(silence_shape, dtype=np.int16)
            capture = t0 + n * period
            n += 1
            if self.realtime:
                # Pace to the wall clock: the chunk is "captured" when its last sample would be.
                delay = capture + period - time.monotonic()
                if delay > 0 and self._stop.wait(delay):
                    break
            self._callback(block, capture)

    def stop(self) -> None:
        self._stop.set()
        self._playing.set()  # wake a paused thread so it sees the stop
        if self._thread.is_alive():
            self._thread.join(2)
