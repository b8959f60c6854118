"""faster-whisper backend (CTranslate2), tuned for short spoken utterances on a small CPU.

Whisper's encoder normally sees a 30 s window whatever the utterance length. An utterance
here is a few seconds, so the encoder gets only the utterance plus `context_pad_s` of padding
(CTranslate2 accepts shorter inputs): about 5x less work for the same text on 2-5 s of speech.
Decoding is greedy (beam_size 1) with no temperature fallback, a token budget proportional to
the audio length and a repetition guard, so a bad input cannot loop for seconds. Utterances
of `long_form_s` (10 s) or more go through faster-whisper's timestamped long-form path: decoded
in one go without timestamps, long utterances with pauses lost or garbled words (WER 7-29 % on
12-27 s of LibriVox with 0.6-3 s pauses, against 0-3 % long-form, for about twice the time;
docs/BENCHMARKS.md, real speech).

Language: a fixed code ("en", "zh", ...), or "auto" = Whisper's language detection restricted
to `auto_languages` (a bilingual companion should not answer in Thai because a Mandarin
sentence was unclear). Chinese output is converted to Simplified characters by default
(OpenCC; `chinese_script` traditional for Traditional, as_is for Whisper's own choice): Whisper
base writes Traditional for about a third of Mandarin sentences. A Simplified prompt for Chinese
decodes (`zh_prompt`, e.g. ZH_PROMPT) is there but off: measured with the base model it only
leaked its own words into transcripts ("以下是文字。") and raised the CER (47 % -> 50-57 % on
the espeak Mandarin set of test_hearing_asr).

Hot words (the companion's name, its owners' names) go before the prompt as faster-whisper's
`hotwords` do, so the decoder spells them as given. A phrase that comes back three or more times
in a row (Whisper's repetition loop: "Fail again. Fail again. Fail again.") is kept once.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

import numpy as np

from .audio import ASR_RATE, to_float
from .models import ModelError, resolve_whisper_model
from .recognition import Recognition, Word

FRAMES_PER_SECOND = 100  # Whisper log-mel frames
MAX_FRAMES = 3000  # the encoder's 30 s window
# (repetition_penalty, no_repeat_ngram_size) of the first decode; a loop (compression ratio
# over 2.4) is decoded again with (1.5, 2).
FIRST_PASS = (1.1, 3)
TOKENS_PER_SECOND = 12  # generous budget for fast speech in either language
CHINESE_SCRIPTS = ("simplified", "traditional", "as_is")
# A prompt that primes a Chinese decode towards Simplified characters and punctuation ("the
# following are Mandarin sentences"), for `zh_prompt`; Traditional users get it converted.
ZH_PROMPT = "以下是普通话的句子。"
OPENCC_CONFIG = {"simplified": "t2s", "traditional": "s2tw"}
# Utterances this long (s) or longer are decoded with timestamps (faster-whisper's long form).
LONG_FORM_S = 10.0
# An utterance this long (s) whose transcript has fewer than these characters (Chinese, Japanese)
# or words per second of speech was cut short by the decoder (normal speech: 3-6 characters,
# 2-3 words a second); it is decoded again with timestamps, which goes on to the end.
LONG_UTTERANCE_S = 6.0
MIN_CHARS_PER_S = 2.0
MIN_WORDS_PER_S = 1.0
CHARACTER_LANGUAGES = ("zh", "ja", "yue")
# A phrase repeated back to back this many times or more is a decoding loop, kept once.
LOOP_REPEATS = 3
# The settled words of an utterance a decode reads as its prompt (their end, in characters):
# Whisper's own prompt holds about 220 tokens.
PREVIOUS_CHARS = 400
# A settled part's ending that only marks the pause Whisper heard there, not the sentence's
# punctuation ("He might have been made..." + "still more respectable").
PAUSE_MARKS = ("...", "…")
_PIECE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff][^\w\s]*\s*|[^\s\u3400-\u4dbf\u4e00-\u9fff]+\s*|\s+")


@lru_cache(maxsize=4)
def _converter(config: str):
    import opencc

    return opencc.OpenCC(config)


def convert_script(text: str, script: str) -> str:
    """Chinese text in the script asked for ("simplified", "traditional"; "as_is" = unchanged)."""
    if script == "as_is" or not text:
        return text
    return _converter(OPENCC_CONFIG[script]).convert(text)


def collapse_repeats(text: str, min_repeats: int = LOOP_REPEATS) -> str:
    """`text` with any phrase of two or more words (or Chinese characters) that comes back
    `min_repeats` times or more in a row kept once. Single words repeat in real speech ("no no
    no", 对对对) and are left alone; case and punctuation do not hide a repeat. Phrases that
    start a sentence or clause are looked for first, so "Fail again. Fail again. Fail again."
    keeps "Fail again.", not "again. Fail"."""
    return _collapse(_collapse(text, min_repeats, at_clause=True), min_repeats, at_clause=False)


def _collapse(text: str, min_repeats: int, at_clause: bool) -> str:
    pieces = _PIECE.findall(text)
    keys = [re.sub(r"[\W_]", "", p.lower()) for p in pieces]
    out: list[str] = []
    i = 0
    while i < len(pieces):
        starts_clause = i == 0 or bool(re.search(r"[^\w\s]\s*$", pieces[i - 1]))
        for n in range(2, (len(pieces) - i) // min_repeats + 1) if starts_clause or not at_clause else ():
            phrase = keys[i : i + n]
            if sum(bool(k) for k in phrase) < 2:
                continue
            count = 1
            while keys[i + count * n : i + (count + 1) * n] == phrase:
                count += 1
            if count >= min_repeats:
                last = pieces[i + count * n - 1]  # keep the last copy's ending (its full stop)
                out += pieces[i : i + n - 1] + [last]
                i += count * n
                break
        else:
            out.append(pieces[i])
            i += 1
    return "".join(out)


def _skipped(text: str, language: str, samples: np.ndarray) -> bool:
    """A decode of a second or more of voice after settled words came out with fewer words (or
    characters) a second than anyone speaks."""
    seconds = voiced_seconds(to_float(samples))
    return seconds >= 1.0 and _too_few(text, language, seconds)


def join_texts(texts: list[str], language: str) -> str:
    """The transcripts of consecutive parts of one utterance as one: a pause mark at a part's
    end is dropped, and the parts are spaced apart (not in Chinese or Japanese)."""
    parts = []
    for i, text in enumerate(texts):
        text = text.strip()
        if i < len(texts) - 1:
            for mark in PAUSE_MARKS:
                text = text.removesuffix(mark).rstrip()
        if text:
            parts.append(text)
    return ("" if language in CHARACTER_LANGUAGES else " ").join(parts)


def _units(text: str, language: str) -> int:
    """Characters (Chinese, Japanese) or words (the rest) in a transcript."""
    if language in CHARACTER_LANGUAGES:
        return len(re.findall(r"\w", text))
    return len(text.split())


def voiced_seconds(audio: np.ndarray) -> float:
    """Seconds of 20 ms frames within 30 dB of the loudest one (float audio): how much speech
    a transcript should cover."""
    frame = ASR_RATE // 50
    n = len(audio) // frame
    if n == 0:
        return 0.0
    rms = np.sqrt(np.mean(np.square(audio[: n * frame].reshape(n, frame)), axis=1))
    return float(np.count_nonzero(rms > max(rms.max() * 10 ** (-30 / 20), 1e-4))) / 50


def _looks_cut(text: str, language: str, audio: np.ndarray) -> bool:
    """A transcript far shorter than the speech of a long utterance: the decode stopped early."""
    if len(audio) < LONG_UTTERANCE_S * ASR_RATE:
        return False
    return _too_few(text, language, voiced_seconds(audio))


def _too_few(text: str, language: str, seconds: float) -> bool:
    """Fewer characters (Chinese, Japanese) or words in `text` than anyone says in `seconds` of voice."""
    floor = MIN_CHARS_PER_S if language in CHARACTER_LANGUAGES else MIN_WORDS_PER_S
    return _units(text, language) < floor * seconds


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / max(1, len(zlib.compress(data)))


class WhisperRecognizer:
    streaming = False

    def __init__(
        self,
        model: str = "",
        language: str = "auto",
        auto_languages: tuple[str, ...] | list[str] = ("en", "zh"),
        compute_type: str = "int8",
        cpu_threads: int = 1,
        beam_size: int = 1,
        word_timestamps: bool = True,
        initial_prompt: str = "",
        context_pad_s: float = 3.0,
        chinese_script: str = "simplified",
        hotwords: tuple[str, ...] | list[str] = (),
        zh_prompt: str = "",
        long_form_s: float = LONG_FORM_S,
        partial_interval_s: float = 0.0,
        sample_rate: int = ASR_RATE,
    ) -> None:
        if sample_rate != ASR_RATE:
            raise ValueError(f"the whisper backend takes {ASR_RATE} Hz audio (got {sample_rate})")
        if chinese_script not in CHINESE_SCRIPTS:
            raise ValueError(f"chinese_script must be one of {CHINESE_SCRIPTS} (got {chinese_script!r})")
        self.model_dir = resolve_whisper_model(model)
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import _LANGUAGE_CODES

        try:
            self._model = WhisperModel(
                str(self.model_dir),
                device="cpu",
                compute_type=compute_type,
                cpu_threads=cpu_threads,
                num_workers=1,
                local_files_only=True,  # never the network: the model is a local directory
            )
        except (RuntimeError, ValueError, OSError) as exc:
            raise ModelError(
                f"whisper model at {self.model_dir} is corrupt or unreadable: CTranslate2 could not "
                f"load it ({exc}); reinstall it (see models/README.md)"
            ) from None
        multilingual = self._model.model.is_multilingual
        known = set(_LANGUAGE_CODES) if multilingual else {"en"}
        wanted = [language] if language != "auto" else list(auto_languages)
        unknown = [code for code in wanted if code not in known]
        if unknown:
            raise ValueError(f"language(s) {unknown} not supported by the whisper model at {self.model_dir}")
        self.language = language
        self.auto_languages = tuple(auto_languages)
        self.beam_size = beam_size
        self.word_timestamps = word_timestamps
        self.initial_prompt = initial_prompt
        self.context_pad_frames = int(context_pad_s * FRAMES_PER_SECOND)
        self.chinese_script = chinese_script
        self.hotwords = ", ".join(w.strip() for w in hotwords if w.strip())
        self.zh_prompt = zh_prompt.strip()
        self.long_form_s = long_form_s
        self.partial_interval = int(partial_interval_s * ASR_RATE)
        self.sample_rate = ASR_RATE
        self.streaming = self.partial_interval > 0
        self._chunks: list[np.ndarray] = []
        self._buffered = 0
        self._next_partial = self.partial_interval
        self._settled: list[tuple[Recognition, float]] = []  # (decode, its start in s): see `settle`
        self._settled_s = 0.0
        self._peeked: tuple[Recognition, int] | None = None  # the last peek and the samples it heard
        self._latest = Recognition("")  # the latest decode of the audio after the settled part
        self._warm_up()

    def _warm_up(self) -> None:
        """Decode one second of faint noise once, so the first real utterance does not pay
        CTranslate2's first-call cost (seconds on a small CPU) in the person's wait."""
        noise = np.random.default_rng(0).normal(0.0, 30.0, ASR_RATE).astype(np.int16)
        self.transcribe(noise)

    # -- Recognizer interface -------------------------------------------------------------
    def start(self) -> None:
        self._chunks, self._buffered = [], 0
        self._next_partial = self.partial_interval
        self._settled, self._settled_s, self._peeked = [], 0.0, None

    def accept(self, samples: np.ndarray) -> str | None:
        self._chunks.append(np.asarray(samples, dtype=np.int16))
        self._buffered += len(samples)
        if self.partial_interval and self._buffered >= self._next_partial:
            self._next_partial = self._buffered + self.partial_interval
            return self._utterance(self._audio(), words=False).text or None
        return None

    def peek(self) -> Recognition | None:
        # the text first (the turn judgement and speech/speculative need only it); the words
        # are aligned when this decode becomes the final
        audio = self._audio()
        heard = self._utterance(audio, defer_words=True)
        self._peeked = (self._latest, len(audio))
        return heard

    def settle(self) -> bool:
        """The audio of the last peek, and what it heard, are settled: later decodes of this
        utterance hear only the audio after it (the settled words before it as their prompt)
        and put those words first. The caller settles at a pause the person spoke on after,
        so a long utterance costs the decode of its last part only, not of all of it again
        (the JFK inaugural line, 11 s: 1.2 s a decode, of its last phrase 0.2 s). False
        when there is nothing to settle (no peek since the last audio, or it heard no words)."""
        if self._peeked is None or not self._peeked[0].text.strip():
            return False
        heard, length = self._peeked
        self._peeked = None
        rest = self._audio()[length:]
        self._chunks, self._buffered = [rest], len(rest)
        self._settled.append((heard, self._settled_s))
        self._settled_s += length / ASR_RATE
        return True

    def finish(self) -> Recognition:
        audio = self._audio()
        heard = self._utterance(audio).with_words()
        self.start()
        return heard

    def _audio(self) -> np.ndarray:
        return np.concatenate(self._chunks) if self._chunks else np.zeros(0, dtype=np.int16)

    def _utterance(self, audio: np.ndarray, words: bool | None = None, defer_words: bool = False) -> Recognition:
        """The open utterance: its settled words, then the decode of `audio` (what came after
        them, decoded in their language with them as the prompt). Leaves that decode alone in
        `_latest` (what `settle` keeps)."""
        if not self._settled:
            self._latest = self.transcribe(audio, words, defer_words)
            return self._latest
        language = self._settled[0][0].language
        said = join_texts([heard.text for heard, _ in self._settled], language)
        rest = self.transcribe(audio, words, True, previous=said, language=language)
        if _skipped(rest.text, language, audio):
            # Whisper leaves out what its prompt already says ("... what your country can do for
            # you" + "ask what you can do for your country" came out as "country."): the audio
            # alone then
            alone = self.transcribe(audio, words, True, language=language)
            if _units(alone.text, language) > _units(rest.text, language):
                rest = alone
        self._latest = rest
        parts = [*self._settled, (rest, self._settled_s)]
        text = join_texts([heard.text for heard, _ in parts], language)
        units = [max(1, _units(heard.text, language)) for heard, _ in parts]
        confidence = float(np.average([heard.confidence for heard, _ in parts], weights=units))

        def aligned() -> list[Word]:
            return [
                Word(w.word, round(w.start + at, 3), round(w.end + at, 3), w.confidence)
                for heard, at in parts
                for w in heard.with_words().words
            ]

        words = self.word_timestamps if words is None else words
        if not words:
            return Recognition(text, language, confidence)
        if defer_words:
            return Recognition(text, language, confidence, align=aligned)
        return Recognition(text, language, confidence, aligned())

    # -- decoding -------------------------------------------------------------------------
    def transcribe(
        self,
        samples: np.ndarray,
        words: bool | None = None,
        defer_words: bool = False,
        previous: str = "",
        language: str | None = None,
    ) -> Recognition:
        """Recognise one utterance (int16, 16 kHz mono); `defer_words`: leave the word timings
        to `Recognition.with_words()`. `previous`: the words said just before this audio (the
        decoder reads them as its prompt), `language`: theirs (None: the configured one, or
        detected)."""
        words = self.word_timestamps if words is None else words
        audio = to_float(samples)
        fixed = language or (None if self.language == "auto" else self.language)
        if len(audio) < ASR_RATE // 10:
            return Recognition("", fixed or "")
        features = self._model.feature_extractor(audio)
        long = len(audio) >= self.long_form_s * ASR_RATE
        if features.shape[-1] > MAX_FRAMES or (long and fixed):
            return self._long_form(audio, words, fixed, previous)
        n_frames = features.shape[-1]
        width = min(MAX_FRAMES, n_frames + self.context_pad_frames)
        width += width % 2
        padded = np.zeros((features.shape[0], width), dtype=np.float32)
        padded[:, :n_frames] = features
        encoder_output = self._model.encode(padded)
        language = fixed or self._pick_language(encoder_output)
        if long:
            return self._long_form(audio, words, language, previous)

        from faster_whisper.tokenizer import Tokenizer

        tokenizer = Tokenizer(
            self._model.hf_tokenizer, self._model.model.is_multilingual, task="transcribe", language=language
        )
        initial = self._initial_prompt(language, previous)
        previous_tokens = tokenizer.encode(" " + initial) if initial else []
        prompt = self._model.get_prompt(
            tokenizer, previous_tokens, without_timestamps=True, hotwords=self.hotwords or None
        )
        budget = min(self._model.max_length - len(prompt) - 1, int(len(audio) / ASR_RATE * TOKENS_PER_SECOND) + 8)

        tokens, score, no_speech = self._generate(encoder_output, prompt, tokenizer, budget, *FIRST_PASS)
        text = tokenizer.decode(tokens).strip()
        if compression_ratio(text) > 2.4:  # a repetition loop: decode again, discouraging repeats harder
            tokens, score, no_speech = self._generate(encoder_output, prompt, tokenizer, budget, 1.5, 2)
            text = tokenizer.decode(tokens).strip()
        kept = collapse_repeats(text)
        if kept != text:  # a loop cut out: the words are aligned on what is kept
            text, tokens = kept, tokenizer.encode((" " if tokenizer.decode(tokens[:1]).startswith(" ") else "") + kept)
        avg_logprob = float(score)
        if no_speech > 0.6 and avg_logprob < -1.0:
            return Recognition("", language)  # Whisper's own silence rule: nothing was said
        if _looks_cut(text, language, audio):
            # Without timestamps Whisper may end a long utterance after its first sentence:
            # the timestamped long-form decode goes on to the end of the audio (with the same
            # prompt: the settled words said before this audio, their names and their script).
            whole = self._long_form(audio, words, language, previous)
            if _units(whole.text, language) > _units(text, language):
                return whole

        def aligned() -> list[Word]:
            return [
                Word(self._script(w.word, language), w.start, w.end, w.confidence)
                for w in self._align(tokenizer, tokens, encoder_output, n_frames, len(audio) / ASR_RATE)
            ]

        confidence = float(np.exp(min(0.0, avg_logprob)))
        if not (words and tokens):
            return Recognition(self._script(text, language), language, confidence)
        if defer_words:
            return Recognition(self._script(text, language), language, confidence, align=aligned)
        return Recognition(self._script(text, language), language, confidence, aligned())

    def _generate(self, encoder_output, prompt, tokenizer, budget, repetition_penalty, no_repeat_ngram):
        result = self._model.model.generate(
            encoder_output,
            [prompt],
            beam_size=self.beam_size,
            max_length=len(prompt) + budget,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=[-1],
            repetition_penalty=repetition_penalty,
            no_repeat_ngram_size=no_repeat_ngram,
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        return tokens, (result.scores[0] if result.scores else 0.0), result.no_speech_prob

    def _pick_language(self, encoder_output) -> str:
        if self.language != "auto":
            return self.language
        if not self._model.model.is_multilingual:
            return "en"
        ranked = self._model.model.detect_language(encoder_output)[0]  # [(token "<|en|>", prob), ...]
        allowed = set(self.auto_languages)
        for token, _prob in ranked:
            code = token[2:-2]
            if not allowed or code in allowed:
                return code
        return self.auto_languages[0]

    def _align(self, tokenizer, tokens, encoder_output, n_frames: int, duration: float) -> list[Word]:
        from faster_whisper.transcribe import merge_punctuations

        alignment = self._model.find_alignment(tokenizer, [tokens], encoder_output, n_frames)[0]
        merge_punctuations(alignment, "\"'“¿([{-", "\"'.。,，!！?？:：”)]}、")
        out = []
        for item in alignment:
            word = item["word"].strip()
            if not word:
                continue
            start = float(min(max(item["start"], 0.0), duration))
            end = float(min(max(item["end"], start), duration))
            out.append(Word(word, round(start, 3), round(end, 3), float(item.get("probability", 0.0))))
        return out

    def _initial_prompt(self, language: str | None, previous: str = "") -> str:
        """The prompt of a decode: a Chinese one starts with `zh_prompt` (in the script asked
        for), then the configured `initial_prompt`, then the words said just before (`previous`,
        their last PREVIOUS_CHARS)."""
        parts = [self.initial_prompt.strip()]
        if language == "zh" and self.zh_prompt:
            parts.insert(0, convert_script(self.zh_prompt, self.chinese_script))
        prompt = "".join(p for p in parts if p)
        previous = previous.strip()[-PREVIOUS_CHARS:]
        return f"{prompt} {previous}".strip() if previous else prompt

    def _script(self, text: str, language: str) -> str:
        if language != "zh":
            return text
        return convert_script(text, self.chinese_script)

    def _long_form(
        self, audio: np.ndarray, words: bool, language: str | None = None, previous: str = ""
    ) -> Recognition:
        """Faster-whisper's timestamped decode of a long utterance; `language` None: detected
        (`transcribe` passes the configured language)."""
        if language is None:  # from the first 30 s, among the allowed ones (as a short decode picks it)
            first = self._model.feature_extractor(audio[: ASR_RATE * 30])[:, :MAX_FRAMES]
            window = np.zeros((first.shape[0], MAX_FRAMES), dtype=np.float32)
            window[:, : first.shape[-1]] = first
            language = self._pick_language(self._model.encode(window))
        segments, _info = self._model.transcribe(
            audio,
            language=language,
            beam_size=self.beam_size,
            word_timestamps=words,
            temperature=0.0,
            condition_on_previous_text=False,
            initial_prompt=self._initial_prompt(language, previous) or None,
            hotwords=self.hotwords or None,
            vad_filter=False,
        )
        segments = list(segments)
        text = collapse_repeats("".join(s.text for s in segments).strip())
        word_list = [
            Word(self._script(w.word.strip(), language), w.start, w.end, w.probability)
            for s in segments
            for w in (s.words or [])
            if w.word.strip()
        ]
        confidence = float(np.exp(np.mean([s.avg_logprob for s in segments]))) if segments else 0.0
        return Recognition(self._script(text, language), language, min(confidence, 1.0), word_list)
