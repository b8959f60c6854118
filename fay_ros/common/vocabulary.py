"""The shared vocabulary of action semantics: the behaviors and affects cues may carry.

The action rules table produces these words; every consumer table (servo_map.yaml,
led_map.yaml, web/face_map.json) maps them. The vocabulary is Fay's (its shipped
config/action_rules.csv and "standard action" docs) plus fay_ros' own words, so a Fay table
loads as it is. Where both name a similar gesture (Fay's `thanks`/`apology` and our `bow`,
`reject` and `refuse`, `care` and `comfort`) both stay: a table picks the word, a consumer
may map them alike.

A rules table may use a word outside this list (the vocabulary is extensible through the
table): it is accepted with a warning, and a consumer must accept a word it does not know by
falling back to its table default until someone maps it.
"""

BEHAVIORS = (
    "idle",  # no particular motion
    "nod",  # agree, acknowledge
    "shake",  # disagree
    "wave",  # greeting, farewell
    "bow",  # thanks, apology
    "invite",  # guidance: "this way", "please come"
    "explain",  # open-hand explaining gesture
    "think",  # head tilt, hand to chin
    "listen",  # lean in, attentive
    "warn",  # raised hand, caution
    "celebrate",  # arms up, cheer
    "comfort",  # soft lean, slow nod
    "surprise",  # quick lean back
    "praise",  # thumbs up / clap
    "refuse",  # crossed hands / firm shake
    # Fay's behaviors (config/action_rules.csv of Fay)
    "reject",  # "no", "that's not right": a head shake with a small hand wave
    "question",  # asking: head tilt, open palm up
    "recommend",  # suggesting: open palm offered forward
    "summary",  # wrapping up: both hands together, one nod
    "wait",  # "one moment": raised palm, hold still
    "remind",  # "don't forget": index finger raised
    "thanks",  # thanking: a light bow
    "apology",  # apologising: a deeper, slower bow
    "care",  # "are you all right?": lean towards the person
    "sad",  # head and shoulders drop
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
    # Fay's affects
    "curious",  # interested, asking
    "sorry",  # Fay's word for apologetic
)

DEFAULT_BEHAVIOR = "idle"
DEFAULT_AFFECT = "neutral"
