"""Hostile PDF, DOCX, RTF and DOC files: a few KB or MB built to make a reader's cost explode (a zip or
Flate bomb, millions of empty paragraphs, tags or pages, a field or font table that sends striprtf's
regexes into cubic backtracking, a .doc's sector chain that loops or piece table that claims billions).
Each must be refused in well under 10 s and 1 GB with one line that names the file and the reason.
The inputs are built here, in code (.doc files by tests/wordfile.py): no committed binaries.

Each file is ingested in a child process (`python tests/ingest/test_hostile_containers.py FOLDER`): its peak
memory is its own or its children's (os.wait4's ru_maxrss: PDFium runs in a grandchild); the child's
address space is capped at AS_LIMIT so a regression fails instead of swapping, and a child still
running at HARD_LIMIT is killed. The readers are also fuzzed with mutated real editions."""
from __future__ import annotations

import base64
import io
import json
import random
import re
import resource
import select
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from children import CHILD_ENV, ROOT, run_bounded
from wordfile import ENCRYPTED, TEXT_AT, WHICH_TABLE, chain_loop, clx, word_file

SECONDS = 10  # the bound under test
MEMORY = 1 << 30  # bytes, peak resident
AS_LIMIT = 3 << 30  # bytes of address space: the child fails rather than takes the machine
HARD_LIMIT = 60  # seconds: a child still running is killed and the test fails
MB = 1 << 20

# --- the inputs -----------------------------------------------------------------------------------

EDITION = ["Magic: The Gathering Comprehensive Rules", "These rules are effective as of January 16, 2026.",
           "Introduction", "1. Game Concepts", "100. General",
           "100.1. These Magic rules apply to any Magic game with two or more players."]


def chunks(piece: bytes, total: int, size: int = MB):
    """`piece` repeated to `total` bytes, as one block of about `size` yielded again and again."""
    block = piece * max(1, size // len(piece))
    for _ in range(total // len(block)):
        yield block


def deflate(parts) -> tuple[bytes, int, int, int]:
    """(raw deflate, CRC-32, Adler-32, size) of the parts joined. Each part ends with a full flush, so
    its compressed form does not depend on what came before: a part repeated (the same object, as
    chunks yields) is compressed once, and a 1 GB bomb takes a second to build."""
    squeeze, out, crc, adler, size, last = zlib.compressobj(9, zlib.DEFLATED, -15), [], 0, 1, 0, (None, b"")
    for part in parts:
        if part is not last[0]:
            last = (part, squeeze.compress(part) + squeeze.flush(zlib.Z_FULL_FLUSH))
        out.append(last[1])
        crc, adler, size = zlib.crc32(part, crc), zlib.adler32(part, adler), size + len(part)
    return b"".join(out) + squeeze.flush(), crc, adler, size


def flate(parts) -> bytes:
    """A zlib stream, as a PDF's /FlateDecode holds."""
    raw, _, adler, _ = deflate(parts)
    return b"\x78\xda" + raw + struct.pack(">I", adler)


def zip_package(members) -> bytes:
    """A ZIP of (name, parts, deflated?) members, written by hand so a bomb's parts are deflated once."""
    out, directory = bytearray(), bytearray()
    for name, parts, deflated in members:
        data, crc, size, method = _zip_member(parts, deflated)
        fields = (20, 0, method, 0, 0x21, crc, len(data), size, len(name.encode()), 0)  # 0x21: 1980-01-01
        directory += struct.pack("<4sH5H3I2H3HII", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, len(out)) + name.encode()
        out += struct.pack("<4s5H3I2H", b"PK\x03\x04", *fields) + name.encode() + data
    n = len(members)
    return bytes(out + directory + struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, n, n, len(directory), len(out), 0))


def _zip_member(parts, deflated: bool) -> tuple[bytes, int, int, int]:
    """(stored bytes, CRC-32, size, method)."""
    if deflated:
        data, crc, _, size = deflate(parts)
        return data, crc, size, 8
    data = b"".join(parts)
    return data, zlib.crc32(data), len(data), 0


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType='
    '"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>').encode()
