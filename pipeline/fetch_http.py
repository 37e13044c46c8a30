"""HTTP for `fetch`: one requests session that names the project, waits between requests to a host,
retries with back-off (urllib3's Retry, which honours Retry-After on 429 and 503), times out, and
streams a download into a temporary file that never outlives a failure."""
from __future__ import annotations

import email.utils
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

USER_AGENT = ("crdiff-fetch/0.1 (archives the Magic: The Gathering Comprehensive Rules editions; "
              "one request at a time, with a delay)")
RETRY_STATUSES = (429, 500, 502, 503, 504)
PART_PREFIX = ".fetch-"  # temporary downloads: .fetch-<random>.part, removed on failure or at start
MAX_BYTES = 64 * 1024 * 1024  # the biggest edition (a 300-page PDF) is a few MB
MAX_WAIT = 600  # seconds: a longer Retry-After fails that address (tried again next run) instead of holding the run


class HttpFailure(Exception):
    """A request that did not give a usable answer. `permanent` failures (404, 410, ...) are not worth
    asking again next run; the others (time-outs, resets, 5xx after retries) are."""

    def __init__(self, reason: str, *, permanent: bool = False, retried: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.retried = retried  # urllib3 already retried it: not worth another round


class PatientRetry(Retry):
    """urllib3's Retry, except that an answer whose Retry-After asks for more than MAX_WAIT seconds
    is not waited for: it is returned as it is (a 429 or 503), and reported."""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        if response is not None and asked_wait(response.headers.get("Retry-After")) > MAX_WAIT:
            raise MaxRetryError(_pool, url, "Retry-After too long")  # urllib3 then returns the answer
        return super().increment(method, url, response, error, _pool, _stacktrace)


@dataclass(frozen=True, slots=True)
class Download:
    path: Path  # the temporary file, in the destination folder (so a rename publishes it)
    sha256: str
    n_bytes: int


@dataclass
class Client:
    delay: float = 1.0  # seconds between two requests to the same host
    timeout: float = 60.0  # connect and read time-out, per socket operation
    retries: int = 4
    backoff: float = 2.0  # urllib3 waits backoff * 2**(n-1) seconds before retry n (or Retry-After)
    requested: list[str] = field(default_factory=list)  # every URL asked for, in order (tests read it)
    _last: dict[str, float] = field(default_factory=dict)

    def __post_init__(self):
        retry = PatientRetry(total=self.retries, connect=self.retries, read=self.retries, status=self.retries,
                      status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"GET"}),
                      backoff_factor=self.backoff, respect_retry_after_header=True, raise_on_status=False)
        self.session = requests.Session()
        self.session.headers["User-Agent"] = USER_AGENT
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def get_text(self, url: str, params: dict | None = None) -> str:
        """A small answer (a page, a CDX listing) as text."""
        with self._get(url, params) as response:
            try:
                return response.text
            except requests.RequestException as e:
                raise HttpFailure(f"connection broken while reading the answer ({_short(e)})") from None

    def download(self, url: str, folder: Path) -> Download:
        """Stream `url` into a temporary file in `folder`. A body cut short (reset, time-out, fewer bytes
        than Content-Length) is retried from the start; the temporary file is removed on any failure."""
        for attempt in range(self.retries + 1):
            try:
                return self._download_once(url, folder)
            except HttpFailure as e:
                if e.permanent or e.retried or attempt == self.retries:
                    raise
                time.sleep(self.backoff * 2 ** (attempt - 1) if attempt else 0)  # as urllib3 backs off
        raise AssertionError("unreachable")

    def _download_once(self, url: str, folder: Path) -> Download:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=PART_PREFIX, suffix=".part", dir=folder)
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as out, self._get(url) as response:
                try:
                    for chunk in response.iter_content(1 << 16):
                        size += len(chunk)
                        if size > MAX_BYTES:
                            raise HttpFailure(f"larger than {MAX_BYTES >> 20} MB: not an edition", permanent=True)
                        digest.update(chunk)
                        out.write(chunk)
                except requests.RequestException as e:
                    raise HttpFailure(f"connection broken after {size} bytes ({_short(e)})") from None
                expected = response.headers.get("Content-Length")
                if expected and expected.isdigit() and "Content-Encoding" not in response.headers \
                        and int(expected) != size:
                    raise HttpFailure(f"body cut short: {size} of {expected} bytes")
            return Download(Path(tmp), digest.hexdigest(), size)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        finally:  # the delay runs from the end of the body, not from its headers
            self._last[urlsplit(url).netloc] = time.monotonic()

    def _get(self, url: str, params: dict | None = None) -> requests.Response:
        self._wait(url)
        self.requested.append(url)
        try:
            response = self.session.get(url, params=params, timeout=self.timeout, stream=True)
        except requests.RequestException as e:
            tries = f"{self.retries + 1} tries" if self.retries else "1 try"
            if isinstance(e, requests.Timeout) or "timed out" in str(e).lower():
                raise HttpFailure(f"timed out (no answer within {self.timeout:g} s; {tries})", retried=True) from None
            raise HttpFailure(f"unreachable ({_short(e)}; {tries})", retried=True) from None
        finally:
            self._last[urlsplit(url).netloc] = time.monotonic()
        if response.status_code != 200:
            response.close()
            # 408 and the retried statuses may pass; other client errors (404, 410, 403) will not
            permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 429)
            raise HttpFailure(f"HTTP {response.status_code} {response.reason or ''}".strip() + _too_long(response),
                              permanent=permanent, retried=response.status_code in RETRY_STATUSES)
        return response

    def _wait(self, url: str) -> None:
        last = self._last.get(urlsplit(url).netloc)
        if last is not None:
            pause = last + self.delay - time.monotonic()
            if pause > 0:
                time.sleep(pause)


def _too_long(response: requests.Response) -> str:
    """Why an answer asking to be retried was not: its Retry-After is longer than a run waits."""
    wait = asked_wait(response.headers.get("Retry-After")) if response.status_code in (429, 503) else 0
    return (f" (the server asks to wait {wait:.0f} s, more than the {MAX_WAIT} s a run waits: run again later)"
            if wait > MAX_WAIT else "")


def asked_wait(value: str | None) -> float:
    """Seconds a Retry-After header asks for (a number, or an HTTP date); 0 if none or unreadable.
    Read here, not by urllib3, whose newer versions cap it (at six hours)."""
    value = (value or "").strip()
    if value.isdigit():
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
    """Temporary files left by a run that was killed before it could clean up."""
    stale = list(folder.glob(f"{PART_PREFIX}*.part")) if folder.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)
