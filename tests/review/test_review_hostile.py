"""The review page against a hostile web page and hostile input, and with remote scans (uvicorn on loopback, a real
Postgres, the loopback manifest server): a `Host` it does not serve is refused before anything else (a DNS-rebinding
page cannot sign in or vote), cookies are Secure behind TLS, numbers in URLs never give a 500, and a card of a remote
source shows its scan through the fetch cache or one fetch in the fleet's rate, which counts like any other."""

from __future__ import annotations

import hashlib
import io

import requests
from PIL import Image
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.review_web.remote_scans import RemoteScans
from stage_e_dagster.stages.stage_c_fetch import FetchSettings
from testkit.remote import add_manifest, sync
from testkit.review import Browserless, human_votes, serve


def test_a_host_the_page_does_not_serve_is_refused_before_anything_else(review_db, corpus):
    """A page on evil.example whose name now resolves to 127.0.0.1 sends its requests with its own name as Host:
    refused, so it can read no CSRF token, sign in or vote. Addresses, loopback names on a loopback bind, the base
    URL's host and the allowed names are served."""
    card = corpus[0].card_id
    with serve(review_db) as base:
        port = base.rsplit(":", 1)[1]
        rebound = requests.get(f"{base}/", headers={"Host": f"evil.example:{port}"}, timeout=30)
        assert rebound.status_code == 400 and "csrf" not in rebound.text and "set-cookie" not in rebound.headers
        signin = requests.post(f"{base}/signin", data={"reviewer": "mallory"}, timeout=30,
                               headers={"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"})
        assert signin.status_code == 400
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "127.0.0.1"):
            assert requests.get(f"{base}/", headers={"Host": host}, timeout=30).status_code == 200, host
        assert requests.get(f"{base}/card/{card}/scan", headers={"Host": f"evil.example:{port}"},
                            timeout=30).status_code == 400
    assert human_votes(review_db) == []
    with serve(review_db, base_url="https://review.example.org", allowed_hosts=("review.internal",)) as base:
        for host, status in (("review.example.org", 200), ("review.internal:8443", 200), ("evil.example", 400)):
            assert requests.get(f"{base}/", headers={"Host": host}, timeout=30).status_code == status, host


def test_cookies_are_secure_behind_tls_and_numbers_in_urls_never_give_an_error(review_db, corpus):
    card = corpus[0].card_id
    with serve(review_db, base_url="https://review.example.org") as base:
        page = requests.get(f"{base}/", timeout=30)
        assert "; secure" in page.headers["set-cookie"].lower()
    with serve(review_db) as base:
        assert "; secure" not in requests.get(f"{base}/", timeout=30).headers["set-cookie"].lower()
        alice = Browserless(base)
        alice.signin("alice")
        assert alice.get("/grid?page=²").status_code == 200
        assert alice.get("/grid?page=99999999999999999999999").status_code == 200
        assert alice.get(f"/card/{card}?then=²").status_code == 200
        for path in ("/card/²", "/card/99999999999999999999", "/card/9223372036854775807",
                     "/card/99999999999999999999/scan", "/card/-1/thumb.jpg"):
            assert alice.get(path).status_code == 404, path


def _png(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 168), (shade, 90, 200 - shade)).save(out, "PNG")
    return out.getvalue()


def test_a_remote_scan_shows_through_the_cache_or_one_fetch_that_counts_like_any_other(review_db, corpus, web,
                                                                                         tmp_path):
    engine = get_engine(review_db)
    shown, refused, changed = _png(10), _png(60), _png(120)
    web.images = {"shown.png": shown, "refused.png": refused, "changed.png": changed}
    web.faults.per_key["refused.png"] = "403"
    add_manifest(engine, "cloud", web)
    sync(engine, "cloud")
    with engine.begin() as conn:  # as Stage C leaves them: each card's bytes verified
        for name, data in web.images.items():
            conn.execute(text("UPDATE card SET content_sha256 = :sha, content_verified = true WHERE identifier = :n"),
                         {"sha": hashlib.sha256(data).hexdigest(), "n": name})
        ids = dict(conn.execute(text("SELECT identifier, id FROM card WHERE remote_token IS NOT NULL")).all())
        pace_before = conn.execute(text("SELECT tat FROM fetch_pace")).scalar()
    web.images["changed.png"] = _png(200)  # the object changed since Stage C judged it
    remote = RemoteScans(engine, FetchSettings(cache_dir=tmp_path / "cache", rate=50.0, timeout_seconds=5.0),
                         lambda name: None)
    with serve(review_db, remote=remote) as base:
        alice = Browserless(base)
        alice.signin("alice")
        scan = alice.get(f"/card/{ids['shown.png']}/scan")
        assert scan.status_code == 200 and scan.content == shown and scan.headers["content-type"] == "image/png"
        assert alice.get(f"/card/{ids['shown.png']}/thumb.jpg").status_code == 200
        assert alice.get(f"/card/{ids['shown.png']}/crop/symbol.png").status_code == 200
        assert [seen.key for seen in web.record.seen] == ["shown.png"], "one fetch; the rest read the cache"
        assert alice.get(f"/card/{ids['changed.png']}/scan").status_code == 404, "other bytes are never shown"
        assert alice.get(f"/card/{ids['refused.png']}/scan").status_code == 404
    with engine.connect() as conn:
        assert conn.execute(text("SELECT tat FROM fetch_pace")).scalar() > pace_before, "fetches took turns"
        (host,) = conn.execute(text("SELECT host, forbidden_streak, fetch_ok_at IS NOT NULL FROM fetch_host")).all()
        assert host[1:] == (1, True), "the host answered, then its 403 added to its streak"
        assert conn.execute(text("SELECT count(*) FROM card_scan_log l JOIN card c ON c.id = l.card_id "
                                 "WHERE c.remote_token IS NOT NULL")).scalar() == 0, "no card was skipped for it"