PACKAGE_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Target="word/document.xml" Type='
    '"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>').encode()


def paragraph(text: str) -> bytes:
    return f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'.encode()


def docx(body_parts=(), noise: int = 0) -> bytes:
    """A minimal Word document: the edition's paragraphs, then `body_parts` (bytes), and `noise`
    random bytes stored uncompressed (they raise what the container may inflate to)."""
    head = f'<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>'.encode()
    body = [head, b"".join(paragraph(line) for line in EDITION), *body_parts, b"</w:body></w:document>"]
    members = [("[Content_Types].xml", [CONTENT_TYPES], True), ("_rels/.rels", [PACKAGE_RELS], True),
               ("word/document.xml", body, True)]
    return zip_package(members + ([("word/media/noise.bin", [random.Random(0).randbytes(noise)], False)]
                                  if noise else []))


def pdf(content: bytes, *, n_pages: int = 1, filters: bytes = b"/FlateDecode", noise: int = 0) -> bytes:
    """A minimal PDF: `n_pages` pages sharing one content stream, stored as given (already encoded
    with `filters`), a Helvetica font, and `noise` random bytes in a stream no page uses."""
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(n_pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n_pages),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d /Filter %s >>\nstream\n%s\nendstream" % (len(content), filters, content),
               b"<< /Length %d >>\nstream\n%s\nendstream" % (noise, random.Random(0).randbytes(noise))]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                b"/Resources << /Font << /F1 3 0 R >> >> >>"] * n_pages
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


TEXT_OPS = b"".join(b"BT /F1 10 Tf 72 %d Td (%s) Tj ET\n" % (760 - 12 * i, line.encode())
                    for i, line in enumerate(EDITION))


def rtf(body: str) -> bytes:
    return ("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\froman\\fcharset0 Times;}}\n"
            + "\\par\n".join(EDITION) + "\\par\n" + body + "}").encode("latin-1")


def rtf_font_table(entries: str) -> bytes:
    return ("{\\rtf1\\ansi\\ansicpg1252{\\fonttbl" + entries + "}\n" + "\\par\n".join(EDITION) + "}").encode()


DOC_EDITION = "\r".join(EDITION) + "\r"


def doc(extra: bytes = b"", **damage) -> bytes:
    """A .doc of the edition's lines, then `extra` (8-bit characters), with `damage` (see wordfile.word_file)."""
    return word_file([DOC_EDITION, extra], **damage)


def doc_shared_pieces(n: int) -> bytes:
    """8 M characters of field marks from a 0.4 MB file: `n` pieces that all read the same 1,000 bytes."""
    marks, text = b"\x13\x14\x15\x13\x15" * 200, len(DOC_EDITION)
    pieces = [(text, TEXT_AT, True)] + [(len(marks), TEXT_AT + text, True)] * n
    return doc(marks + bytes(300_000), table=clx(pieces), ccp_text=text + len(marks) * n)


def _nested(depth: int) -> bytes:
    """Raw deflate: `depth` stored blocks holding b"stream\\n" and a zlib header, each followed by 1,200
    empty stored blocks, so a stream starting inside one runs on to the end of the outer one."""
    inner = b"stream\n\x78\x01"
    block = b"\0" + struct.pack("<HH", len(inner), 0xFFFF ^ len(inner)) + inner + b"\0\0\0\xff\xff" * 1200
    return block * depth


def _a85(data: bytes) -> bytes:
    return base64.a85encode(data, wrapcol=80) + b"~>"


