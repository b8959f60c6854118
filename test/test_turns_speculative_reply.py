"""The speculative reply's lifecycle (fay_ros.turns.speculative_reply), on a simulated clock."""

from __future__ import annotations

from fay_ros.turns.speculative_reply import SpeculativeReply


def test_the_same_request_claims_a_fresh_guess_once():
    guess: SpeculativeReply[str] = SpeculativeReply(max_age_s=10.0)
    assert guess.park("k", "stream", 1.0) is None
    claimed = guess.claim("k", 3.5)
    assert claimed is not None and claimed.payload == "stream" and claimed.started == 1.0
    assert guess.parked is None and guess.claim("k", 3.6) is None


def test_another_request_or_a_stale_guess_is_not_claimed_and_stays_to_be_discarded():
    guess: SpeculativeReply[str] = SpeculativeReply(max_age_s=10.0)
    guess.park("k", "stream", 0.0)
    assert guess.claim("other", 1.0) is None and guess.parked is not None
    assert guess.claim("k", 10.01) is None
    assert guess.discard() == "stream" and guess.discard() is None


def test_a_newer_guess_replaces_the_parked_one():
    guess: SpeculativeReply[str] = SpeculativeReply()
    guess.park("a", "first", 0.0)
    assert guess.park("b", "second", 0.5) == "first"
    assert guess.claim("a", 0.6) is None
    claimed = guess.claim("b", 0.6)
    assert claimed is not None and claimed.payload == "second"
