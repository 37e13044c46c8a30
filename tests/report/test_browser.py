"""The reports in a real browser: headless Chromium (Debian's package) driven by Playwright.

Screenshots go to $SCREENSHOTS (default: a temporary folder); the figures measured on the large
pair page are written beside them in browser-figures.json.
"""
import json
import os
import re
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import sync_playwright

from pipeline.records import CHANGES
from pipeline.report import build as report
from pipeline.report.pairpages import segments
from pipeline import run as stages
from conftest import CHROMIUM, needs_archive, two_small_editions

pytestmark = pytest.mark.browser
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
HREF = re.compile(r'(?:href|src)=(?:"([^"]+)"|([^\s">]+))')  # quoted or bare (editionpages.bare)
BASE = re.compile(r'<base href="([^"]+)">')
ID = re.compile(r'\bid=(?:"([^"]+)"|([^\s">]+))')


@pytest.fixture(scope="session")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    pg = context.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def _reports(run, factory, name):
    result, processed = run
    out = factory.mktemp(name)
    report.render(processed, out, result.ingested.docs)
    return out, processed


@pytest.fixture(scope="session")
def seed_reports(seeds_run, tmp_path_factory):
    return _reports(seeds_run, tmp_path_factory, "seed-reports")


@pytest.fixture(scope="session")
def archive_reports(archive_run, tmp_path_factory):
    return _reports(archive_run, tmp_path_factory, "archive-reports")


def step_counts(processed: Path) -> dict:
    with sqlite3.connect(processed / "crdiff.sqlite") as db:  # changes.csv leaves out the plain unchanged rows
        changes = pd.read_sql("SELECT from_edition, to_edition, change FROM changes_all", db)
    return {f"{a}_{b}": g["change"].value_counts().to_dict()
            for (a, b), g in changes.groupby(["from_edition", "to_edition"])}


def check_index_counts(page, processed):
    for step, counts in step_counts(processed).items():
        row = page.locator(f'tr[data-step="{step}"]')
        for cell in row.locator("td[data-class]").all():
            assert int(cell.inner_text()) == counts.get(cell.get_attribute("data-class"), 0), step


def test_seed_index_search_and_two_clicks_to_the_history(page, seed_reports, shots):
    reports, processed = seed_reports
    page.goto((reports / "index.html").as_uri())
    check_index_counts(page, processed)
    page.screenshot(path=str(shots / "seed-index.png"), full_page=True)
    # two clicks: the step, then the rule
    page.click('tr[data-step="2008-03-17_2025-06-06"] a >> nth=0')
    page.click("a.num:text('212.1b → 205.1a')")
    assert page.locator("h1").inner_text() == "212.1b → 205.1a"
    assert page.locator("li.version .num").all_inner_texts() == ["212.1b", "205.1a"]
    assert "Commentary that cites it" in page.content() and "citing CR 204.1a" in page.inner_text("main")
    page.screenshot(path=str(shots / "seed-205.1a-history.png"), full_page=True)
    # search by an old number, and by words
    page.goto((reports / "index.html").as_uri())
    page.fill("#q", "212.1b")
    assert page.locator("#results li a").all_inner_texts() == ["212.1b → 205.1a"]
    page.fill("#q", "summoning sickness")
    assert page.locator("#results li").count() >= 1
    page.fill("#q", "212.1b")
    page.click("#results li a")
    assert page.locator("h1").inner_text() == "212.1b → 205.1a"
    assert page.errors == []


def test_seed_pair_page_counts_filters_and_views(page, seed_reports, shots):
    reports, processed = seed_reports
    page.goto((reports / "pairs/2006-07-15_2008-03-17.html").as_uri())
    counts = step_counts(processed)["2006-07-15_2008-03-17"]
    for cell in page.locator("td[data-count]").all():
        name = cell.get_attribute("data-count")
        if name != "renumbered":
            assert int(cell.inner_text()) == counts.get(name, 0)
    visible = lambda: page.locator("li.change:visible").count()  # noqa: E731
    shown = sum(n for c, n in counts.items() if c not in ("unchanged", "cosmetic", "reference"))
    assert visible() == shown  # cosmetic and reference-only changes are hidden by default
    page.check("input[value=cosmetic]")
    assert visible() == shown + counts["cosmetic"]
    page.uncheck("input[value=first_seen]")
    assert visible() == shown + counts["cosmetic"] - counts["first_seen"]
    page.select_option("#chapter", "212")
    assert visible() == shown + counts["cosmetic"] - counts["first_seen"]
    with_view = lambda v: page.locator(f"li.change:has({v}:visible)").count()  # noqa: E731  (title, text, examples)
    assert with_view(".inline-view") == visible()
    page.click("#view-side")
    assert page.locator(".inline-view:visible").count() == 0 and with_view(".side-view") == visible()
    page.screenshot(path=str(shots / "seed-pair-side-by-side.png"))
    page.click("#view-inline")
    assert page.locator(".side-view:visible").count() == 0
    first = page.locator("li.change.first_seen .inline-view ins").first  # a new rule shows its text, inserted
    assert first.inner_text().strip()
    assert page.errors == []


def internal_links(reports: Path, path: Path) -> list[tuple[Path, str]]:
    """Each link of a page to a page of the reports, resolved as a browser does (against its <base>,
    which a source page sets to its edition page), with its anchor."""
    text = path.read_text(encoding="utf-8")
    base = BASE.search(text)
    page = (path.parent / base[1]).resolve() if base else path
    out = []
    for quoted, unquoted in HREF.findall(text):
        href = quoted or unquoted
        if href.startswith(("http:", "https:", "mailto:")) or (href.startswith("#") and not base):
            continue
        target, _, anchor = href.partition("#")
        target = target.partition("?")[0]  # ?lines=515-521 on source pages, ?as-of= on rule pages
        out.append(((page.parent / target).resolve() if target else page, anchor))
    return out


