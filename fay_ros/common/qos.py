"""QoS profiles chosen on purpose for each kind of topic."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# State topics (robot_speaking, audio/voice_active, led/pattern): a late joiner must get the
# current state at once, so the last value is latched (transient local, depth 1).
LATCHED = QoSProfile(
    depth=1,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)

# Event streams (reply, action_cue, visemes, speech/*, text_input, interrupt): every message
# matters and arrives in order; a burst of a long streamed reply must not be dropped.
EVENTS = QoSProfile(
    depth=50,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# Raw audio: reliable with a deep queue, because a lost chunk is a hole in the speech the
# recogniser hears; at 16 kHz and 30 ms chunks, 200 chunks are 6 s of slack.
AUDIO = QoSProfile(
    depth=200,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# The requests and responses of an action (goal, result, cancel) and its feedback: a burst of
# clients must not lose one. rclpy's default keeps 10: with 20 `fay-ros openai` streams at once
# the 11th goal request of the burst overwrote one the dialogue had not taken yet, that goal
# never started, and its client waited out its timeout.
ACTION_REQUESTS = QoSProfile(
    depth=200,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)
ACTION_QOS = {
    "goal_service_qos_profile": ACTION_REQUESTS,
    "result_service_qos_profile": ACTION_REQUESTS,
    "cancel_service_qos_profile": ACTION_REQUESTS,
}
# Actuator commands (servo trajectories, LED colour): only the newest matters.
COMMANDS = QoSProfile(
    depth=10,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

# Triggers from other programs (proactive talk's topic triggers, e.g. a person detector): best
# effort matches every publisher, reliable or best effort (a reliable subscription would not
# match a sensor's best-effort publisher); a trigger is an event, so nothing is latched.
TRIGGERS = QoSProfile(
    depth=10,
    history=HistoryPolicy.KEEP_LAST,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)
