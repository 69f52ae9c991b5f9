"""The remote sources' pure rules (`domain/remote.py`) pinned where they decide: which locations are remote, which
hosts are loopback, what a location and a manifest entry become (every refusal by its exact words, which an
operator reads in the scan log), the limits of a name, a URL and a declared size on both sides of their edges, the
change token of a bare listing entry, and the fetch cache's key."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest

from stage_e_dagster.domain.numbers import MAX_BIGINT
from stage_e_dagster.domain.remote import (
    MAX_NAME,
    MAX_URL,
    LocationError,
    ManifestEntry,
    check_http_url,
    fetch_key,
    file_name_of,
    is_loopback,
    is_remote,
    object_token,
    parse_entry,
    parse_location,
    storable,
)

BASE = "https://example.org/sets/manifest.json"


def _entry(raw: object) -> ManifestEntry:
    entry = parse_entry(raw, BASE)
    assert isinstance(entry, ManifestEntry), entry
    return entry


@pytest.mark.parametrize(("location", "remote"), [
    ("s3://scans/a", True), ("http://127.0.0.1/m.json", True), ("https://example.org/m.json", True),
    ("/srv/scans", False), ("scans/s3://x", False), ("ftp://example.org/x", False),
])
def test_a_location_is_remote_by_its_scheme(location: str, remote: bool) -> None:
    assert is_remote(location) is remote


@pytest.mark.parametrize(("host", "loopback"), [
    (None, False), ("", False), ("localhost", True), ("LocalHost", True), ("127.0.0.1", True), ("127.9.9.9", True),
    ("[::1]", True), ("::1", True), ("::ffff:127.0.0.1", True), ("[::ffff:127.0.0.1]", True),
    ("::ffff:10.0.0.1", False), ("10.0.0.1", False), ("example.org", False), ("[]", False),
])
def test_loopback_hosts_by_name_and_address(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_an_s3_location_is_a_bucket_and_a_prefix_without_slashes_at_its_ends() -> None:
    loc = parse_location("  s3://scans//2024/a//  ")
    assert (loc.kind, loc.url, loc.bucket, loc.prefix) == ("s3", "s3://scans/2024/a", "scans", "2024/a")
    xs = parse_location("s3://boX/Xa/X/")
    assert (xs.url, xs.bucket, xs.prefix) == ("s3://boX/Xa/X", "boX", "Xa/X")
    bare = parse_location("s3://scans/")
    assert (bare.url, bare.prefix) == ("s3://scans", "")
    for bad in ("s3://scans/a?x=1", "s3://scans/a#f", "s3:///a"):
        with pytest.raises(LocationError) as err:
            parse_location(bad)
        assert str(err.value) == f"{bad!r}: expected s3://bucket/prefix"


def test_a_manifest_location_is_its_url_and_a_bad_one_says_what_is_wrong() -> None:
    loc = parse_location(" https://example.org/m.json ")
    assert (loc.kind, loc.url, loc.bucket, loc.prefix) == ("http", "https://example.org/m.json", "", "")
    with pytest.raises(LocationError) as err:
        parse_location("http://example.org/m.json")
    assert str(err.value) == ("manifest 'http://example.org/m.json': plain http is allowed on loopback only "
                              "(use https)")
    with pytest.raises(LocationError) as err:
        parse_location("/srv/scans")
    assert str(err.value) == "'/srv/scans': a remote source is s3://bucket/prefix or an http(s):// manifest URL"


def test_a_url_is_refused_by_name_when_it_is_not_https_or_loopback_http() -> None:
    check_http_url("https://example.org/a.png")
    check_http_url("http://[::1]:8000/a.png")
    for url, why in (("ftp://example.org/a.png", "expected an http(s):// URL"),
                     ("https:///a.png", "expected an http(s):// URL"),
                     ("http://example.org/a.png", "plain http is allowed on loopback only (use https)")):
        with pytest.raises(LocationError) as err:
            check_http_url(url)
        assert str(err.value) == f"URL {url!r}: {why}"
    with pytest.raises(LocationError) as err:
        check_http_url("http://[::1/a.png")
    assert str(err.value) == "URL '<unparsable URL>': not a URL that can be parsed"
    with pytest.raises(LocationError) as err:
        check_http_url("https://u:secret@[::1/a.png", what="image")
    assert str(err.value).startswith("image ") and "secret" not in str(err.value)


def test_a_bare_listing_entry_has_a_token_of_empty_fields() -> None:
    assert object_token(None, None, None) == "s3|||"
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert object_token('"e1"', 0, moment) == "s3|e1|0|2026-01-02T03:04:05+00:00"


def test_the_fetch_key_names_a_source_identifier_and_token_together() -> None:
    assert fetch_key(7, "a.png", "t1") == hashlib.blake2b(b"7\0a.png\0t1", digest_size=16).hexdigest()
    assert fetch_key(7, "a\udcff.png", "t1") == hashlib.blake2b(b"7\0a\xff.png\0t1", digest_size=16).hexdigest()


def test_a_file_name_is_the_urls_last_segment_only_when_the_identifier_is_the_url() -> None:
    assert file_name_of("https://h.example", "https://h.example") == ""
    assert file_name_of("https://h.example/a/b/c%20d.png", "https://h.example/a/b/c%20d.png") == "c d.png"
    assert file_name_of("mine.png", "https://h.example/a/b.png") == "mine.png"
    assert file_name_of("mine.png", None) == "mine.png"


@pytest.mark.parametrize(("text", "ok"), [
    ("a" * MAX_NAME, True), ("a" * (MAX_NAME + 1), False), ("a\x00b", False), ("a\x1fb", False), ("a\x7f", False),
    ("a\ud800", False), ("Opt ★.png", True),
])
def test_a_text_is_storable_up_to_its_length_without_control_characters_in_utf8(text: str, ok: bool) -> None:
    assert storable(text) is ok


def test_an_entry_is_quoted_once_without_its_fragment_and_its_userinfo() -> None:
    entry = _entry("dir/card's (1) [a].png?x=1 2&y=a/b?c#part")
    assert entry.url == "https://example.org/sets/dir/card's%20(1)%20%5Ba%5D.png?x=1%202&y=a/b?c"
    assert entry.file_name == "card's (1) [a].png"
    assert _entry("https://user:pw@cdn.example.org/a.png").url == "https://cdn.example.org/a.png"
    assert _entry("https://a@b@cdn.example.org/a.png").url == "https://cdn.example.org/a.png"


def test_every_refusal_of_an_entry_is_named() -> None:
    refusals = {
        "entry without a url": [5, {"name": "a.png"}, {"url": 3}],
        "url holds a control character, is not UTF-8 or is too long": [
            "a\x00.png", "https://example.org/" + "a" * (MAX_URL - 23) + ".png"],
        "image 'ftp://example.org/a.png': expected an http(s):// URL": ["ftp://example.org/a.png"],
        "image https://10.1.2.3/a.png: address 10.1.2.3 is not public and not the manifest's origin": [
            "https://10.1.2.3/a.png"],
        "name is not a non-empty string": [{"url": "a.png", "name": 3}, {"url": "a.png", "name": "  "}],
        "sha256 is not 64 hex digits": [{"url": "a.png", "sha256": "0" * 63}, {"url": "a.png", "sha256": 5}],
        "its name holds a control character or is not UTF-8": [
            "a%00.png", {"url": "a.png", "name": "a" * (MAX_NAME - 3) + ".png"}],
        "not a png, jpg, jpeg or webp name": ["https://cdn.example.org", {"url": "a.png", "name": "a.txt"}],
        "entry cannot be read: ValueError": ["https://[::1/a.png"],
    }
    got = {why: [parse_entry(raw, BASE) for raw in raws] for why, raws in refusals.items()}
    assert got == {why: [why] * len(raws) for why, raws in refusals.items()}
    assert isinstance(parse_entry("https://10.1.2.3/a.png", BASE, allow_private=True), ManifestEntry)
    assert isinstance(parse_entry("a.png", "https://127.0.0.1/m.json"), ManifestEntry), "the manifest's own origin"


def test_the_longest_url_and_name_an_entry_may_give() -> None:
    longest = "https://example.org/" + "a" * (MAX_URL - 26) + "/x.png"
    assert len(longest) == MAX_URL and _entry(longest).identifier == longest
    name = "a" * (MAX_NAME - 4) + ".png"
    assert _entry({"url": "x.png", "name": f" {name} "}).identifier == name


@pytest.mark.parametrize(("size", "kept"), [
    (0, 0), (-1, None), (MAX_BIGINT, MAX_BIGINT), (MAX_BIGINT + 1, None), (True, None), ("5", None), (None, None),
    (5.0, None),
])
def test_a_declared_size_is_kept_only_when_a_column_can_hold_it(size: object, kept: int | None) -> None:
    assert _entry({"url": "a.png", "size": size}).size == kept