def check_links(reports: Path) -> int:
    pages = sorted(reports.rglob("*.html"))
    ids: dict[Path, set[str]] = {}
    for path in pages:
        for target, anchor in internal_links(reports, path):
            assert target.exists(), f"{path.relative_to(reports)} links to missing {target}"
            if anchor:
                if target not in ids:
                    ids[target] = {a or b for a, b in ID.findall(target.read_text(encoding="utf-8"))}
                assert anchor in ids[target], f"{path.relative_to(reports)} links to missing #{anchor} in {target.name}"
    return len(pages)


def test_a_lineage_page_counts_its_editions_in_good_english(seed_reports):
    out, _ = seed_reports
    pages = [p.read_text(encoding="utf-8") for p in (out / "lineage").glob("*.html")]
    assert not [p for p in pages if re.search(r"\b1 editions\b", p)]
    assert any(re.search(r"\b1 edition\b", p) for p in pages)  # a rule only one source has


def test_every_seed_page_loads_clean_with_no_broken_links(page, seed_reports):
    reports, _ = seed_reports
    assert check_links(reports) > 10
    for path in sorted(reports.rglob("*.html")):
        page.goto(path.as_uri())
        assert page.errors == [], path.name


def test_source_html_is_escaped_and_never_runs(page, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    evil = ('212.1a A rule with <script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned = 2"> '
            'and <a href="javascript:window.__pwned = 3">a link</a>.\n\n212.1b Plain.\n')
    interface = "Вы можете отметить интересные вам фрагменты текста <script>window.__pwned = 4</script>\n"
    (raw / "old.txt").write_text(evil + interface, encoding="utf-8")
    (raw / "new.txt").write_text(evil.replace("A rule", "A changed rule"), encoding="utf-8")
    entry = '[[source]]\nfile = "{}"\nformat = "copy"\nkind = "copy"\nedition = "{}"\nlanguage = "en"\n\n'
    (raw / "manifest.toml").write_text(entry.format("old.txt", "2001-01-01") + entry.format("new.txt", "2002-01-01"),
                                       encoding="utf-8")
    result = stages.run_datasets(raw, [], tmp_path / "processed", quiet=True)
    reports = tmp_path / "reports"
    report.render(tmp_path / "processed", reports, result.ingested.docs)
    pages = ["index.html", "pairs/2001-01-01_2002-01-01.html", "sources.html", "sources/old.html",
             "editions/2001-01-01.html"]
    pages += [str(p.relative_to(reports)) for p in (reports / "lineage").glob("*212.1a*")]
    for name in pages:
        page.goto((reports / name).as_uri())
        assert page.evaluate("typeof window.__pwned") == "undefined", name
        assert page.locator("main script, main img, a[href^='javascript']").count() == 0, name
        if name == "sources.html":
            page.click("summary")
            assert "<script>window.__pwned = 4</script>" in page.inner_text("main")
        elif name == "sources/old.html":  # the rule's line is shown on the edition page, and links there
            assert "<script>window.__pwned = 4</script>" in page.inner_text("main")
            page.click("#L1")
            assert page.url.endswith("editions/2001-01-01.html#212.1a")
            assert "<script>window.__pwned = 1</script>" in page.inner_text("[id='212.1a']")
        elif name != "index.html":
            assert "<script>window.__pwned = 1</script>" in page.inner_text("main"), name
    page.goto((reports / "index.html").as_uri())
    page.fill("#q", "pwned")
    assert page.locator("#results li").count() >= 1 and page.evaluate("typeof window.__pwned") == "undefined"
    assert page.errors == []


@needs_archive
def test_archive_index_and_the_2009_pair_page(page, archive_reports, shots):
    reports, processed = archive_reports
    page.goto((reports / "index.html").as_uri())
    check_index_counts(page, processed)
    page.screenshot(path=str(shots / "archive-index.png"))
    page.fill("#q", "212.1b")
    assert "212.1b → 204.1a → 205.1a" in page.locator("#results li a").all_inner_texts()
    start = time.perf_counter()
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri())
    load = time.perf_counter() - start
    rows = page.locator("li.change").count()
    assert rows > 1000
    filter_ms = page.evaluate("""() => {
        const box = document.querySelector('input[value=unchanged]');
        const t0 = performance.now();
        box.click();
        const n = document.querySelectorAll('li.change:not([hidden])').length;
        return [performance.now() - t0, n];
    }""")
    side_ms = page.evaluate("""() => { const t0 = performance.now(); document.getElementById('view-side').click();
        document.body.offsetHeight; return performance.now() - t0; }""")
    page.screenshot(path=str(shots / "archive-2009-pair.png"))
    figures = {"rows": rows, "load_seconds": round(load, 2), "filter_ms": round(filter_ms[0], 1),
               "shown_after_filter": filter_ms[1], "side_by_side_ms": round(side_ms, 1)}
    (shots / "browser-figures.json").write_text(json.dumps(figures, indent=1))
    print(figures)
    assert filter_ms[0] < 5000 and side_ms < 5000  # a frozen tab, not a speed target
    page.goto((reports / "lineage/2003-10-01_212.1b.html").as_uri())
    assert page.locator("li.version .num").all_inner_texts()[-1] == "205.1a"
    page.screenshot(path=str(shots / "archive-205.1a-history.png"), full_page=True)
    assert page.errors == []


