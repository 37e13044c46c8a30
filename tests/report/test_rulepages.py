"""The page per rule number that ever existed, on a made-up history: what the number named in each period
and where each of those rules went; rendered escaped."""
from pipeline.report import build as report
from pipeline.report import rulepages
from pipeline.publish.remap import Remapper

E = ("2001-01-01", "2002-01-01", "2003-01-01", "2004-01-01")
RULES = [  # (edition, number, kind, lineage)
    *[(e, "100.1", "rule", "A") for e in E[:2]], *[(e, "100.2", "rule", "A") for e in E[2:]],
    ("2003-01-01", "100.1", "rule", "B"), ("2004-01-01", "100.1", "rule", "B"),  # 100.1 reused by a new rule
    *[(e, "100.3", "rule", "C") for e in E[:2]],  # merged into 100.2 in 2003
    ("2001-01-01", "100.4", "rule", "D"),  # removed in 2002
    ("2001-01-01", "Trample", "glossary", "G"),
]
CHANGES = [  # (from, to, lineage, old, new, change)
    ("2002-01-01", "2003-01-01", "A", "100.1", "100.2", "modified"),
    ("2002-01-01", "2003-01-01", "B", "", "100.1", "added"),
    ("2002-01-01", "2003-01-01", "C", "100.3", "100.2", "merged"),
    ("2001-01-01", "2002-01-01", "D", "100.4", "", "removed"),
]


def pages() -> dict[str, dict]:
    remapper = Remapper(RULES, CHANGES, [(e, "complete") for e in E])
    return {p["number"]: p for p in rulepages.pages(remapper, lambda e, n: f"<b>{n} of {e}</b>")}


def test_every_number_that_ever_existed_gets_a_page_and_no_glossary_term_does():
    assert set(pages()) == {"100.1", "100.2", "100.3", "100.4"}


def test_a_reused_number_says_what_it_named_in_each_period_and_where_each_went():
    page = pages()["100.1"]
    assert [(p["first"], p["last"], p["lineage_id"]) for p in page["periods"]] == [
        ("2001-01-01", "2002-01-01", "A"), ("2003-01-01", "", "B")]  # "": it goes on, the latest is not named
    first, second = page["periods"]
    assert (first["after"]["number"], first["after"]["edition"]) == ("100.2", "2003-01-01")
    assert first["now"]["numbers"] == ["100.2"]
    assert second["after"]["what"] == "in force in the latest edition" and second["now"]["numbers"] == ["100.1"]
    assert page["current"] and page["spans"] == [["2003-01-01", "", "100.1"]]
    assert page["held"] == [["2001-01-01", "2002-01-01"], ["2003-01-01", ""]]


def test_a_merged_and_a_removed_number_say_how_they_ended():
    merged, removed = pages()["100.3"], pages()["100.4"]
    assert not merged["current"] and merged["spans"] == []
    assert merged["periods"][0]["after"]["what"] == "merged into 100.2 in 2003-01-01 (now 100.2)"
    assert merged["periods"][0]["now"] == {"numbers": ["100.2"], "what": "merged"}
    assert removed["periods"][0]["after"]["what"] == "removed in 2002-01-01"
    assert removed["periods"][0]["now"] == {"numbers": [], "what": "removed in 2002-01-01"}


def test_the_page_escapes_the_rule_text_and_forwards_only_a_number_of_today():
    env = report.environment()
    html = env.get_template("rule.html").render(root="../", rule=pages()["100.3"])
    assert "<b>100.3" not in html and "&lt;b&gt;100.3 of 2002-01-01&lt;/b&gt;" in html
    assert 'data-current=""' in html and 'href=../rules/100.2.html>' in html
    now = env.get_template("rule.html").render(root="../", rule=pages()["100.1"])
    assert 'data-current="1"' in now and "editions/2004-01-01" not in now  # app.js names the latest (editions.js)
    assert "the latest edition of these reports" in now