# name -> (file name, builder, what the one-line rejection must say; None: read or refused, in bounds)
ATTACKS = {
    "rtf-200kb-hyperlink-fields": ("2026-01-16.rtf", lambda: rtf('{\\field{\\*\\fldinst{HYPERLINK "' * 6600), None),
    "rtf-font-table-without-charsets": ("2026-01-16.rtf", lambda: rtf_font_table("\\f1" * 66_000), "font table"),
    "rtf-font-table-without-semicolons": ("2026-01-16.rtf", lambda: rtf_font_table("\\f1\\fcharset0 A" * 2000),
                                          "font table"),
    "docx-5m-empty-paragraphs": ("2026-01-16.docx", lambda: docx(chunks(b"<w:p/>", 30_000_000)), "inflate"),
    "docx-1gb-whitespace": ("2026-01-16.docx", lambda: docx(chunks(b" ", 1 << 30)), "inflate"),
    "docx-150k-paragraphs": ("2026-01-16.docx",
                             lambda: docx([b"".join(paragraph(f"{i} x") for i in range(150_000))]), "paragraphs"),
    "docx-15m-xml-elements": ("2026-01-16.docx", lambda: docx(chunks(b"<a/>", 60 * MB), noise=MB), "XML tags"),
    "docx-5000-parts": ("2026-01-16.docx", lambda: zip_package([(f"p{i}", [b""], False) for i in range(5000)]),
                        "parts"),
    "pdf-1gb-content-stream": ("2026-01-16.pdf", lambda: pdf(flate([TEXT_OPS, *chunks(b" ", 1 << 30)])), "inflate"),
    "pdf-1gb-ascii85-wrapped": ("2026-01-16.pdf", lambda: pdf(_a85(flate([TEXT_OPS, *chunks(b" ", 1 << 30)])),
                                                              filters=b"[/ASCII85Decode /FlateDecode]"), "inflate"),
    "pdf-100k-pages": ("2026-01-16.pdf", lambda: pdf(flate([TEXT_OPS]), n_pages=100_000), "pages"),
    # 130,000 characters a page from a 5 KB file (3 KB of it noise) that may hold 32 a byte
    "pdf-text-past-the-cap": ("2026-01-16.pdf", lambda: pdf(flate([b"BT /F1 1 Tf ", *chunks(
        b"(aaaaaaaaaa)Tj ", 200_000, 200_000), b" ET"]), n_pages=50, noise=3000), "characters"),
    # a Flate stream whose stored blocks each hold another "stream" and zlib header: measured from
    # each, the rest of the file would be inflated 4,000 times over
    "pdf-streams-nested-4000-deep": ("2026-01-16.pdf", lambda: pdf(b"\x78\x01" + _nested(4000) + b"\x01\0\0\xff\xff"),
                                     "passes over the file"),
    # a dense page that passes the inflate budget (raised by 2 MB of noise): PDFium's own memory is capped
    "pdf-16mb-dense-text-page": ("2026-01-16.pdf",
                                 lambda: pdf(flate([b"BT /F1 1 Tf ", *chunks(b"(a)Tj ", 16 * MB), b" ET"]),
                                             noise=2 * MB), "memory"),
    "doc-fat-chain-loops": ("2026-01-16.doc", lambda: doc(bytes(50_000), chain_edit=chain_loop(after=40)),
                            "loops back on itself"),
    "doc-cut-in-half": ("2026-01-16.doc", lambda: doc(bytes(50_000))[:30_000], "damaged Word 97-2003 file"),
    "doc-stream-claims-4gb": ("2026-01-16.doc", lambda: doc(stream_size=0xFFFFFFFF), "ends early"),
    "doc-without-table-stream": ("2026-01-16.doc", lambda: doc(streams={"1Table": None}), "without a 1Table stream"),
    "doc-encrypted": ("2026-01-16.doc", lambda: doc(flags=WHICH_TABLE | ENCRYPTED), "encrypted"),
    "doc-200k-pieces": ("2026-01-16.doc", lambda: doc(table=clx([(1, TEXT_AT, True)] * 200_000)), "pieces"),
    "doc-piece-claims-2g-characters": ("2026-01-16.doc", lambda: doc(table=clx([(2**31 - 1, TEXT_AT, True)]),
                                                                      ccp_text=2**31 - 1), "characters"),
    "doc-1m-nested-fields": ("2026-01-16.doc",
                             lambda: doc(b"\x13 A \x14" * 1_000_000 + b"text" + b"\x15" * 1_000_000), None),
    "doc-8m-field-marks-from-shared-pieces": ("2026-01-16.doc", lambda: doc_shared_pieces(7990), None),
}
SLOW = {"docx-1gb-whitespace", "pdf-1gb-content-stream", "pdf-1gb-ascii85-wrapped", "pdf-16mb-dense-text-page"}


