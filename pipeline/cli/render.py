"""What the commands print, as lines made from what the library returns: a rule's history, an identified
fragment, a comparison, rewritten citations, a run's summary. Nothing here reads files or decides anything
the datasets say; main.py echoes these lines (a pair (line, True) goes to standard error)."""
from __future__ import annotations

import re
import textwrap

from pipeline.query.history import SPLIT_FROM, SPLIT_OFF, TOOK_IN, relations_by_step
from pipeline.query.identify import label as window_label
from pipeline.registry import label, missing


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


WIDTH = 100
# What textwrap would change in a line that fits: its whitespace but spaces, and the line breaks of
# str.splitlines (textwrap.indent indents each line); whitespace at the end is checked apart (str.isspace:
# textwrap drops a last chunk that strips to nothing, a no-break space too).
WRAPPED_SPACE = re.compile(r"[\t\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029]")


def fill(text: str, indent: str) -> str:
    """Wrapped at 100 columns between words only (a URL or a hyphenated word stays whole). A line that
    fits, is not blank and holds nothing textwrap changes (WRAPPED_SPACE) is only indented: textwrap took
    0.1-0.2 s of the 1,900 lines of the July 2009 comparison."""
    if len(text) <= WIDTH and text and not text[-1].isspace() and not WRAPPED_SPACE.search(text):
        return indent + text
    return textwrap.indent(textwrap.fill(text, WIDTH, break_on_hyphens=False, break_long_words=False), indent)


def plain(value):
    """numpy scalars (a pandas bool, an int64) as the plain values JSON knows (json.dumps's default)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# history

def history(lineages: list[dict], show_all: bool) -> list[str]:
    """`history`'s text: each lineage that carried the rule asked for, with a heading when there are several."""
    out = []
    if len(lineages) > 1:
        query = lineages[0]["query"]
        where = f" in {query['edition']}" if query["edition"] else " (in any edition; --edition DATE picks one)"
        out.append(f"{len(lineages)} lineages carried {query['rule']}{where}: each is shown below")
    for n, lineage in enumerate(lineages, 1):
        out.append(f"[{n}/{len(lineages)}] lineage {lineage['lineage_id']}: {_carried(lineage)}" if len(lineages) > 1
                   else f"lineage {lineage['lineage_id']}")
        out += lineage_lines(lineage, show_all)
    return out


def lineage_lines(lineage: dict, show_all: bool) -> list[str]:
    """A lineage's steps, its end, and the commentary citing it, as `history` prints them."""
    placed = relations_by_step(lineage)
    versions, out = lineage["versions"], []
    for first, last in _folded(versions, placed, show_all):
        out += _step_lines(versions, first, placed.get(first, [])) if first == last else [
            f"  {versions[first]['edition']} … {versions[last]['edition']}  unchanged ({last - first + 1} editions)"]
    for end in lineage["ends"]:
        out.append(f"  {end['edition']}  {end['change']}" + (f" into {end['into']}" if end["into"] else ""))
    out += [f"  {x['edition']}  {x['how']} {x['rule_id']}" for x in placed.get(None, [])]  # at no step shown
    for c in lineage["commentary"]:
        out += [f"  commentary {c['rule_id']} ({c['edition']}, citing {c['cited']}):", fill(c["text"], "      ")]
    return out


def _folded(versions: list[dict], placed: dict, show_all: bool) -> list[tuple[int, int]]:
    """The steps to show, as (first, last) indexes: a run of plain unchanged editions (same number, no
    note, no split or merge) is one, unless --all."""
    runs: list[list] = []
    for i, v in enumerate(versions):
        plain = not show_all and v["change"] == "unchanged" and not v["renumbered"] and not v["note"] \
            and i not in placed
        if plain and runs and runs[-1][2]:
            runs[-1][1] = i
        else:
            runs.append([i, i, plain])
    return [(first, last) for first, last, _ in runs]


