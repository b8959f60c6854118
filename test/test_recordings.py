"""A person's own recordings, in the formats their recorder, phone or browser writes: the real
recordings of test/data/speech encoded by FFmpeg's real encoders (PyAV) as FLAC, MP3, Ogg Opus,
M4A/AAC and WebM, a float and a WAVE_FORMAT_EXTENSIBLE WAV; read by the one recording reader
(common.wav.read_audio), heard as the WAV is, and found in the layouts speech corpora ship
(LibriSpeech, Kaldi/AISHELL transcript lists, Common Voice) by `fay-ros transcribe --bench`."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from encoded import encode
from fay_ros.common.wav import AudioFormatError, downmix, read_audio, read_wav
from fay_ros.hearing.clip_bench import (
    TranscriptListError,
    audio_files,
    find_clips,
    joined,
    read_transcript_list,
    stream_finals,
    transcribe_stream,
)
from fay_ros.hearing.scoring import score
from fay_ros.hearing.sources import WavFileSource
from fay_ros.hearing.whisper_backend import WhisperRecognizer

DATA = Path(__file__).resolve().parent / "data" / "speech"
RATE = 16000
# (container, codec, suffix, the codec's own rate): what phones, browsers and corpora write
LOSSY = [
    ("mp3", "mp3", ".mp3", RATE),  # Common Voice
    ("ogg", "libopus", ".ogg", 48000),  # a messenger's voice note
    ("ipod", "aac", ".m4a", RATE),  # a phone's voice memo
    ("webm", "libopus", ".webm", 48000),  # a browser's MediaRecorder
]


@pytest.fixture(scope="module")
def whisper():
    return WhisperRecognizer("", language="en")


def _recording(name: str = "goforward", language: str = "en") -> np.ndarray:
    return read_wav(DATA / language / f"{name}.wav").samples


def _heard(whisper, samples: np.ndarray, rate: int) -> str:
    return joined(transcribe_stream(whisper, samples, rate))


def test_flac_is_read_sample_for_sample(tmp_path):
    """FLAC (LibriSpeech's format) is lossless: the same samples as the WAV, mono and stereo."""
    mono = _recording()
    assert np.array_equal(read_audio(encode(mono, tmp_path / "a.flac", "flac", "flac")).samples, mono)
    stereo = np.stack([mono, mono // 3], axis=1)
    path = encode(stereo, tmp_path / "b.flac", "flac", "flac")
    both = read_audio(path, mono=False)
    assert both.sample_rate == RATE and np.array_equal(both.samples, stereo)
    assert np.array_equal(read_audio(path).samples, downmix(stereo))  # (the one downmix rule)


@pytest.mark.parametrize("container, codec, suffix, rate", LOSSY, ids=[s for _, _, s, _ in LOSSY])
def test_a_compressed_recording_is_heard_as_its_wav(tmp_path, whisper, container, codec, suffix, rate):
    """A lossy recording reads at its codec's rate and length, and the recogniser hears the same
    words in it as in the WAV it was made from."""
    original = _recording("librivox_austen_0930")
    path = encode(original, tmp_path / f"memo{suffix}", container, codec, rate)
    audio = read_audio(path)
    assert audio.sample_rate == rate and audio.samples.dtype == np.int16 and audio.samples.ndim == 1
    assert abs(audio.duration - len(original) / RATE) < 0.15, audio.duration  # (AAC: 2 frames of priming and padding)
    reference = (DATA / "en" / "librivox_austen_0930.txt").read_text(encoding="utf-8")
    from_wav = _heard(whisper, original, RATE)
    from_file = _heard(whisper, audio.samples, audio.sample_rate)
    assert score(reference, from_file).errors <= score(reference, from_wav).errors + 1, (from_wav, from_file)


def wav_bytes(fmt: bytes, data: bytes) -> bytes:
    """A RIFF/WAVE file of one `fmt` chunk and one data chunk, for headers `wave` cannot write."""
    return (
        b"RIFF"
        + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data))
        + b"WAVEfmt "
        + struct.pack("<I", len(fmt))
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )


def test_float_and_extensible_wavs_are_read(tmp_path):
    """The WAVs Python's `wave` refuses: 32-bit float (an editor's default export) and
    WAVE_FORMAT_EXTENSIBLE 24-bit (a field recorder's), read through FFmpeg."""
    samples = _recording()
    floats = tmp_path / "float.wav"
    floats.write_bytes(
        wav_bytes(struct.pack("<HHIIHH", 3, 1, RATE, 4 * RATE, 4, 32), (samples / 32768.0).astype("<f4").tobytes())
    )
    with pytest.raises(AudioFormatError, match="float samples"):
        read_wav(floats)  # (the strict WAV reader still says what it is)
    heard = read_audio(floats)
    assert heard.sample_rate == RATE and np.abs(heard.samples.astype(int) - samples).max() <= 1

    pcm_guid = bytes.fromhex("0100000000001000800000aa00389b71")
    fmt = struct.pack("<HHIIHHHHI", 0xFFFE, 1, RATE, 3 * RATE, 3, 24, 22, 24, 4) + pcm_guid
    wide = (samples.astype(np.int32) << 8).astype("<i4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    extensible = tmp_path / "recorder.wav"
    extensible.write_bytes(wav_bytes(fmt, wide))
    with pytest.raises(wave.Error):
        wave.open(str(extensible))
    assert np.array_equal(read_audio(extensible).samples, samples)


def test_a_file_that_is_no_recording_names_the_file(tmp_path):
    for name, content in (("memo.mp3", b"not audio at all " * 20), ("notes.ogg", b"shopping list\n")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(AudioFormatError, match=rf"{name}: not a recording FFmpeg can decode"):
            read_audio(tmp_path / name)
    (tmp_path / "empty.flac").write_bytes(b"")
    with pytest.raises(AudioFormatError, match=r"empty\.flac: the file is empty"):
        read_audio(tmp_path / "empty.flac")
    with pytest.raises(AudioFormatError, match=r"gone\.m4a: no such audio file"):
        read_audio(tmp_path / "gone.m4a")
    (tmp_path / "junk.wav").write_bytes(b"RIFF but nothing else")
    with pytest.raises(AudioFormatError, match=r"junk\.wav: not a PCM WAV file"):  # the WAV reader's reason
        read_audio(tmp_path / "junk.wav")


def test_a_damaged_wav_is_refused_and_a_misnamed_mp3_is_heard(tmp_path):
    """A PCM WAV cut in the middle of a sample is damaged: refused with the WAV reader's reason,
    not guessed at by the decoder; an MP3 saved under a .wav name has no RIFF header and is
    decoded as what it is."""
    samples = _recording()
    whole = tmp_path / "whole.wav"
    whole.write_bytes(wav_bytes(struct.pack("<HHIIHH", 1, 1, RATE, 2 * RATE, 2, 16), samples.astype("<i2").tobytes()))
    (tmp_path / "cut.wav").write_bytes(whole.read_bytes()[:-1])
    with pytest.raises(AudioFormatError, match=r"cut\.wav: the audio data ends in the middle of a sample"):
        read_audio(tmp_path / "cut.wav")
    misnamed = encode(samples, tmp_path / "memo.mp3", "mp3", "mp3").rename(tmp_path / "memo.wav")
    heard = read_audio(misnamed)
    assert heard.sample_rate == RATE and abs(len(heard.samples) - len(samples)) < 0.1 * RATE


def test_the_mic_streams_a_voice_note_at_its_own_rate(tmp_path):
    """The mic's file source takes any recording: a 48 kHz Opus voice note streams at 16 kHz."""
    samples = _recording()
    path = encode(samples, tmp_path / "note.ogg", "ogg", "libopus", 48000)
    source = WavFileSource(str(path), RATE, 480, 1, lambda chunk: None, realtime=False)
    assert source.name == "wav:note.ogg"
    assert abs(len(source.samples) - len(samples)) < 0.1 * RATE


def _librispeech(root: Path) -> None:
    """LibriSpeech's layout: SPEAKER/CHAPTER/SPEAKER-CHAPTER-NNNN.flac and one upper-case
    SPEAKER-CHAPTER.trans.txt per chapter."""
    chapter = root / "librispeech" / "103" / "1240"
    chapter.mkdir(parents=True)
    lines = []
    for n, name in enumerate(("goforward", "cards_003")):
        encode(_recording(name), chapter / f"103-1240-000{n}.flac", "flac", "flac")
        text = (DATA / "en" / f"{name}.txt").read_text(encoding="utf-8").strip()
        lines.append(f"103-1240-000{n} {text.upper().replace('.', '').replace(',', '')}")
    (chapter / "103-1240.trans.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_corpus_layouts_are_found(tmp_path):
    _librispeech(tmp_path)
    clips = find_clips(tmp_path)
    assert [(c.name, c.reference) for c in clips] == [
        ("103-1240-0000", "GO FORWARD TEN METERS"),
        ("103-1240-0001", "SEVEN OF CLUBS"),
    ]
    # Common Voice: clips/NAME.mp3 and a TSV with path and sentence columns
    cv = tmp_path / "cv"
    (cv / "clips").mkdir(parents=True)
    encode(_recording("cards_001"), cv / "clips" / "common_voice_en_1.mp3", "mp3", "mp3")
    encode(_recording("cards_004"), cv / "clips" / "common_voice_en_2.mp3", "mp3", "mp3")
    (cv / "test.tsv").write_text(
        "client_id\tpath\tsentence\tup_votes\nabc\tcommon_voice_en_1.mp3\tTen of clubs.\t2\n", encoding="utf-8"
    )
    found = find_clips(cv, cv / "test.tsv")
    assert [(c.name, c.reference) for c in found] == [("common_voice_en_1", "Ten of clubs.")]
    assert len(audio_files(cv)) == 2  # (the other one has no reference)
    # AISHELL / Kaldi: "NAME text" lines, Chinese words spaced
    listed = tmp_path / "transcript.txt"
    listed.write_text("BAC009S0764W0121 谢谢 你\n\nBAC009S0764W0122\t明天 见\n", encoding="utf-8")
    assert read_transcript_list(listed) == {"BAC009S0764W0121": "谢谢 你", "BAC009S0764W0122": "明天 见"}


def test_a_broken_transcript_list_names_the_file_and_line(tmp_path):
    bad = tmp_path / "text"
    bad.write_text("utt1 hello there\nutt2\n", encoding="utf-8")
    with pytest.raises(TranscriptListError, match=r"text:2: expected a recording's name and its text, got 'utt2'"):
        read_transcript_list(bad)
    bad.write_text("utt1 hello there\nutt1 goodbye\n", encoding="utf-8")
    with pytest.raises(TranscriptListError, match=r"text:2: utt1 has two different texts"):
        read_transcript_list(bad)
    bad.write_bytes("utt1 ni hao\n".encode("utf-16"))
    with pytest.raises(TranscriptListError, match=r"text: not UTF-8 text"):
        read_transcript_list(bad)
    with pytest.raises(TranscriptListError, match=r"gone\.tsv: cannot read the transcript list"):
        read_transcript_list(tmp_path / "gone.tsv")


def _transcribe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "transcribe", *args], capture_output=True, text=True, timeout=180
    )


def test_transcribe_reads_a_voice_memo_and_scores_a_corpus(tmp_path):
    """`fay-ros transcribe` on a phone's M4A, and `--bench` on a LibriSpeech folder and an AISHELL-
    style list of Mandarin recordings in another format, as a new user would run them."""
    memo = encode(_recording(), tmp_path / "memo.m4a", "ipod", "aac")
    out = _transcribe(str(memo), "--language", "en")
    assert out.returncode == 0, out.stderr
    assert "(en) Go forward 10 meters." in out.stdout, out.stdout

    _librispeech(tmp_path / "corpus")
    zh = tmp_path / "corpus" / "aishell" / "wav"
    zh.mkdir(parents=True)
    encode(_recording("syllables_xiexie", "zh"), zh / "S0001W0001.ogg", "ogg", "libopus", 48000)
    shutil.copy(DATA / "zh" / "syllables_mingtian.wav", zh / "S0001W0002.wav")
    listed = tmp_path / "aishell_transcript.txt"
    listed.write_text("S0001W0001 谢谢 你\nS0001W0002 明天 见\n", encoding="utf-8")
    encode(_recording("cards_002"), tmp_path / "corpus" / "unscored.flac", "flac", "flac")
    (tmp_path / "corpus" / "broken.flac").write_bytes(b"fLaC and then nothing of the kind")
    (tmp_path / "corpus" / "broken.txt").write_text("a recording lost to a full disk", encoding="utf-8")
    out = _transcribe("--bench", str(tmp_path / "corpus"), "--references", str(listed))
    assert out.returncode == 1, out.stderr  # (one unreadable: said, and the rest still scored)
    assert "broken.flac: not a recording FFmpeg can decode" in out.stderr, out.stderr
    rows = {
        line.split()[0]: line
        for line in out.stdout.splitlines()
        if not line.startswith("total") and (" WER " in line or " CER " in line)
    }
    assert set(rows) == {"103-1240-0000", "103-1240-0001", "S0001W0001", "S0001W0002"}, out.stdout
    assert " WER   0.0% (0/4)" in rows["103-1240-0000"], rows  # "GO FORWARD TEN METERS": "10 meters" read out
    assert " CER " in rows["S0001W0001"] and "(0/3)" in rows["S0001W0001"], rows  # the spaces are not characters
    assert "4 clips; 1 recordings unreadable (above)" in out.stdout.splitlines()[-1], out.stdout
    assert "(1 of 6 recordings have no reference: left out)" in out.stderr

    missing = _transcribe("--bench", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "nowhere: no such folder" in missing.stderr
    (tmp_path / "bare").mkdir()
    shutil.copy(memo, tmp_path / "bare")
    bare = _transcribe("--bench", str(tmp_path / "bare"))
    assert bare.returncode == 2 and "none of the 1 recordings" in bare.stderr
    folder = _transcribe(str(tmp_path / "bare"))
    assert folder.returncode == 2 and "bare is a folder; to score its recordings: --bench" in folder.stderr
    alone = _transcribe(str(memo), "--references", str(listed))
    assert alone.returncode == 2 and "--references goes with --bench" in alone.stderr


def test_a_long_recording_is_heard_as_it_goes(whisper):
    """`fay-ros transcribe` prints each utterance once it is heard: the finals come out of
    `stream_finals` while the recording is still being fed, each soon after its own end, with how
    far the recording has got."""
    names = ("goforward", "cards_003", "librivox_austen_0930")
    gap = np.zeros(RATE, np.int16)
    recording = np.concatenate([part for name in names for part in (_recording(name), gap)])
    seen = []
    for finals, done in stream_finals(whisper, recording, RATE):
        seen += [(final.text, final.end_time, done) for final in finals]
    assert [text for text, _, _ in seen] == [
        "Go forward 10 meters.",
        "Seven of clubs.",
        _heard(whisper, _recording(names[2]), RATE),
    ]
    for _text, end, done in seen[:2]:
        assert end < done < end + 1.0, seen  # out within the second of silence after it
    assert seen[-1][2] <= len(recording) / RATE
