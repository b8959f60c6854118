"""Mandarin phrases spoken by a person, one syllable at a time: how test/data/speech/zh was made.

No redistributable recording of continuous Mandarin speech could be had through the
registries this project reaches (test/data/speech/SOURCES.md lists where we looked). Debian's
`gcin-voice` (the pronunciation data of the gcin input method) has one human recording of
every Mandarin syllable in each tone, by the voice actor 羅竺 (Chu Lo) for ChionMeilin, under
CC-BY-3.0 (its `*/5.ogg`; the other voice, `*/3.ogg`, is GPL-3/LGPL-3 and not used). This
module joins those syllables into the phrases below: a syllable's own silence trimmed, words
joined with WORD_GAP_S and syllables inside a word with SYLLABLE_GAP_S. The voice is a real
person's, the prosody is not: no coarticulation between syllables, and each one in its
citation form (third-tone sandhi and 不/一 changes are written into the tones below, as a
speaker would say them).

Rebuild (the clips are stored; nothing runs this at test time):

    apt-get download gcin-voice && dpkg-deb -x gcin-voice_*.deb gcin
    .venv/bin/python test/zh_syllables.py gcin/usr/share/gcin-voice/ogg test/data/speech/zh
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RATE = 16000
VOICE = "5.ogg"  # the CC-BY-3.0 voice
SYLLABLE_GAP_S = 0.03
WORD_GAP_S = 0.12
CLAUSE_GAP_S = 0.35  # at a comma
EDGE_S = 0.25  # silence before and after the phrase
TRIM_DB = 35.0  # a syllable's own leading and trailing silence: frames this far below its peak

# Bopomofo by pinyin syllable (gcin names its folders in Bopomofo).
ZHUYIN = {
    "an": "ㄢ",
    "ba": "ㄅㄚ",
    "da": "ㄉㄚ",
    "dian": "ㄉㄧㄢ",
    "er": "ㄦ",
    "gao": "ㄍㄠ",
    "gong": "ㄍㄨㄥ",
    "hao": "ㄏㄠ",
    "he": "ㄏㄜ",
    "hen": "ㄏㄣ",
    "huan": "ㄏㄨㄢ",
    "ji": "ㄐㄧ",
    "jian": "ㄐㄧㄢ",
    "jiao": "ㄐㄧㄠ",
    "jin": "ㄐㄧㄣ",
    "kai": "ㄎㄞ",
    "le": "ㄌㄜ",
    "men": "ㄇㄣ",
    "ming": "ㄇㄧㄥ",
    "ni": "ㄋㄧ",
    "qi": "ㄑㄧ",
    "qing": "ㄑㄧㄥ",
    "qu": "ㄑㄩ",
    "san": "ㄙㄢ",
    "shi": "ㄕ",
    "shui": "ㄕㄨㄟ",
    "si": "ㄙ",
    "tian": "ㄊㄧㄢ",
    "ting": "ㄊㄧㄥ",
    "wan": "ㄨㄢ",
    "wo": "ㄨㄛ",
    "wu": "ㄨ",
    "xi": "ㄒㄧ",
    "xian": "ㄒㄧㄢ",
    "xiang": "ㄒㄧㄤ",
    "xiao": "ㄒㄧㄠ",
    "xie": "ㄒㄧㄝ",
    "xin": "ㄒㄧㄣ",
    "yi": "ㄧ",
    "yin": "ㄧㄣ",
    "yuan": "ㄩㄢ",
    "yue": "ㄩㄝ",
    "zai": "ㄗㄞ",
}

# name -> (the reference transcript, the words as spoken: pinyin with the tone said (5 =
# neutral), words split by spaces, a clause break by ","). Where the voice has no recording of
# the tone a speaker would use (no 我 in the second tone, no neutral 谢 or 们), the citation tone.
PHRASES: dict[str, tuple[str, str]] = {
    "syllables_nihao": ("你好，我叫小明。", "ni2hao3 , wo3 jiao4 xiao3ming2"),
    "syllables_tianqi": ("今天天气很好。", "jin1tian1 tian1qi4 hen2 hao3"),
    "syllables_heshui": ("我想喝水。", "wo3 xiang3 he1 shui3"),
    "syllables_jidian": ("现在几点了？", "xian4zai4 ji2dian3 le5"),
    "syllables_mingtian": ("明天见。", "ming2tian1 jian4"),
    "syllables_xiexie": ("谢谢你。", "xie4xie4 ni3"),
    "syllables_kaixin": ("我很开心。", "wo3 hen3 kai1xin1"),
    "syllables_gongyuan": ("我们去公园吧。", "wo3men2 qu4 gong1yuan2 ba5"),
    "syllables_shuzi": ("一二三四五。", "yi1 er4 san1 si4 wu3"),
    "syllables_dianshi": ("请打开电视。", "qing2 da3kai1 dian4shi4"),
    "syllables_yinyue": ("我喜欢听音乐。", "wo3 xi3huan1 ting1 yin1yue4"),
    "syllables_wanan": ("晚安。", "wan3an1"),
}


STORED = Path(__file__).resolve().parent / "data" / "speech" / "zh"
# Ten of the phrases in the order of one long turn, ending on one the recogniser gets right.
LONG_TURN = ("nihao", "tianqi", "heshui", "jidian", "gongyuan", "dianshi", "yinyue", "kaixin", "shuzi", "mingtian")


def long_turn(pause_s: float = 0.6) -> tuple[np.ndarray, str]:
    """The stored phrases of LONG_TURN with `pause_s` of silence after each (27 s at 0.6 s), and
    its reference: the long Mandarin recording of the tests and the real-speech bench."""
    from fay_ros.common.wav import read_wav

    gap = np.zeros(int(RATE * pause_s), dtype=np.int16)
    parts, refs = [], []
    for name in LONG_TURN:
        parts += [read_wav(str(STORED / f"syllables_{name}.wav")).samples, gap]
        refs.append((STORED / f"syllables_{name}.txt").read_text(encoding="utf-8").strip())
    return np.concatenate(parts), "".join(refs)


# Turns made of the stored phrases, for the turn-taking bench: (phrase, kind, words kept before
# the stop, pause s). "cut": the phrase stopped after that many words, where it is left open
# ("我想…", "请打开…"), and only silence after; "pause": the whole phrase with a thinking pause
# there. Every phrase is also a "whole" turn.
STOPS = (
    ("heshui", "cut", 2, 0.0),  # 我想
    ("gongyuan", "cut", 2, 0.0),  # 我们去
    ("dianshi", "cut", 2, 0.0),  # 请打开
    ("yinyue", "cut", 2, 0.0),  # 我喜欢
    ("jidian", "cut", 1, 0.0),  # 现在
    ("tianqi", "cut", 2, 0.0),  # 今天天气
    ("nihao", "cut", 3, 0.0),  # 你好，我叫
    ("heshui", "pause", 2, 0.8),
    ("gongyuan", "pause", 2, 0.9),
    ("dianshi", "pause", 2, 0.7),
    ("yinyue", "pause", 2, 1.0),
    ("jidian", "pause", 1, 0.6),
    ("tianqi", "pause", 2, 0.8),
    ("nihao", "pause", 3, 1.0),
    ("shuzi", "pause", 3, 0.7),  # 一二三 … 四五
)
# The phrases' word gaps are digital silence of WORD_GAP_S or more (CLAUSE_GAP_S at a comma);
# inside a word only SYLLABLE_GAP_S.
_MIN_WORD_GAP = int(RATE * (SYLLABLE_GAP_S + WORD_GAP_S) / 2)


@dataclass(frozen=True)
class SyllableTurn:
    id: str  # "syllables_heshui/cut-after-2"
    audio: np.ndarray  # from the phrase's start (its EDGE_S of silence) to its end, no silence after a cut
    speech_end: float  # s: the turn's last voiced sample
    pauses: tuple[float, ...]  # s: the thinking pause inserted
    finished: bool
    text: str  # what was said (the reference, up to the stop)


def word_gaps(samples: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) samples of each gap between two words of a stored phrase."""
    silent = np.concatenate([[False], samples == 0, [False]])
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]
    return [(a, b) for a, b in runs if b - a >= _MIN_WORD_GAP and a > 0 and b < len(samples)]


