"""Pure cores of the body consumers: the servo and LED mappers (no rclpy import here).

Each consumer owns its mapping table (config/servo_map.yaml, config/led_map.yaml): the
action cue names a behavior and an affect, and only the consumer decides what a joint or a
light does with them.
"""
