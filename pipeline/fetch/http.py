"""HTTP for `fetch`: one requests session that names the project, waits between requests to a host,
retries with back-off (urllib3's Retry, which honours Retry-After on 429 and 503), times out, and
streams a download into a temporary file that never outlives a failure. Every answer is bounded:
in size (bytes after decompression, so a gzip bomb stops at the cap) and in time (a deadline for
the whole of one address, retries included, so a server sending a byte a second cannot hold the run)."""
from __future__ import annotations

import email.utils
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
import urllib3.exceptions
from requests.cookies import extract_cookies_to_jar
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from pipeline.fetch.deadline import Deadline, WatchedAdapter, current_deadline
from pipeline.ingest.lockfile import PART_PREFIX
from pipeline.atomic import for_sharing

USER_AGENT = ("crdiff-fetch/0.1 (archives the Magic: The Gathering Comprehensive Rules editions; "
              "one request at a time, with a delay)")
RETRY_STATUSES = (429, 500, 502, 503, 504)
MAX_BYTES = 64 * 1024 * 1024  # the biggest edition (a 300-page PDF) is a few MB
MAX_TEXT = 8 * 1024 * 1024  # a rules page or a CDX listing: the real ones are well under 1 MB
MAX_WAIT = 600  # seconds: a longer Retry-After fails that address (tried again next run) instead of holding the run
DEADLINE_PER_TIMEOUT = 15  # one address may take this many --timeout in all: 900 s for 60 s (5 MB at 7 KB/s)
MAX_REDIRECTS = 10  # followed by _get, not by requests


