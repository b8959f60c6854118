"""Relative topic and service names of the companion graph (resolved under /fay by default).

Every node uses these constants instead of string literals so that a rename happens in one
place; all names are relative, so a namespace or a remap moves the whole graph.
"""

DEFAULT_NAMESPACE = "/fay"

AUDIO_RAW = "audio/raw"
VOICE_ACTIVE = "audio/voice_active"
SPEECH_PARTIAL = "speech/partial"
SPEECH_FINAL = "speech/final"
# The early text of a turn the recogniser judges complete, before its final ("" withdraws it).
SPEECH_SPECULATIVE = "speech/speculative"
# The asr's turn-taking decisions over the robot's voice (diagnostic_msgs/DiagnosticStatus,
# name `fay/asr: decisions`, message "barge-in" / "backchannel: no turn" / "stop request" / "talk-over: goes
# on"): why words said over the robot became no turn, for robot programs, tools and tests.
SPEECH_DECISIONS = "speech/decisions"
TEXT_INPUT = "text_input"
# Fay's broadcast mode (fay_msgs/Transcript): the tts node speaks the text verbatim, like a `say` goal.
BROADCAST = "broadcast"
# Record without replying (fay_msgs/Transcript, the dialogue node).
OBSERVATION = "observation"
REPLY = "reply"
ACTION_CUE = "action_cue"
VISEMES = "visemes"
ROBOT_SPEAKING = "robot_speaking"
INTERRUPT = "interrupt"
# Stop one reply, not the voice (std_msgs/String, data = its conversation_id): the dialogue
# publishes it when a client cancels its `chat` goal; the tts node drops that reply's queued
# sentences and cuts it if it is playing, while other users' replies go on. `interrupt` stays
# the stop of everything being said (barge-in, stop button).
REPLY_CANCEL = "reply/cancel"
# What the tts node's output plays (fay_msgs/AudioChunk at the engine's rate, header.stamp = when
# the first sample plays; silence is not published): the mic's echo-cancellation reference.
AUDIO_PLAYED = "audio/played"
# The mic's barge-in (std_msgs/Empty), published just before its `interrupt`: the tts node keeps
# what it cut and resumes it when the person's words become no turn.
BARGE_IN = "audio/barge_in"
# The mic's talk-over (std_msgs/Bool): true when a person starts talking over the robot (the tts
# node holds its voice, nothing dropped), false when they stop without a barge-in (it goes on).
TALK_OVER = "audio/talk_over"
# What the person said over the robot when a hold ends without a barge-in (fay_msgs/AudioChunk,
# the mic's rate, header.stamp = its first sample): the asr interrupts if it is a stop request.
TALK_OVER_CLIP = "audio/talk_over_clip"
SERVO_TRAJECTORY = "servo/joint_trajectory"
LED_COLOR = "led/color"
LED_PATTERN = "led/pattern"
# Background tasks of the dialogue (diagnostic_msgs/DiagnosticStatus, key/values user, task_id, state, step, tool).
TASK_PROGRESS = "task/progress"
DIAGNOSTICS = "/diagnostics"  # absolute on purpose: the ROS-wide diagnostics convention (health only)
# Per-turn timings: the dialogue's LLM timing per reply (fay_msgs/LlmLatency) and the
# latency_monitor's per-stage latency of each voice turn (fay_msgs/TurnLatency).
LLM_LATENCY = "dialogue/llm_latency"
TURN_LATENCY = "latency/turns"

# Whether the dialogue answers each spoken utterance, and why (fay_msgs/SpeakDecision; several
# people in a room: dialogue.room), and the spoken utterances it answers (fay_msgs/Transcript),
# for those that record only what was said to the companion (the memory node's
# `spoken_words: addressed`): overheard talk reaches no long-term memory.
DIALOGUE_DECISION = "dialogue/decision"
DIALOGUE_ADDRESSED = "dialogue/addressed"

# The user's words of each chat goal (fay_msgs/Transcript), published by the dialogue node for
# those that record what users said (memory), since a goal comes on no input topic.
CHAT_HEARD = "chat/heard"
# The memory node's acknowledgement of each user turn it took in (the Transcript without text).
MEMORY_HEARD = "memory/heard"
# Private event topics (`~/` resolves under the node's own name, e.g. /fay/mic/listening).
MIC_LISTENING = "~/listening"
LATENCY_EVENTS = "~/events"

# Actions. The tts node's `say` (fay_msgs/action/Say): speak a text verbatim, with feedback per sentence.
ACTION_SAY = "say"
# The dialogue node's `chat` (fay_msgs/action/Chat): one chat turn held by a robot program.
ACTION_CHAT = "chat"

SRV_REMEMBER = "memory/remember"
# Confirm a candidate memory by id: an operator's or the owner's decision after review (Confirm.srv).
SRV_CONFIRM = "memory/confirm"
SRV_RECALL = "memory/recall"
SRV_FORGET = "memory/forget"
SRV_ACTIVE_RULES = "memory/active_rules"
SRV_PROFILE = "memory/profile"
# Hybrid recall with evidence over an owner's whole history (SearchEvidence.srv).
SRV_SEARCH_EVIDENCE = "memory/search_evidence"
# Reminders and open commitments of an owner (Reminders.srv).
SRV_REMINDERS = "memory/reminders"
# Search the shared knowledge base of the user's documents (KnowledgeSearch.srv; the dialogue node).
SRV_KNOWLEDGE_SEARCH = "knowledge/search"