def _step_lines(versions: list[dict], i: int, relations: list[dict]) -> list[str]:
    """One step: its line, the splits and merges that happened there, then its text (the first
    version whole, a change as its redline, a typography change as its swaps)."""
    v = versions[i]
    moved = " (renumbered)" if v["renumbered"] and v["kind"] != "glossary" else ""  # a term: "renamed"
    note = f" ({v['note']})" if v["note"] else ""
    title = f" “{v['title']}”" if v["title"] and v["title"] != v["rule_id"] else ""  # a term is its title
    out = [f"  {v['edition']}  {v['rule_id']:<10}{title} {v['change']}{moved}{note}   "
           f"[{v['source']} lines {v['lines']}]", *_relation_lines(relations)]
    shown = [v["text"], *v["examples"]] if i == 0 else v["redlines"]  # the first version whole
    if v["swaps"]:  # typography only: the swaps, not the whole paragraph again
        shown = [f"typography only: {v['swaps']}"]
    return out + [fill(line, "      ") for line in (shown if v["change"] != "unchanged" or i == 0 else ()) if line]


def _relation_lines(relations: list[dict]) -> list[str]:
    """Splits and merges at one step, those of a kind on one line: "split off into 400.7a, 400.7b"."""
    words = {SPLIT_FROM: "split from", SPLIT_OFF: "split off into", TOOK_IN: "merged with"}
    grouped: dict[tuple[str, str], list[str]] = {}
    for x in relations:
        grouped.setdefault((x["how"], x["edition"]), []).append(x["rule_id"])
    return [f"    {words.get(how, how)} {', '.join(rule_ids)}" + ("" if how == SPLIT_OFF else f" of {edition}")
            for (how, edition), rule_ids in grouped.items()]


def _carried(lineage: dict) -> str:
    """Which of several lineages is which: when it had the number asked for, and what became of it."""
    rule, (first, last) = lineage["query"]["rule"], lineage["carried"]
    end = lineage["ends"][-1] if lineage["ends"] else None
    after = f"now {lineage['now']}" if lineage["now"] else f"{end['change']} in {end['edition']}" if end else \
        f"last in {lineage['versions'][-1]['edition']}"
    return f"{rule} in {first}{'' if first == last else f' … {last}'}, {after}"


# identify

IDENTIFY_VERBS = {  # how a rule agrees with the closest edition, or not: (one rule, several)
    "other typography": ("agrees with {e} in words, not quotes or dashes",
                         "agree with {e} in words, not quotes or dashes"),
    "start": ("is the start of its text in {e} (cut short)", "are the start of their text in {e} (cut short)"),
    "inside": ("is part of its text in {e} (cut before the first number)",
               "are part of their text in {e} (cut before the first number)"),
    "other examples": ("has other examples in {e}", "have other examples in {e}"),
    "other words": ("has other words in {e}", "have other words in {e}"),
    "absent": ("is not in {e}", "are not in {e}"),
}


def identified(report: dict, named: bool) -> list[tuple[str, bool]]:
    """identify's text output for one fragment, made from its summary: (line, to standard error)."""
    files = ", ".join(report["files"])
    if "error" in report:
        return [(f"{files}: error: {report['error']}", False)]
    out = [(f"note: {path}: read as {read_as['as']}, by its look (--format FORMAT to read it otherwise)", True)
           for path, read_as in zip(report["files"], report["read_as"]) if read_as["chosen_by"] == "sniffed"]
    lines = []
    editions = report["window"]["editions"] if report["window"] else []
    lines.append(("" if not named else f"{files}: ") + f"{count(report['rules'], 'rule')}; matches "
                 + window_label(tuple(editions))
                 + (f" ({len(editions)} editions: {', '.join(editions)})" if len(editions) > 1 else ""))
    if not editions:
        groups: dict[tuple[str, ...], list[str]] = {}
        for rule_id, alone in report["alone"].items():  # why nothing matches: what each rule matches alone
            groups.setdefault(tuple(alone), []).append(rule_id)
        for alone, rule_ids in sorted(groups.items()):
            verb = "matches" if len(rule_ids) == 1 else "match"
            lines.append(f"  {count(len(rule_ids), 'rule')} ({_some(rule_ids)}) {verb} "
                         f"{', '.join(alone) if alone else 'no edition'}")
        if report["closest"]:
            lines.append(f"  closest: {', '.join(report['closest'])} ({report['agree']} of "
                         f"{count(report['rules'], 'rule')})")
    if report["exactly"]:
        x = report["exactly"]
        lines.append(f"  exactly as printed in {', '.join(x['editions'])}: {x['rules']} of "
                     f"{count(report['rules'], 'rule')} with the same quotes and dashes too (the other editions: "
                     f"at most {x['others']})")
    for verdict, rule_ids in report["rules_by_verdict"].items():
        if verdict in IDENTIFY_VERBS:
            phrase = IDENTIFY_VERBS[verdict][len(rule_ids) > 1].format(e=report["compared_with"])
            lines.append(f"  {count(len(rule_ids), 'rule')} ({_some(rule_ids)}) {phrase}")
    return out + [(line, False) for line in lines]


