"""Exit codes every fay_ros process shares (no ROS import: the bring-ups read them too)."""

# A node or `fay-ros` command refused its configuration (the message says what to fix).
# Bring-ups do not restart it: a restart would only repeat the refusal.
EXIT_CONFIG_ERROR = 2
