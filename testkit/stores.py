"""Real servers on loopback for the remote-source tests, drill and benchmark, with fault injection and a record of
every object request as the server saw it.

- `S3Server`: moto's S3-compatible server (`ThreadedMotoServer`) with a WSGI layer in front that can answer object
  GETs with a throttling storm (429/503 SlowDown), a lockout (403 for every object), or a per-key fault, and that
  timestamps every object GET on arrival, so the request rate is measured by the server, not by the client.
- `HttpServer`: a standard-library HTTP server holding a JSON manifest (with an ETag, answering a matching
  If-None-Match with 304) and its images, with per-image or global faults: 429 bursts, 503, 403, 404 (gone after
  the listing), slow bodies and truncated bodies; and what a hostile host does: headers drip-fed a byte at a time,
  a `Content-Length` that is no number, a gzip body it was not asked for, a redirect anywhere, and a manifest body
  of its own (`manifest_body`: any bytes, as slowly as it likes). It records each request's headers.

Both bind 127.0.0.1 on a free port and stop with `stop()`. Listings are recorded apart from object requests.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, unquote

from werkzeug.serving import make_server

FAULTS = ("429", "503", "403", "404", "slow", "truncate", "corrupt", "drip-headers", "bad-length", "gzip",
          "redirect:<url>")


@dataclass
class Faults:
    """What the server does to object requests: a storm (the next `storm` requests throttled, or until
    `storm_until`), a lockout (every object 403), per-key faults, and a body delay."""

    storm: int = 0
    storm_until: float = 0.0
    storm_status: int = 503
    lockout: bool = False
    per_key: dict[str, str] = field(default_factory=dict)
    slow_seconds: float = 3.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def decide(self, key: str) -> str | None:
        with self.lock:
            if self.lockout:
                return "403"
            if self.storm > 0:
                self.storm -= 1
                return str(self.storm_status)
            if time.monotonic() < self.storm_until:
                return str(self.storm_status)
            return self.per_key.get(key)


@dataclass(frozen=True)
class Seen:
    """One object request as the server saw it: arrival time (monotonic), key, the status it answered."""

    at: float
    key: str
    status: int


@dataclass
class Record:
    """Every object request, in arrival order, and which keys were sent in full."""

    seen: list[Seen] = field(default_factory=list)
    completed: dict[str, int] = field(default_factory=dict)
    listings: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, key: str, status: int) -> None:
        with self.lock:
            self.seen.append(Seen(time.monotonic(), key, status))

    def complete(self, key: str) -> None:
        with self.lock:
            self.completed[key] = self.completed.get(key, 0) + 1

    def max_in_window(self, seconds: float = 1.0, since: int = 0) -> int:
        """The most object requests that arrived within any `seconds`-long window (both ends included), counting
        from the `since`-th request on."""
        times = sorted(s.at for s in self.seen[since:])
        best, start = 0, 0
        for end, moment in enumerate(times):
            while moment - times[start] > seconds:
                start += 1
            best = max(best, end - start + 1)
        return best

    def max_per_second(self, since: int = 0) -> int:
        """The most object requests counted in one second, as a store's rate limit counts them: arrivals bucketed by
        whole seconds of the server's clock."""
        counts: dict[int, int] = {}
        for seen in self.seen[since:]:
            counts[int(seen.at)] = counts.get(int(seen.at), 0) + 1
        return max(counts.values(), default=0)

    def statuses(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for s in self.seen:
            counts[s.status] = counts.get(s.status, 0) + 1
        return counts


def _error_xml(code: str, message: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message>'
            "</Error>").encode()


class _S3Faults:
    """WSGI layer in front of moto: faults and records for object GETs of `bucket`."""

    def __init__(self, app, bucket: str, faults: Faults, record: Record) -> None:
        self.app, self.bucket, self.faults, self.record = app, bucket, faults, record

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        prefix = f"/{self.bucket}/"
        if environ.get("REQUEST_METHOD") != "GET" or not path.startswith(prefix):
            if environ.get("REQUEST_METHOD") == "GET" and path.rstrip("/") == f"/{self.bucket}":
                self.record.listings += 1
            return self.app(environ, start_response)
        key = path[len(prefix):]
        fault = self.faults.decide(key)
        if fault in ("429", "503", "403", "404"):
            status = int(fault)
            self.record.add(key, status)
            code = {429: "SlowDown", 503: "SlowDown", 403: "AccessDenied", 404: "NoSuchKey"}[status]
            body = _error_xml(code, "injected")
            reason = {429: "Too Many Requests", 503: "Service Unavailable", 403: "Forbidden", 404: "Not Found"}
            start_response(f"{status} {reason[status]}", [("Content-Type", "application/xml"),
                                                          ("Content-Length", str(len(body)))])
            return [body]
        statuses: list[int] = []

        def recording_start(status, headers, exc_info=None):
            statuses.append(int(status.split()[0]))
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        inner = self.app(environ, recording_start)
        self.record.add(key, statuses[0] if statuses else 0)
        return self._body(key, inner, fault, statuses)

    def _body(self, key: str, inner: Iterable[bytes], fault: str | None, statuses: list[int]):
        data = b"".join(inner)
        if fault == "truncate":
            yield data[: len(data) // 2]
            return
        if fault == "slow":
            step = max(1, len(data) // 10)
            for at in range(0, len(data), step):
                time.sleep(self.faults.slow_seconds / 10)
                yield data[at:at + step]
        else:
            yield data
        if statuses and statuses[0] == 200:
            self.record.complete(key)


class S3Server:
    """moto's S3-compatible server on 127.0.0.1 with `Faults` on one bucket's object GETs."""

    ACCESS_KEY, SECRET_KEY = "drill-key", "drill-secret"

    def __init__(self, bucket: str = "scans") -> None:
        from moto.moto_server.threaded_moto_server import ThreadedMotoServer
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.bucket, self.faults, self.record = bucket, Faults(), Record()
        server = self

        class _Threaded(ThreadedMotoServer):
            def _server_entry(self) -> None:
                app = _S3Faults(DomainDispatcherApplication(create_backend_app), server.bucket, server.faults,
                                server.record)
                self._server = make_server(self._ip_address, self._port, app, True,
                                           request_handler=MotoRequestHandler)
                self._server_ready_event.set()
                self._server.serve_forever()

        self._moto = _Threaded(ip_address="127.0.0.1", port=0, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        # moto keeps its buckets in module state, shared by every server in this process: start from an empty store.
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST"), timeout=30)
        self.client().create_bucket(Bucket=bucket)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.ACCESS_KEY,
                            aws_secret_access_key=self.SECRET_KEY, region_name="us-east-1")

    def put(self, key: str, data: bytes) -> None:
        self.client().put_object(Bucket=self.bucket, Key=key, Body=data)

    def delete(self, key: str) -> None:
        self.client().delete_object(Bucket=self.bucket, Key=key)

    def credentials_env(self, name: str = "DRILL") -> dict[str, str]:
        """The environment of credential set `name` for this server."""
        return {f"STAGE_E_S3_CREDENTIALS_{name}_ACCESS_KEY_ID": self.ACCESS_KEY,
                f"STAGE_E_S3_CREDENTIALS_{name}_SECRET_ACCESS_KEY": self.SECRET_KEY}

    def stop(self) -> None:
        self._moto.stop()


class HttpServer:
    """A manifest of images at `/manifest.json` and the images at `/img/<name>`, with `Faults` per image name."""

    def __init__(self) -> None:
        self.images: dict[str, bytes] = {}
        self.listed: list[dict] | None = None  # the manifest's entries; None: one per image, with its sha256
        self.manifest_body: Callable[[], Iterable[bytes]] | None = None  # the manifest's body as it is sent
        self.drip_seconds = 0.2  # between two bytes of drip-fed headers
        self.faults, self.record = Faults(slow_seconds=3.0), Record()
        self.manifest_requests = 0
        self.headers: list[tuple[str, dict[str, str]]] = []  # (path, headers) of every request
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                server._serve(self)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass  # a client that hung up mid-body (a timeout, a cut-short listing) is part of the test

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def manifest_url(self) -> str:
        return f"{self.url}/manifest.json"

    def manifest(self) -> bytes:
        entries = self.listed if self.listed is not None else [
            {"url": f"/img/{quote(name)}", "name": name, "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sorted(self.images.items())]
        return json.dumps({"images": entries}).encode()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        path = unquote(handler.path.split("?")[0])
        self.headers.append((path, {k.lower(): v for k, v in handler.headers.items()}))
        if path == "/manifest.json" and self.manifest_body is not None:
            self.manifest_requests += 1
            self._stream(handler, self.manifest_body())
            return
        if path == "/manifest.json":
            self.manifest_requests += 1
            body = self.manifest()
            etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
            if handler.headers.get("If-None-Match") == etag:
                self._send(handler, 304, b"", {"ETag": etag})
            else:
                self._send(handler, 200, body, {"ETag": etag, "Content-Type": "application/json"})
            return
        name = path[len("/img/"):] if path.startswith("/img/") else ""
        fault = self.faults.decide(name)
        if name not in self.images or fault == "404":
            self.record.add(name, 404)
            self._send(handler, 404, b"gone")
            return
        if fault in ("429", "503", "403"):
            self.record.add(name, int(fault))
            self._send(handler, int(fault), b"no", {"Retry-After": "1"} if fault != "403" else None)
            return
        if fault and fault.startswith("redirect:"):
            self.record.add(name, 302)
            self._send(handler, 302, b"", {"Location": fault.removeprefix("redirect:")})
            return
        data = self.images[name]
        self.record.add(name, 200)
        if fault in ("drip-headers", "bad-length", "gzip"):
            self._hostile(handler, name, fault, data)
            return
        if fault == "corrupt":
            data = data[:-8] + b"\0" * 8
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("Content-Type", "image/png")
        handler.end_headers()
        try:
            if fault == "truncate":
                handler.wfile.write(data[: len(data) // 2])
                handler.wfile.flush()
                handler.close_connection = True
                return
            if fault == "slow":
                step = max(1, len(data) // 10)
                for at in range(0, len(data), step):
                    handler.wfile.write(data[at:at + step])
                    handler.wfile.flush()
                    time.sleep(self.faults.slow_seconds / 10)
            else:
                handler.wfile.write(data)
            self.record.complete(name)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    def _hostile(self, handler: BaseHTTPRequestHandler, name: str, fault: str, data: bytes) -> None:
        """Answer as a hostile host: headers a byte at a time, a `Content-Length` of `²`, or a gzip body."""
        handler.close_connection = True
        try:
            if fault == "drip-headers":
                head = b"HTTP/1.1 200 OK\r\n" + b"X-Drip: " + b"x" * 200 + b"\r\n"
                for at in range(len(head)):
                    handler.wfile.write(head[at:at + 1])
                    handler.wfile.flush()
                    time.sleep(self.drip_seconds)
                return
            if fault == "bad-length":
                # b"\xb2" is `²` in the latin-1 that headers are read in: str.isdigit() says yes, int() says no.
                handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\nContent-Type: image/png\r\n\r\n"
                                    + data)
                return
            body = gzip.compress(data, mtime=0)
            handler.send_response(200)
            handler.send_header("Content-Encoding", "gzip")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
            self.record.complete(name)
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, chunks: Iterable[bytes]) -> None:
        """A 200 whose body is `chunks`, sent as they come, without a length; the connection closes after it."""
        handler.close_connection = True
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Connection", "close")
            handler.end_headers()
            for chunk in chunks:
                handler.wfile.write(chunk)
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        if body:
            handler.wfile.write(body)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