@needs_archive
def test_archive_pages_have_no_broken_links_and_load_clean(page, archive_reports):
    reports, _ = archive_reports
    assert check_links(reports) > 4000
    sample = [reports / "index.html", reports / "sources.html", reports / "terminology.html"]
    sample += sorted((reports / "pairs").glob("*.html")) + sorted((reports / "lineage").glob("*.html"))[::400]
    for path in sample:
        page.goto(path.as_uri())
        assert page.errors == [], path.name


def test_compare_report_for_any_two_files(page, tmp_path):
    from click.testing import CliRunner
    from pipeline.cli.main import main
    two_small_editions(tmp_path)
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--report",
                                       "--reports", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    page.goto((tmp_path / "r/compare/a_b.html").as_uri())
    assert page.locator("li.change:visible").count() == 1  # the renumbered-only one is hidden
    assert page.locator("li.change:visible .inline-view ins").all_inner_texts() == ["cast", "their"]
    page.check("input[value=unchanged]")
    assert page.locator("li.change:visible").count() == 2
    assert page.errors == []


@pytest.mark.parametrize("old, new", [
    ("a b c", "a x c"), ("play the land now", "cast the spell now"), ("", "new text"), ("old text", ""),
    ("A, B.", "A B."), ("x  y", "x y"),
])
def test_redline_segments_rebuild_both_texts(old, new):
    from pipeline.align.diff import word_ops
    inline, left, right = segments(old, new, [list(op) for op in word_ops(old, new)])
    assert "".join(t for tag, t in left) == old
    assert "".join(t for tag, t in right) == new
    assert "".join(t for tag, t in inline if tag != "ins") == old


# --- the rules reader (issue 14): edition pages, stable rule addresses ---------------------------

def _edition_links(page) -> dict:
    """For each anchored element of an edition page: the targets of the links in its text."""
    return page.evaluate("""() => { const out = {};
        document.querySelectorAll('.rules [id]').forEach(el => {
            out[el.id] = Array.from(el.querySelectorAll('a[href^="#"]')).map(a => a.getAttribute('href').slice(1)); });
        return out; }""")


@needs_archive
def test_archive_edition_page_anchors_every_rule_and_links_its_references(page, archive_reports, shots):
    reports, processed = archive_reports
    rules = pd.read_csv(processed / "rules.csv", keep_default_na=False, dtype=str)
    now = rules[(rules.edition == "2026-01-16") & rules.kind.isin(["part", "chapter", "section", "rule", "subrule"])]
    page.goto((reports / "editions/2026-01-16.html").as_uri())
    links = _edition_links(page)
    assert set(now.rule_id) <= set(links), sorted(set(now.rule_id) - set(links))[:10]
    terms = rules[(rules.edition == "2026-01-16") & (rules.kind == "glossary")].rule_id
    assert {t.replace(" ", "_") for t in terms} <= set(links)
    # the segmenter's references (references.csv), each looked for as a link in its rule's text
    refs = pd.read_csv(processed / "references.csv", keep_default_na=False, dtype=str)
    refs = refs[(refs.edition == "2026-01-16") & (refs.target_exists == "True") & (refs.kind != "glossary")]
    linked = sum(t in links.get(r, []) or any(x.startswith(t) for x in links.get(r, []))
                 for r, t in zip(refs.rule_id, refs.target))
    assert len(refs) > 1000 and linked / len(refs) >= 0.9, (linked, len(refs))
    # the table of contents and a reference both go to their target
    page.click(".toc a[href='#702']")
    assert page.evaluate("location.hash") == "#702"
    page.locator("[id='702.19c'] a[href='#702.19b']").click()
    assert page.evaluate("location.hash") == "#702.19b" and page.locator("[id='702.19b']").is_visible()
    page.screenshot(path=str(shots / "archive-edition-2026.png"))
    page.locator("[id='205.1a'] > a:first-child").click()  # the number leads to the rule's history
    assert "212.1b" in page.locator("h1").inner_text()
    assert page.errors == []


@needs_archive
def test_archive_stable_rule_address_now_and_as_of_a_date(page, archive_reports):
    reports, _ = archive_reports
    base = (reports / "rules/205.1a.html").as_uri()
    page.goto(base)
    page.wait_for_url("**/editions/2026-01-16.html#205.1a")
    page.goto(base + "?as-of=2011-06-17")
    page.wait_for_url("**/editions/2011-06-17.html?as-of=2011-06-17&rule=205.1a#204.1a")
    page.goto(base + "?as-of=2010-01-01")  # not an edition: the one in force on that day, and it says so
    page.wait_for_url("**/editions/2009-07-11.html?as-of=2010-01-01&rule=205.1a#204.1a")
    assert page.inner_text("#as-of-note").startswith(
        "Rule 205.1a as of 2010-01-01: the edition in force then was 2009-07-11 (M10, Magic 2010), "
        "where it was numbered 204.1a.")
    page.goto(base + "?as-of=2005-01-01")
    page.wait_for_url("**/editions/2003-10-01.html?as-of=2005-01-01&rule=205.1a#212.1b")
    page.goto(base + "?as-of=m10")  # a set code, as everywhere an edition is asked for
    page.wait_for_url("**/editions/2009-07-11.html?as-of=m10&rule=205.1a#204.1a")
    assert "as of M10 (Magic 2010, effective 2009-07-11): the edition in force then was 2009-07-11" in \
        page.inner_text("#as-of-note")
    page.goto(base + "?as-of=1999-01-01")
    assert "No edition here was in force on 1999-01-01" in page.inner_text("#as-of-status")
    assert page.errors == []


@needs_archive
@pytest.mark.parametrize("garbage", ["garbage", "2010-13-45", "2010-02-30", "", "<script>alert(1)</script>",
                                     "1e3", "M10%22%3E%3Cb%3E"])
