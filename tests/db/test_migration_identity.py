"""Migration 0006 over a database already holding data: an upgrade from the previous head keeps votes and evidence
valid, moves a family's older-version votes to the archive (re-opening those cards), and runs again harmlessly."""

from __future__ import annotations

import psycopg2
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.db.core.migrate import alembic_config, head_revision, upgrade
from stage_e_dagster.db.core.urls import libpq_dsn
from stage_e_dagster.db.judgement.consensus_store import recompute_consensus
from stage_e_dagster.db.judgement.vote_archive import card_history
from testkit.server import scratch_database

OURS = "0006"
MARK = "stage-d-join-key-v1+stage-d-fallback-v1+stage-d-slow-path-v1"
VERSIONS = '{"collector": "collector-v1"}'


def _stamp(url: str, revision: str) -> None:
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.begin() as conn:
        config = alembic_config(url)
        config.attributes["connection"] = conn
        command.stamp(config, revision)
    engine.dispose()


def _seed(cur) -> dict[str, int]:
    """Rows as the previous schema stores them: two cards, evidence decided by Stage D, machine and human votes,
    and on one card two versions of one calculator family (the double count of the old code)."""
    cur.execute("INSERT INTO source (key, kind, location) VALUES ('s', 'directory', '/s') RETURNING id")
    source = cur.fetchone()[0]
    ids: dict[str, int] = {}
    for name in ("one", "two"):
        cur.execute("INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
                    "VALUES (%s, %s, 'Opt', 'opt', %s, 10) RETURNING id", (source, f"{name}.png", name * 8))
        ids[name] = cur.fetchone()[0]
        cur.execute("INSERT INTO image_evidence (card_id, content_sha256, extractor_versions, collector_number, "
                    "decided_by) VALUES (%s, %s, %s, '40', %s)", (ids[name], name * 8, VERSIONS, MARK))
    for number in ("12", "40"):
        cur.execute("INSERT INTO printing (scryfall_id, name, name_normalised, set_code, collector_number) "
                    "VALUES (%s, 'Opt', 'opt', 'bbb', %s) RETURNING id", (f"sf-{number}", number))
        ids[number] = cur.fetchone()[0]
    votes = [("one", "stage-d-art-v1", "ocr", "12"), ("one", "stage-d-art-v2", "ocr", "40"),
             ("one", "stage-d-join-key-v1", "ocr", "40"), ("one", "sam-v1", "user", "40"),
             ("one", "sam-v2", "user", "40"), ("two", "stage-d-art-v1", "ocr", "12")]
    for card, voter, source_kind, printing in votes:
        cur.execute("INSERT INTO card_printing_tag (card_id, printing_id, anonymous_id, source, confidence, run_id) "
                    "VALUES (%s, %s, %s, %s, 0.8, 'old-run')", (ids[card], ids[printing], voter, source_kind))
    return ids


def _state(cur) -> dict[str, list[tuple]]:
    queries = {
        "votes": "SELECT card_id, anonymous_id, printing_id, run_id FROM card_printing_tag ORDER BY 1, 2",
        "evidence": "SELECT card_id, content_sha256, extractor_versions, collector_number, decided_by, "
                    "carried_from_card_id FROM image_evidence ORDER BY 1",
        "archive": "SELECT card_id, anonymous_id, printing_id, vote_run_id, reason, run_id, detail "
                   "FROM card_printing_tag_archive ORDER BY id",
    }
    state = {}
    for name, sql in queries.items():
        cur.execute(sql)
        state[name] = cur.fetchall()
    return state


def test_upgrade_from_the_previous_head_with_data_in_place(pg_server_url):
    previous = ScriptDirectory.from_config(alembic_config("postgresql://")).get_revision(OURS).down_revision
    assert isinstance(previous, str)
    with scratch_database(pg_server_url, "mig") as url:
        upgrade(url, previous)
        conn = psycopg2.connect(libpq_dsn(url))
        conn.autocommit = True
        cur = conn.cursor()
        ids = _seed(cur)
        cur.execute("SELECT id, updated_at FROM card ORDER BY id")
        touched_before = dict(cur.fetchall())

        upgrade(url)
        cur.execute("SELECT version_num FROM alembic_version")
        assert cur.fetchone()[0] == head_revision()
        state = _state(cur)
        one, two = ids["one"], ids["two"]
        assert state["votes"] == [  # humans that look like versions are people: both stay; so does card two's v1
            (one, "sam-v1", ids["40"], "old-run"), (one, "sam-v2", ids["40"], "old-run"),
            (one, "stage-d-art-v2", ids["40"], "old-run"), (one, "stage-d-join-key-v1", ids["40"], "old-run"),
            (two, "stage-d-art-v1", ids["12"], "old-run")]
        assert state["archive"] == [(one, "stage-d-art-v1", ids["12"], "old-run", "family-bump", None,
                                     {"superseded_by": "stage-d-art-v2", "by": "migration 0006"})]
        # Evidence stays as it was (extracted from its own file); card one is re-opened for Stage D so its
        # consensus is recomputed without the double count, card two is left decided.
        assert state["evidence"] == [(one, "one" * 8, {"collector": "collector-v1"}, "40", None, None),
                                     (two, "two" * 8, {"collector": "collector-v1"}, "40", MARK, None)]
        cur.execute("SELECT id, updated_at FROM card ORDER BY id")
        touched_after = dict(cur.fetchall())
        assert touched_after[one] > touched_before[one] and touched_after[two] == touched_before[two]

        # The code reads and writes the migrated rows.
        with get_engine(url).begin() as db:
            assert [v.anonymous_id for v in card_history(db, one).archived] == ["stage-d-art-v1"]
            _, resolutions = recompute_consensus(db, [one, two], "machine-quorum")
        assert resolutions[one].resolved_printing_id == ids["40"]  # art-v2 and join-key agree: two families
        assert resolutions[two].printing_status == "unresolved"

        # Idempotent: the same upgrade run again over the upgraded database changes nothing and raises nothing.
        after = _state(cur)
        _stamp(url, previous)
        upgrade(url, OURS)
        _stamp(url, head_revision())
        assert _state(cur) == after
        conn.close()
        get_engine.cache_clear()