class HttpFailure(Exception):
    """A request that did not give a usable answer. `permanent` failures (404, 410, ...) are not worth
    asking again next run; the others (time-outs, resets, 5xx after retries) are."""

    def __init__(self, reason: str, *, permanent: bool = False, retried: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.retried = retried  # urllib3 already retried it: not worth another round


class PatientRetry(Retry):
    """urllib3's Retry, except that an answer whose Retry-After asks for more than MAX_WAIT seconds (or
    more than is left of the address's deadline) is not waited for: it is returned as it is (a 429 or
    503), and reported. Past the deadline there is no other try, and no back-off outlasts it."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        deadline = current_deadline()
        if deadline and deadline.expired:
            raise MaxRetryError(_pool, url, "deadline passed")  # no more tries: the address has had its time
        if response is not None and asked_wait(response.headers.get("Retry-After")) > longest_wait():
            raise MaxRetryError(_pool, url, "Retry-After too long")  # urllib3 then returns the answer
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def get_backoff_time(self) -> float:
        deadline = current_deadline()
        return min(super().get_backoff_time(), max(deadline.left(), 0.0) if deadline else MAX_WAIT)


def longest_wait() -> float:
    """The longest Retry-After a run waits for: MAX_WAIT, or less when the deadline is nearer."""
    deadline = current_deadline()
    return min(MAX_WAIT, deadline.left()) if deadline else MAX_WAIT


@dataclass(frozen=True, slots=True)
class Download:
    path: Path  # the temporary file, in the destination folder (so a rename publishes it)
    sha256: str
    n_bytes: int
    final_url: str  # where the bytes came from, after any redirect


@dataclass
class Client:
    delay: float = 1.0  # seconds between two requests to the same host
    timeout: float = 60.0  # connect and read time-out, per socket operation
    deadline: float | None = None  # seconds for one address in all, retries and waits included; None: 15 x timeout
    retries: int = 4
    backoff: float = 2.0  # urllib3 waits backoff * 2**(n-1) seconds before retry n (or Retry-After)
    requested: list[str] = field(default_factory=list)  # every URL asked for, in order (tests read it)
    max_bytes: int = MAX_BYTES  # a download, once decompressed
    max_text: int = MAX_TEXT  # a page or a listing, once decompressed
    _last: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        retry = PatientRetry(total=self.retries, connect=self.retries, read=self.retries, status=self.retries,
                      status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"GET"}),
                      backoff_factor=self.backoff, respect_retry_after_header=True, raise_on_status=False)
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        adapter = WatchedAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def _deadline(self) -> Deadline:
        if self.deadline is not None:
            return Deadline(self.deadline)
        return Deadline(DEADLINE_PER_TIMEOUT * self.timeout, f" ({DEADLINE_PER_TIMEOUT} x --timeout)")

    def get_text(self, url: str, params: dict | None = None) -> str:
        """A small answer (a page, a CDX listing) as text, at most max_text bytes, within the deadline."""
        body = bytearray()
        with self._deadline() as deadline:
            with self._get(url, params) as response:
                self._read(response, deadline, body.extend, self.max_text, "a rules page or a CDX listing")
                encoding = response.encoding or "utf-8"
        try:
            return body.decode(encoding, "replace")
        except LookupError:  # a charset Python does not know
            return body.decode("utf-8", "replace")

    def download(self, url: str, folder: Path) -> Download:
        """Stream `url` into a temporary file in `folder`. A body cut short (reset, time-out, fewer bytes
        than Content-Length) is retried from the start, while the deadline allows; the temporary file is
        removed on any failure."""
        with self._deadline() as deadline:
            for attempt in range(self.retries + 1):
                try:
                    return self._download_once(url, folder, deadline)
                except HttpFailure as e:
                    pause = self.backoff * 2 ** (attempt - 1) if attempt else 0  # as urllib3 backs off
                    if e.permanent or e.retried or attempt == self.retries or pause >= deadline.left():
                        raise
                    time.sleep(pause)
        raise AssertionError("unreachable")

    def _download_once(self, url: str, folder: Path, deadline: Deadline) -> Download:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=PART_PREFIX, suffix=".part", dir=folder)
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, self._get(url) as response:
                size = self._read(response, deadline, lambda chunk: (digest.update(chunk), out.write(chunk)),
                                  self.max_bytes, "an edition")
                expected = response.headers.get("Content-Length", "")
                if expected.isascii() and expected.isdigit() and "Content-Encoding" not in response.headers \
                        and int(expected) != size:
                    raise HttpFailure(f"body cut short: {size} of {expected} bytes")
                final_url = response.url
            os.chmod(tmp, for_sharing())
            return Download(Path(tmp), digest.hexdigest(), size, final_url)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        finally:  # the delay runs from the end of the body, not from its headers
            self._last[urlsplit(url).netloc] = time.monotonic()

    def _read(self, response: requests.Response, deadline: Deadline, sink, limit: int, what: str) -> int:
        """Feed the body to `sink` as it comes, decompressed; its size. Bytes are counted after
        decompression, so a small gzip bomb stops at `limit` like an endless body."""
        too_big = HttpFailure(f"larger than {_size(limit)}: not {what}", permanent=True)
        declared = response.headers.get("Content-Length", "")
        if declared.isascii() and declared.isdigit() and "Content-Encoding" not in response.headers \
                and int(declared) > limit:
            raise too_big
        size = 0
        try:
            for chunk in response.iter_content(1 << 16):
                size += len(chunk)
                if size > limit:
                    raise too_big
                sink(chunk)
        except (requests.RequestException, urllib3.exceptions.HTTPError) as e:
            raise HttpFailure(deadline.reason(), retried=True) if deadline.expired else \
                HttpFailure(f"connection broken after {size} bytes ({_short(e)})") from None
        if deadline.expired:  # a body without a length just ends when its socket is shut
            raise HttpFailure(deadline.reason(), retried=True)
        return size

    def _get(self, url: str, params: dict | None = None) -> requests.Response:
        """The answer to `url`, redirects followed here: requests reads a redirect's whole body into memory
        (even with allow_redirects=False), and a redirect can carry a gzip bomb. The final address is the
        answer's url."""
        self._wait(url)
        self.requested.append(url)
        for _ in range(MAX_REDIRECTS + 1):
            response = self._request(url, params)
            target = self.session.get_redirect_target(response)
            if not target:
                break
            response.close()  # its body is never read
            url, params = urljoin(response.url, target), None
        else:
            raise HttpFailure(f"more than {MAX_REDIRECTS} redirects", permanent=True)
        if response.status_code != 200:
            response.close()
            # 408 and the retried statuses may pass; other client errors (404, 410, 403) will not
            permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 429)
            raise HttpFailure(f"HTTP {response.status_code} {response.reason or ''}".strip() + _too_long(response),
                              permanent=permanent, retried=response.status_code in RETRY_STATUSES)
        return response

    def _request(self, url: str, params: dict | None) -> requests.Response:
        """One request, through the session's adapter: the session's own send would read a redirect's body."""
        try:
            request = self.session.prepare_request(requests.Request("GET", url, params=params))
            settings = self.session.merge_environment_settings(request.url, {}, True, None, None)
            response = self.session.get_adapter(request.url).send(request, timeout=self.timeout, **settings)
            extract_cookies_to_jar(self.session.cookies, request, response.raw)
            return response
        except requests.RequestException as e:
            deadline = current_deadline()
            if deadline and deadline.expired:
                raise HttpFailure(deadline.reason(), retried=True) from None
            tries = f"{self.retries + 1} tries" if self.retries else "1 try"
            if isinstance(e, requests.Timeout) or "timed out" in str(e).lower():
                raise HttpFailure(f"timed out (no answer within {self.timeout:g} s; {tries})", retried=True) from None
            raise HttpFailure(f"unreachable ({_short(e)}; {tries})", retried=True) from None
        finally:
            self._last[urlsplit(url).netloc] = time.monotonic()

    def _wait(self, url: str) -> None:
        last = self._last.get(urlsplit(url).netloc)
        if last is not None:
            pause = last + self.delay - time.monotonic()
            if pause > 0:
                time.sleep(pause)


