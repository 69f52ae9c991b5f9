"""The catalogue as the collector reader knows it (`ReadCatalog`), kept in the process while it is unchanged.

A Stage C batch hands its OCR workers the catalogue; reading and packing it costs seconds at the size of Scryfall's
"All Cards" file, and a draining run claims batch after batch. `current_read_catalog` reads `catalog_version`
first and builds the catalogue again only when the version differs from the one its kept copy was read under (the
version is read before the catalogue, so a change committed in between makes the next call read it again, never a
stale copy kept as current). Kept workers compare catalogues by identity first, so an unchanged catalogue keeps
them. `read_catalog` reads it afresh.
"""

from __future__ import annotations

import threading

from sqlalchemy import Connection, select, text

from stage_e_dagster.db.arrays import text_array
from stage_e_dagster.db.core.models import Expansion
from stage_e_dagster.domain.evidence.read_catalog import CODELESS_FRAMES, ReadCatalog
from stage_e_dagster.domain.printed_lines import NUMBERED_FROM, RARITY_FIRST_FROM, layout_of

_VERSION = text("SELECT version FROM catalog_version")
_lock = threading.Lock()
_kept: dict[str, tuple[int, ReadCatalog]] = {}


def catalog_version(conn: Connection) -> int:
    """The catalogue's version: it changes with every committed change to `printing` or `expansion`."""
    return int(conn.execute(_VERSION).scalar_one())


_PRINTINGS = text("SELECT name, set_code, collector_number FROM printing")
_CODELESS = text(
    "SELECT set_code FROM printing GROUP BY set_code HAVING bool_and(frame = ANY(CAST(:frames AS text[])))"
)
# One row per set and each (frame, era) its printings fall in, with a day of that era: enough to know every
# collector-line layout the set prints (`printed_lines.layout_of` reads the frame and the release day).
_LAYOUTS = text(
    "SELECT set_code, frame, min(released_at) AS released_at FROM printing "
    "GROUP BY set_code, frame, released_at >= :rarity_first, released_at >= :numbered"
)


def read_catalog(conn: Connection) -> ReadCatalog:
    """What the collector reader may know of the catalogue: every printing's (name, set, number), every set code
    with its printed total where a sets file gave it, the sets whose collector line prints no set code (by their
    printings' frames), and the collector-line layouts each set prints."""
    printings = [tuple(row) for row in conn.execute(_PRINTINGS)]
    sets = conn.execute(select(Expansion.code, Expansion.printed_total)).all()
    codeless = list(conn.execute(_CODELESS, {"frames": text_array(CODELESS_FRAMES)}).scalars())
    totals = {code: total for code, total in sets if total}
    layouts: dict[str, list[str | None]] = {}
    for row in conn.execute(_LAYOUTS, {"rarity_first": RARITY_FIRST_FROM, "numbered": NUMBERED_FROM}):
        layouts.setdefault(row.set_code, []).append(layout_of(row.frame, row.released_at))
    return ReadCatalog.build(printings, totals=totals, set_codes=[code for code, _ in sets], codeless=codeless,
                             layouts=layouts)


def current_read_catalog(conn: Connection) -> ReadCatalog:
    """The database's `ReadCatalog`, read again only when the catalogue changed since the kept copy was read."""
    database = conn.engine.url.render_as_string(hide_password=True)
    version = catalog_version(conn)
    with _lock:
        kept = _kept.get(database)
    if kept is not None and kept[0] == version:
        return kept[1]
    catalog = read_catalog(conn)
    with _lock:
        _kept[database] = (version, catalog)
    return catalog


def forget_kept() -> None:
    """Drop every kept catalogue (the next call reads afresh)."""
    with _lock:
        _kept.clear()
