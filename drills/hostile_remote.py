"""Drill `hostile-remote`: remote sources against whoever controls a manifest, a bucket or an image host, through
the real `stage-e sources add|sync`, `stage-e run` and `stage-e trips ack`.

Loopback servers of the drill's own play each hostile move (`testkit.stores`):

- source `web`, a manifest on host A (the origin rule: its images come from A): good images; an entry pointing at
  host B and one on A that redirects to B (B must see no request); a `Content-Length` of `²`; an image host that
  drips its headers a byte at a time; a name holding a NUL and a URL that does not parse; a TIFF named `.png`;
- source `hot` (`--allow-private`: its images sit on three loopback hosts): good images on its own host C, images
  hot-linked from host D, which answers 403 to every one and never answered before, and one image on host L;
- source `bucket`, an S3 prefix (moto): good keys and keys obstore refuses (`b/../c.png`, `b//d.png`);
- source `huge`, a manifest of whitespace beyond `STAGE_E_MANIFEST_MAX_BYTES`; source `slow`, a manifest dripped
  slower than `STAGE_E_MANIFEST_READ_SECONDS`.

Then host L, which answered before, answers 403 to every new image: that is a lockout, the one thing that should
halt. The drill checks the trip names `hot` and L, lifts L's block, acknowledges the trip and runs again. The
verdict, from the database and the servers' records:

- every card of the good hosts done (current evidence, a vote or a review routing, nothing twice);
- every bad one skipped by name (a refusal at listing, a fetch skip or a Stage C skip, each the one expected), and
  the two bad manifests' sources left as they were with the reason said;
- no batch failed (the ledger has `completed` rows and the lockout's one `halted` row), host B saw no request;
- exactly one trip, the lockout naming `hot` and host L: D's 403s halted nothing.
"""

from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from PIL import Image

from drills import verdict
from testkit import live
from testkit.corpus import demo_corpus_cli
from testkit.live import STAGE_E, Home
from testkit.oracle import assert_nothing_twice
from testkit.remote import s3_server
from testkit.stores import HttpServer, S3Server

EVIDENCE = "evidence"
DRIP_SECONDS = 0.2
"""Between two bytes of a drip-fed header or manifest: under every read timeout, far over the deadlines."""
SETTINGS = {"STAGE_E_FETCH_RATE": "20", "STAGE_E_FETCH_TIMEOUT_SECONDS": "2", "STAGE_E_FETCH_BROKEN_RETRIES": "1",
            "STAGE_E_FETCH_LOCKOUT_403S": "2", "STAGE_E_MANIFEST_MAX_BYTES": str(1024 * 1024),
            "STAGE_E_MANIFEST_READ_SECONDS": "3", "STAGE_E_OCR_MAX_SLOTS": "1", "STAGE_E_HOST_LOAD_CEILING": "100"}


class Hosts:
    """The drill's servers: A (`web`), B (the victim), C, D and L (`hot`), E (`huge`), F (`slow`), and S3."""

    def __init__(self, s3: S3Server) -> None:
        self.a, self.b, self.c, self.d, self.l, self.e, self.f = (HttpServer() for _ in range(7))
        self.s3 = s3

    def stop(self) -> None:
        for server in (self.a, self.b, self.c, self.d, self.l, self.e, self.f):
            server.stop()


def _tiff(png: bytes) -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(out, "TIFF")
    return out.getvalue()


def _dripping_manifest():
    yield b'{"images": ['
    for index in range(100):
        yield b'"/img/%d.png", ' % index
        time.sleep(DRIP_SECONDS)
    yield b'"/img/last.png"]}'


