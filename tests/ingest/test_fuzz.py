"""Property: ingest and segment of a mutated real source never raise anything but a rejection, and
every character of what was decoded is still accounted for (kept or discarded with a reason)."""
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.errors import SourceError
from pipeline.ingest.discover import _check_paragraphs
from pipeline.ingest.manifest import read_manifest
from pipeline.segment import read
from pipeline.segment.rules import ParagraphCache
from conftest import RAW, archive_files

ENTRIES = read_manifest(RAW)
SOURCES = ([(path, entry) for path, entry in sorted(ENTRIES.items())]
           + [(p, None) for p in archive_files()[:4] if p.exists()])
CACHE = ParagraphCache()  # shared: unchanged paragraphs are analysed once across examples

mutation = st.tuples(
    st.sampled_from(["insert", "delete", "duplicate", "flip", "truncate"]),
    st.floats(0, 1), st.integers(1, 4000),
    st.binary(min_size=1, max_size=40) | st.sampled_from([b"\r", b"\n", b"\x00", b"\xff\xfe", b"\xe2\x80",
                                                          b"\r\n100.1. ", b"212.1b ", b"\xef\xbb\xbf"]))


def mutate(data: bytes, mutations) -> bytes:
    for kind, where, size, payload in mutations:
        i = int(where * len(data))
        if kind == "insert":
            data = data[:i] + payload + data[i:]
        elif kind == "delete":
            data = data[:i] + data[i + size:]
        elif kind == "duplicate":
            data = data[:i + size] + data[i:i + size] + data[i + size:]
        elif kind == "flip" and i < len(data):
            data = data[:i] + bytes([data[i] ^ (1 << (size % 8))]) + data[i + 1:]
        elif kind == "truncate":
            data = data[:i]
    return data


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 40)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=st.sampled_from(SOURCES), mutations=st.lists(mutation, min_size=1, max_size=6))
def test_mutated_sources_are_read_or_rejected_and_every_character_is_accounted_for(source, mutations):
    path, entry = source
    data = mutate(path.read_bytes(), mutations)
    try:
        clean = read.clean(path, entry, data)
        _check_paragraphs(clean, path)
    except SourceError as e:  # a rejection, with a reason: what ingest records and goes on from
        assert e.message
        return
    assert clean.chars_total == len(clean.source.text)
    assert clean.chars_kept + sum(clean.discarded_by_reason().values()) == clean.chars_total
    pieces = sorted(p for r in read.rules([clean], CACHE) for p in r.pieces)
    if pieces:  # the records tile the kept text exactly
        assert pieces[0][0] == 0 and pieces[-1][1] == len(clean.content)
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