def _voiced_end(samples: np.ndarray) -> int:
    loud = np.flatnonzero(samples != 0)
    return int(loud[-1]) + 1 if len(loud) else 0


def syllable_turns() -> list[SyllableTurn]:
    """Every stored phrase whole, then each of STOPS."""
    from fay_ros.common.wav import read_wav

    def stored(name: str) -> tuple[np.ndarray, str]:
        path = STORED / f"syllables_{name}.wav"
        return read_wav(str(path)).samples, path.with_suffix(".txt").read_text(encoding="utf-8").strip()

    turns = []
    for name in PHRASES:
        audio, text = stored(name.removeprefix("syllables_"))
        turns.append(SyllableTurn(f"{name}/whole", audio, _voiced_end(audio) / RATE, (), True, text))
    for name, kind, words, pause_s in STOPS:
        audio, text = stored(name)
        gaps = word_gaps(audio)
        spoken = PHRASES[f"syllables_{name}"][1].replace(",", "").split()
        if len(gaps) != len(spoken) - 1:
            raise ValueError(f"syllables_{name}.wav: {len(gaps)} word gaps for the {len(spoken)} words {spoken}")
        start, end = gaps[words - 1]
        said = _text_up_to(text, sum(map(_syllable_count, spoken[:words])))
        if kind == "cut":
            turns.append(
                SyllableTurn(f"syllables_{name}/cut-after-{words}", audio[:start], start / RATE, (), False, said)
            )
        else:
            gap = np.zeros(int(RATE * pause_s), dtype=np.int16)
            joined = np.concatenate([audio[:start], gap, audio[start:]])
            turns.append(
                SyllableTurn(
                    f"syllables_{name}/pause-after-{words}", joined, _voiced_end(joined) / RATE, (pause_s,), True, text
                )
            )
    return turns