def test_archive_as_of_refuses_garbage_with_a_message_instead_of_todays_rule(page, archive_reports, garbage):
    reports, _ = archive_reports
    url = (reports / "rules/205.1a.html").as_uri() + "?as-of=" + garbage
    page.on("dialog", lambda d: page.errors.append("a dialog opened"))
    page.goto(url)
    page.wait_for_timeout(300)
    assert page.url.startswith(url.partition("?")[0] + "?as-of=")  # stayed: today's rule is not shown instead
    status = page.inner_text("#as-of-status")
    assert "is neither a date (YYYY-MM-DD) nor a set code these reports know" in status
    assert page.locator("#as-of-status *").count() == 0 and page.errors == []


@needs_archive
def test_archive_yawgatog_anchors_resolve_on_the_edition_pages(page, archive_reports, shots):
    reports, _ = archive_reports
    edition = (reports / "editions/2026-01-16.html").as_uri()
    for anchor, rule in (("R70219b", "702.19b"), ("R1001", "100.1"), ("R702", "702"), ("R7023B", "702.3b")):
        page.goto(edition + "#" + anchor)
        page.wait_for_function(f"location.hash === '#{rule}'")
        box = page.locator(f"[id='{rule}']").bounding_box()
        assert box and -2 <= box["y"] < 1000, (anchor, box)  # scrolled to it (to a fraction of a pixel)
        assert page.evaluate("document.querySelector(':target').id") == rule
    page.screenshot(path=str(shots / "archive-yawgatog-anchor.png"))
    page.evaluate("location.hash = '#R2121b'")  # a link followed on the page itself
    assert "R2121b is rule 212.1b, which this edition does not have" in page.inner_text("#as-of-note")
    page.goto((reports / "editions/2009-05-01.html").as_uri() + "#R2121b")
    page.wait_for_function("location.hash === '#212.1b'")
    assert page.errors == []


@needs_archive
def test_archive_every_number_that_ever_existed_has_a_page_saying_what_it_was(page, archive_reports, shots):
    reports, processed = archive_reports
    rules = pd.read_parquet(processed / "rules.parquet", columns=["edition", "rule_id", "kind"])
    editions = pd.read_parquet(processed / "editions.parquet", columns=["edition", "status"])
    official = set(editions[editions.status.isin(["complete", "truncated"])].edition)
    numbers = set(rules[rules.edition.isin(official) & ~rules.kind.isin(["glossary", "commentary"])].rule_id)
    assert {p.stem for p in (reports / "rules").glob("*.html")} == numbers and len(numbers) > 5000
    page.goto((reports / "rules/212.1b.html").as_uri())  # not a number now: the page stays, and says
    page.wait_for_timeout(300)
    assert page.url.endswith("rules/212.1b.html")
    first = page.locator("table.periods tbody tr").first.inner_text()
    assert "2003-10-01 (MRD, Mirrodin)" in first and "2009-05-01 (ARB, Alara Reborn)" in first
    assert "numbered 204.1a from 2009-07-11" in first and "205.1a" in first
    page.locator("table.periods tbody tr").first.locator("td").last.locator("a").click()
    page.wait_for_url("**/editions/2026-01-16.html#205.1a")
    page.goto((reports / "rules/212.1b.html").as_uri() + "?as-of=2005-01-01")
    page.wait_for_url("**/editions/2003-10-01.html?as-of=2005-01-01&rule=212.1b#212.1b")
    page.goto((reports / "rules/212.1b.html").as_uri() + "?as-of=M10")  # 212.1b had no rule in M10
    assert "the edition in force was 2009-07-11 (M10, Magic 2010): rule 212.1b was not in it" in \
        page.inner_text("#as-of-status")
    page.goto((reports / "rules/205.1a.html").as_uri() + "#periods")  # a number of today stays when asked to
    page.wait_for_timeout(300)
    assert page.url.endswith("#periods") and "2013-05-01 (DGM" in page.inner_text("table.periods")
    page.screenshot(path=str(shots / "archive-rule-205.1a-periods.png"))
    assert page.errors == []


def test_seed_index_links_editions_and_datasets(page, seed_reports):
    reports, processed = seed_reports
    page.goto((reports / "index.html").as_uri())
    dated = page.locator("a[href^='editions/']").all_inner_texts()
    editions = pd.read_csv(processed / "editions.csv", dtype=str).edition.tolist()
    assert dated == editions
    downloads = page.locator(".datasets a").evaluate_all("els => els.map(a => a.href)")
    assert any(d.endswith("/rules.csv") for d in downloads) and any(d.endswith("datapackage.json") for d in downloads)
    for href in downloads:
        assert Path(href.removeprefix("file://")).exists(), href
    page.click("a[href='editions/2025-06-06.html']")
    assert page.locator("[id='205.1a']").count() == 1
    assert page.errors == []


# --- every change visible, and the pair and lineage page defects of issue 14 ------------------------

