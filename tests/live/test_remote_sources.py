"""Remote sources under a live daemon (`stage-e dev`, streaming on): an S3 prefix and an HTTP manifest, each
registered with `stage-e sources add`, and a scan put into the bucket or listed in the manifest after `stage-e dev`
started reaches a machine verdict with no manual step: the `source_inbox` sensor lists the source, a draining run
fetches the bytes through the limiter and runs the three stages.

The oracle is the database (evidence and a vote or a review routing for the card of each source) and the servers'
records (each object fetched once, the listing never counted as a fetch).
"""

from __future__ import annotations

import pytest

from testkit.corpus import demo_corpus_cli
from testkit.live import wait_for
from testkit.remote import http_server, s3_server

pytestmark = pytest.mark.slow

_DONE = ("SELECT count(*) FROM card c JOIN source s ON s.id = c.source_id WHERE s.key = %s AND c.content_verified "
         "AND EXISTS (SELECT 1 FROM image_evidence e WHERE e.card_id = c.id AND e.content_sha256 = c.content_sha256) "
         "AND (EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id) OR EXISTS "
         "(SELECT 1 FROM card_scan_log l WHERE l.card_id = c.id AND l.skip_reason = 'to-review'))")


def test_an_s3_prefix_and_a_manifest_added_with_the_cli_stream_new_scans_to_verdicts(home, dev):
    data = demo_corpus_cli(home, 2, printings=120, source=None)
    first, second = sorted(path for path in (data / "scans").rglob("*") if path.is_file())[:2]
    with s3_server() as bucket, http_server() as web:
        home.env.update({"STAGE_E_STREAMING": "on", "STAGE_E_SWEEP_CRON": "0 0 1 1 *",
                         "STAGE_E_HOST_LOAD_CEILING": "1000",  # a busy shared host must not trip this test
                         "STAGE_E_REMOTE_LIST_INTERVAL_SECONDS": "2", **bucket.credentials_env("LIVE")})
        home.stage_e("sources", "add", f"s3://{bucket.bucket}/inbox", "--key", "bucket", "--endpoint",
                     bucket.endpoint, "--credentials", "LIVE")
        home.stage_e("sources", "add", web.manifest_url, "--key", "manifest")
        listed = home.stage_e("sources", "list").stdout
        assert "credentials LIVE" in listed and bucket.SECRET_KEY not in listed

        running = dev()
        running.wait_ready()
        bucket.put(f"inbox/{first.name}", first.read_bytes())
        web.images = {second.name: second.read_bytes()}
        for key in ("bucket", "manifest"):
            wait_for(lambda key=key: home.scalar(_DONE, (key,)), 240, f"the verdict on the {key} source's scan",
                     every=running.record, poll=0.5)
        assert bucket.record.completed == {f"inbox/{first.name}": 1}, "the object was fetched once"
        assert web.record.completed == {second.name: 1}, "the image was fetched once"
        assert home.scalar("SELECT count(*) FROM card WHERE fetch_failed IS NOT NULL") == 0
        assert running.ctrl_c() == 0