def _some(items: list[str], n: int = 4) -> str:
    return ", ".join(items[:n]) + (", ..." if len(items) > n else "")


# compare

def comparison(changes: list, olds: dict, news: dict, show_all: bool, diffed: bool = False) -> str:
    """`compare`'s text: the counts of each class, then each change (unchanged rules only with --all, or
    renumbered) with its redlines; `olds` and `news` are the records by number. `diffed`: each change was
    made here of the records `olds` and `news` give for its numbers, so its word operations are those of
    the redlines (not worked out twice)."""
    from pipeline.align.diff import redlines
    from pipeline.query.compare import summary
    out = [", ".join(f"{k}: {v}" for k, v in sorted(summary(changes).items()))]
    for c in changes:
        if c.change == "unchanged" and not c.renumbered and not show_all:
            continue
        heading = (f"{c.old_rule_id or '-'} -> {c.new_rule_id or '-'}  {c.change}"
                   + (" renumbered" if c.renumbered else ""))
        out.append(heading + ("  [review]" if c.review else "") + (f"  ({c.note})" if c.note else ""))
        for line in redlines(olds.get(c.old_rule_id), news.get(c.new_rule_id), c if diffed else None):
            out.append(fill(line, "    "))
    return "\n".join(out) + "\n"


# cite

def cited(found: dict) -> list[str]:
    """`cite`'s text: the text rewritten, then each citation with what became of it."""
    out = [found["text"].removesuffix("\n"),  # the text as given: one line break after it, whether it had one or not
           f"--- {count(len(found['citations']), 'citation')}, {label(found['from_edition'])} -> "
           f"{label(found['to_edition'])}"]
    for c in found["citations"]:
        now = ", ".join(c["numbers"]) or "-"
        out.append(f"line {c['line']}: {c['form']}  {c['cited']} -> {now}  {', '.join(c['marks']) or 'unchanged'}"
                   + (f" ({c['detail']})" if c["detail"] else ""))
    return out


# run and the stage commands

def warnings(result) -> list[str]:
    """Warnings about the run itself (a damaged cache): shown even with --quiet."""
    return [f"warning: {w}" for w in result.warnings] if result else []


def summary(result) -> list[tuple[str, bool]]:
    """What was read and kept of each source, what was rejected, the records made and the published
    editions the run lacks, and the time of each stage: (line, to standard error)."""
    out = []
    ing = result.ingested
    for doc in ing.docs:
        s = doc.source
        out.append((f"{s.source_id:<24} {s.format:<12} {doc.edition or 'unknown':<10} {s.encoding:<10} "
                    f"kept {doc.chars_kept:>7} of {doc.chars_total:>7} chars", False))
        out += [(f"  warning: {w}", False) for w in doc.warnings]
    out += [(f"{r.path}: rejected: {r.reason}", True) for r in ing.rejections]
    if result.editions:
        out.append((f"{result.records} records in {len(result.editions)} editions "
                     f"({result.cache[0]} sources segmented now, {result.cache[1]} read back from the cache; "
                     f"{result.cache[2]} paragraphs analysed by spaCy)", False))
        # Which editions are official ones of the run (a copy or a fragment is not) would belong to run.py.
        out += [(line, False) for line in _missing_editions(
            [e.edition for e in result.editions if e.complete or e.truncated])]
    timing = ", ".join(f"{k} {v:.1f}s" for k, v in result.seconds.items())
    return out + [(f"time: {timing}", True)]


def _missing_editions(editions: list[str]) -> list[str]:
    """The published editions (pipeline/data/sets.csv) between the run's first and last that it lacks."""
    lacking = [f"{s.effective} {s.set_code}" for s in missing(editions)]
    if not lacking:
        return []
    return [f"{count(len(lacking), 'published edition')} between {min(editions)} and {max(editions)} "
            f"not in the run: {', '.join(lacking[:6])}{' ...' if len(lacking) > 6 else ''}"]
