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


@pytest.fixture(params=["sqlite", "postgresql"])
def knowledge_db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "knowledge.db")
    return request.getfixturevalue("postgres_url")


def open_kb(db: str, **settings) -> KnowledgeBase:
    settings.setdefault("threshold", 0.2)  # the hashed embedder scores lower than the USE model
    return KnowledgeBase(KnowledgeSettings(db=db, embedder="hashed", **settings))


def test_keyword_terms_keep_chinese_characters_and_bigrams_and_time_words():
    assert keyword_terms("营业时间") == ["营", "业", "时", "间", "营业", "业时", "时间"]
    assert keyword_terms("What are the opening hours in the morning?") == ["open", "hour", "morn"]


def test_common_terms_do_not_search_for_candidates_but_still_score():
    from collections import Counter

    from fay_ros.knowledge.keywords import bm25_coverage, candidate_terms, term_weights

    frequency = {"open": 900, "museum": 400, "triceratop": 2}
    assert candidate_terms(["open", "museum", "triceratop", "nowhere"], frequency, 1000) == ["triceratop"]
    assert candidate_terms(["open", "museum"], frequency, 1000) == ["museum", "open"]  # rarest first
    weights = term_weights(["open", "triceratop", "nowhere"], frequency, 1000)
    assert weights["triceratop"] > weights["open"] > 0 and weights["nowhere"] == pytest.approx(
        (weights["open"] + weights["triceratop"]) / 2
    )
    both = bm25_coverage(weights, Counter(["open", "triceratop"]), average_length=10)
    rare = bm25_coverage(weights, Counter(["triceratop"]), average_length=10)
    assert 0 < rare < both < 1 and bm25_coverage(weights, Counter(["zoo"]), 10) == 0


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


def test_markdown_lists_tables_links_and_underlined_headings(tmp_path):
    text = (
        "Museum\n======\n\nSee [our map](https://example.org/map) for **rooms**.\n\n"
        "Prices\n------\n\n| ticket | price |\n|---|---|\n| adult | 12 euros |\n\n"
        "- Lockers in the *basement*\n- Toilets on every floor\n"
    )
    (tmp_path / "m.md").write_text(text, encoding="utf-8")
    sections = read_document(tmp_path / "m.md", "m.md", 10**6)
    assert [(s.locator, s.paragraphs) for s in sections] == [
        ("Museum", ["See our map for rooms."]),
        ("Museum > Prices", ["ticket  price", "adult  12 euros", "Lockers in the basement", "Toilets on every floor"]),
    ]


def test_big5_text_is_decoded(tmp_path):
    text = "營業時間：週一至週五上午九點到下午六點。週末休息，國定假日另行公告。"
    (tmp_path / "hk.txt").write_bytes(text.encode("big5"))
    assert read_document(tmp_path / "hk.txt", "hk.txt", 10**6)[0].paragraphs == [text]


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


# ------------------------------------------------------------------ the other formats


