"""The shared vocabulary of action semantics: the behaviors and affects cues may carry.

The action rules table produces these words; every consumer table (servo_map.yaml,
led_map.yaml, web/face_map.json) maps them. A consumer must also accept a word it does not
know (fall back to its table default): tables may grow faster than consumers.
"""

BEHAVIORS = (
    "idle",       # no particular motion
    "nod",        # agree, acknowledge
    "shake",      # disagree, refuse
    "wave",       # greeting, farewell
    "bow",        # thanks, apology
    "invite",     # guidance: "this way", "please come"
    "explain",    # open-hand explaining gesture
    "think",      # head tilt, hand to chin
    "listen",     # lean in, attentive
    "warn",       # raised hand, caution
    "celebrate",  # arms up, cheer
    "comfort",    # soft lean, slow nod
    "surprise",   # quick lean back
    "praise",     # thumbs up / clap
    "refuse",     # crossed hands / firm shake
)

AFFECTS = (
    "neutral",
    "smile",
    "warm",
    "excited",
    "serious",
    "sad",
    "surprised",
    "apologetic",
    "thinking",
    "angry",
)

DEFAULT_BEHAVIOR = "idle"
DEFAULT_AFFECT = "neutral"
