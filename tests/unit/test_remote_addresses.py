"""What a remote source may reach and how its URLs may be shown, in pure terms and against a loopback server (no
database): the address rule with DNS answers of a test's choosing, the connection going to the address that was
checked, numbers read strictly, secrets redacted, S3 keys obstore cannot take, and the S3 listing's signature
against botocore's."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime

import pytest

from stage_e_dagster.domain.addresses import host_literal, is_public_address, literal_refusal, redact_url
from stage_e_dagster.domain.numbers import parse_count
from stage_e_dagster.domain.remote import ManifestEntry, parse_entry
from stage_e_dagster.remote.address import Gate, Target, Watchdog
from stage_e_dagster.remote.common import StoreError
from stage_e_dagster.remote.s3_listing import Signer, key_refusal

MANIFEST = "https://scans.example.org/m/manifest.json"


@pytest.mark.parametrize(("address", "public"), [
    ("93.184.216.34", True), ("2606:4700::1111", True),
    ("127.0.0.1", False), ("127.9.9.9", False), ("::1", False), ("10.1.2.3", False), ("172.16.0.1", False),
    ("192.168.1.1", False), ("169.254.169.254", False), ("fe80::1", False), ("fc00::1", False),
    ("100.64.0.1", False), ("0.0.0.0", False), ("::", False), ("224.0.0.1", False), ("ff02::1", False),
    ("240.0.0.1", False), ("::ffff:127.0.0.1", False), ("::ffff:10.0.0.1", False), ("::ffff:93.184.216.34", True),
])
def test_only_global_unicast_addresses_are_public(address, public):
    assert is_public_address(address) is public


def test_an_entry_naming_a_private_literal_off_the_manifest_origin_is_refused_at_listing():
    assert literal_refusal("https://scans.example.org/img/a.png", MANIFEST, False) is None
    assert literal_refusal("https://cdn.example.net/a.png", MANIFEST, False) is None, "a name is judged at fetch"
    for url in ("http://127.0.0.1:3000/graphql?query=x", "https://10.0.0.5/a.png", "https://169.254.169.254/a.png",
                "https://[::1]/a.png", "http://localhost:3000/a.png", "https://app.localhost/a.png"):
        assert literal_refusal(url, MANIFEST, False) is not None, url
        assert literal_refusal(url, MANIFEST, True) is None, "allowed for a source that allows private hosts"
    loopback_manifest = "http://127.0.0.1:8000/manifest.json"
    assert literal_refusal("http://127.0.0.1:8000/img/a.png", loopback_manifest, False) is None, "its own origin"
    assert literal_refusal("http://127.0.0.1:8001/img/a.png", loopback_manifest, False) is not None, "another port"
    assert literal_refusal("https://127.0.0.1:8000/img/a.png", loopback_manifest, False) is not None, "another scheme"


def test_an_entry_is_judged_on_its_own_and_never_raises():
    assert isinstance(parse_entry({"url": "img/a.png", "name": "Opt.png"}, MANIFEST), ManifestEntry)
    for raw in ({"url": "img/a.png", "name": "a\x00b.png"}, {"url": "img/a.png", "name": "\ud800.png"},
                {"url": "https://[::1/x.png"}, {"url": "img/a%00b.png"}, {"url": "img/\x00.png"},
                {"url": "http://127.0.0.1:3000/x", "name": "x.png"}, {"url": 5}, ["x"], None,
                {"url": "img/a.png", "name": "n" * 1001 + ".png"}):
        assert isinstance(parse_entry(raw, MANIFEST), str), raw
    huge = parse_entry({"url": "img/a.png", "size": 2**63}, MANIFEST)
    assert isinstance(huge, ManifestEntry) and huge.size is None
    signed = parse_entry({"url": "img/a.png?X-Amz-Security-Token=" + "t" * 3000}, MANIFEST)
    assert isinstance(signed, ManifestEntry), "a signed URL runs to thousands of characters"


def test_a_url_is_shown_and_stored_without_its_secrets():
    signed = "https://cdn.example/a.png?X-Amz-Signature=abc&X-Amz-Credential=k%2F1&w=2"
    assert redact_url(signed) == "https://cdn.example/a.png?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&w=2"
    assert redact_url("https://u:pw@cdn.example/m.json?token=t&api_key=k&sig=s") == \
        "https://cdn.example/m.json?token=REDACTED&api_key=REDACTED&sig=REDACTED"
    assert redact_url("https://cdn.example/a.png?keyword=opt&id=3") == "https://cdn.example/a.png?keyword=opt&id=3"
    entry = parse_entry({"url": "https://u:pw@cdn.example/Opt%20%5BXLN%5D.png?token=t"}, MANIFEST)
    assert entry.url == "https://cdn.example/Opt%20%5BXLN%5D.png?token=t", "the password is dropped, never sent"
    assert entry.identifier == "https://cdn.example/Opt%20%5BXLN%5D.png?token=REDACTED"
    assert entry.file_name == "Opt [XLN].png" and "token=t" not in entry.token
    again = parse_entry({"url": "https://cdn.example/Opt%20%5BXLN%5D.png?token=u"}, MANIFEST)
    assert again.identifier == entry.identifier and again.token != entry.token, "a new signature: a new version"


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("4096", 4096), ("9223372036854775807", 2**63 - 1), ("9223372036854775808", None), ("²", None),
    ("٣", None), ("-1", None), ("+1", None), (" 1", None), ("1_000", None), ("", None), (None, None), ("1\n", None),
])
def test_numbers_from_outside_are_plain_ascii_digits_in_range(text, value):
    assert parse_count(text) == value


def _answers(monkeypatch, table: dict[str, list[str]]) -> list[str]:
    """DNS answers of the test's choosing for names (an address literal resolves as it is); the names asked."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def lookup(host, port, *args, **kwargs):
        if host_literal(str(host)) is not None:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown")
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in table[host]]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return asked


