"""The `source` values of fay_msgs/Utterance: where a reply sentence's text came from."""

LLM = "llm"
QA = "qa"
MEMORY = "memory"  # the user's own facts said back, the clock
SAY = "say"  # the tts node's say action and broadcast topic: spoken verbatim
PROACTIVE = "proactive"  # the dialogue speaking first (the schedule's proactive talk, a reminder due)
REMINDERS = "reminders"  # an answer about reminders or commitments (set, list, cancel, snooze)
KNOWLEDGE = "knowledge"  # a sentence of the user's documents read out, or where it came from
FALLBACK = "fallback"
FILLER = "filler"
TASK = "task"
TASK_STATUS = "task_status"

# Said unasked: such a reply answers no user turn (memory records it as the companion's words
# alone; the latency monitor does not take it for the answer to a turn).
UNPROMPTED = frozenset({SAY, PROACTIVE})
