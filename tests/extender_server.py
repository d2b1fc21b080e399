"""A scriptable scheduler extender for tests: a real HTTP(S) server on 127.0.0.1, an
ephemeral port, in a background thread. Each request is recorded (verb, JSON body);
``answer(verb, body)`` gives (status, JSON value or raw bytes, delay in seconds). The
server handles at most ``MAX_REQUESTS`` requests and lives at most ``LIFETIME``
seconds, then stops by itself."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

MAX_REQUESTS = 200
LIFETIME = 120.0

Answer = Callable[[str, Any], tuple[int, Any, float]]


class Trickle(list):
    """An answer's body in pieces (bytes), sent the answer's delay apart."""


class Raw(list):
    """The whole answer (status line and headers too) in pieces (bytes), written as they
    are, the answer's delay apart; the server stops writing when the client has gone."""


class ExtenderServer:
    def __init__(self, answer: Answer, tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.requests: list[tuple[str, Any]] = []
        self.paths: list[str] = []  # each request's path
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server calls it by this name
                verb = self.path.rsplit("/", 1)[-1]
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size)) if size else None
                outer.paths.append(self.path)
                outer.requests.append((verb, body))
                status, value, delay = outer.answer(verb, body)
                if isinstance(value, Raw):
                    try:
                        for i, piece in enumerate(value):
                            if i and delay:
                                time.sleep(delay)
                            self.wfile.write(piece)
                            self.wfile.flush()
                    except OSError:
                        pass  # the client gave up
                    self.close_connection = True
                    return
                if delay and not isinstance(value, Trickle):
                    time.sleep(delay)
                # Trickle: the body's pieces, sent ``delay`` apart after the headers
                pieces = value if isinstance(value, Trickle) else [value if isinstance(value, bytes) else
                                                                 json.dumps(value).encode()]
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(sum(map(len, pieces))))
                    self.end_headers()
                    for i, piece in enumerate(pieces):
                        if i and delay:
                            time.sleep(delay)
                        self.wfile.write(piece)
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.server.timeout = 0.2
        self.port = self.server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/ext"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        deadline = time.monotonic() + LIFETIME
        handled = 0
        while not self._stop.is_set() and handled < MAX_REQUESTS and time.monotonic() < deadline:
            before = len(self.requests)
            self.server.handle_request()
            handled += len(self.requests) > before
        self.server.server_close()

    def verbs(self) -> list[str]:
        return [v for v, _ in self.requests]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