def test_a_name_is_refused_when_any_address_it_resolves_to_is_not_public(monkeypatch):
    _answers(monkeypatch, {"cdn.example.net": ["93.184.216.34"], "rebind.example.net": ["127.0.0.1"],
                           "metadata.example.net": ["169.254.169.254"], "mixed.example.net": ["93.184.216.34",
                                                                                              "10.0.0.1"]})
    gate, soon = Gate(MANIFEST), time.monotonic() + 5
    assert gate.target("https://cdn.example.net/a.png", soon).address == "93.184.216.34"
    for url in ("https://rebind.example.net/a.png", "https://metadata.example.net/a.png",
                "https://mixed.example.net/a.png"):
        with pytest.raises(StoreError) as refused:
            gate.target(url, soon)
        assert refused.value.kind == "refused" and refused.value.reason == "fetch-refused"
    assert Gate(MANIFEST, allow_private=True).target("https://rebind.example.net/a.png", soon).address == "127.0.0.1"


def test_the_connection_goes_to_the_address_that_was_checked(monkeypatch):
    """A name checked once is never looked up again: the request goes to the checked address with the name in its
    Host header (a rebinding name's second answer is never asked for)."""
    from stage_e_dagster.remote.http_source import _Exchange
    from testkit.stores import HttpServer

    server = HttpServer()
    try:
        server.images["a.png"] = b"\x89PNG\r\n\x1a\n" + b"x" * 100
        port = int(server.url.rsplit(":", 1)[1])
        asked = _answers(monkeypatch, {})
        watchdog = Watchdog(time.monotonic() + 5)
        exchange = _Exchange(Target("http", "pinned.example", port, "127.0.0.1", "k"),
                             f"http://pinned.example:{port}/img/a.png", {}, watchdog, 5)
        assert exchange.response.status == 200 and asked == []
        exchange.close()
        watchdog.cancel()
        assert server.headers[-1][1]["host"] == f"pinned.example:{port}"
    finally:
        server.stop()


@pytest.mark.parametrize(("key", "refused"), [
    ("a.png", False), ("b/c d.png", False), ("..x.png", False), ("b/../c.png", True), ("b//d.png", True),
    ("./a.png", True), ("a/.", True), ("a/", True), ("/a", True), ("a\x01.png", True), ("\udcff.png", True),
])
def test_keys_obstore_cannot_take_are_known_before_asking_it(key, refused):
    assert (key_refusal(key) is not None) is refused


def test_the_raw_listing_is_signed_as_botocore_signs_it(monkeypatch):
    import botocore.auth
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    from stage_e_dagster.domain.remote import Credentials

    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    query = {"list-type": "2", "prefix": "scans/", "start-after": "scans/b c+d.png", "encoding-type": "url"}
    url = "http://127.0.0.1:9000/bucket"
    ours = Signer(Credentials("AKID", "SECRET", "SESSION"), "eu-west-1").headers("GET", url, query, moment)
    request = AWSRequest("GET", url, params=query, headers={"x-amz-content-sha256": ours["x-amz-content-sha256"]})
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: moment.replace(tzinfo=None))
    S3SigV4Auth(BotoCredentials("AKID", "SECRET", "SESSION"), "s3", "eu-west-1").add_auth(request)
    assert ours["Authorization"] == request.headers["Authorization"]
