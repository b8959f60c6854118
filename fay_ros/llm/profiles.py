"""Model profiles: which dialogue flow suits the model behind the endpoint.

- `capable`: a model that follows JSON and tool calls (a cloud model, a 7B+ local model).
  Fay's flow: chat judge (JSON) → tool loop → final reply.
- `tiny`: a model of a few hundred million parameters, like the embedded SmolLM2-135M. It
  cannot be trusted with JSON or tools, and every extra call costs a second on a small CPU.
  One streamed call per turn: memory, the user's own facts and the prestart tools are
  resolved before it (as Fay's prestart tools are), facts go in as a few plain lines,
  questions about the user's own facts are answered from the facts, decoding is greedy
  with a repetition penalty, a token cap and stop sequences, and the model's languages
  are known (a turn in another language gets an honest stock line instead of nonsense).
- `auto` (the default): `tiny` for the embedded endpoint or a model whose name says it is
  tiny, else `capable`.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from .embedded import EMBEDDED_MODEL, EMBEDDED_PORT

TINY, CAPABLE, AUTO = "tiny", "capable", "auto"
PROFILES = (AUTO, TINY, CAPABLE)

# Model names that say "a few hundred million parameters" (sizes up to ~0.6B): smollm2-135m and
# -360m are tiny, smollm2-1.7b is not.
_TINY_MODEL = re.compile(
    r"tinyllama|tinystories|(?<![\d.])(?:1[0-9]{2}|[2-5][0-9]{2}|600)m\b|(?<![\d.])0\.[1-6]b\b|"
    r"gemma-?3-?270m|qwen[\d.]*[-:_]?0\.5b|pythia-(?:70|160|410)m|gpt2(?!-(?:large|xl))",
    re.I,
)


# Model families trained on Chinese as much as on English: a tiny profile on one of them answers
# Chinese turns itself (the embedded SmolLM2 speaks English only).
_BILINGUAL_MODEL = re.compile(r"qwen|deepseek|glm|yi-|internlm|baichuan|minicpm|hunyuan", re.I)


def languages_of(model: str) -> tuple[str, ...]:
    """What a model speaks, by its name: ("en", "zh") for a Chinese-and-English family
    (`qwen2.5-1.5b-instruct`), else English only."""
    return ("en", "zh") if _BILINGUAL_MODEL.search(model or "") else ("en",)


def resolve(setting: str, base_url: str, model: str) -> str:
    """The profile to use: `setting` unless it is `auto`, then by endpoint and model name."""
    if setting not in PROFILES:
        raise ValueError(f"model profile {setting!r}: expected one of {', '.join(PROFILES)}")
    if setting != AUTO:
        return setting
    url = urlparse(base_url)
    embedded = url.hostname in ("127.0.0.1", "localhost", "::1") and url.port == EMBEDDED_PORT
    if embedded or model == EMBEDDED_MODEL or _TINY_MODEL.search(model or ""):
        return TINY
    return CAPABLE


@dataclass(frozen=True)
class TinyDecoding:
    """How the tiny profile decodes (fixed by the profile: sampling makes a 135M model ramble).

    - greedy (temperature 0): the most likely words; tiny models drift fast when sampled;
    - a repetition penalty (llama.cpp's `repeat_penalty`, and the standard
      `frequency_penalty` for other servers): greedy decoding otherwise loops;
    - a token cap: three short sentences fit in 64 tokens, and the reply guard stops the
      stream at the persona's sentence limit anyway;
    - stop sequences: the chat template's turn markers, a user label, a blank line (the
      start of a second answer or an invented dialogue)."""

    temperature: float = 0.0
    repeat_penalty: float = 1.15
    frequency_penalty: float = 0.0
    max_tokens: int = 64
    stop: tuple[str, ...] = ("<|im_start|>", "<|im_end|>", "User:", "\n\n")
    languages: tuple[str, ...] = ("en",)  # what the model speaks; other turns get an honest stock line
    max_fact_lines: int = 6  # the user's facts in the prompt, newest kept
    # Recent turns in the prompt, as a window that grows from `history_min_turns` to
    # `history_max_turns` and then drops back: between two drops each prompt extends the last
    # one, so the server's prompt cache covers everything but the new turn (a window that
    # slides by one turn changes the prompt right after the persona, every turn). Short,
    # because a tiny model copies what it sees.
    # A first sentence longer than this is spoken from its first comma on: the model writes
    # ~8 words a second here, and a 25-word first sentence would hold the voice back.
    first_clause_chars: int = 24
    history_min_turns: int = 2
    history_max_turns: int = 5