@needs_archive
def test_archive_pair_page_shows_every_change_and_keeps_its_state_in_the_address(page, archive_reports, shots):
    reports, _ = archive_reports
    page.goto((reports / "pairs/2025-06-06_2026-01-16.html").as_uri() + "#c-115.7e-115.7e")
    row = page.locator("[id='c-115.7e-115.7e']")
    assert row.is_visible()  # the change is in its example: the example is redlined
    assert row.locator(".part.example ins").count() >= 1 and row.locator(".part.example del").count() >= 1
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri())
    main = page.inner_text("main")
    assert "_Magic_" not in main and page.locator("li.change i:text('Magic')").count() > 0
    gaps = page.evaluate("""() => Array.from(
        document.querySelectorAll('li.change:not([hidden]) .inline-view del + ins'))
        .slice(0, 300).map(ins => { const a = Array.from(ins.previousElementSibling.getClientRects()).pop();
            const b = ins.getClientRects()[0]; return Math.abs(a.top - b.top) < 2 ? b.left - a.right : null; })
        .filter(g => g !== null)""")  # deleted and inserted words on one line: never touching
    assert len(gaps) > 50 and min(gaps) >= 2, sorted(gaps)[:5]
    added = page.locator("li.change.added").first
    assert "similarity" not in added.inner_text() and added.locator("ins").count() >= 1
    assert added.locator(".part.text del").count() == 0  # an added rule is all insertion
    options = page.locator("#chapter option").all_inner_texts()[1:]
    numbers = [o.split(".")[0] for o in options if o[:1].isdigit()]
    assert numbers == sorted(numbers, key=int) and "205. Expansion Symbol" in options
    ids = page.locator("li.change").evaluate_all("els => els.map(e => e.id)")
    assert len(ids) == len(set(ids)) and all(ids)
    # filters and view go into the address, and come back from it
    page.check("input[value=cosmetic]")
    page.uncheck("input[value=modified]")
    page.select_option("#chapter", "205")
    page.click("#view-side")
    url = page.url
    assert "show=" in url and "chapter=205" in url and "view=side" in url
    assert "modified" not in url.split("show=")[1].split("&")[0]
    shown = page.locator("li.change:visible").count()
    assert page.locator(".side-head").is_visible() and "(before)" in page.inner_text(".side-head")
    page.goto("about:blank")
    page.goto(url)
    assert page.locator("li.change:visible").count() == shown and page.is_checked("input[value=cosmetic]")
    assert not page.is_checked("input[value=modified]")
    assert page.locator("li.change:has(.side-view:visible)").count() == shown
    page.screenshot(path=str(shots / "archive-2009-pair-side.png"))
    # a link to a change hidden by default shows it
    cosmetic = page.locator("li.change.cosmetic").first.get_attribute("id")
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri())
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri() + "#" + cosmetic)
    assert page.locator(f"[id='{cosmetic}']").is_visible()
    assert page.errors == []


@needs_archive
def test_archive_lineage_page_links_collapses_and_highlights(page, archive_reports, shots):
    reports, _ = archive_reports
    page.goto((reports / "lineage/2003-10-01_212.1b.html").as_uri())
    compact = page.locator("li.version.compact").first  # a copy's observation (2008-03-17) now cuts the 2008 run
    assert "unchanged" in compact.inner_text() and compact.locator("a").count() >= 1
    assert len(compact.inner_text()) < 200  # one line, not the text again
    cosmetic = page.locator("li.version.cosmetic").first
    assert float(cosmetic.evaluate("e => getComputedStyle(e).opacity")) < 1
    page.check("#show-cosmetic")
    assert float(cosmetic.evaluate("e => getComputedStyle(e).opacity")) == 1
    steps = page.locator("a[href*='pairs/']").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert "../pairs/2009-05-01_2009-07-11.html#c-212.1b-204.1a" in steps
    assert page.locator("a.num[href='../editions/2013-05-01.html#205.1a']").count() == 1
    page.screenshot(path=str(shots / "archive-lineage-212.1b.png"), full_page=True)
    page.click("a:text('2003-10-01.txt lines 515–521')")
    page.wait_for_selector("pre.source > *.hl")  # the highlight is set by script once the page loads
    assert page.locator("pre.source > *.hl").evaluate_all("els => els.map(e => e.id)") == \
        [f"L{n}" for n in range(515, 522)]
    # a wrapped source line stays right of the line numbers
    page.set_viewport_size({"width": 400, "height": 800})
    indent = page.evaluate("""() => { const line = document.getElementById('L515');
        const text = line.lastChild; const range = document.createRange(); range.selectNodeContents(line);
        const rects = Array.from(range.getClientRects()); const before = getComputedStyle(line, '::before');
        const no = {bottom: line.getBoundingClientRect().top + parseFloat(getComputedStyle(line).lineHeight),
                    right: line.getBoundingClientRect().left + parseFloat(before.width)};
        return [Math.min(...rects.filter(r => r.top > no.bottom - 2).map(r => r.left)), no.right]; }""")
    assert indent[0] >= indent[1] - 1, indent
    assert page.errors == []


@needs_archive
@pytest.mark.parametrize("name", ["index.html", "editions/2026-01-16.html", "pairs/2009-05-01_2009-07-11.html",
                                  "lineage/2003-10-01_212.1b.html", "sources.html", "rules/212.1b.html#periods"])
def test_archive_pages_fit_400_px(browser, archive_reports, shots, name):
    reports, _ = archive_reports
    context = browser.new_context(viewport={"width": 400, "height": 900})
    pg = context.new_page()
    pg.goto((reports / name.partition("#")[0]).as_uri())
    assert pg.evaluate("document.documentElement.scrollWidth") <= 400, name
    if name.startswith("rules/"):  # a number's periods stack: nothing to scroll sideways either
        assert pg.evaluate("[...document.querySelectorAll('table.periods')].every(t => t.scrollWidth <= t.clientWidth)")
    pg.screenshot(path=str(shots / ("narrow-" + name.replace("/", "_") + ".png")))
    context.close()


def test_seed_search_results_read_well(page, seed_reports):
    reports, _ = seed_reports
    page.goto((reports / "index.html").as_uri())
    page.fill("#q", "summoning sickness")
    links = page.locator("#results li a").all_inner_texts()
    assert links and not any("Summoning →" in t for t in links)
    for snippet in page.locator("#results li span.muted").all_inner_texts():
        assert snippet.endswith(("…", ".", "”", ")", '"')) or len(snippet) < 160, snippet
    page.fill("#q", "player")
    for snippet in page.locator("#results li span.muted").all_inner_texts():
        if snippet.endswith(" …"):  # cut: at the end of a word, never inside one
            assert len(snippet) <= 162
    assert page.errors == []


