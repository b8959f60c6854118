"""Timed phonemes -> a VisemeTrack of the 15 OVR LipSync visemes.

espeak-ng reports each phoneme in IPA with the sample where it starts in the synthesized
audio. Each phoneme maps to one OVR viseme (diphthongs to two: the glide to the second vowel
starts half-way); its mouth opening comes from Fay's Live2D table (ParamMouthOpenY, sil 0
... aa/ou 0.85). Light smoothing then makes the track look like a mouth rather than a
flicker:
  1. frames shorter than MIN_FRAME (a 12 ms pause between two Mandarin syllables, a flap)
     merge into their neighbour -- no renderer can show them at 30-60 fps anyway;
  2. runs of the same viseme coalesce;
  3. open-mouth frames blend a quarter towards the mean of their neighbours (coarticulation);
     lip closures (sil, PP) keep their value, because a mouth that never closes for
     "p/b/m" looks wrong; a short pause inside speech half-closes instead of snapping shut.

Ids and names come from fay_ros.common.viseme_names, the constants of fay_msgs/msg/Viseme.msg
(this module does not import ROS; a test checks they agree).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..common.viseme_names import VISEME_IDS

# Fay's Live2D lip-sync table: ParamMouthOpenY per OVR viseme (0 closed .. 1 wide open).
MOUTH_OPEN = {
    "sil": 0.0,
    "PP": 0.05,
    "FF": 0.2,
    "TH": 0.3,
    "DD": 0.3,
    "kk": 0.35,
    "CH": 0.3,
    "SS": 0.25,
    "nn": 0.25,
    "RR": 0.35,
    "aa": 0.85,
    "E": 0.6,
    "ih": 0.45,
    "oh": 0.7,
    "ou": 0.85,
}

MIN_FRAME = 0.025  # seconds; shorter frames merge into a neighbour
SHORT_PAUSE = 0.08  # seconds; a pause inside speech shorter than this only half-closes the mouth
BLEND = 0.25  # share of the neighbours' mean in an open-mouth frame

# IPA (as espeak-ng writes it with espeakINITIALIZE_PHONEME_IPA) -> OVR viseme. Longest
# prefix wins, so affricates and diphthongs are matched before their first letter.
_PHONEME_VISEMES: dict[str, str] = {
    # lips closed: p b m
    "p": "PP",
    "b": "PP",
    "m": "PP",
    "ɱ": "FF",
    # lip on teeth: f v
    "f": "FF",
    "v": "FF",
    "ʋ": "FF",
    "ɸ": "FF",
    "β": "FF",
    # tongue between teeth: th
    "θ": "TH",
    "ð": "TH",
    # tongue tip on the ridge: t d (flap, glottal stop: a short closure)
    "t": "DD",
    "d": "DD",
    "ɾ": "DD",
    "ʔ": "DD",
    "ʈ": "DD",
    "ɖ": "DD",
    # back of the tongue: k g, and the velar/uvular/glottal fricatives (Mandarin h = χ/x)
    "k": "kk",
    "g": "kk",
    "ɡ": "kk",
    "x": "kk",
    "χ": "kk",
    "ɣ": "kk",
    "h": "kk",
    "ɦ": "kk",
    "q": "kk",
    # post-alveolar and retroflex/alveolo-palatal sibilants: ch j sh zh (Mandarin zh ch sh j q x)
    "tʃ": "CH",
    "dʒ": "CH",
    "ʃ": "CH",
    "ʒ": "CH",
    "ʈʂ": "CH",
    "tʂ": "CH",
    "ʂ": "CH",
    "tɕ": "CH",
    "dʑ": "CH",
    "ɕ": "CH",
    "ʑ": "CH",
    "c": "CH",
    "ɟ": "CH",
    "ç": "CH",
    # alveolar sibilants: s z (Mandarin z c s)
    "ts": "SS",
    "dz": "SS",
    "s": "SS",
    "z": "SS",
    # n l
    "n": "nn",
    "l": "nn",
    "ɫ": "nn",
    "ŋ": "nn",
    "ɲ": "nn",
    "ɳ": "nn",
    "ɭ": "nn",
    "ʎ": "nn",
    # r (English approximant, Mandarin retroflex r, rhotic vowels)
    "ɹ": "RR",
    "r": "RR",
    "ɻ": "RR",
    "ʐ": "RR",
    "ʁ": "RR",
    "ɚ": "RR",
    "ɝ": "RR",
    # open vowels
    "a": "aa",
    "ɑ": "aa",
    "ɐ": "aa",
    "æ": "aa",
    "ʌ": "aa",
    "ɒ": "aa",
    "ᴀ": "aa",
    # mid front / central vowels
    "e": "E",
    "ɛ": "E",
    "ə": "E",
    "ɜ": "E",
    "ɘ": "E",
    "ɵ": "E",
    "œ": "E",
    "ø": "E",
    # close front vowels, j, and the Mandarin apical vowels of zi/zhi (ɿ ʅ, espeak "ɨ")
    "i": "ih",
    "ɪ": "ih",
    "j": "ih",
    "ɨ": "ih",
    "ᵻ": "ih",
    "ɿ": "ih",
    "ʅ": "ih",
    "ɯ": "ih",
    "ɤ": "E",
    "ʲ": "ih",
    # rounded mid vowels
    "o": "oh",
    "ɔ": "oh",
    # rounded close vowels, w, Mandarin ü
    "u": "ou",
    "ʊ": "ou",
    "w": "ou",
    "y": "ou",
    "ʏ": "ou",
    "ɥ": "ou",
    "ʉ": "ou",
}
_VOWEL_VISEMES = {"aa", "E", "ih", "oh", "ou"}
_MAX_KEY = max(len(k) for k in _PHONEME_VISEMES)
_RETROFLEX = {"ts.": "ʈʂ", "s.": "ʂ", "z.": "ʐ"}
_RETROFLEX_DOT = re.compile(r"ts\.|(?<!t)s\.|z\.")
_IGNORED = set("ˈˌːˑ.-_‿͡|‖ ˥˦˧˨˩0123456789'")


@dataclass(frozen=True)
class TimedPhoneme:
    """One phoneme of synthesized audio: start in seconds from the first sample, IPA ("" = pause)."""

    start: float
    ipa: str


@dataclass(frozen=True)
class VisemeFrame:
    id: int
    name: str
    start: float
    mouth_open: float

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "start": round(self.start, 4),
            "mouth_open": round(self.mouth_open, 3),
        }


@dataclass(frozen=True)
class VisemeTrackData:
    utterance_id: str
    frames: tuple[VisemeFrame, ...]
    duration: float

    def as_dict(self) -> dict:
        return {
            "utterance_id": self.utterance_id,
            "duration": round(self.duration, 4),
            "frames": [f.as_dict() for f in self.frames],
        }


def held_track(utterance_id: str) -> VisemeTrackData:
    """What a sentence's mouth does while its voice holds (a person talking over the robot):
    closed, from the track's stamp on. Its real track comes again, moved, when it goes on."""
    return VisemeTrackData(utterance_id, (VisemeFrame(VISEME_IDS["sil"], "sil", 0.0, 0.0),), 0.0)