def stage(hosts: Hosts, good: list[Path]) -> tuple[dict[str, str], dict[str, str], list[Path]]:
    """Put the good scans and every hostile move on the servers. Returns (card identifier -> what it must end as:
    `EVIDENCE` or a skip reason), (source -> refusal at listing it must name, by a fragment of its text), and the
    scans kept for host L's second round."""
    expected: dict[str, str] = {}
    a, c, d, lock = hosts.a, hosts.c, hosts.d, hosts.l
    web_good, hot_good, s3_good, lock_first, lock_later = good[0:3], good[3:6], good[6:9], good[9:10], good[10:12]
    for path in web_good:
        a.images[path.name] = path.read_bytes()
        expected[path.name] = EVIDENCE
    hosts.b.images["victim.png"] = web_good[0].read_bytes()
    bad = {"redirected.png": f"redirect:{hosts.b.url}/img/victim.png", "bad-length.png": "bad-length",
           "drip.png": "drip-headers"}
    for name, fault in bad.items():
        a.images[name] = web_good[0].read_bytes()
        a.faults.per_key[name] = fault
    a.drip_seconds = DRIP_SECONDS
    a.images["Tiff Card.png"] = _tiff(web_good[1].read_bytes())
    expected.update({"redirected.png": "fetch-refused", "bad-length.png": "fetch-error", "drip.png": "fetch-timeout",
                     "Tiff Card.png": "unsupported-format"})
    a.listed = [{"url": f"/img/{quote(name)}", "name": name} for name in sorted(a.images)] + [
        {"url": f"{hosts.b.url}/img/victim.png", "name": "victim.png"},
        {"url": "/img/x.png", "name": "nul\x00name.png"},
        {"url": "https://[::1/x.png"},
    ]
    for path in hot_good:
        c.images[path.name] = path.read_bytes()
        expected[path.name] = EVIDENCE
    d.faults.lockout = True
    for index in range(3):
        d.images[f"hotlinked {index}.png"] = hot_good[0].read_bytes()
        expected[f"hotlinked {index}.png"] = "fetch-forbidden"
    for path in lock_first:
        lock.images[path.name] = path.read_bytes()
        expected[path.name] = EVIDENCE
    c.listed = _hot_listing(hosts)
    for path in s3_good:
        hosts.s3.put(f"scans/{path.name}", path.read_bytes())
        expected[path.name] = EVIDENCE
    for key in ("b/../c.png", "b//d.png"):
        hosts.s3.put(f"scans/{key}", s3_good[0].read_bytes())
    hosts.e.manifest_body = lambda: iter([b" " * (2 * 1024 * 1024), b"[]"])
    hosts.f.manifest_body = _dripping_manifest
    refusals = {"web": ["is not public and not the manifest's origin", "its name holds a control character",
                        "entry cannot be read"],
                "bucket": ["b/../c.png", "b//d.png"]}
    return expected, refusals, lock_later


def _hot_listing(hosts: Hosts) -> list[dict[str, str]]:
    return ([{"url": f"/img/{quote(name)}", "name": name} for name in sorted(hosts.c.images)]
            + [{"url": f"{hosts.d.url}/img/{quote(name)}", "name": name} for name in sorted(hosts.d.images)]
            + [{"url": f"{hosts.l.url}/img/{quote(name)}", "name": name} for name in sorted(hosts.l.images)])


def register(home: Home, hosts: Hosts) -> None:
    for key, server, extra in (("web", hosts.a, ()), ("hot", hosts.c, ("--allow-private",)),
                               ("huge", hosts.e, ()), ("slow", hosts.f, ())):
        home.stage_e("sources", "add", server.manifest_url, "--key", key, *extra)
    home.stage_e("sources", "add", f"s3://{hosts.s3.bucket}/scans", "--key", "bucket", "--endpoint",
                 hosts.s3.endpoint, "--credentials", "DRILL")


def sync_and_run(home: Home, figures: dict[str, Any], refusals: dict[str, list[str]] | None = None,
                 halts: bool = False) -> None:
    """`stage-e sources sync` (its refusals and unavailable sources checked when `refusals` is given), then
    `stage-e run` (which, when it `halts`, stops at a halted batch: it names that batch's Dagster run among its
    failed runs and exits 1, while the ledger says `halted`)."""
    synced = home.stage_e("sources", "sync", timeout=300)
    said = synced.stdout + synced.stderr
    if refusals is not None:
        for key, fragments in refusals.items():
            for fragment in fragments:
                assert fragment in said, f"source {key}: no refusal naming {fragment!r}: {said[-1500:]}"
        figures["refused_at_listing"] = sum(line.startswith("refused ") for line in said.splitlines())
        for key, why in (("huge", "larger than"), ("slow", "fetch-timeout")):
            line = next((text for text in said.splitlines() if text.startswith(f"{key}: ")), "")
            assert "left as it was" in line and why in line, f"source {key} not refused by name: {said[-1500:]}"
    if not halts:
        home.stage_e("run", "--batch-size", "6", timeout=600)
        return
    done = subprocess.run([STAGE_E, "run", "--batch-size", "6"], env=home.env, capture_output=True, text=True,
                          timeout=600)
    halted = [run_id for (run_id,) in home.rows("SELECT run_id FROM dispatch_ledger WHERE status = 'halted'")]
    assert "stopped: a batch halted" in done.stderr and len(halted) == 1, done.stderr[-1500:]
    assert done.returncode == 0 or f"failed runs: {halted[0]}\n" in done.stderr, done.stderr[-1500:]


