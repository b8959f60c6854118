"""The knowledge base core (issue 41): reading, chunking, incremental indexing, hybrid search,
bad input. A real SQLite file, and PostgreSQL with pgvector on the session's private server;
the hashed embedder (deterministic, no model) except where the multilingual model is named."""

from __future__ import annotations

import pytest

from fay_ros.knowledge.api import DEFAULT_KB, KnowledgeSearch
from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
from fay_ros.knowledge.chunking import chunk_sections
from fay_ros.knowledge.documents import Section, read_document
from fay_ros.knowledge.keywords import keyword_terms

SHOP_MD = """# Opening hours

We are open Monday to Friday from 9 am to 6 pm.

## Weekends

On Saturday we open from 10 am to 4 pm. On Sunday the shop is closed.

# Prices

A cup of coffee costs 3 euros. A pot of tea costs 2 euros.
"""
SHOP_ZH = "营业时间\n\n周一至周五上午九点到下午六点营业。\n\n洗手间在二楼电梯旁边。"


@pytest.fixture
def shop(tmp_path):
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "hours.md").write_text(SHOP_MD, encoding="utf-8")
    (folder / "zh.txt").write_bytes(SHOP_ZH.encode("gbk"))
    return folder


@pytest.fixture(params=["sqlite"])
def knowledge_db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "knowledge.db")
    return request.getfixturevalue("postgres_url")


def open_kb(db: str, **settings) -> KnowledgeBase:
    settings.setdefault("threshold", 0.2)  # the hashed embedder scores lower than the USE model
    return KnowledgeBase(KnowledgeSettings(db=db, embedder="hashed", **settings))


def test_keyword_terms_split_chinese_into_bigrams_and_drop_english_stop_words():
    assert keyword_terms("营业时间") == ["营业", "业时", "时间"]
    assert keyword_terms("What are the opening hours?") == ["opening", "hour"]


def test_chunks_follow_headings_and_never_cut_a_sentence():
    long_paragraph = " ".join(f"Sentence number {i} is about the museum garden." for i in range(30))
    sections = [Section("Garden", [long_paragraph]), Section("Café", ["Coffee is served all day."])]
    chunks = chunk_sections(sections, max_chars=200)
    assert {c.locator for c in chunks} == {"Garden", "Café"}
    garden = [c for c in chunks if c.locator == "Garden"]
    assert len(garden) > 3
    for chunk in garden:
        assert len(chunk.text) <= 200
        assert chunk.text.startswith("Sentence number") and chunk.text.endswith("garden.")
    assert " ".join(c.text for c in garden) == long_paragraph


def test_markdown_gives_heading_paths(shop):
    sections = read_document(shop / "hours.md", "hours.md", 10**6)
    assert [s.locator for s in sections] == ["Opening hours", "Opening hours > Weekends", "Prices"]


def test_a_gbk_file_is_decoded(shop):
    (section,) = read_document(shop / "zh.txt", "zh.txt", 10**6)
    assert section.paragraphs[-1] == "洗手间在二楼电梯旁边。"


def test_search_finds_the_passage_with_its_source_and_locator(shop, knowledge_db):
    kb = open_kb(knowledge_db)
    report = kb.add([shop])
    assert sorted(report.indexed) == ["hours.md", "zh.txt"] and not report.failed
    searcher: KnowledgeSearch = kb  # the contract its users code against
    best = searcher.search("When do you open on Saturday?", k=3)[0]
    assert "10 am to 4 pm" in best.text
    assert (best.source, best.locator, best.kb) == ("hours.md", "Opening hours > Weekends", DEFAULT_KB)
    zh = kb.search("洗手间在几楼", k=3)
    assert zh and zh[0].source == "zh.txt" and "二楼" in zh[0].text
    assert kb.search("Who painted the Mona Lisa in Florence?", k=3) == []
    infos = {d.source: d for d in kb.documents()}
    assert infos["hours.md"].chunks == 3 and infos["hours.md"].indexed_at > 0 and not infos["hours.md"].error
    kb.close()


def test_adding_again_is_incremental(shop, knowledge_db):
    kb = open_kb(knowledge_db)
    kb.add([shop])
    again = kb.add([shop])
    assert sorted(again.unchanged) == ["hours.md", "zh.txt"] and not again.indexed
    (shop / "hours.md").write_text(SHOP_MD.replace("3 euros", "4 euros"), encoding="utf-8")
    (shop / "zh.txt").unlink()
    changed = kb.add([shop])
    assert changed.indexed == ["hours.md"] and changed.removed == ["zh.txt"]
    texts = [p.text for p in kb.rank("coffee price euros", k=10)]
    assert any("4 euros" in t for t in texts) and not any("3 euros" in t for t in texts)
    assert kb.rank("洗手间", k=10, vector_weight=0.0) == []
    assert [d.source for d in kb.documents()] == ["hours.md"]
    kb.close()


def test_remove_and_separate_knowledge_bases(shop, tmp_path):
    kb = open_kb(str(tmp_path / "k.db"))
    kb.add([shop / "hours.md"], kb="shop")
    kb.add([shop / "zh.txt"], kb="other")
    assert {p.kb for p in kb.rank("open hours 营业", k=10, kb="shop")} == {"shop"}
    assert kb.remove([str(shop / "hours.md")], kb="shop") == [str(shop / "hours.md")]
    assert kb.documents("shop") == [] and len(kb.documents()) == 1
    kb.close()
