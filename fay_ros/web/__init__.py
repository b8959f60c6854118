"""The web face's server side: static page, rosbridge endpoint and its allow-list.

- `allowlist`: which topics a browser may subscribe / publish and which services it may call,
  rendered into the configuration of either rosbridge server.
- `face_map`: validation of web/face_map.json (the face's own mapping table).
- `bridge`: how to start the rosbridge endpoint (rosbridge-server-rs in the pip setup, the
  real rosbridge_server on apt ROS 2).
- `page_server`: the loopback HTTP server for web/ and the page's runtime configuration.

Nothing here imports rclpy: `fay-ros web` starts the bridge as its own process.
"""
