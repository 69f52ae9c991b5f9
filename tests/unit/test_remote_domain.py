"""Remote sources in pure terms: locations, manifest entries, change tokens, failure kinds, the pace's arithmetic,
credential sets from the environment, and the fetch cache's streaming checks. No database, no network."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime

import pytest

from stage_e_dagster.domain.remote import (
    BROKEN,
    FORBIDDEN,
    GONE,
    THROTTLED,
    LocationError,
    ManifestEntry,
    PaceRules,
    classify_status,
    object_token,
    parse_entry,
    parse_location,
)
from stage_e_dagster.remote.fetch import FetchCache
from stage_e_dagster.remote.stores import Body, StoreError
from stage_e_dagster.settings import SettingsError, s3_credentials


def test_locations_name_a_bucket_and_prefix_or_a_manifest_and_plain_http_stays_on_loopback():
    s3 = parse_location("s3://scans/2024/batch-1/")
    assert (s3.kind, s3.bucket, s3.prefix, s3.url) == ("s3", "scans", "2024/batch-1", "s3://scans/2024/batch-1")
    assert parse_location("s3://scans").prefix == ""
    assert parse_location("https://example.org/m.json").kind == "http"
    assert parse_location("http://127.0.0.1:8000/m.json").kind == "http"
    assert parse_location("http://localhost/m.json").kind == "http"
    for bad in ("http://example.org/m.json", "http://10.0.0.2/m.json", "ftp://x/y", "s3:///prefix", "/srv/scans"):
        with pytest.raises(LocationError):
            parse_location(bad)


def test_a_manifest_entry_is_resolved_quoted_checked_and_named():
    base = "https://example.org/sets/manifest.json"
    entry = parse_entry({"url": "img/Opt [XLN].png", "sha256": "A" * 64}, base)
    assert isinstance(entry, ManifestEntry)
    assert entry.url == "https://example.org/sets/img/Opt%20%5BXLN%5D.png"
    assert entry.identifier == entry.url and entry.file_name == "Opt [XLN].png" and entry.sha256 == "a" * 64
    named = parse_entry({"url": "https://cdn.example.org/x/1.jpg", "name": "Opt (2).jpg", "size": 10}, base)
    assert (named.identifier, named.file_name, named.size) == ("Opt (2).jpg", "Opt (2).jpg", 10)
    assert parse_entry("https://example.org/a.webp", base).url == "https://example.org/a.webp"
    assert "sha256" in parse_entry({"url": "a.png", "sha256": "xyz"}, base)
    assert "plain http" in parse_entry({"url": "http://example.org/a.png"}, base)
    assert "png" in parse_entry({"url": "a.txt"}, base)
    assert "url" in parse_entry({"name": "a.png"}, base)


def test_a_new_etag_size_or_time_is_a_new_token_and_a_declared_hash_changes_a_manifest_token():
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    token = object_token('"abc"', 10, moment)
    assert token == object_token("abc", 10, moment)
    assert len({token, object_token('"abd"', 10, moment), object_token('"abc"', 11, moment),
                object_token('"abc"', 10, datetime(2026, 1, 2, tzinfo=UTC))}) == 4
    assert ManifestEntry("a.png", "https://x/a.png").token != ManifestEntry("a.png", "https://x/a.png", "0" * 64).token


def test_each_status_has_its_kind():
    assert [classify_status(s) for s in (429, 503, 403, 401, 404, 410, 500, 400)] == [
        THROTTLED, THROTTLED, FORBIDDEN, FORBIDDEN, GONE, GONE, BROKEN, BROKEN]


def test_the_pace_halves_to_a_floor_and_doubles_back_to_the_rate():
    rules = PaceRules(recover_after=3, floor=1 / 8)
    factor = 1.0
    for expected in (0.5, 0.25, 0.125, 0.125):
        factor = rules.halved(factor)
        assert factor == expected
    for expected in (0.25, 0.5, 1.0, 1.0):
        factor = rules.recovered(factor)
        assert factor == expected


def test_a_credential_set_comes_from_the_environment_and_never_shows_its_secret():
    env = {"STAGE_E_S3_CREDENTIALS_ARCHIVE_ACCESS_KEY_ID": "AKIA1", "STAGE_E_S3_CREDENTIALS_ARCHIVE_SECRET_ACCESS_KEY":
           "s3cr3t-value"}
    creds = s3_credentials("archive", env)
    assert (creds.access_key_id, creds.secret_access_key, creds.session_token) == ("AKIA1", "s3cr3t-value", None)
    assert "s3cr3t" not in repr(creds) and "AKIA1" not in repr(creds)
    assert s3_credentials(None, env) is None
    with pytest.raises(SettingsError, match="STAGE_E_S3_CREDENTIALS_OTHER_SECRET_ACCESS_KEY"):
        s3_credentials("other", env)
    with pytest.raises(SettingsError, match="letters"):
        s3_credentials("a-b", env)


def _body(chunks, size=None, delay=0.0):
    def gen():
        for chunk in chunks:
            time.sleep(delay)
            yield chunk

    return Body(gen(), size)


def test_the_cache_keeps_only_completed_fetches_and_names_every_broken_one(tmp_path):
    cache = FetchCache(tmp_path / "cache")
    data = b"x" * 1000
    sha, size = cache.store("k1", _body([data[:500], data[500:]], 1000), 2000, time.monotonic() + 5, None)
    assert (sha, size) == (hashlib.sha256(data).hexdigest(), 1000) and cache.lookup("k1") == (sha, 1000)
    cases = {
        "fetch-too-large": dict(body=_body([data, data, data]), limit=2000, declared=None),
        "fetch-truncated": dict(body=_body([data[:400]], 1000), limit=2000, declared=None),
        "fetch-corrupt": dict(body=_body([data], 1000), limit=2000, declared="0" * 64),
        "fetch-timeout": dict(body=_body([data[:10]] * 5, None, delay=0.05), limit=2000, declared=None,
                              deadline=0.1),
    }
    for reason, case in cases.items():
        with pytest.raises(StoreError) as raised:
            cache.store(reason, case["body"], case["limit"], time.monotonic() + case.get("deadline", 5),
                        case["declared"])
        assert raised.value.reason == reason
        assert cache.lookup(reason) is None, f"{reason}: a broken fetch left a cache file"
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()) == ["k1"], "no partial file left"