def lockout(home: Home, hosts: Hosts, later: list[Path], expected: dict[str, str], figures: dict[str, Any]) -> None:
    """Host L, which answered, forbids every new image: one trip naming `hot` and L, lifted by an acknowledgement."""
    for path in later:
        hosts.l.images[path.name] = path.read_bytes()
        expected[path.name] = EVIDENCE
    hosts.c.listed = _hot_listing(hosts)
    hosts.l.faults.lockout = True
    sync_and_run(home, figures, halts=True)
    trips = home.rows("SELECT id, bar, detail ->> 'source', detail ->> 'host' FROM envelope_trip")
    lock_host = f"http://127.0.0.1:{hosts.l.url.rsplit(':', 1)[1]}"
    assert [(bar, source, host) for _id, bar, source, host in trips] == [("fetch_lockout", "hot", lock_host)], \
        f"one trip, the lockout naming source hot and host L: {trips}"
    hosts.l.faults.lockout = False
    home.stage_e("trips", "ack", trips[0][0], "--note", "drill: host L lifted its block")
    home.stage_e("run", "--batch-size", "6", timeout=600)


def check(home: Home, hosts: Hosts, expected: dict[str, str], figures: dict[str, Any]) -> None:
    """The verdict's rules, from the database and the servers' records."""
    from stage_e_dagster.domain.work import STAGE_C_ID

    rows = home.rows("""
        SELECT c.identifier,
               EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256)
               AND (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id)
                    OR EXISTS (SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review')),
               (SELECT string_agg(l.skip_reason, ',' ORDER BY l.skip_reason) FROM card_scan_log l
                WHERE l.card_id = c.id AND l.anonymous_id = %s AND l.skip_reason <> 'to-review')
        FROM card c""", (STAGE_C_ID,))
    actual = {identifier: EVIDENCE if done else (skips or "nothing") for identifier, done, skips in rows}
    wrong = {name: (actual.get(name, "no card"), want) for name, want in expected.items()
             if actual.get(name, "no card") != want}
    assert not wrong, f"cards that ended wrong (got, wanted): {wrong}"
    assert set(actual) == set(expected), f"unexpected cards: {sorted(set(actual) ^ set(expected))}"
    assert_nothing_twice(home)
    statuses = dict(home.rows("SELECT status, count(*) FROM dispatch_ledger GROUP BY status"))
    assert set(statuses) <= {"completed", "halted"} and statuses.get("halted", 0) == 1, f"ledger: {statuses}"
    assert hosts.b.headers == [], f"host B saw {len(hosts.b.headers)} requests"
    assert home.scalar("SELECT count(*) FROM envelope_trip WHERE acknowledged_at IS NULL") == 0
    figures.update(cards=len(actual), good_done=sum(v == EVIDENCE for v in expected.values()),
                   skipped_named=sum(v != EVIDENCE for v in expected.values()),
                   ledger=",".join(f"{n}{s[0]}" for s, n in sorted(statuses.items())),
                   hot_link_403s=len(hosts.d.record.seen), victim_requests=len(hosts.b.headers))


def drill(home: Home, hosts: Hosts, figures: dict[str, Any]) -> None:
    started = time.monotonic()
    data = demo_corpus_cli(home, 12, printings=40, seed=5, degraded=None, workers=None, source=None)
    good = sorted(p for p in (data / "scans").rglob("*") if p.suffix.lower() in (".png", ".jpg"))[:12]
    assert len(good) == 12, f"the demo corpus gave {len(good)} scans"
    home.env.update({**SETTINGS, **hosts.s3.credentials_env("DRILL")})
    expected, refusals, later = stage(hosts, good)
    register(home, hosts)
    sync_and_run(home, figures, refusals)
    assert home.scalar("SELECT count(*) FROM envelope_trip") == 0, "nothing halted: D never answered"
    lockout(home, hosts, later, expected, figures)
    check(home, hosts, expected, figures)
    figures["seconds"] = round(time.monotonic() - started, 1)


def run(figures: dict[str, Any] | None = None) -> dict[str, Any]:
    """The drill on a throwaway home and fresh servers; returns the figures (AssertionError on a broken rule)."""
    figures = {} if figures is None else figures
    with live.home() as home, s3_server() as s3:
        hosts = Hosts(s3)
        try:
            drill(home, hosts, figures)
        finally:
            hosts.stop()
    figures["host_load_1m"] = round(os.getloadavg()[0], 1)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = verdict.parser_for("hostile-remote", __doc__)
    verdict.drill_main("hostile-remote", run, parser, argv)
