"""A knowledge base of the user's own documents (issue 41), no ROS: files indexed into chunks
that follow the document, hybrid retrieval (keyword search that works for Chinese fused with
the project's embeddings), answers with their sources.

Knowledge is not memory: one knowledge base is shared by everyone the companion serves, and
nothing a user says is written into it.

The contract between the store and its users (dialogue tools and prestart, the MCP server,
the `knowledge/search` service, the admin page) is `fay_ros.knowledge.api`.
"""