def _syllable_count(word: str) -> int:
    return sum(ch.isdigit() for ch in word)


def _text_up_to(text: str, syllables: int) -> str:
    """The reference up to its `syllables`th character (one character per syllable)."""
    from fay_ros.text.words import CJK_CHAR

    out, n = "", 0
    for ch in text:
        if n == syllables:
            break
        out += ch
        n += bool(CJK_CHAR.match(ch))
    return out


def folder(syllable: str) -> str:
    """gcin's folder of a pinyin syllable with its tone ("ni3" -> "ㄋㄧ3", "tian1" -> "ㄊㄧㄢ",
    "le5" -> "ㄌㄜ1": no digit is the first tone, 1 the neutral one)."""
    base, tone = syllable[:-1], syllable[-1]
    if base not in ZHUYIN or tone not in "12345":
        raise ValueError(f"unknown syllable {syllable!r} (add it to ZHUYIN)")
    return ZHUYIN[base] + {"1": "", "5": "1"}.get(tone, tone)


def _syllables(word: str) -> list[str]:
    out, start = [], 0
    for i, ch in enumerate(word):
        if ch.isdigit():
            out.append(word[start : i + 1])
            start = i + 1
    return out


def _load(path: Path) -> np.ndarray:
    raw = subprocess.run(
        ["sox", str(path), "-t", "raw", "-r", str(RATE), "-c", "1", "-b", "16", "-e", "signed-integer", "-"],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, dtype=np.int16)


def _trimmed(samples: np.ndarray) -> np.ndarray:
    frame = RATE // 100
    n = len(samples) // frame
    if n == 0:
        return samples
    x = samples[: n * frame].astype(np.float64).reshape(n, frame)
    level = 10 * np.log10(np.mean(x**2, axis=1) + 1e-9)
    loud = np.flatnonzero(level >= level.max() - TRIM_DB)
    return samples[loud[0] * frame : (loud[-1] + 1) * frame]


def phrase_audio(ogg_root: Path, spoken: str) -> np.ndarray:
    silence = lambda s: np.zeros(int(RATE * s), dtype=np.int16)  # noqa: E731
    parts = [silence(EDGE_S)]
    for token in spoken.split():
        if token == ",":
            parts[-1] = silence(CLAUSE_GAP_S)
            continue
        for syllable in _syllables(token):
            path = ogg_root / folder(syllable) / VOICE
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no recording of {syllable!r} in this voice")
            parts += [_trimmed(_load(path)), silence(SYLLABLE_GAP_S)]
        parts[-1] = silence(WORD_GAP_S)
    parts[-1] = silence(EDGE_S)
    return np.concatenate(parts)


def main(argv: list[str]) -> int:
    from fay_ros.common.wav import write_wav

    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    ogg_root, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, (text, spoken) in PHRASES.items():
        audio = phrase_audio(ogg_root, spoken)
        write_wav(out / f"{name}.wav", audio, RATE)
        (out / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
        print(f"{name}: {len(audio) / RATE:.2f} s {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