def test_report_without_the_sources_links_to_no_missing_source_page(seeds_run, tmp_path):
    result, processed = seeds_run
    out = tmp_path / "r"
    report.render(processed, out, [d for d in result.ingested.docs if d.source.source_id.startswith("000")])
    assert len(list((out / "sources").glob("*.html"))) == 1
    assert check_links(out) > 10


# --- commentary with both numbers, sources by name (issue 14) ------------------------------------------

def test_seed_commentary_shows_the_number_cited_and_the_number_now(page, seed_reports):
    reports, processed = seed_reports
    page.goto(next(reports.glob("lineage/*_212.1b.html")).as_uri())
    cited = page.locator("blockquote.note .cited").all_inner_texts()
    assert cited and set(cited) == {"CR 204.1a (now 205.1a)"}, cited  # written in 2011, numbered 205.1a now
    assert page.errors == []


def test_seed_sources_are_named_not_hashed(page, seed_reports):
    reports, processed = seed_reports
    ids = pd.read_csv(processed / "sources.csv", dtype=str).source_id.tolist()
    page.goto((reports / "index.html").as_uri())
    links = page.locator("td a[href*='sources.html#']")
    texts = links.all_inner_texts()
    assert texts and not any(t in ids or t.removesuffix(".txt") in ids for t in texts), texts
    assert "Commentary, 2011-06-17" in texts and "Copy, 2006-07-15..2007-04-30" in texts
    assert "002_fe0d7c38d7e9f0fd" in page.inner_text("td:has(a:text('Commentary, 2011-06-17'))")  # the id, secondary
    page.goto((reports / "sources.html").as_uri())
    headings = page.locator("section h2 > a").all_inner_texts()
    assert "Rulings page, 2008-03-17" in headings and not set(headings) & set(ids)
    assert len(set(headings)) == len(headings)  # two copies of one edition stay apart
    page.click("a:text('Commentary, 2011-06-17')")
    assert page.locator("h1").inner_text() == "Commentary, 2011-06-17"
    assert "wiki-text" in page.inner_text("main") and "002_fe0d7c38d7e9f0fd" in page.inner_text("main")
    assert page.errors == []


@needs_archive
def test_archive_commentary_source_shows_each_citation_now(page, archive_reports, shots):
    reports, _ = archive_reports
    page.goto((reports / "sources/002_fe0d7c38d7e9f0fd.html").as_uri())
    tagged = page.locator("pre.source > *:has-text('[CR 204.1a]')")
    assert tagged.count() == 2 and tagged.locator(".now").all_inner_texts() == ["204.1a: now 205.1a"] * 2
    assert page.locator("pre.source > *:has-text('[CR 204.3d]') .now").inner_text() == "204.3d: now 205.3e"
    assert page.locator("pre.source > *:has-text('[CR 300.2a]') .now").count() == 0  # same number today
    page.screenshot(path=str(shots / "archive-commentary-source.png"), full_page=True)
    page.goto((reports / "lineage/2003-10-01_212.1d.html").as_uri())
    assert "CR 204.4b (now 205.4b)" in page.locator("blockquote.note .cited").all_inner_texts()
    assert page.errors == []


# --- issue 14, checked again as a user reads the archive's pages ------------------------------------------

@needs_archive
def test_archive_lineage_page_shows_an_added_rule_whole_and_names_its_sources(page, archive_reports):
    reports, _ = archive_reports
    page.goto((reports / "lineage/2011-06-17_114.6e.html").as_uri())
    first = page.locator("li.version").first  # 114.6e, added in 2011-06-17 with an example
    assert "added" in first.locator(".badge").all_inner_texts()
    assert "Arc Trail is an instant" in first.inner_text()
    assert "lines 694–695" in first.inner_text()
    page.goto((reports / "lineage/2003-10-01_212.1b.html").as_uri())
    assert "2025-06-06.txt line 1390" in page.locator("#v-2025-06-06").inner_text()  # not "lines 1390–1390"
    heads = (page.locator("li.version .head").all_inner_texts()
             + page.locator("blockquote.note footer").all_inner_texts())
    assert not any(re.search(r"\d{3}_[0-9a-f]{12,}", h) for h in heads), heads  # names, not hash ids
    assert "Commentary, 2011-06-17" in page.locator("blockquote.note footer").first.inner_text()
    assert page.errors == []


@needs_archive
def test_archive_side_by_side_headers_stay_in_view(page, archive_reports):
    reports, _ = archive_reports
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri() + "#show=modified&view=side")
    page.locator("li.change:visible").nth(300).scroll_into_view_if_needed()
    head = page.locator(".side-head")
    box = head.bounding_box()
    assert head.is_visible() and 0 <= box["y"] < 1000, box
    assert "2009-05-01 (before)" in head.inner_text() and "2009-07-11 (after)" in head.inner_text()
    assert page.errors == []


@needs_archive
def test_archive_timeline_reads_at_400_px(browser, archive_reports):
    reports, _ = archive_reports
    context = browser.new_context(viewport={"width": 400, "height": 900})
    pg = context.new_page()
    pg.goto((reports / "index.html").as_uri())
    sizes = pg.evaluate("""() => { const fig = document.querySelector('figure.chart');  // HTML text, never scaled
        return Array.from(fig.querySelectorAll('.y, .v, .ticks span')).filter(t => t.getClientRects().length)
            .map(t => parseFloat(getComputedStyle(t).fontSize)); }""")
    assert sizes and min(sizes) >= 10, sizes  # the years and counts in pixels on the screen (more below)
    assert pg.locator("figure.chart svg text").count() == 0
    assert pg.evaluate("document.documentElement.scrollWidth") <= 400
    context.close()


