"""The schedule: when proactive talk and memory's daily jobs are due (pure Python, no ROS).

- `config`: the one schedule file (`config/schedule.yaml`, parameter `schedule_file` of the
  memory and dialogue nodes): time zone, memory's daily jobs, proactive triggers and their
  gate settings; strict YAML, errors with file and line.
- `timing`: time rules (daily "HH:MM", `every` seconds, cron expressions through croniter)
  and `TimeTriggers`, which says what became due between two looks at the clock. The caller
  passes the time (epoch seconds from the node clock, which may be sim time).
- `proactive`: the gate (speak now, wait while someone speaks, drop with a reason) and
  `ProactivePlanner`, the state a node keeps for proactive talk: time, silence and topic
  triggers in, lines to say out.
- `reminder_text`: a reminder request in words (English, Chinese) → `ParsedReminder` (due,
  what, an RRULE repeat, the question to ask instead of guessing). Imports `text.when` for
  numerals.
"""