def normalize_ipa(ipa: str) -> str:
    """Drop stress, length, tone and diacritic marks: only the phoneme letters remain.

    espeak-ng's Mandarin voice marks retroflex consonants with a dot ("ts." = zh, "ts.h" =
    ch, "s." = sh); those become the IPA letters before the dots are dropped.
    """
    letters = unicodedata.normalize("NFD", _RETROFLEX_DOT.sub(lambda m: _RETROFLEX[m.group(0)], ipa))
    return "".join(ch for ch in letters if ch not in _IGNORED and not unicodedata.combining(ch))


def phoneme_visemes(ipa: str) -> list[str] | None:
    """OVR viseme names for one IPA phoneme (two for a diphthong); [] for a pause; None if unknown."""
    rest = normalize_ipa(ipa)
    if not rest:
        return []
    names: list[str] = []
    while rest:
        for size in range(min(_MAX_KEY, len(rest)), 0, -1):
            name = _PHONEME_VISEMES.get(rest[:size])
            if name is not None:
                names.append(name)
                rest = rest[size:]
                break
        else:
            return None
    if len(names) == 1:
        return names
    vowels = [n for n in names if n in _VOWEL_VISEMES]
    if len(vowels) >= 2:  # diphthong or triphthong: its first and last vowel
        return [vowels[0], vowels[-1]] if vowels[0] != vowels[-1] else [vowels[0]]
    if vowels:  # syllabic or rhotic vowel (ɜɹ, ɑːɹ): the vowel then the consonant colour
        first_vowel = names.index(vowels[0])
        tail = names[first_vowel + 1 :]
        return [vowels[0], tail[0]] if tail else [vowels[0]]
    return names[:1]


def unknown_phonemes(phonemes: Iterable[TimedPhoneme]) -> set[str]:
    return {p.ipa for p in phonemes if phoneme_visemes(p.ipa) is None}


