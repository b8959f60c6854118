"""An external MCP knowledge server, the shape Fay's users point Fay at ("自定义知识库"): one
tool, `search_knowledge`, answering a question with passages of a document set and their
sources. Written with the official MCP SDK's server API; serves over stdio. The documents are
the shop's of test/data/knowledge_shop, matched by shared words (enough for a stand-in of a
server someone else runs: the test checks Fay's route, not this server's retrieval).

  mcp_knowledge_server.py    : serve over stdio
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp.server.mcpserver import MCPServer

SHOP = Path(__file__).resolve().parents[1] / "data" / "knowledge_shop"
server = MCPServer("fay-test-knowledge")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.lower()))


def _sentences() -> list[tuple[str, str]]:
    found = []
    for path in sorted(SHOP.iterdir()):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.append((path.name, line))
    return found


@server.tool(description="Search the knowledge base: passages that answer the query, with their source.")
def search_knowledge(query: str, top_k: int = 2) -> str:
    asked = _words(query) - {"the", "a", "is", "on", "do", "does", "you", "what", "when", "how"}
    ranked = sorted(_sentences(), key=lambda item: -len(asked & _words(item[1])))
    hits = [{"source": source, "text": text} for source, text in ranked[:top_k] if asked & _words(text)]
    return json.dumps({"results": hits}, ensure_ascii=False)


if __name__ == "__main__":
    server.run("stdio")
