"""Claims (`db.runs.ledger.claim_batch`): concurrent claimers never take the same card, and a claimed card is
offered to nobody else while its batch runs.

Each simulated process claims on its own connection (its own engine, no pool shared), batch after batch, until
nothing is offered. The oracle is the database's final state: every `running` row's cards, checked against the
rule "one card, at most one running batch", and every seeded card claimed exactly once.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter

from sqlalchemy import create_engine, pool, text

from stage_e_dagster.db.runs import ledger
from stage_e_dagster.db.work.queue import cards_needing_work

CLAIMERS = 6
CARDS = 240
BATCH = 7


def _seed(engine, count: int) -> list[int]:
    with engine.begin() as conn:
        source = conn.execute(text("INSERT INTO source (key, location) VALUES ('claims', '/claims') RETURNING id")
                              ).scalar_one()
        return sorted(conn.execute(text(
            "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
            "SELECT :source, 'f-' || g, 'Card', 'card', md5(g::text), 10 FROM generate_series(1, :n) g RETURNING id"),
            {"source": source, "n": count}).scalars())


def _claimer(url: str, barrier: threading.Barrier, errors: list[BaseException]) -> None:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        barrier.wait()
        while True:
            with engine.begin() as conn:
                cards = ledger.claim_batch(conn, str(uuid.uuid4()), "card-event", "passive", BATCH, owner="test")
            if not cards:
                return
    except BaseException as err:  # noqa: BLE001 - reported to the test's thread
        errors.append(err)
    finally:
        engine.dispose()


def test_concurrent_claims_never_share_a_card_and_take_every_one(db_url, db_engine):
    seeded = _seed(db_engine, CARDS)
    barrier, errors = threading.Barrier(CLAIMERS), []
    threads = [threading.Thread(target=_claimer, args=(db_url, barrier, errors)) for _ in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    with db_engine.connect() as conn:
        rows = conn.execute(text("SELECT card_ids FROM dispatch_ledger WHERE status = 'running'")).scalars().all()
    claimed = Counter(card for card_ids in rows for card in card_ids)
    doubled = {card: n for card, n in claimed.items() if n > 1}
    assert not doubled, f"cards in more than one running batch: {doubled}"
    assert sorted(claimed) == seeded, "every owed card was claimed"
    assert len(rows) >= CARDS // BATCH


def test_a_claimed_card_is_offered_to_nobody_else_until_its_batch_ends(db_engine):
    seeded = _seed(db_engine, 5)
    with db_engine.begin() as conn:
        first = ledger.claim_batch(conn, "run-a", "card-event", "passive", 3, owner="test")
    with db_engine.connect() as conn:
        assert [c.id for c in cards_needing_work(conn, 10)] == seeded[3:], "the sweep and bulk runs skip them"
    with db_engine.begin() as conn:
        second = ledger.claim_batch(conn, "run-b", "card-event", "passive", 10, owner="test")
    assert [c.id for c in first] == seeded[:3] and [c.id for c in second] == seeded[3:]
    with db_engine.begin() as conn:
        assert ledger.claim_batch(conn, "run-c", "card-event", "passive", 10, owner="test") == []
        assert conn.execute(text("SELECT count(*) FROM dispatch_ledger WHERE run_id = 'run-c'")).scalar_one() == 0, \
            "an empty claim opens no row"
    with db_engine.begin() as conn:
        ledger.mark_failed(conn, "run-a", "failed", "died", "card-event", "passive", seeded[:3])
    with db_engine.connect() as conn:
        assert [c.id for c in cards_needing_work(conn, 10)] == seeded[:3], "a failed batch gives its cards back"
