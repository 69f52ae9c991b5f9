"""The review page's security pieces on their own: signed sessions, the cross-site check, loopback detection and
the scan path check (no database, no server)."""

from __future__ import annotations

import os

import pytest

from stage_e_dagster.review_web import security
from stage_e_dagster.review_web.files import ScanRefused, read_scan, safe_scan_path
from stage_e_dagster.review_web.security import Session, SessionCodec, cross_site, is_loopback


def test_a_session_cookie_cannot_be_forged_altered_or_kept_past_its_lifetime(monkeypatch):
    codec = SessionCodec(b"k" * 32)
    value = codec.dumps(Session(reviewer="alice", authed=True, admin=False))
    assert codec.loads(value).reviewer == "alice"
    payload, signature = value.rsplit(".", 1)
    promoted = SessionCodec(b"k" * 32).dumps(Session(reviewer="alice", authed=True, admin=True)).rsplit(".", 1)[0]
    assert codec.loads(f"{promoted}.{signature}") is None  # admin=true with the old signature
    assert SessionCodec(b"other-secret" * 3).loads(value) is None
    assert codec.loads(payload) is None and codec.loads("") is None and codec.loads("a.b.c") is None
    monkeypatch.setattr(security.time, "time", lambda: 10**10)
    assert codec.loads(value) is None  # expired


def test_cross_site_requests_are_recognised():
    host = "127.0.0.1:8765"
    assert not cross_site({"origin": "http://127.0.0.1:8765"}, host)
    assert cross_site({"origin": "http://evil.example"}, host)
    assert cross_site({"origin": "http://127.0.0.1:9999"}, host)
    assert cross_site({"origin": "null"}, host)
    assert cross_site({"sec-fetch-site": "cross-site", "origin": "http://127.0.0.1:8765"}, host)
    assert cross_site({"sec-fetch-site": "same-site"}, host)
    assert not cross_site({"sec-fetch-site": "same-origin", "origin": "null"}, host)
    assert not cross_site({}, host)  # no browser headers: the CSRF token decides


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("review.example.org", False),
])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_the_scan_path_check_keeps_every_read_inside_the_source(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "card.jpg").write_bytes(b"\xff\xd8 inside")
    (outside / "secret.png").write_bytes(b"secret")
    os.symlink(outside / "secret.png", root / "a" / "link.png")
    os.symlink(root / "a" / "card.jpg", root / "same.jpg")
    assert read_scan(str(root), "a/card.jpg") == (b"\xff\xd8 inside", "image/jpeg")
    assert read_scan(str(root), "same.jpg")[0] == b"\xff\xd8 inside"
    for identifier in ("a/link.png", "../outside/secret.png", "a/../../outside/secret.png",
                       str(outside / "secret.png"), "", "a/card.jpg\x00.png", "a", "missing.png"):
        with pytest.raises(ScanRefused):
            safe_scan_path(str(root), identifier)
    with pytest.raises(ScanRefused):
        read_scan(str(tmp_path / "no-such-root"), "a/card.jpg")
