"""A real HTTP server on 127.0.0.1, in a thread, that plays the official rules page, the Wayback
Machine's CDX API and its raw snapshots, with the faults real servers have. Nothing leaves loopback."""
from __future__ import annotations

import functools
import hashlib
import io
import json
import struct
import threading
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


def fake_pdf() -> bytes:
    return b"%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def fake_docx(effective: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo("word/document.xml", (2026, 1, 16, 0, 0, 0)),
                   "<w:document><w:body><w:p><w:r><w:t>Magic: The Gathering Comprehensive "
                   f"Rules</w:t></w:r></w:p><w:p><w:r><w:t>These rules are effective as of {effective}.</w:t>"
                   "</w:r></w:p></w:body></w:document>")
    return buffer.getvalue()


@functools.lru_cache(maxsize=2)
def docx_bomb(effective: str, megabytes: int = 1280) -> bytes:
    """A DOCX of about 1.3 MB whose document.xml inflates to `megabytes` of zeros after a first paragraph
    stating the date. Built by hand: the same deflate block, repeated (zlib would take seconds)."""
    head = ("<w:document><w:body><w:p><w:r><w:t>Magic: The Gathering Comprehensive Rules. These rules are "
            f"effective as of {effective}.</w:t></w:r></w:p>").encode()
    zeros, deflate = bytes(1 << 20), zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(head + zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)  # after a full flush: the same bytes
    data = first + block * (megabytes - 1) + deflate.flush()
    crc = zlib.crc32(head + zeros)
    for _ in range(megabytes - 1):
        crc = zlib.crc32(zeros, crc)
    return zip_of_one("word/document.xml", data, method=8, crc=crc, size=len(head) + (megabytes << 20))


def zip_of_one(name: str, data: bytes, *, method: int, crc: int, size: int) -> bytes:
    """A ZIP archive of one member whose bytes (compressed by `method`: 8 deflate) are given as they are."""
    raw = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0) + raw
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, len(data), size,
                          len(raw), 0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    # faults, each used for the first `times` requests (then the route answers normally):
    # "429" or "503" (Retry-After), "reset" (half the body, then close), "slow" (no answer in time),
    # and the hostile ones, which go on until the client hangs up: "drip" (the body a byte at a time),
    # "drip-headers" (the headers a byte at a time), "endless" (the body repeated forever, chunked),
    # "bomb" (gzip of endless zeros), "redirect" (302 to `location`), "redirect-bomb" (302 to `location`, its
    # body a bomb), "hold" (no answer until `gate` is set)
    fault: str = ""
    times: int = 1
    retry_after: int = 1
    slow_seconds: float = 1.5
    content_type: str = "text/plain"
    drip_seconds: float = 1.0
    location: str = ""
    gate: threading.Event | None = None


@dataclass
class Site:
    routes: dict[str, Route] = field(default_factory=dict)  # path (quoted, with query for none) -> Route
    cdx_rows: dict[str, list[list[str]]] = field(default_factory=dict)  # CDX url pattern -> rows
    cdx_answers: dict[str, Route] = field(default_factory=dict)  # CDX url pattern -> an answer as it is
    log: list[tuple[float, str, str]] = field(default_factory=list)  # (time, path, User-Agent)
    cdx_queries: list[dict] = field(default_factory=list)

    def snapshot(self, stamp: str, original: str, body: bytes, pattern: str, *, digest: str | None = None,
                 **faults) -> str:
        """A CDX row for `pattern` and the raw snapshot behind it; returns the path of the raw bytes."""
        digest = digest or hashlib.sha1(body).hexdigest().upper()
        self.cdx_rows.setdefault(pattern, []).append(
            ["com,wizards)/x", stamp, original, "text/plain", "200", digest, str(len(body))])
        path = f"/web/{stamp}id_/{original}"
        self.routes.setdefault(path, Route(body, **faults))
        return path

    def requested(self, prefix: str) -> list[str]:
        return [p for _, p, _ in self.log if p.startswith(prefix)]