def make_pdf(path, pages: list[str]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.cell(text="Riverside Museum Guide")  # a running header on every page
        pdf.ln(12)
        pdf.multi_cell(w=0, text=text)
    pdf.output(str(path))


def test_pdf_pages_are_located_and_running_headers_dropped(tmp_path):
    path = tmp_path / "guide.pdf"
    make_pdf(
        path,
        [
            "The museum opens at ten in the morning and closes at five in the afternoon every day except Monday.",
            "The dinosaur hall is on the second floor next to the cafe.",
            "Guided tours start every hour from the main entrance.",
        ],
    )
    sections = read_document(path, "guide.pdf", 10**6)
    assert [s.locator for s in sections] == ["page 1", "page 2", "page 3"]
    assert sections[1].paragraphs == ["The dinosaur hall is on the second floor next to the cafe."]
    # the first page's text is one paragraph again although the PDF broke its line
    assert sections[0].paragraphs[0].startswith("The museum opens") and sections[0].paragraphs[0].endswith("Monday.")


def test_docx_headings_and_tables(tmp_path):
    import docx

    document = docx.Document()
    document.add_heading("Clinic", level=1)
    document.add_heading("Opening hours", level=2)
    document.add_paragraph("The clinic opens at 8 am on weekdays.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Flu vaccine", "25 euros"
    table.cell(1, 0).text, table.cell(1, 1).text = "Blood test", "40 euros"
    document.save(str(tmp_path / "clinic.docx"))
    sections = read_document(tmp_path / "clinic.docx", "clinic.docx", 10**6)
    assert sections[-1].locator == "Clinic > Opening hours"
    assert sections[-1].paragraphs == [
        "The clinic opens at 8 am on weekdays.",
        "Flu vaccine  25 euros",
        "Blood test  40 euros",
    ]


def test_html_skips_scripts_and_follows_headings(tmp_path):
    page = (
        "<html><head><meta charset='gbk'><title>x</title><script>var a = 1;</script></head><body>"
        "<nav>Home | About</nav><h1>学校</h1><h2>午餐</h2><p>午餐时间是<b>中午十二点</b>。</p>"
        "<ul><li>星期一：面条</li><li>星期二：米饭</li></ul></body></html>"
    )
    (tmp_path / "school.html").write_bytes(page.encode("gbk"))
    sections = read_document(tmp_path / "school.html", "school.html", 10**6)
    assert [(s.locator, s.paragraphs) for s in sections] == [
        ("学校 > 午餐", ["午餐时间是中午十二点。", "星期一：面条", "星期二：米饭"])
    ]


# ------------------------------------------------------------------ bad input


def test_bad_files_are_named_and_every_other_file_is_indexed(tmp_path):
    import pypdf

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text(SHOP_MD, encoding="utf-8")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(1, 200)) * 20)
    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    with open(folder / "empty.pdf", "wb") as out:
        writer.write(out)
    make_pdf(tmp_path / "plain.pdf", ["A secret page about the staff room."])
    locked = pypdf.PdfWriter(clone_from=str(tmp_path / "plain.pdf"))
    locked.encrypt(user_password="secret", algorithm="RC4-128")
    with open(folder / "locked.pdf", "wb") as out:
        locked.write(out)
    (folder / "program.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4)
    (folder / "garbled.txt").write_bytes(bytes(range(128, 256)) * 4)
    (folder / "huge.txt").write_text("A long line about nothing in particular. " * 2000, encoding="utf-8")
    kb = open_kb(str(tmp_path / "k.db"), max_file_mb=0.05)
    report = kb.add([folder, tmp_path / "missing.md"])
    assert report.indexed == ["good.md"]
    failed = dict(report.failed)
    assert set(failed) == {
        "corrupt.pdf",
        "empty.pdf",
        "locked.pdf",
        "program.txt",
        "garbled.txt",
        "huge.txt",
        str(tmp_path / "missing.md"),
    }
    assert "corrupt" in failed["corrupt.pdf"]
    assert "no text" in failed["empty.pdf"]
    assert "encrypted" in failed["locked.pdf"]
    assert "binary" in failed["program.txt"]
    assert "undecodable" in failed["garbled.txt"]
    assert "too large" in failed["huge.txt"] and "max_file_mb" in failed["huge.txt"]
    assert "no such file" in failed[str(tmp_path / "missing.md")]
    for source, message in failed.items():
        assert message.startswith(source + ":")
    errors = {d.source: d.error for d in kb.documents() if d.error}
    assert set(errors) == set(failed) - {str(tmp_path / "missing.md")}
    assert kb.search("When do you open on Saturday?", k=1)[0].source == "good.md"
    kb.close()


def test_a_folder_with_nothing_to_index_is_reported(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    kb = open_kb(str(tmp_path / "k.db"))
    report = kb.add([tmp_path / "empty"])
    assert not report.indexed and "nothing to index" in dict(report.failed)[str(tmp_path / "empty")]
    kb.close()


def test_a_file_broken_after_indexing_keeps_its_passages(shop, tmp_path):
    kb = open_kb(str(tmp_path / "k.db"))
    kb.add([shop])
    (shop / "hours.md").write_bytes(bytes(range(128, 256)) * 4)
    report = kb.add([shop])
    assert [source for source, _ in report.failed] == ["hours.md"]
    assert "10 am to 4 pm" in kb.search("When do you open on Saturday?", k=1)[0].text
    (info,) = [d for d in kb.documents() if d.source == "hours.md"]
    assert "undecodable" in info.error and info.chunks == 3
    (shop / "hours.md").write_text(SHOP_MD, encoding="utf-8")
    assert kb.add([shop]).indexed == ["hours.md"]
    assert not [d for d in kb.documents() if d.error]
    kb.close()


def test_a_database_of_another_embedder_is_refused(shop, tmp_path):
    from fay_ros.knowledge.kb_store import KnowledgeStoreError
    from fay_ros.memory.embeddings import HashedNgramEmbedder

    open_kb(str(tmp_path / "k.db")).add([shop])
    with pytest.raises(KnowledgeStoreError, match="indexed with the embedding model"):
        KnowledgeBase(KnowledgeSettings(db=str(tmp_path / "k.db")), embedder=HashedNgramEmbedder(dim=256))


# ------------------------------------------------------------------ the command


def run_cli(*args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from fay_ros.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["knowledge", *args])
    return code, out.getvalue(), err.getvalue()


def test_cli_add_list_search_remove(shop, tmp_path):
    import json

    db = ["--db", str(tmp_path / "cli.db"), "--embedder", "hashed"]
    (shop / "notes.txt").write_bytes(b"\x00\x01binary")
    code, out, err = run_cli("add", str(shop), *db)
    assert code == 1 and "2 indexed" in out and "notes.txt: a binary file" in err
    code, out, _ = run_cli("search", "When do you open on Saturday?", "-n", "2", "--json", "--threshold", "0.2", *db)
    rows = json.loads(out)
    assert code == 0 and rows[0]["source"] == "hours.md" and rows[0]["locator"] == "Opening hours > Weekends"
    assert set(rows[0]) == {"text", "source", "locator", "score"} and len(rows) <= 2
    assert rows == sorted(rows, key=lambda r: -r["score"])
    code, out, _ = run_cli("list", *db)
    assert "hours.md\t3 chunks" in out and "ERROR notes.txt: a binary file" in out
    assert run_cli("remove", "hours.md", *db)[0] == 0
    assert run_cli("remove", "hours.md", *db)[0] == 1
    code, out, _ = run_cli("search", "When do you open on Saturday?", "--json", *db)
    assert json.loads(out) == [] or all(r["source"] != "hours.md" for r in json.loads(out))
    code, _, err = run_cli("list", "--db", str(tmp_path), "--embedder", "hashed")
    assert code == 2 and str(tmp_path) in err


def test_an_unreachable_postgresql_is_named_without_its_password(tmp_path):
    from fay_ros.knowledge.kb_store import KnowledgeStoreError

    url = "postgresql://robot:hunter2secret@127.0.0.1:1/knowledge?sslmode=disable"
    with pytest.raises(KnowledgeStoreError) as caught:
        open_kb(url)
    assert "127.0.0.1:1/knowledge" in str(caught.value) and "hunter2secret" not in str(caught.value)


def test_what_one_robot_indexes_another_finds(shop, knowledge_db):
    """Two KnowledgeBase objects on one database (two robots on PostgreSQL; the node and
    `fay-ros knowledge add` on one SQLite file): each sees what the other indexed or removed."""
    first, second = open_kb(knowledge_db), open_kb(knowledge_db)
    first.add([shop / "hours.md"])
    assert second.search("When do you open on Saturday?", k=1)[0].source.endswith("hours.md")
    assert all(not p.source.endswith("zh.txt") for p in first.rank("洗手间在几楼", k=5))  # searched before
    second.add([shop / "zh.txt"])
    assert first.search("洗手间在几楼", k=1)[0].source.endswith("zh.txt")
    assert first.remove([str(shop / "zh.txt")]) == [str(shop / "zh.txt")]
    assert all(not p.source.endswith("zh.txt") for p in second.rank("洗手间在几楼", k=5))
    first.close()
    second.close()