# --- the child ------------------------------------------------------------------------------------

def ingest_folder(folder: Path) -> dict:
    """What the child prints: seconds to ingest the folder, the editions read and the rejection lines
    as the CLI prints them."""
    from pipeline.ingest.discover import ingest
    start = time.perf_counter()
    result = ingest(folder, [])
    return {"seconds": time.perf_counter() - start, "docs": [d.source.source_id for d in result.docs],
            "rejections": [f"{r.path}: rejected: {r.reason}" for r in result.rejections]}


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_child(folder: Path) -> dict:
    """ingest_folder in a child process: its report, its peak memory in bytes, and its stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        done = run_bounded([sys.executable, __file__, str(folder)], HARD_LIMIT, out, err, _limit_address_space)
        if done is None:
            return {"seconds": float("inf"), "killed": True, "memory": 0, "stderr": ""}
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    code, memory = done
    assert code == 0, stderr[-3000:]
    return {**json.loads(stdout.splitlines()[-1]), "memory": memory, "stderr": stderr}


def check_refused(report: dict, path: Path, reason: str | None) -> None:
    """Under the bounds, nothing on stderr, and refused in one line naming the file and the reason
    (`reason` None: read or refused, as long as it is bounded)."""
    assert report["seconds"] < SECONDS, report
    assert report["memory"] < MEMORY, report
    assert report["stderr"] == "", report
    for line in report["rejections"]:
        assert line.startswith(f"{path}: rejected: ") and "\n" not in line, report
    if reason is not None:
        assert report["docs"] == [] and len(report["rejections"]) == 1, report
        assert reason in report["rejections"][0], report


@pytest.mark.parametrize("attack", [pytest.param(a, marks=[pytest.mark.slow] if a in SLOW else [])
                                    for a in ATTACKS])
def test_hostile_container_is_refused_quickly_in_one_line(attack, tmp_path):
    name, build, reason = ATTACKS[attack]
    path = tmp_path / name
    path.write_bytes(build())
    check_refused(run_child(tmp_path), path, reason)


# --- the readers under mutation -------------------------------------------------------------------

FUZZ_SECONDS = 20  # per mutated file: reading the real one takes 0.3-0.7 s
# the smallest real file of each format
SEEDS = ("2003-10-01.pdf", "2013-04-29.docx", "2005-10-01.rtf", "2005-10-01.doc")


class Reader:
    """A child process that reads one container at a time (`--reader` mode) under AS_LIMIT, so a
    mutated file that hangs a C library is killed, not waited for."""

    def __init__(self):
        self.child = subprocess.Popen([sys.executable, __file__, "--reader"], cwd=ROOT, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, preexec_fn=_limit_address_space, env=CHILD_ENV)

    def read(self, data: bytes, fmt: str) -> dict:
        self.child.stdin.write(struct.pack(">4sQ", fmt.encode(), len(data)) + data)
        self.child.stdin.flush()
        ready, _, _ = select.select([self.child.stdout], [], [], FUZZ_SECONDS)
        assert ready, f"a mutated {fmt} took more than {FUZZ_SECONDS} s"
        return json.loads(self.child.stdout.readline())

    def close(self):
        self.child.kill()
        self.child.wait()


def reader_loop() -> None:
    """The --reader child: frames of (format, length, bytes) in, one JSON line out per frame."""
    from pipeline.errors import SourceError
    from pipeline.ingest.containers import extract
    while header := sys.stdin.buffer.read(12):
        fmt, size = struct.unpack(">4sQ", header)
        data = sys.stdin.buffer.read(size)
        try:
            text, _ = extract(data, fmt.decode().strip("\x00"), "mutated")
            outcome = {"chars": len(text)}
        except SourceError as e:
            outcome = {"refused": str(e)}
        outcome["memory"] = 1024 * max(resource.getrusage(who).ru_maxrss  # the PDF reader is a child
                                       for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        print(json.dumps(outcome), flush=True)


@pytest.fixture(scope="module")
def reader():
    child = Reader()
    yield child
    child.close()


def mutate(data: bytes, seed: int, n: int) -> bytes:
    """`n` edits at seeded places: bytes flipped, a span dropped or repeated, random bytes put in."""
    rng, out = random.Random(seed), bytearray(data)
    for _ in range(n):
        at, span = rng.randrange(len(out)), rng.randint(1, 64)
        kind = rng.choice(["flip", "drop", "repeat", "insert"])
        if kind == "flip":
            out[at] ^= 1 << rng.randrange(8)
        elif kind == "drop":
            del out[at:at + span]
        elif kind == "repeat":
            out[at:at] = out[at:at + span] * rng.randint(2, 50)
        else:
            out[at:at] = rng.randbytes(span)
    return bytes(out)


def mutate_in_place(data: bytes, seed: int, n: int) -> bytes:
    """`n` edits that move nothing (bits flipped, spans overwritten): a .doc's sectors stay where its FAT
    says, so the edits reach the FIB, the piece table and the text, not only the container."""
    rng, out = random.Random(seed), bytearray(data)
    for _ in range(n):
        at, span = rng.randrange(len(out)), rng.randint(1, 64)
        if rng.random() < 0.5:
            out[at] ^= 1 << rng.randrange(8)
        else:
            out[at:at + span] = rng.randbytes(len(out[at:at + span]))
    return bytes(out)


PARAGRAPH = re.compile(rb"<w:p[ >].*?</w:p>", re.S)


def mutate_paragraphs(xml: bytes, seed: int, n: int) -> bytes:
    """`n` edits that keep the XML well formed: a paragraph repeated up to 2,000 times, or dropped."""
    rng, out = random.Random(seed), xml
    for _ in range(n):
        spans = [m.span() for m in islice(PARAGRAPH.finditer(out, rng.randrange(len(out))), 1)]
        if spans:
            (a, b), times = spans[0], rng.choice([0, 2, 20, 2000])
            out = out[:a] + out[a:b] * times + out[b:]
    return out


def mutate_part(package: bytes, part: str, seed: int, n: int) -> bytes:
    """The package with one part mutated (bytes or whole paragraphs) and the ZIP rebuilt, so that
    python-docx and lxml get to read it."""
    source, out = zipfile.ZipFile(io.BytesIO(package)), io.BytesIO()
    edit = mutate_paragraphs if seed % 2 else mutate
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            body = source.read(info)
            target.writestr(info.filename, edit(body, seed, n) if info.filename == part else body)
    return out.getvalue()


@pytest.mark.slow
@pytest.mark.formats
@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(SEEDS), seed=st.integers(0, 2**32), n=st.integers(1, 40), inside=st.booleans())
def test_mutated_real_files_are_read_or_refused_in_bounds(reader, name, seed, n, inside):
    """`inside`: a DOCX's document.xml is mutated, not its ZIP (which would rarely get past the CRC); a
    .doc's bytes are mutated in place (a byte dropped or put in moves every sector after it)."""
    from conftest import FORMATS
    fmt, data = name.rsplit(".", 1)[1], (FORMATS / name).read_bytes()
    if inside and fmt in ("docx", "doc"):
        mutated = mutate_part(data, "word/document.xml", seed, n) if fmt == "docx" else mutate_in_place(data, seed, n)
    else:
        mutated = mutate(data, seed, n)
    outcome = reader.read(mutated, fmt)
    assert outcome["memory"] < MEMORY, outcome
    assert "chars" in outcome or ("\n" not in outcome["refused"] and outcome["refused"].startswith("mutated: "))


if __name__ == "__main__":
    if sys.argv[1] == "--reader":
        reader_loop()
    else:
        print(json.dumps(ingest_folder(Path(sys.argv[1]))))