def handler_for(site: Site):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # noqa: N802 (the name http.server calls)
            site.log.append((time.monotonic(), self.path, self.headers.get("User-Agent", "")))
            split = urlsplit(self.path)
            if split.path == "/cdx":
                query = {k: v[0] for k, v in parse_qs(split.query).items()}
                site.cdx_queries.append(query)
                route = site.cdx_answers.get(query.get("url", "")) or Route(
                    json.dumps(cdx_table(site.cdx_rows.get(query.get("url", ""), []))).encode(),
                    content_type="application/json")
            else:
                route = site.routes.get(self.path) or site.routes.get(unquote(self.path))
            if route is None:
                return self._send(404, b"<html><body>Not found</body></html>", "text/html")
            if route.fault and route.times > 0:
                route.times -= 1
                if route.fault in HOSTILE:
                    return _hostile(self, route)
                if route.fault in ("429", "503"):
                    return self._send(int(route.fault), b"slow down", "text/plain",
                                      {"Retry-After": str(route.retry_after)})
                if route.fault == "slow":
                    time.sleep(route.slow_seconds)
                    return self._send(route.status, route.body, route.content_type)
                if route.fault == "reset":
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body[: len(route.body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
            self._send(route.status, route.body, route.content_type)

        def _send(self, status, body, content_type, headers=None):
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the slow route): nothing to answer

        def log_message(self, *args):
            pass

    return Handler


def _hostile(handler, route: Route) -> None:
    """The hostile faults, answers that never end by themselves: each stops when the client hangs up (or
    after a minute)."""
    handler.close_connection = True
    try:
        if route.fault == "redirect":
            return handler._send(302, b"", "text/plain", {"Location": route.location})
        if route.fault == "hold":
            route.gate.wait(60)
            return handler._send(route.status, route.body, route.content_type)
        if route.fault == "drip-headers":
            return _drip(handler.wfile, b"HTTP/1.1 200 OK\r\n" + b"X-Pad: x\r\n" * 100_000, route.drip_seconds)
        if route.fault == "drip":
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(route.body)}\r\n\r\n".encode()
            handler.wfile.write(head)
            return _drip(handler.wfile, route.body, route.drip_seconds)
        headers = {"Transfer-Encoding": "chunked", "Content-Type": route.content_type}
        if route.fault in ("bomb", "redirect-bomb"):
            headers["Content-Encoding"] = "gzip"
        if route.fault == "redirect-bomb":
            headers["Location"] = route.location
        handler.send_response(302 if route.fault == "redirect-bomb" else 200)
        for k, v in headers.items():
            handler.send_header(k, v)
        handler.end_headers()
        _endless(handler.wfile, route)
    except (BrokenPipeError, ConnectionResetError, OSError):
        pass  # the client hung up: what it should do




HOSTILE = ("drip", "drip-headers", "endless", "bomb", "redirect", "redirect-bomb", "hold")
HEADER = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]


def cdx_table(rows: list[list[str]]) -> list[list[str]]:
    """The CDX API's JSON answer: a header row naming the columns, then the rows (nothing at all for none)."""
    return [HEADER, *rows] if rows else []


def _drip(out, data: bytes, seconds: float, limit: float = 60.0) -> None:
    start = time.monotonic()
    for i in range(len(data)):
        if time.monotonic() - start > limit:
            return
        out.write(data[i:i + 1])
        out.flush()
        time.sleep(seconds)


def _endless(out, route: Route, limit: float = 60.0) -> None:
    """Chunks for a minute at most: `route.body` over and over (64 KB at a time), or for the bombs gzip of zeros
    (about 1000:1)."""
    body = route.body or b"x"
    body *= max(1, 65536 // len(body))
    chunks = _gzip_of_zeros() if route.fault in ("bomb", "redirect-bomb") else iter(lambda: body, None)
    start = time.monotonic()
    while time.monotonic() - start < limit:
        chunk = next(chunks)
        out.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _gzip_of_zeros():
    """A gzip stream of endless zeros, a megabyte per chunk of about a kilobyte. After a full flush the
    compressor starts afresh, so every block after the first (which carries the gzip header) is the same."""
    gzip, zeros = zlib.compressobj(9, zlib.DEFLATED, 31), bytes(1 << 20)
    yield gzip.compress(zeros) + gzip.flush(zlib.Z_FULL_FLUSH)
    block = gzip.compress(zeros) + gzip.flush(zlib.Z_FULL_FLUSH)
    while True:
        yield block


class Server:
    def __init__(self, site: Site):
        self.site = site
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(site))
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
