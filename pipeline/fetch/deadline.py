"""The deadline of one address: `fetch`'s time-out bounds each read, so a server sending a byte a second
(or a header line a minute) could hold a run for days. A Deadline shuts every socket opened for the address
when its time is up, which ends a blocked read at once, over plain HTTP and TLS alike. The sockets are
known because the session's adapter (WatchedAdapter) makes connections that report them."""
from __future__ import annotations

import socket
import threading
import time

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_current = threading.local()  # the Deadline of the address this thread is asking for


class Deadline:
    """The time one address may take in all. When it runs out, every socket opened for the address is
    shut down, which ends a blocked read at once: the time-out alone bounds each read, not their sum."""

    def __init__(self, seconds: float, named: str = ""):
        self.seconds = seconds
        self.named = named  # how the user sets it, for the message
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._guard = threading.Lock()
        self._timer = threading.Timer(min(seconds, threading.TIMEOUT_MAX), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _current.deadline = None

    def left(self) -> float:
        return self.at - time.monotonic()

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._guard:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._guard:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def reason(self) -> str:
        return f"no complete answer within {self.seconds:g} s{self.named} (tried again next run)"


def current_deadline() -> Deadline | None:
    return getattr(_current, "deadline", None)


def _shut(sock: socket.socket) -> None:
    try:  # the plain socket's shutdown, also for TLS: it ends the other thread's read with end-of-file
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


class _Watched:
    """A connection whose sockets the current Deadline can shut: the TCP socket as soon as it exists
    (a TLS handshake is read from it), the connection's socket again before each answer (a kept-alive
    connection, or the TLS socket wrapping the first)."""

    def _new_conn(self):
        sock = super()._new_conn()
        _watch(sock)
        return sock

    def getresponse(self, *args, **kwargs):
        _watch(self.sock)
        return super().getresponse(*args, **kwargs)


def _watch(sock) -> None:
    deadline = current_deadline()
    if deadline:
        deadline.watch(sock)


class _WatchedHTTP(_Watched, HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTP


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPS


class WatchedAdapter(HTTPAdapter):
    """requests' adapter, its pools making watched connections (directly or through an HTTP proxy)."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def proxy_manager_for(self, proxy, **kwargs):
        manager = super().proxy_manager_for(proxy, **kwargs)
        if not proxy.lower().startswith("socks"):  # SOCKS pools have connections of their own
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
        return manager
