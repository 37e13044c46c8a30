"""Rules text copied from a web page whose interface is in another language.

Interface lines are found by language identification (lingua), not by a list of strings, so a
copy from a German, Polish or Japanese site is handled the same way as the Russian one.
"""
from __future__ import annotations

from functools import lru_cache

from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

from pipeline.ingest.clean import Ledger, unwrap
from pipeline.records import COPY_LANGUAGES as CANDIDATES, CleanDoc, SourceDoc

MIN_CONFIDENCE = 0.5  # the other language must be this likely ...
MAX_OWN_CONFIDENCE = 0.05  # ... and the document's own language this unlikely ("212.5. Instants" is not French)
# Characters of a line its language is told from: lingua's time grows with the square of a word's length
# (a word of 99,000 letters took 2.3 s), and a copied line has a few hundred (587 at most in raw/).
LANGUAGE_SAMPLE = 10_000


@lru_cache(maxsize=1)
def detector():
    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, code)) for code in CANDIDATES]
    # Low-accuracy mode uses the small trigram models: it loads in milliseconds instead of 1.5 s,
    # and the rule below drops a line only when its own language is all but ruled out.
    return LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()


def language_of(text: str, want: str = "en") -> str | None:
    """ISO 639-1 code of the line's language (told from its first LANGUAGE_SAMPLE characters); `want` when
    in doubt; None when it has no letters."""
    text = text[:LANGUAGE_SAMPLE]
    if not any(ch.isalpha() for ch in text):
        return None
    values = detector().compute_language_confidence_values(text)
    best = values[0]
    own = next((v.value for v in values if v.language.iso_code_639_1.name.lower() == want), 0.0)
    if best.value < MIN_CONFIDENCE or own > MAX_OWN_CONFIDENCE:
        return want
    return best.language.iso_code_639_1.name.lower()


def clean(doc: SourceDoc) -> CleanDoc:
    ledger = Ledger(doc.text, doc.path)
    want = doc.language
    verdicts = []  # (line, text, language or None)
    for no, line in ledger.numbered():
        verdicts.append((no, line, language_of(line, want) if line.strip() else ""))
    beside = _beside_interface([lang for _, _, lang in verdicts], want)
    kept = []
    dropped_langs: set[str] = set()
    for i, (no, line, lang) in enumerate(verdicts):
        if lang == "":
            ledger.drop(no, line, "blank lines")
        elif lang is not None and lang != want:
            ledger.drop(no, line, f"foreign-language interface ({lang})")
            dropped_langs.add(lang)
        elif lang is None and beside[i]:
            ledger.drop(no, line, "interface residue (no words)")
        else:
            kept.append((no, ledger.keep_stripped(no, line), True))
    ledger.check(doc.path)
    warnings = [f"dropped interface text in: {', '.join(sorted(dropped_langs))}"] if dropped_langs else []
    return CleanDoc(doc, tuple(unwrap(kept)), tuple(ledger.discards), ledger.total, ledger.kept,
                    doc.edition, tuple(warnings))


def _beside_interface(languages: list[str | None], want: str) -> list[bool]:
    """Per line: a line without words ("0", "×") belongs to the interface when its nearest worded
    neighbour before or after it does (blank lines and other wordless lines are passed over). Found
    in one pass each way: looking from every wordless line cost time quadratic in a run of them."""
    before = _nearest_worded(languages)
    after = _nearest_worded(languages[::-1])[::-1]
    return [(b is not None and b != want) or (a is not None and a != want) for b, a in zip(before, after)]


def _nearest_worded(languages: list[str | None]) -> list[str | None]:
    """Per line, the language of the nearest worded line before it (None at the top)."""
    out, last = [], None
    for lang in languages:
        out.append(last)
        if lang not in ("", None):
            last = lang
    return out
