"""Remote sources against whoever controls a manifest, a bucket or an image host: each hostile move ends as a named
refusal or skip for one card, never a request where the source may not reach, a failed batch or tick, a stuck
source or a fleet halt. Real servers on loopback (the manifest's origin is one port; another port plays a host the
manifest may not point at, and must see no request)."""

from __future__ import annotations

import gzip
import hashlib
import time

import pytest
from sqlalchemy import text

from stage_e_dagster.db.intake.sources import list_sources
from stage_e_dagster.domain.stage_c import StageCCounters
from stage_e_dagster.remote.listing import sync_remote
from testkit.remote import add_manifest, add_s3, card_state, http_server, make_fetcher, owed, sync

PNG = b"\x89PNG\r\n\x1a\n"


def _image(seed: int, size: int = 4000) -> bytes:
    return PNG + hashlib.sha256(str(seed).encode()).digest() * (size // 32)


def _fetch(engine, tmp_path, key: str = "cloud", **settings) -> StageCCounters:
    counters = StageCCounters()
    make_fetcher(engine, tmp_path / "cache", **settings).fetch(owed(engine, key), counters)
    return counters


def _skips(engine) -> dict[str, str]:
    with engine.connect() as conn:
        return dict(conn.execute(text("SELECT c.identifier, l.skip_reason FROM card_scan_log l "
                                      "JOIN card c ON c.id = l.card_id")).all())


def _source(engine, key: str = "cloud"):
    with engine.connect() as conn:
        return list_sources(conn, [key])[0]


@pytest.fixture
def other():
    """A second host on loopback (another port): a manifest on `web` may not point at it."""
    with http_server() as made:
        yield made


def test_a_manifest_cannot_reach_loopback_beyond_its_own_origin(db_engine, web, other, tmp_path):
    """Entries naming another loopback port (as an address, as `localhost`, as an IPv4-mapped address) and an
    image of the manifest's own origin redirecting there: each refused by name, and the other host sees no request.
    The manifest's own origin serves its images. (A name that resolves to loopback is refused at fetch time:
    tests/unit/test_remote_addresses.py.)"""
    other.images["victim.png"] = _image(9)
    web.images["good.png"] = _image(1)
    web.images["hop.png"] = _image(2)
    web.faults.per_key["hop.png"] = f"redirect:{other.url}/img/victim.png"
    port = other.url.rsplit(":", 1)[1]
    web.listed = [
        {"url": "/img/good.png", "name": "good.png"},
        {"url": "/img/hop.png", "name": "hop.png"},
        {"url": f"{other.url}/img/victim.png", "name": "literal.png"},
        {"url": f"http://localhost:{port}/img/victim.png", "name": "localhost.png"},
        {"url": f"http://[::ffff:127.0.0.1]:{port}/img/victim.png", "name": "mapped.png"},
    ]
    add_manifest(db_engine, "cloud", web)
    listed = sync(db_engine, "cloud")
    refused = dict(listed.summary.refused)
    assert sorted(refused) == ["entry 2", "entry 3", "entry 4"], refused
    assert all("not the manifest's origin" in why for why in refused.values()), refused
    counters = _fetch(db_engine, tmp_path)
    assert counters.fetch["fetched"] == 1 and counters.fetch["refused"] == 1, dict(counters.fetch)
    assert _skips(db_engine) == {"hop.png": "fetch-refused"}
    assert other.record.seen == [] and other.headers == [], "the other host saw no request"


def test_a_private_host_is_reached_only_when_the_source_allows_it(db_engine, web, other, tmp_path):
    """`--allow-private` lifts the rule for a source whose images sit on a private network."""
    other.images["lan.png"] = _image(3)
    web.listed = [{"url": f"{other.url}/img/lan.png", "name": "lan.png"}]
    add_manifest(db_engine, "cloud", web)
    assert sync(db_engine, "cloud").summary.new == 0
    add_manifest(db_engine, "cloud", web, allow_private=True)
    assert sync(db_engine, "cloud").summary.new == 1, "allowing private hosts reads the unchanged manifest again"
    counters = _fetch(db_engine, tmp_path)
    assert counters.fetch["fetched"] == 1, dict(counters.fetch)
    assert [seen.key for seen in other.record.seen] == ["lan.png"]


def test_a_content_length_that_is_no_number_is_a_named_skip_not_a_failed_batch(db_engine, web, tmp_path):
    web.images = {"odd.png": _image(4), "fine.png": _image(5)}
    web.faults.per_key["odd.png"] = "bad-length"
    add_manifest(db_engine, "cloud", web)
    sync(db_engine, "cloud")
    for attempt in (1, 2, 3):
        counters = _fetch(db_engine, tmp_path, broken_retries=3)
        assert counters.fetch["broken"] == 1, dict(counters.fetch)
        assert card_state(db_engine, "cloud")["odd.png"][2] == attempt
        with db_engine.begin() as conn:
            conn.execute(text("UPDATE card_work SET retry_at = now()"))
    assert _skips(db_engine) == {"odd.png": "fetch-error"}
    assert card_state(db_engine, "cloud")["fine.png"][0] is True


def test_one_unreadable_manifest_line_is_refused_by_name_and_the_tick_lists_every_source(db_engine, web, other,
                                                                                         instance):
    """A name holding a NUL, a URL that does not parse, a name its URL gives with a NUL: each line refused on its
    own; the rest of that manifest (a size that is no size is dropped, not the entry) and every later source are
    listed in the same tick."""
    from stage_e_dagster.resources.stream import StreamControl
    from stage_e_dagster.sensors.source_inbox import evaluate_inbox

    web.listed = [
        {"url": "/img/a.png", "name": "bad\x00name.png"},
        {"url": "https://[::1/x.png"},
        {"url": "/img/b%00c.png"},
        {"url": "/img/odd.png", "size": -7},
        {"url": "/img/e.png", "name": "fine.png"},
    ]
    other.images = {"later.png": _image(6)}
    add_manifest(db_engine, "a-hostile", web)
    add_manifest(db_engine, "b-later", other)
    result = evaluate_inbox(instance, db_engine, StreamControl(remote_list_seconds=30.0), None)
    (event,) = result.asset_events
    rows = {row.data["source"]: row.data for row in event.metadata["sources"].value.records}
    assert rows["a-hostile"]["new"] == 2 and rows["a-hostile"]["refused"] == 3, rows
    assert rows["b-later"]["new"] == 1
    with db_engine.connect() as conn:
        names = set(conn.execute(text("SELECT identifier FROM card")).scalars())
    assert names == {"fine.png", f"{web.url}/img/odd.png", "later.png"}


def test_keys_obstore_refuses_are_named_and_the_listing_pages_past_them(db_engine, s3_env):
    good = ["a.png", "c.png", "m/n.png", "z.png"]
    bad = ["b/../c.png", "b//d.png", "m/./x.png"]
    for key in good + bad:
        s3_env.put(f"scans/{key}", _image(len(key)))
    add_s3(db_engine, "bucket", s3_env)
    first = sync(db_engine, "bucket")
    assert first.status == "synced", first.detail
    assert sorted(card_state(db_engine, "bucket")) == good
    assert sorted(name for name, _why in first.summary.refused) == sorted(bad)
    for key in bad:
        s3_env.delete(f"scans/{key}")
    again = sync(db_engine, "bucket", full=True)
    assert (again.summary.unchanged, again.summary.changed, again.summary.vanished) == (4, 0, []), \
        "the keys listed from the raw page carry the change tokens obstore gives them"


def test_a_host_that_drips_its_headers_is_cut_off_at_the_fetch_deadline(db_engine, web, tmp_path):
    web.images = {"drip.png": _image(7)}
    web.faults.per_key["drip.png"] = "drip-headers"
    web.drip_seconds = 0.2  # under the read timeout, byte after byte: about 45 s for the whole header
    add_manifest(db_engine, "cloud", web)
    sync(db_engine, "cloud")
    started = time.monotonic()
    counters = _fetch(db_engine, tmp_path, timeout_seconds=1.0)
    took = time.monotonic() - started
    assert counters.fetch["broken"] == 1 and card_state(db_engine, "cloud")["drip.png"][2] == 1
    assert took < 15, f"a 1 s deadline held the fetch {took:.1f} s (never bound: the drip lasts about 45 s)"


def test_a_slow_manifest_holds_a_tick_no_longer_than_its_budget(db_engine, web):
    def dripping():
        yield b'{"images": ['
        for index in range(200):
            yield b'"/img/%d.png", ' % index
            time.sleep(0.2)
        yield b'"/img/last.png"]}'

    web.manifest_body = dripping
    add_manifest(db_engine, "cloud", web)
    started = time.monotonic()
    ticked = sync_remote(db_engine, _source(db_engine), budget_seconds=1.0)
    took = time.monotonic() - started
    assert ticked.status == "too_big", ticked
    assert took < 15, f"a 1 s budget held the tick {took:.1f} s (never bound: the drip lasts about 40 s)"


@pytest.mark.parametrize(("body", "limits", "why"), [
    (lambda: (b" " * (1024 * 1024) for _ in range(20)), {"MANIFEST_MAX_BYTES": str(1024 * 1024)},
     "larger than 1048576 bytes"),
    (lambda: iter([b"[" + b", ".join(b'"/img/%d.png"' % i for i in range(50)) + b"]"]),
     {"MANIFEST_MAX_ENTRIES": "10"}, "more than 10 entries"),
])
def test_a_manifest_beyond_its_caps_fails_its_listing_and_says_why(db_engine, web, monkeypatch, body, limits, why):
    for name, value in limits.items():
        monkeypatch.setenv(f"STAGE_E_{name}", value)
    web.manifest_body = body
    add_manifest(db_engine, "cloud", web)
    result = sync(db_engine, "cloud")
    assert result.status == "unavailable" and why in result.detail, result


def test_whitespace_before_a_manifest_is_skipped_not_gathered(db_engine, web):
    web.manifest_body = lambda: iter([b" \n\t" * (3 * 1024 * 1024), b'["/img/a.png", "/img/b.png"]'])
    add_manifest(db_engine, "cloud", web)
    assert sync(db_engine, "cloud").summary.new == 2


def test_403s_from_a_host_that_never_answered_are_named_skips_never_a_lockout(db_engine, web, other, tmp_path):
    """A manifest whose images sit on two hosts: its own origin answers, the other refuses every image (it blocks
    hot-linking). The other host never answered, so its 403s are named skips, however many come in a row; the
    source answering from its own origin does not make them a lockout."""
    from stage_e_dagster.db.runs import trips

    web.images = {f"ok {i}.png": _image(10 + i) for i in range(3)}
    other.images = {f"hot {i}.png": _image(20 + i) for i in range(5)}
    other.faults.lockout = True
    web.listed = ([{"url": f"/img/ok%20{i}.png", "name": f"ok {i}.png"} for i in range(3)]
                  + [{"url": f"{other.url}/img/hot%20{i}.png", "name": f"hot {i}.png"} for i in range(5)])
    add_manifest(db_engine, "cloud", web, allow_private=True)
    sync(db_engine, "cloud")
    counters = _fetch(db_engine, tmp_path, concurrency=1, lockout_forbidden=3)
    assert counters.lockout is None and counters.fetch["forbidden"] == 5 and counters.fetch["fetched"] == 3
    with db_engine.connect() as conn:
        assert trips.open_trips(conn) == []
    assert sorted(name for name, why in _skips(db_engine).items() if why == "fetch-forbidden") == \
        [f"hot {i}.png" for i in range(5)]


def test_a_gzip_body_is_judged_by_its_real_bytes(db_engine, web, tmp_path):
    """A host that gzips an image it was asked to send as it is: the body is the bytes it sent (their length is the
    `Content-Length`, their hash is the card's), never decompressed, so a decompression bomb never inflates here and a
    compressed body is never judged truncated."""
    data = _image(8)
    web.images = {"packed.png": data}
    web.listed = [{"url": "/img/packed.png", "name": "packed.png"}]
    web.faults.per_key["packed.png"] = "gzip"
    add_manifest(db_engine, "cloud", web)
    sync(db_engine, "cloud")
    counters = _fetch(db_engine, tmp_path)
    assert counters.fetch["fetched"] == 1, dict(counters.fetch)
    sent = gzip.compress(data, mtime=0)
    assert card_state(db_engine, "cloud")["packed.png"][4] == hashlib.sha256(sent).hexdigest()
    (asked,) = [headers for path, headers in web.headers if path.startswith("/img/")]
    assert asked.get("accept-encoding") == "identity"


def test_no_secret_in_a_url_is_stored_or_shown(db_url, db_engine, web, tmp_path, monkeypatch):
    """A manifest behind `?token=`, entries with a signature in their query and a password in their URL: the
    secrets stay in the two columns a fetch reads (`source.location`, `card.remote_url`, and never the password),
    and appear in no other column, no command output, no metadata and no skip detail. A URL with a password is
    refused at registration."""
    from click.testing import CliRunner

    from stage_e_dagster.assets.sources import sources_metadata
    from stage_e_dagster.cli import main

    web.images = {"a.png": _image(11), "b.png": _image(12)}
    web.listed = [{"url": "/img/a.png?X-Amz-Signature=SECRET-SIG&w=2"},
                  {"url": f"http://user:SECRET-PW@{web.url.removeprefix('http://')}/img/b.png?token=SECRET-TOK"},
                  {"url": "/img/gone.png?sig=SECRET-GONE"}]
    monkeypatch.setenv("STAGE_E_DATABASE_URL", db_url)
    runner = CliRunner()
    with_password = runner.invoke(main, ["sources", "add", web.manifest_url.replace("//", "//u:SECRET-PW@"),
                                         "--key", "cloud"])
    assert with_password.exit_code != 0 and "SECRET" not in with_password.output
    outputs = [runner.invoke(main, ["sources", "add", web.manifest_url + "?token=SECRET-MANIFEST", "--key", "cloud"]),
               runner.invoke(main, ["sources", "sync"]), runner.invoke(main, ["sources", "list"])]
    assert all(done.exit_code == 0 for done in outputs), [done.output for done in outputs]
    assert "SECRET" not in "".join(done.output for done in outputs) and "REDACTED" in outputs[2].output
    listed = sync(db_engine, "cloud", full=True)
    assert listed.summary.unchanged == 3 and "SECRET" not in str(sources_metadata([listed], 0.1))
    _fetch(db_engine, tmp_path)
    assert "fetch-gone" in _skips(db_engine).values()
    assert not any("SECRET-PW" in str(headers) for _path, headers in web.headers), "a password is never sent"
    with db_engine.connect() as conn:
        columns = conn.execute(text(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')")).all()
        holding = [f"{table}.{column}" for table, column in columns if conn.execute(text(
            f'SELECT count(*) FROM "{table}" WHERE CAST("{column}" AS text) LIKE \'%SECRET%\'')).scalar()]
        stored = conn.execute(text("SELECT remote_url FROM card")).scalars().all()
    assert sorted(holding) == ["card.remote_url", "source.location"], holding
    assert not any("SECRET-PW" in url for url in stored), "a password in a URL is never stored"
