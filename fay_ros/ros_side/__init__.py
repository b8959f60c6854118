"""ROS adapters that are not executables: the ROS side of CLI commands and of node parts
(`status_probe`, `typed_input`, `mcp_memory_gateway`, `proactive_talk`, `ros_tools`). Like
`fay_ros/nodes`, these may import rclpy; the pure cores may not import them."""
