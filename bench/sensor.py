"""Work lookup at scale: the card stream's tick, the backlog, sweep claims and whole ticks at 100k and 1M cards.

Each size gets its own database on one temp embedded Postgres, filled by `testkit/scale.py` (99% of cards done,
the newest 1% owed work, running batches over some of them). Every lookup runs as its caller runs it, `--repeats`
times after one warm-up call; the table shows the median and the slowest call in ms. The lookups:

- `tick lookup, fresh cursor`: `cards_needing_work` as the card_stream sensor calls it (limit runs x batch size,
  the busy cards of queued runs), with no watermark: a fresh sensor or a reset cursor;
- `tick lookup, lagging watermark` (`after_id` 1, behind every done card) and `at the frontier` (`after_id` in
  the middle of the work);
- `backlog()` (what `stage-e status` shows), `count_needing_work` (what a bulk run takes on);
- `claim_sweep_range` for each sweep cursor, walking the work chunk after chunk (so each call claims a new range);
- the whole card_stream evaluation (`evaluate_stream`: reclaim, gates, busy cards, lookup) and the whole backstop
  sweep tick (`evaluate_sweep`: a reconcile window of 20k card ids against the full rule, then the claims);
- the whole `pipeline_status` of `stage-e status` and its three counts that read the catalogue (cards by state,
  the funnel's machine-vote count, the review queue's size), for the record: they are not work lookups.

The last line reads `worst lookup at 1M: <ms> ms; 1M/100k: <ratio>`: the largest median among the lookups (the
rows marked `*`: tick lookups, backlog, work count, sweep claims) at the largest size, and that lookup's median
there over its median at the smallest size.
"""

from __future__ import annotations

import argparse
import os
import time

from timing import timed

from stage_e_dagster.db.core.migrate import upgrade
from testkit.scale import seed
from testkit.server import create_database, process_home, with_database

LOOKUPS = ("tick lookup, fresh cursor", "tick lookup, lagging watermark", "tick lookup, at the frontier",
           "backlog()", "count_needing_work", "claim_sweep_range stage_c", "claim_sweep_range stage_d")


def measure(url: str, cards: int, repeats: int) -> dict[str, tuple[float, float]]:
    from dagster import DagsterInstance
    from sqlalchemy import text

    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.reporting import status
    from stage_e_dagster.db.reporting.status import pipeline_status
    from stage_e_dagster.db.review.queue import review_queue_size
    from stage_e_dagster.db.work.queue import backlog, cards_needing_work, claim_sweep_range, count_needing_work
    from stage_e_dagster.domain.calculators import MACHINE_PREFIX
    from stage_e_dagster.resources.stream import StreamControl
    from stage_e_dagster.sensors.backstop import evaluate_sweep
    from stage_e_dagster.sensors.card_stream import evaluate_stream

    stream = StreamControl()
    engine = get_engine(url)

    def read(query, *args, **kwargs):
        with engine.connect() as conn:
            return query(conn, *args, **kwargs)

    with engine.begin() as conn:  # the running batches are alive: no tick reclaims them
        conn.execute(text("UPDATE dispatch_ledger SET heartbeat_at = now() WHERE status = 'running'"))
        low, high = conn.execute(text("SELECT min(card_id), max(card_id) FROM card_work")).one()
    limit = stream.batch_size  # one claim of a draining run
    busy = set(range(high - 2 * stream.batch_size + 1, high + 1))  # two queued runs' cards
    frontier = (low + high) // 2
    results = {
        "tick lookup, fresh cursor": timed(lambda: read(cards_needing_work, limit, busy), repeats),
        "tick lookup, lagging watermark": timed(lambda: read(cards_needing_work, limit, busy, after_id=1), repeats),
        "tick lookup, at the frontier": timed(lambda: read(cards_needing_work, limit, busy, after_id=frontier),
                                              repeats),
        "backlog()": timed(lambda: read(backlog), repeats),
        "count_needing_work": timed(lambda: read(count_needing_work), repeats),
        "claim_sweep_range stage_c": timed(
            lambda: claim_sweep_range(engine, "stage_c", stream.sweep_chunk, busy=busy), repeats),
        "claim_sweep_range stage_d": timed(
            lambda: claim_sweep_range(engine, "stage_d", stream.sweep_chunk, busy=busy), repeats),
    }
    with DagsterInstance.get() as instance:
        results["card_stream evaluation"] = timed(lambda: evaluate_stream(instance, engine, stream), repeats)
        results["backstop sweep tick"] = timed(lambda: evaluate_sweep(instance, engine, stream), repeats)
    with engine.connect() as conn:
        results["status: cards by state"] = timed(lambda: conn.execute(text(status._CARDS)).all(), repeats)
        results["status: funnel (machine votes)"] = timed(
            lambda: conn.execute(text(status._FUNNEL), {"machine": MACHINE_PREFIX + "%"}).one(), repeats)
        results["status: review_queue_size"] = timed(lambda: review_queue_size(conn), repeats)
    results["pipeline_status (stage-e status)"] = timed(lambda: pipeline_status(engine), repeats)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with process_home("se-s-"):
        server_url = with_database(os.environ["STAGE_E_DATABASE_URL"], "postgres")
        figures: dict[int, dict[str, tuple[float, float]]] = {}
        loads = []
        for size in args.sizes:
            url = create_database(server_url, f"scale_{size}")
            upgrade(url)
            started = time.perf_counter()
            seeded = seed(url, size)
            print(f"seeded {size} cards in {time.perf_counter() - started:.0f} s: {seeded.needing} need work, "
                  f"{seeded.running_cards} in running batches, {seeded.review_markers} review markers", flush=True)
            loads.append(os.getloadavg()[0])
            figures[size] = measure(url, size, args.repeats)
            loads.append(os.getloadavg()[0])
        print(f"\n{'lookup (ms: median / max)':38s}" + "".join(f"{size:>18,d}" for size in args.sizes)
              + f"{'ratio':>8s}")
        small, large = args.sizes[0], args.sizes[-1]
        for name in figures[small]:
            cells = "".join(f"{figures[s][name][0]:10.1f} /{figures[s][name][1]:6.0f}" for s in args.sizes)
            ratio = figures[large][name][0] / max(figures[small][name][0], 1e-3)
            print(f"{('* ' if name in LOOKUPS else '  ') + name:38s}{cells}{ratio:8.2f}")
        print(f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs during the measurements")
        worst = max(LOOKUPS, key=lambda name: figures[large][name][0])
        ratio = figures[large][worst][0] / max(figures[small][worst][0], 1e-3)
        print(f"worst lookup at {_label(large)}: {figures[large][worst][0]:.1f} ms; "
              f"{_label(large)}/{_label(small)}: {ratio:.2f}")


def _label(size: int) -> str:
    return f"{size // 1_000_000}M" if size % 1_000_000 == 0 else f"{size // 1000}k"


if __name__ == "__main__":
    main()
