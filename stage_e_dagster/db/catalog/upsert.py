"""Writing the importer's batches: each batch's new or changed records are copied (`COPY`) into a temp table and
upserted from it with one `INSERT ... SELECT ... ON CONFLICT`, on a thread of its own so that reading the file and
writing to Postgres overlap. (`COPY` costs Postgres about a third of what one multi-row `VALUES` statement does:
it parses no SQL literals.)

A batch's printings and sets are upserted, and the cards whose candidate set changed are re-opened for Stage D, in
one transaction (`reopen`); a record equal to what is stored changes nothing (so it moves no catalogue version
either). Batches are committed in file order; at most one waits while another is written, so memory stays bounded.
"""

from __future__ import annotations

import io
import queue
import threading
from dataclasses import dataclass, field, fields
from operator import attrgetter
from types import TracebackType

from psycopg2.extras import execute_values
from sqlalchemy import Connection, Engine

from stage_e_dagster.db.arrays import text_array
from stage_e_dagster.db.catalog.reopen import cards_to_reopen, reopen_for_stage_d
from stage_e_dagster.db.core.transactions import in_transaction
from stage_e_dagster.domain.scryfall import PrintingRecord
from stage_e_dagster.domain.work import candidate_names


@dataclass
class ImportSummary:
    printings: int = 0
    set_codes: set[str] = field(default_factory=set)
    malformed: list[tuple[int, str]] = field(default_factory=list)
    symbols_stored: int = 0
    symbols_unknown_set: list[str] = field(default_factory=list)
    symbols_unreadable: list[str] = field(default_factory=list)
    totals_stored: int = 0
    totals_unknown_set: list[str] = field(default_factory=list)
    changed: int = 0  # printings added or changed (a record equal to the stored one is not a change)
    reopened: set[int] = field(default_factory=set)  # cards re-opened for Stage D by those changes


_COLUMNS = tuple(f.name for f in fields(PrintingRecord) if f.name != "set_name")
_STAGE = (
    f"CREATE TEMP TABLE IF NOT EXISTS printing_batch ON COMMIT DELETE ROWS AS SELECT {', '.join(_COLUMNS)} "
    "FROM printing WITH NO DATA"
)
_COPY = f"COPY printing_batch ({', '.join(_COLUMNS)}) FROM STDIN"
_UPSERT = (
    f"INSERT INTO printing ({', '.join(_COLUMNS)}) SELECT {', '.join(_COLUMNS)} FROM printing_batch "
    "ON CONFLICT (scryfall_id) DO UPDATE SET "
    + ", ".join(f"{name} = EXCLUDED.{name}" for name in _COLUMNS[1:])
    + f" WHERE ({', '.join('printing.' + name for name in _COLUMNS[1:])}) IS DISTINCT FROM "
    f"({', '.join('EXCLUDED.' + name for name in _COLUMNS[1:])}) "
    "RETURNING scryfall_id, name_normalised, face_names"
)
_row = attrgetter(*_COLUMNS)
_BEFORE = f"SELECT {', '.join(_COLUMNS)} FROM printing WHERE scryfall_id = ANY(CAST(%s AS text[]))"
_NAME, _FACES = _COLUMNS.index("name_normalised"), _COLUMNS.index("face_names")
_EXPANSIONS = (
    "INSERT INTO expansion (code, name, released_at) VALUES %s ON CONFLICT (code) DO UPDATE SET "
    "name = EXCLUDED.name, released_at = least(expansion.released_at, EXCLUDED.released_at) "
    "WHERE (expansion.name, expansion.released_at) IS DISTINCT FROM "
    "(EXCLUDED.name, least(expansion.released_at, EXCLUDED.released_at))"
)


def _copy_value(value: object) -> str:
    if value is None:
        return "\\N"
    text = text_array(value) if isinstance(value, list) else str(value)  # dates in ISO form
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _copy_line(row: tuple) -> str:
    """One row in COPY's text format (tab-separated, backslash escapes, `\\N` for NULL; arrays as literals)."""
    return "\t".join(map(_copy_value, row)) + "\n"


def write_batch(engine: Engine, batch: list[PrintingRecord], summary: ImportSummary) -> None:
    if not batch:
        return
    unique = {record.scryfall_id: record for record in batch}
    expansions: dict[str, tuple] = {}
    for record in unique.values():
        current = expansions.get(record.set_code)
        if current is None or (record.released_at and (not current[2] or record.released_at < current[2])):
            expansions[record.set_code] = (record.set_code, record.set_name, record.released_at)
    rows = [_row(record) for record in unique.values()]

    def work(conn: Connection) -> tuple[int, set[int]]:
        cursor = conn.connection.dbapi_connection.cursor()
        try:
            execute_values(cursor, _EXPANSIONS, sorted(expansions.values()), page_size=len(expansions))
            cursor.execute(_BEFORE, (text_array(unique),))
            before = {row[0]: row for row in cursor.fetchall()}
            # Only new or different records are sent: an upsert that conflicts locks the row it keeps, which
            # writes every page of an unchanged catalogue again (an unchanged re-import took longer than the first).
            different = [row for row in rows if before.get(row[0]) != row]
            changed = []
            if different:
                cursor.execute(_STAGE)
                cursor.copy_expert(_COPY, io.StringIO("".join(map(_copy_line, different))))
                cursor.execute(_UPSERT)
                changed = cursor.fetchall()
        finally:
            cursor.close()
        if not changed:
            return 0, set()
        touched = [(name, faces) for _id, name, faces in changed]
        touched += [(before[scryfall_id][_NAME], before[scryfall_id][_FACES])
                    for scryfall_id, _n, _f in changed if scryfall_id in before]
        return len(changed), reopen_for_stage_d(conn, cards_to_reopen(conn, candidate_names(touched), lacking=True))

    changed, reopened = in_transaction(engine, work)
    summary.changed += changed
    summary.reopened |= reopened
    summary.printings += len(rows)
    summary.set_codes.update(expansions)


class BatchWriter:
    """`with BatchWriter(engine, summary) as writer:` hand batches to `put` (it returns once the batch is queued),
    and end with `finish(last_batch)`, which waits until every batch is committed. A failed write is raised by the
    next `put` or by `finish`; leaving the block by an exception stops the thread without waiting for queued
    batches to matter (those already committed stay)."""

    def __init__(self, engine: Engine, summary: ImportSummary) -> None:
        self.engine, self.summary = engine, summary
        self.batches: queue.Queue[list[PrintingRecord] | None] = queue.Queue(maxsize=1)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="catalog-writer")
        self.finished = False

    def __enter__(self) -> BatchWriter:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if not self.finished:
            self.finished = True
            self.batches.put(None)
            self.thread.join()

    def _run(self) -> None:
        while (batch := self.batches.get()) is not None:
            if self.error is None:
                try:
                    write_batch(self.engine, batch, self.summary)
                except BaseException as err:  # noqa: BLE001 - handed to the reading thread, which raises it
                    self.error = err

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def put(self, batch: list[PrintingRecord]) -> None:
        self._raise()
        self.batches.put(batch)

    def finish(self, batch: list[PrintingRecord]) -> None:
        """Write `batch` after the others and wait until all are committed."""
        self.put(batch)
        self.finished = True
        self.batches.put(None)
        self.thread.join()
        self._raise()
