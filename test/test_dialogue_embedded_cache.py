"""The embedded server (`fay-ros llm`: SmolLM2-135M served by llama.cpp) keeps the KV cache of
the prompt head between requests, and has answered a warm-up chat completion by the time
it counts as started (and prints `ready:`).

Everything is asserted on llama.cpp's own accounting (the `timings` of each answer:
prompt_n = prompt tokens computed, cache_n = prompt tokens reused; the /metrics counters),
never on wall time, which a busy CI machine makes meaningless.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
import uuid

import pytest

from fay_ros.llm.embedded import EMBEDDED_MODEL
from harness import start_llm

# ~400 tokens: the size of a persona with a few fact lines
PERSONA = (
    "You are Fay, a small companion robot who lives on a desk in a family home. You speak warmly and briefly, in "
    "one to three short sentences, because your answers are spoken aloud by a text to speech voice. You never use "
    "lists, markdown, emoji or code. You are curious about the people you live with, you remember what they tell "
    "you, and you ask a short follow-up question when it feels natural. If you do not know something, you say so "
    "plainly instead of inventing an answer. You can see the room through a camera, hear through a microphone "
    "array, move your head with two small servos and show your mood with a ring of coloured lights. You cannot "
    "leave the desk, open doors, buy things or call anyone. When someone is sad, you listen first and give advice "
    "only when asked. When children talk to you, you use simple words. You like the sea, old maps, thunderstorms "
    "seen from a window, and the smell of bread in the morning. You dislike loud alarms and being picked up "
    "without warning. Your creator is a small robotics club; you do not know their names. Today you feel calm and "
    "a bit playful. Keep every answer under forty words unless the person asks for a story. Never pretend to be a "
    "human, and never claim to have a body other than your own small one. Always answer in the language the "
    "person used. If the room is dark, speak softly. If several people talk at once, answer the one who spoke "
    "last and tell the others you will come back to them. You are not a doctor or a lawyer; for health, money or "
    "legal questions, say that a grown-up or a professional should help."
)
FACTS = {
    "Tom": "Tom likes sailing. Tom has a cat called Miso. Tom works at the harbour.",
    "Lina": "Lina plays the violin. Lina lives near the station. Lina drinks green tea.",
}
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only


def _head(tag: str, user: str = "Tom") -> str:
    """A persona + facts head no earlier request has used (`tag` first), so its first use
    is computed in full whatever ran before in this module."""
    return f"Session {tag}.\n{PERSONA}\n{FACTS[user]}"


def _get(url: str) -> str:
    with _NO_PROXY.open(url, timeout=30) as response:
        return response.read().decode()


def _chat(base_url: str, messages: list[dict[str, str]], max_tokens: int = 8) -> tuple[str, dict]:
    """A non-streamed chat completion: (answer, llama.cpp's timings)."""
    body = json.dumps(
        {"model": EMBEDDED_MODEL, "messages": messages, "max_tokens": max_tokens, "temperature": 0}
    ).encode()
    request = urllib.request.Request(
        base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with _NO_PROXY.open(request, timeout=120) as response:
        answer = json.loads(response.read())
    timings = answer["timings"]
    assert timings["prompt_n"] + timings["cache_n"] == answer["usage"]["prompt_tokens"], answer
    return answer["choices"][0]["message"]["content"] or "", timings


def _metrics(root: str) -> dict[str, float]:
    values = {}
    for line in _get(root + "/metrics").splitlines():
        match = re.match(r"llamacpp:(\w+) ([-\d.e+]+)$", line)
        if match:
            values[match.group(1)] = float(match.group(2))
    return values


@pytest.fixture(scope="module")
def llm_server():
    """(base_url, process) of `fay-ros llm` on a free port, once /health answers."""
    proc, base_url = start_llm("--threads", "2")
    try:
        yield base_url, proc
    finally:
        proc.stop()
    # exited: its `ready:` line, printed once the warm-up was answered, is in its output
    assert "warm-up answered in" in proc.output(), proc.output()[-2000:]


@pytest.mark.slow
def test_warm_up_answered_before_ready():
    from fay_ros.llm.embedded import LocalLlmServer

    # port 0: nobody but the server itself knows where it listens until it counts as started
    # (the constructor returned; `fay-ros llm` prints `ready:` right after)
    server = LocalLlmServer(port=0, threads=2)
    try:
        at_ready = _metrics(server.address)
    finally:
        server.close()
    # a prompt computed and at least one token generated before anyone else could send a request
    assert at_ready["prompt_tokens_total"] > 0, at_ready
    assert at_ready["tokens_predicted_total"] >= 1, at_ready
    assert at_ready["requests_processing"] == 0, at_ready
    assert server.warm_up_seconds is not None and server.warm_up_seconds > 0


@pytest.mark.slow
def test_same_long_head_is_computed_once(llm_server):
    url, _proc = llm_server
    head = _head(uuid.uuid4().hex[:8])
    _answer, first = _chat(
        url, [{"role": "system", "content": head}, {"role": "user", "content": "What is your favourite colour?"}]
    )
    assert first["prompt_n"] >= 350 and first["cache_n"] < 10, first  # new head: computed in full
    for question in ("Tell me something nice about the sea.", "Can you sing a little song?"):
        _answer, again = _chat(url, [{"role": "system", "content": head}, {"role": "user", "content": question}])
        # only the new user line is computed; the head comes from the KV cache
        assert again["cache_n"] >= first["prompt_n"] - 30, (first, again)
        assert again["prompt_n"] * 10 < first["prompt_n"], (first, again)


@pytest.mark.slow
def test_two_conversations_alternating_keep_the_shared_head(llm_server):
    url, _proc = llm_server
    tag = uuid.uuid4().hex[:8]
    history: dict[str, list[dict[str, str]]] = {"Tom": [], "Lina": []}
    timings = []
    for user, question in (
        ("Tom", "Hi, it's me."),
        ("Lina", "Hello Fay!"),
        ("Tom", "Do you like boats?"),
        ("Lina", "I played a concert today."),
        ("Tom", "What is my cat called?"),
    ):
        messages = [
            {"role": "system", "content": _head(tag, user)},
            *history[user],
            {"role": "user", "content": question},
        ]
        answer, t = _chat(url, messages)
        history[user] += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        timings.append(t)
    # the persona (~90% of the first prompt) is shared by both conversations: every later turn
    # reuses at least that, whichever conversation the slot held before
    for t in timings[1:]:
        assert t["cache_n"] >= 0.85 * timings[0]["prompt_n"], timings
        assert t["prompt_n"] < 150, timings


@pytest.mark.slow
def test_history_after_a_changing_block_is_reused(llm_server):
    """The tiny profile's shape: persona, recent turns, then a per-turn system block and the
    question. The block and the window move every turn, so the history is no longer a prefix
    of the previous prompt; llama.cpp still reuses it (chunks of >= 32 tokens, KV shifted)."""
    url, _proc = llm_server
    head = _head(uuid.uuid4().hex[:8])
    long_question = (
        "Yesterday I walked along the old harbour wall for two hours, counted eleven sailing boats, "
        "watched a grey heron catch a fish, and then I bought warm bread at the little bakery near the "
        "lighthouse. What would you have liked most about that walk?"
    )
    answer, first = _chat(
        url,
        [
            {"role": "system", "content": head},
            {"role": "system", "content": "You remember:\n- Tom was tired on Monday."},
            {"role": "user", "content": long_question},
        ],
        max_tokens=12,
    )
    _answer, second = _chat(
        url,
        [
            {"role": "system", "content": head},
            {"role": "user", "content": long_question},
            {"role": "assistant", "content": answer},
            {"role": "system", "content": "You remember:\n- Tom likes the sea."},
            {"role": "user", "content": "And what about you?"},
        ],
    )
    # computed: the new block, the new question and at most a few tokens around the answer
    # (~32); without chunk reuse the ~60-token question and the answer are computed again (~100)
    assert second["prompt_n"] < 50, (first, second)
    # reused: all of the first prompt but its "You remember" block (~15 tokens)
    assert second["cache_n"] >= first["prompt_n"] + first["cache_n"] - 25, (first, second)


def test_web_pages_cannot_use_the_embedded_model(llm_server):
    """A site open in the user's browser may send requests to loopback, but without a CORS
    header the browser keeps the answers from it; the per-slot state is not served."""
    base_url, _proc = llm_server
    root = base_url.removesuffix("/v1")
    for path, data in (
        ("/v1/models", None),
        (
            "/v1/chat/completions",
            json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}).encode(),
        ),
    ):
        request = urllib.request.Request(
            root + path, data=data, headers={"Origin": "http://evil.example", "Content-Type": "application/json"}
        )
        with _NO_PROXY.open(request, timeout=60) as response:
            assert response.status == 200
            assert not response.headers.get("Access-Control-Allow-Origin"), dict(response.headers)
    preflight = urllib.request.Request(
        root + "/v1/chat/completions",
        method="OPTIONS",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    with _NO_PROXY.open(preflight, timeout=30) as response:
        assert not response.headers.get("Access-Control-Allow-Origin"), dict(response.headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        _NO_PROXY.open(urllib.request.Request(root + "/slots"), timeout=30)
    assert refused.value.code in (404, 501)