def build_track(
    utterance_id: str, phonemes: Sequence[TimedPhoneme], duration: float, min_frame: float = MIN_FRAME
) -> VisemeTrackData:
    """The smoothed viseme track of one sentence's audio.

    Unknown phonemes (none in the English and Mandarin voices; a test checks) fall back to
    the mid-open "E" so the mouth still moves.
    """
    raw: list[tuple[float, str]] = []
    ordered = sorted(phonemes, key=lambda p: p.start)
    for i, ph in enumerate(ordered):
        end = ordered[i + 1].start if i + 1 < len(ordered) else duration
        names = phoneme_visemes(ph.ipa)
        if names is None:
            names = ["E"]
        if not names:
            raw.append((ph.start, "sil"))
        elif len(names) == 1:
            raw.append((ph.start, names[0]))
        else:
            raw.append((ph.start, names[0]))
            raw.append((ph.start + (end - ph.start) / 2, names[1]))
    if not raw or raw[0][0] > 0.0:
        raw.insert(0, (0.0, "sil"))
    raw = [(min(max(t, 0.0), duration), n) for t, n in raw]
    merged = _merge_short(raw, duration, min_frame)
    return VisemeTrackData(utterance_id, tuple(_smooth(merged, duration)), duration)


def _merge_short(frames: list[tuple[float, str]], duration: float, min_frame: float) -> list[tuple[float, str]]:
    frames = _coalesce(frames)
    changed = True
    while changed and len(frames) > 1:
        changed = False
        for i, (start, _name) in enumerate(frames):
            end = frames[i + 1][0] if i + 1 < len(frames) else duration
            if end - start >= min_frame or i == len(frames) - 1:
                continue
            if i == 0 and frames[0][1] == "sil":
                continue  # the silence before the first sound: the mouth is closed anyway, keep the onset exact
            if i == 0 or (frames[i - 1][1] == "sil" and frames[i][1] != "sil"):
                # A short sound right after silence ("h" before a vowel) gives its time to
                # the next frame: the speech onset stays where the sound starts.
                frames[i + 1] = (frames[i][0], frames[i + 1][1])
                del frames[i]
            else:
                # Otherwise into the previous frame: the next onset stays exact.
                del frames[i]
            frames = _coalesce(frames)
            changed = True
            break
    return frames


def _coalesce(frames: list[tuple[float, str]]) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = []
    for start, name in frames:
        if out and out[-1][1] == name:
            continue
        if out and start <= out[-1][0]:
            out[-1] = (out[-1][0], name)
            if len(out) > 1 and out[-2][1] == name:
                out.pop()
            continue
        out.append((start, name))
    return out


def _smooth(frames: list[tuple[float, str]], duration: float) -> list[VisemeFrame]:
    targets = [MOUTH_OPEN[name] for _, name in frames]
    out = []
    for i, (start, name) in enumerate(frames):
        end = frames[i + 1][0] if i + 1 < len(frames) else duration
        prev_t = targets[i - 1] if i > 0 else 0.0
        next_t = targets[i + 1] if i + 1 < len(targets) else 0.0
        if name == "sil":
            inside = 0 < i < len(frames) - 1
            value = 0.5 * min(prev_t, next_t) if inside and end - start < SHORT_PAUSE else 0.0
        elif name == "PP":
            value = targets[i]
        else:
            value = (1 - BLEND) * targets[i] + BLEND * (prev_t + next_t) / 2
        out.append(VisemeFrame(VISEME_IDS[name], name, start, float(np.clip(value, 0.0, 1.0))))
    return out


def track_from_energy(
    utterance_id: str, samples: np.ndarray, sample_rate: int, frame_seconds: float = 0.04
) -> VisemeTrackData:
    """A coarse track from loudness alone, for engines that give no phoneme timings.

    The open-mouth viseme is chosen by the frame's level relative to the sentence's peak;
    it moves the mouth with the voice but cannot show lip closures or shapes.
    """
    duration = len(samples) / sample_rate if sample_rate else 0.0
    hop = max(1, int(frame_seconds * sample_rate))
    audio = samples.astype(np.float64)
    levels = [float(np.sqrt(np.mean(audio[i : i + hop] ** 2))) for i in range(0, len(audio), hop)]
    peak = max(levels, default=0.0) or 1.0
    raw = []
    for k, level in enumerate(levels):
        rel = level / peak
        name = "sil" if rel < 0.08 else "aa" if rel > 0.6 else "E" if rel > 0.35 else "ih" if rel > 0.18 else "nn"
        raw.append((k * hop / sample_rate, name))
    return VisemeTrackData(utterance_id, tuple(_smooth(_coalesce(raw or [(0.0, "sil")]), duration)), duration)
