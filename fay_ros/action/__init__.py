"""Action semantics: text -> engine-neutral ActionCue fields (code, behavior, affect,
intensity, priority) and sentence sentiment, from editable tables. No ROS imports here.

- phrases: the keyword matching rule (CJK substrings, Latin whole words, longest match, negation)
- rules: config/action_rules.csv (Fay's table format) and the rule matcher, with its match
  policies (`priority`, `fay`)
- sentiment: config/sentiment_lexicon.csv and the lexicon_v1 sentiment scale
- cue: both together, plus the neutral default (or no cue) when no rule matches
- watch: reload the tables when their files change, keeping the last good ones
"""

from __future__ import annotations

from pathlib import Path

from ..common.errors import TableError
from ..common.paths import config_file
from .rules import MATCH_POLICIES, ActionMatcher, load_rules
from .sentiment import SentimentScorer, load_lexicon
from .text_to_cue import NO_MATCH_OPTIONS, Cue, CueEngine

RULES_FILE = "action_rules.csv"
LEXICON_FILE = "sentiment_lexicon.csv"


def default_table_path(file_name: str) -> Path:
    """A shipped table: the source tree's config/ (pip/editable install), else the ament share."""
    return config_file(file_name)


__all__ = [
    "ActionMatcher",
    "Cue",
    "CueEngine",
    "SentimentScorer",
    "TableError",
    "default_table_path",
    "load_lexicon",
    "load_rules",
    "RULES_FILE",
    "LEXICON_FILE",
    "MATCH_POLICIES",
    "NO_MATCH_OPTIONS",
]
