"""A real HTTP server on 127.0.0.1, in a thread, that plays the official rules page, the Wayback
Machine's CDX API and its raw snapshots, with the faults real servers have. Nothing leaves loopback."""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    # faults, each used for the first `times` requests (then the route answers normally)
    fault: str = ""  # "429" or "503" (Retry-After), "reset" (half the body, then close), "slow" (no answer in time)
    times: int = 1
    retry_after: int = 1
    slow_seconds: float = 1.5
    content_type: str = "text/plain"


@dataclass
class Site:
    routes: dict[str, Route] = field(default_factory=dict)  # path (quoted, with query for none) -> Route
    cdx_rows: dict[str, list[list[str]]] = field(default_factory=dict)  # CDX url pattern -> rows
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
                rows = site.cdx_rows.get(query.get("url", ""), [])
                header = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]
                return self._send(200, json.dumps([header, *rows] if rows else []).encode(), "application/json")
            route = site.routes.get(self.path) or site.routes.get(unquote(self.path))
            if route is None:
                return self._send(404, b"<html><body>Not found</body></html>", "text/html")
            if route.fault and route.times > 0:
                route.times -= 1
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
