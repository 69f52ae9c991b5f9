"""`stage-e status`'s count of the cards no machine may vote on, by reason, at scale, against the alternatives.

Starts its own embedded Postgres, fills a database per size with `testkit/scale.py`'s mix, then gives the scans a
pixel size (2% under the 200 DPI floor, the rest at 300 DPI) and some cards a kind, tag or language (1% card backs,
2% custom art, 1% German). It times, `--repeats` times after one warm-up call (median / slowest ms):

- `cards by state`: the status's pass over `card`, for scale;
- `ineligible, status form` (`db.reporting.status._INELIGIBLE`): a pass over `card` and one over `image_evidence`,
  joined on the scans under the floor only;
- `ineligible, whole join`: the same rule over a join of every card with its current evidence (the set-based
  `INELIGIBILITY` fragment over `ELIGIBILITY_FROM`, as Stage D's inputs read it for a batch);
- `ineligible, per card`: `card_ineligibility(id)` called for every card (only up to `--per-card-max` cards);
- the whole `pipeline_status`.

Each size's line ends with the status form's ratio to the whole join, and the load average before and after.

Run: `.venv/bin/python bench/status_eligibility.py [--sizes 100000 1000000] [--repeats 3]`
"""

from __future__ import annotations

import argparse
import os

from sqlalchemy import text
from timing import timed

from testkit.scale import seed
from testkit.server import create_database, process_home, with_database

_KINDS = """
UPDATE image_evidence SET width = CASE WHEN card_id % 50 = 7 THEN 480 ELSE 744 END,
                          height = CASE WHEN card_id % 50 = 7 THEN 670 ELSE 1039 END;
SET session_replication_role = replica;
UPDATE card SET kind = 'cardback' WHERE id % 100 = 1;
UPDATE card SET tags = '{custom-art}' WHERE id % 50 = 2;
UPDATE card SET language = 'de' WHERE id % 100 = 3;
SET session_replication_role = DEFAULT
"""
"""Sizes, kinds, tags and languages for the seeded cards (the work rule's triggers off while the kinds change: the
lookups read the columns, not the work queue)."""


def measure(url: str, cards: int, repeats: int, per_card_max: int) -> dict[str, tuple[float, float]]:
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.reporting import status
    from stage_e_dagster.db.work.predicates import ELIGIBILITY_FROM, INELIGIBILITY

    engine = get_engine(url)
    whole = (f"SELECT reason, count(*) FROM (SELECT {INELIGIBILITY} AS reason FROM {ELIGIBILITY_FROM} "
             "WHERE c.missing_since IS NULL) AS judged WHERE reason IS NOT NULL GROUP BY reason")
    per_card = ("SELECT reason, count(*) FROM (SELECT card_ineligibility(id) AS reason FROM card "
                "WHERE missing_since IS NULL) AS judged WHERE reason IS NOT NULL GROUP BY reason")
    results = {}
    with engine.connect() as conn:
        counted = dict(conn.execute(text(status._INELIGIBLE)).all())
        assert counted == dict(conn.execute(text(whole)).all()), "the two forms disagree"
        print(f"  {cards:,} cards: {counted}", flush=True)
        results["cards by state"] = timed(lambda: conn.execute(text(status._CARDS)).all(), repeats)
        results["ineligible, status form"] = timed(lambda: conn.execute(text(status._INELIGIBLE)).all(), repeats)
        results["ineligible, whole join"] = timed(lambda: conn.execute(text(whole)).all(), repeats)
        if cards <= per_card_max:
            results["ineligible, per card"] = timed(lambda: conn.execute(text(per_card)).all(), repeats)
    results["pipeline_status"] = timed(lambda: status.pipeline_status(engine), repeats)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-card-max", type=int, default=100_000)
    args = parser.parse_args()
    from stage_e_dagster.db.core.engine import get_engine
    from stage_e_dagster.db.core.migrate import upgrade

    with process_home("se-el-"):
        server_url = with_database(os.environ["STAGE_E_DATABASE_URL"], "postgres")
        for size in args.sizes:
            url = create_database(server_url, f"eligibility_{size}")
            upgrade(url)
            seed(url, size)
            with get_engine(url).begin() as conn:
                for statement in filter(str.strip, _KINDS.split(";")):
                    conn.execute(text(statement))
            with get_engine(url).connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))  # the updates left every row twice; a live table has not
            before = os.getloadavg()[0]
            figures = measure(url, size, args.repeats, args.per_card_max)
            after = os.getloadavg()[0]
            for name, (median, slowest) in figures.items():
                print(f"  {name:28s} {median:9.1f} / {slowest:7.0f} ms")
            ratio = figures["ineligible, status form"][0] / figures["ineligible, whole join"][0]
            print(f"{size:,} cards: status form / whole join = {ratio:.2f}; load average {before:.1f} -> "
                  f"{after:.1f} on {os.cpu_count()} CPUs", flush=True)


if __name__ == "__main__":
    main()