@needs_archive
def test_archive_pair_page_part_filter_shows_its_chapters(page, archive_reports):
    reports, _ = archive_reports
    page.goto((reports / "pairs/2009-05-01_2009-07-11.html").as_uri())
    parts = page.locator("#chapter optgroup[label^='Parts'] option").all_inner_texts()
    chapters = page.locator("#chapter optgroup[label^='Chapters'] option").all_inner_texts()
    assert "2. Parts of a Card" in parts and "205. Expansion Symbol" in chapters and not set(parts) & set(chapters)
    page.select_option("#chapter", "2")  # a part: the changes in all of its chapters, and its own heading
    shown = page.locator("li.change:visible").evaluate_all("els => els.map(e => e.dataset.chapter)")
    expected = page.locator("li.change").evaluate_all("""els => els.filter(e => ['modified', 'renamed', 'added',
        'removed', 'split', 'merged'].includes(e.dataset.class) && /^2(\\d\\d)?$/.test(e.dataset.chapter)).length""")
    assert len(shown) == expected and len(shown) > 20 and set(shown) >= {"2", "205"}
    assert "chapter=2" in page.url
    page.select_option("#chapter", "205")
    assert set(page.locator("li.change:visible").evaluate_all("els => els.map(e => e.dataset.chapter)")) == {"205"}
    assert page.errors == []


@pytest.mark.parametrize("width", [1300, 400])
def test_seed_source_page_shows_every_line_number_one_row_a_line(browser, seed_reports, width):
    """Each line's number is on screen (a hanging indent pushed it off the left edge), and a source line
    takes one row, not two (the newline between the lines' blocks made a blank row of its own)."""
    reports, _ = seed_reports
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto((reports / "sources" / "002_fe0d7c38d7e9f0fd.html").as_uri() + "#L31")
    number = page.evaluate("""() => { const s = getComputedStyle(document.getElementById('L31'), '::before');
        return [s.content, parseFloat(s.width)]; }""")  # style.css counts the lines: the number is not in the bytes
    assert number[0] == "counter(line)" and number[1] > 10
    text = page.locator("#L31").bounding_box()
    assert text["x"] >= 0  # the number's box is the line's start: on screen
    page.locator("#L33").click(position={"x": 5, "y": 5})  # the number links to its line
    assert page.evaluate("location.hash") == "#L33"
    assert page.evaluate("document.querySelectorAll('pre.source > *').length") == \
        page.evaluate("+document.querySelector('pre.source > *:last-child').id.slice(1)")  # counted from 1, each
    blank, after = page.locator("#L31").bounding_box(), page.locator("#L32").bounding_box()
    assert blank["height"] < 30 and after["y"] - (blank["y"] + blank["height"]) < 2  # line 31 is blank


def test_archive_index_counts_the_sources_used_apart_from_those_not_used(page, archive_reports):
    reports, processed = archive_reports
    sources = pd.read_csv(processed / "sources.csv", dtype=str, keep_default_na=False)
    used, unused = int((sources.rejection == "").sum()), int((sources.rejection != "").sum())
    page.goto((reports / "index.html").as_uri())
    line = page.locator("main p").first.inner_text()
    assert f"from {used} source files ({unused} more not used: see the sources audit)" in line, line


# --- the charts and the count tables at a phone's width and a desktop's -----------------------------
# Nothing runs off the page; the labels that show never overlap, stay inside their chart and a readable
# size; the legend names every colour the bars use. The index and terminology pages are made up
# (test_charts.py) with 13 and 110 editions: at 110 the old chart's labels piled up.

CHART_WIDTHS = (320, 400, 1000, 1400)


@pytest.fixture(scope="session")
def made_up_pages(tmp_path_factory):
    from test_charts import write_pages
    base = tmp_path_factory.mktemp("charts")
    return {count: write_pages(base / str(count), count) for count in (13, 110)}


def open_at(browser, path: Path, width: int):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(path.as_uri())
    return page


# What a reader sees of a chart: its box, and each piece of its text that shows (its box and font size).
MEASURE = """fig => {
    const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
    const shown = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    const texts = sel => Array.from(fig.querySelectorAll(sel)).filter(shown).map(el => ({
        text: el.textContent, ...box(el.getBoundingClientRect()), size: parseFloat(getComputedStyle(el).fontSize)}));
    return {figure: box(fig.getBoundingClientRect()), scroll: [fig.scrollWidth, fig.clientWidth],
            ticks: texts('.ticks span'), numbers: texts('.v'), all: texts('.legend li, .panel, .y, .v, .ticks span'),
            svgText: fig.querySelectorAll('svg text').length,
            fills: Array.from(new Set(Array.from(fig.querySelectorAll('svg rect')).map(r => getComputedStyle(r).fill))),
            swatches: Array.from(fig.querySelectorAll('.legend .swatch'))
                .map(s => getComputedStyle(s).backgroundColor)};
}"""


def overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes meet."""
    return [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:]
            if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]]


def check_chart(page, width: int) -> dict:
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the page
    seen = page.locator("figure.chart").evaluate(MEASURE)
    fig = seen["figure"]
    assert seen["scroll"][0] <= seen["scroll"][1] and fig["right"] <= width
    assert seen["svgText"] == 0  # no text in the stretched SVG: it would be stretched too
    assert len(seen["ticks"]) >= 3, seen["ticks"]
    assert overlapping(seen["ticks"]) == [] and overlapping(seen["numbers"]) == []
    outside = [t["text"] for t in seen["all"] if t["left"] < fig["left"] - 1 or t["right"] > fig["right"] + 1]
    assert outside == []
    assert min(t["size"] for t in seen["all"]) >= 9
    return seen


@pytest.mark.parametrize("count", [13, 110])
@pytest.mark.parametrize("width", CHART_WIDTHS)
def test_index_timeline_reads_and_fits(browser, made_up_pages, count, width):
    page = open_at(browser, made_up_pages[count] / "index.html", width)
    seen = check_chart(page, width)
    assert set(seen["fills"]) <= set(seen["swatches"])
    assert len(seen["fills"]) == (3 if count == 110 else 2)  # complete (copy) and changed
    ticks = [t["text"] for t in seen["ticks"]]
    if count == 110:
        assert all(len(t) == 4 for t in ticks) and "2000" in ticks and not seen["numbers"]  # years, not 110 dates
    else:  # wide enough, every edition is named and every count written above its bar
        assert len(ticks) == 13 if width >= 1100 else all(len(t) == 4 for t in ticks)
        assert len(seen["numbers"]) == (13 + 12 if width >= 700 else 0)
    page.close()


@pytest.mark.parametrize("width", CHART_WIDTHS)
def test_terminology_rows_read_and_fit(browser, made_up_pages, width):
    page = open_at(browser, made_up_pages[110] / "terminology.html", width)
    check_chart(page, width)
    assert "“<b>his or her</b>” → “their”" in page.locator("figure.chart").inner_text()  # as text
    assert page.locator("figure.chart b").count() == 0
    page.close()


@pytest.mark.parametrize("width", [320, 400])
def test_pair_summary_fits_a_phone(browser, seed_reports, width):
    reports, _ = seed_reports
    page = open_at(browser, reports / "pairs/2006-07-15_2008-03-17.html", width)
    table = page.locator("table.summary")
    sizes = table.evaluate("t => [t.scrollWidth, t.clientWidth, t.getBoundingClientRect().right]")
    assert sizes[0] <= sizes[1] and sizes[2] <= width, sizes
    cells = table.locator("td").evaluate_all("tds => tds.map(td => [getComputedStyle(td, '::before').content, "
                                             "td.getBoundingClientRect().right])")
    assert len(cells) == len(CHANGES) + 2 and all(label != "none" and right <= width for label, right in cells)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.close()


@needs_archive
def test_archive_pages_name_the_latest_edition_only_through_the_script(browser, archive_reports, shots):
    """A lineage that goes on into the latest edition, and a number of today: their pages do not name the latest
    edition (a new edition that continues them leaves them as they are). With script, editions.js names it and
    the editions of the run are listed, each linked; without, the page says only what stays true."""
    reports, _ = archive_reports
    latest = json.loads(re.search(r"CR_EDITIONS = (\[.*?\]);", (reports / "editions.js").read_text()).group(1))[-1]
    lineage = next(p for p in sorted((reports / "lineage").glob("*.html"))
                   if re.search(r'data-since="?2013', p.read_text()))  # unchanged since 2013 (2 later editions)
    assert latest not in lineage.read_text() and latest not in (reports / "rules/205.1a.html").read_text()
    for script in (True, False):
        context = browser.new_context(viewport={"width": 1300, "height": 1000}, java_script_enabled=script)
        pg = context.new_page()
        pg.goto(lineage.as_uri())
        row = pg.locator("li[data-since]")
        links = row.locator("a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
        if script:
            assert links and links[-1].startswith(f"../editions/{latest}.html#") and latest in row.inner_text()
            assert re.fullmatch(r"\d+ editions", pg.locator(".count").inner_text())
            pg.screenshot(path=str(shots / "archive-lineage-open-run.png"), full_page=True)
        else:
            assert links == [] and "in every later edition of these reports" in row.inner_text()
            assert "and every later one" in pg.locator(".count").inner_text()
            pg.screenshot(path=str(shots / "archive-lineage-open-run-no-script.png"), full_page=True)
        pg.goto((reports / "rules/205.1a.html").as_uri() + "#periods")
        status = pg.locator("#rule-target").inner_text()
        assert latest in status if script else latest not in status and "the latest edition of these reports" in status
        assert pg.locator("table.periods tr").last.locator("a").count() >= 1
        context.close()


@needs_archive
def test_archive_side_by_side_built_by_the_script_is_the_one_the_page_wrote_before(browser, archive_run, tmp_path,
                                                                               monkeypatch):
    """A pair page leaves out a side-by-side redline that is the inline one without its insertions (left) and
    deletions (right), and app.js builds it: the same HTML as the page writes it out in full."""
    from pipeline.report import redline
    result, processed = archive_run
    name = "pairs/2009-05-01_2009-07-11.html"
    report.render(processed, tmp_path / "derived", result.ingested.docs)
    parts = redline.parts

    def written(*args):
        return [{**p, "derived": False} for p in parts(*args)]
    monkeypatch.setattr(redline, "parts", written)
    report.render(processed, tmp_path / "full", result.ingested.docs)
    assert (tmp_path / "derived" / name).stat().st_size < 0.7 * (tmp_path / "full" / name).stat().st_size
    halves = []
    for folder in ("derived", "full"):
        pg = browser.new_context().new_page()
        pg.goto((tmp_path / folder / name).as_uri() + "#show=modified,cosmetic,added,removed&view=side")
        halves.append(pg.evaluate("""() => [...document.querySelectorAll('.side-view')].map(
            box => [...box.children].map(half => half.innerHTML))"""))
    assert halves[0] == halves[1] and len(halves[0]) > 1000
