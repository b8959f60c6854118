"""The 15 OVR LipSync viseme names, in the id order of fay_msgs/msg/Viseme.msg.

One list for the voice (which builds VisemeTracks) and the web face's table check
(web/face_map.json `mouth.visemes`); no ROS import, a test checks it against the message
constants and the shipped face table.
"""

from __future__ import annotations

VISEME_NAMES = ("sil", "PP", "FF", "TH", "DD", "kk", "CH", "SS", "nn", "RR", "aa", "E", "ih", "oh", "ou")
VISEME_IDS = {name: i for i, name in enumerate(VISEME_NAMES)}