def _too_long(response: requests.Response) -> str:
    """Why an answer asking to be retried was not: its Retry-After is longer than a run waits."""
    wait = asked_wait(response.headers.get("Retry-After")) if response.status_code in (429, 503) else 0
    if wait > MAX_WAIT:
        return f" (the server asks to wait {wait:.0f} s, more than the {MAX_WAIT} s a run waits: run again later)"
    if wait > longest_wait():
        return f" (the server asks to wait {wait:.0f} s, more than is left of this address's time: run again later)"
    return ""


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n} bytes"


def asked_wait(value: str | None) -> float:
    """Seconds a Retry-After header asks for (a number, or an HTTP date); 0 if none or unreadable.
    Read here, not by urllib3, whose newer versions cap it (at six hours)."""
    value = (value or "").strip()
    if value.isascii() and value.isdigit():
        return float(value)
    when = email.utils.parsedate_tz(value) if value else None
    return max(email.utils.mktime_tz(when) - time.time(), 0.0) if when else 0.0


def _short(error: Exception) -> str:
    """The innermost reason of a requests/urllib3 error, on one line."""
    while error.args and isinstance(error.args[0], Exception):
        error = error.args[0]
    reason = getattr(error, "reason", None)
    text = str(reason if isinstance(reason, Exception) else error)
    if "[Errno" in text:  # "HTTPConnection(host=..., port=9): Failed to ...: [Errno 111] Connection refused"
        text = text[text.index("[Errno"):].split("] ", 1)[-1].rstrip(")")
    return " ".join(text.split())[:200]


def remove_stale_parts(folder: Path) -> int:
    """Temporary files left by a run that was killed before it could clean up (a running one holds the
    folder's lock, so they are not another run's)."""
    stale = [p for suffix in (".part", ".moving") for p in folder.glob(f"{PART_PREFIX}*{suffix}")] \
        if folder.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)
