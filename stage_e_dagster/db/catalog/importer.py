"""Stream a Scryfall bulk-data file into `expansion` and `printing`, upserting on the Scryfall id.

The file is parsed incrementally (ijson), so memory stays bounded however large the file is, and so it does
whatever the file holds: no record may take more than `MAX_RECORD_BYTES` of the file (a giant string or a huge array
inside one record would otherwise be built whole in memory) or nest deeper than `MAX_DEPTH` (the parser's prefix
paths grow with the square of the depth: 20,000 levels in 40 KB took 1 GB), and at most `MAX_MALFORMED` records may
be malformed; past a limit the import stops with a `CatalogLimitError` that says which. A malformed record is
reported with its index and skipped; a file that stops being valid JSON ends the import with an error that says
how far it got (everything before that point is committed).

A batch that adds or changes printings re-opens, for Stage D only and in the same transaction, the cards whose
candidate set it changed (`catalog_reopen`); a record equal to what is stored changes nothing, so re-importing the
same file re-opens nothing.

A file laid out as Scryfall writes its bulk files (`[`, then one card object per line) is read a line at a time,
and only the fields a printing keeps are decoded from each line (msgspec skips the rest, about 90% of a record,
without building it); a line that does not decode into that shape is decoded whole by the standard library and
reported by its problem. Any other layout goes through the incremental parser. Both enforce the same limits, except
that in a line-per-record file nesting is checked on what is built: a field the importer skips is never built.
Batches are written by `upsert.BatchWriter` on a thread of their own while the next is read (at most one waits).

Every record becomes a printing keyed by its Scryfall id, non-English ones included (with their `lang`). The name
lookups read one record per (set, collector number): its English one, or else one of its languages
(`db.catalog.lookup`), so a set printed in ten languages does not give a name ten candidates.

`import_catalog` and `store_symbol_hashes` take an engine: they commit batch by batch (a file is imported up to the
point it broke), and `store_printed_totals` runs in the caller's transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson
import msgspec
from msgspec import UNSET, UnsetType
from sqlalchemy import Connection, Engine, update

from stage_e_dagster.db.catalog.upsert import BatchWriter, ImportSummary
from stage_e_dagster.db.core.models import Expansion
from stage_e_dagster.domain.scryfall import MalformedCard, PrintingRecord, parse_card

__all__ = ["CatalogFileError", "CatalogLimitError", "ImportSummary", "import_catalog", "store_printed_totals",
           "store_symbol_hashes"]

BATCH_SIZE = 1000
MAX_RECORD_BYTES = 1024 * 1024
"""The most file bytes one card object may span (a real Scryfall card is a few KB)."""
MAX_DEPTH = 32
"""The deepest nesting a card object may have (a real one has about 4 levels)."""
MAX_SETS_BYTES = 32 * 1024 * 1024
"""The largest sets file read (Scryfall's whole list of sets is about 1 MB)."""
MAX_MALFORMED = 10_000
"""The most malformed records an import reports before it decides the file is not a card catalogue."""


class CatalogFileError(RuntimeError):
    """The catalogue file is not a readable JSON array of card objects."""


class CatalogLimitError(CatalogFileError):
    """The catalogue file breaks a size limit that keeps the import's memory bounded; the message says which."""


class _RecordBound:
    """A binary file whose `read` fails once more than `limit` bytes were read since the last record ended, so no
    single record (however it is built) reaches the parser's memory whole."""

    def __init__(self, handle: BinaryIO, limit: int) -> None:
        self.handle, self.limit, self.since = handle, limit, 0

    def read(self, size: int = -1) -> bytes:
        if self.since > self.limit:
            raise CatalogLimitError(f"spans more than {self.limit} bytes of the file (a giant string or a huge "
                                    "array?)")
        data = self.handle.read(size if size >= 0 else self.limit + 1)
        self.since += len(data)
        return data

    def record_ended(self) -> None:
        self.since = 0


def import_catalog(
    engine: Engine,
    path: Path,
    *,
    on_progress: Callable[[int], None] | None = None,
    on_malformed: Callable[[int, str], None] | None = None,
) -> ImportSummary:
    """Import `path`, calling `on_progress(bytes_read)` per batch and `on_malformed(index, why)` per bad record."""
    summary = ImportSummary()
    batch: list[PrintingRecord] = []
    index = -1
    with open(path, "rb") as handle, BatchWriter(engine, summary) as writer:
        bound = _RecordBound(handle, MAX_RECORD_BYTES)
        try:
            for index, obj in enumerate(_records(bound, path)):
                bound.record_ended()
                try:
                    batch.append(parse_card(obj))
                except MalformedCard as err:
                    summary.malformed.append((index, str(err)))
                    if on_malformed:
                        on_malformed(index, str(err))
                    if len(summary.malformed) > MAX_MALFORMED:
                        writer.finish(batch)
                        raise CatalogLimitError(
                            f"{path}: more than {MAX_MALFORMED} malformed records (the last is record {index}); "
                            f"is this a Scryfall bulk-data file? {summary.printings} printings were imported"
                        ) from None
                if len(batch) >= BATCH_SIZE:
                    writer.put(batch)
                    batch = []
                    if on_progress:
                        on_progress(_position(handle))
        except CatalogLimitError as err:
            if str(err).startswith(str(path)):
                raise
            writer.finish(batch)
            raise CatalogLimitError(
                f"{path}: record {index + 1} {err}; {summary.printings} printings were imported before it"
            ) from None
        except (ijson.JSONError, _BadLine) as err:
            writer.finish(batch)
            raise CatalogFileError(
                f"{path} is not valid JSON after record {index} ({err}); {summary.printings} printings were imported"
            ) from err
        writer.finish(batch)
        if on_progress:
            on_progress(_position(handle))
    if index == -1 and summary.printings == 0 and not summary.malformed:
        _check_is_array(path)
    return summary


class _BadLine(ValueError):
    """A line of a line-per-record file that is not a JSON value (the file is not valid JSON there)."""


def _records(handle: _RecordBound, path: Path) -> Iterator[Any]:
    """The elements of the top-level JSON array: a line at a time when the file is laid out a record per line,
    otherwise from the incremental parser's events."""
    raw = handle.handle
    if _one_per_line(raw):
        yield from _line_records(raw)
    else:
        yield from _event_records(handle, path)


def _one_per_line(raw: BinaryIO) -> bool:
    """Whether the file opens with `[` alone on its line and its next line is a whole JSON value (or `]`)."""
    start = raw.tell()
    try:
        if raw.readline(64).strip() != b"[":
            return False
        second = raw.readline(MAX_RECORD_BYTES + 1).strip()
        if second == b"]":
            return True
        try:
            json.loads(second.removesuffix(b","))
        except (ValueError, RecursionError):
            return False
        return True
    finally:
        raw.seek(start)


class _Face(msgspec.Struct):
    name: str | None | UnsetType = UNSET


class _Card(msgspec.Struct):
    """The fields of a card object a printing keeps (`parse_card` validates them)."""

    id: str | None | UnsetType = UNSET
    name: str | None | UnsetType = UNSET
    set: str | None | UnsetType = UNSET
    set_name: str | None | UnsetType = UNSET
    collector_number: str | None | UnsetType = UNSET
    lang: str | None | UnsetType = UNSET
    released_at: str | None | UnsetType = UNSET
    rarity: str | None | UnsetType = UNSET
    artist: str | None | UnsetType = UNSET
    border_color: str | None | UnsetType = UNSET
    frame: str | None | UnsetType = UNSET
    layout: str | None | UnsetType = UNSET
    card_faces: list[_Face] | None | UnsetType = UNSET


_DECODE_CARD = msgspec.json.Decoder(_Card).decode
_CARD_FIELDS = _Card.__struct_fields__


def _kept_fields(card: _Card) -> dict[str, Any]:
    out = {key: value for key in _CARD_FIELDS if (value := getattr(card, key)) is not UNSET}
    if card.card_faces:
        out["card_faces"] = [{} if face.name is UNSET else {"name": face.name} for face in card.card_faces]
    return out


def _line_records(raw: BinaryIO) -> Iterator[Any]:
    """The records of a `[` / one value per line / `]` file (each line bounded by `MAX_RECORD_BYTES`)."""
    raw.readline()
    while True:
        line = raw.readline(MAX_RECORD_BYTES + 1)
        if len(line) > MAX_RECORD_BYTES:
            raise CatalogLimitError(f"spans more than {MAX_RECORD_BYTES} bytes of the file (a giant string or a huge "
                                    "array?)")
        if not line:
            raise _BadLine("the file ends before its closing ]")
        line = line.strip()
        if line == b"]":
            return
        if not line:
            continue
        line = line.removesuffix(b",")
        try:
            yield _kept_fields(_DECODE_CARD(line))
            continue
        except RecursionError:
            raise CatalogLimitError(f"is nested deeper than {MAX_DEPTH} levels") from None
        except msgspec.DecodeError:
            pass  # not JSON, or not a card's shape: the standard library says which, and parse_card names it
        try:
            value = json.loads(line)
        except RecursionError:
            raise CatalogLimitError(f"is nested deeper than {MAX_DEPTH} levels") from None
        except ValueError as err:
            raise _BadLine(str(err)) from None
        if line.count(b"{") + line.count(b"[") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
            raise CatalogLimitError(f"is nested deeper than {MAX_DEPTH} levels")
        yield value


def _depth(value: Any) -> int:
    """How deeply `value` nests (a scalar 0), a level at a time."""
    depth, level = 0, [value] if isinstance(value, dict | list) else []
    while level:
        depth += 1
        below = []
        for item in level:
            below.extend(v for v in (item.values() if isinstance(item, dict) else item) if isinstance(v, dict | list))
        level = below
    return depth


def _event_records(handle: _RecordBound, path: Path) -> Iterator[Any]:
    """The elements of the top-level JSON array, built from the parser's flat events (no prefix paths) with
    `MAX_DEPTH` enforced as they nest."""
    events = ijson.basic_parse(handle, use_float=True)
    first = next(events, None)
    if first is None:
        return
    if first[0] != "start_array":
        raise CatalogFileError(f"{path} is not a JSON array of card objects")
    stack: list[Any] = []
    keys: list[str | None] = []
    for event, value in events:
        if event == "map_key":
            keys[-1] = value
            continue
        if event in ("start_map", "start_array"):
            value = {} if event == "start_map" else []
            if len(stack) >= MAX_DEPTH:
                raise CatalogLimitError(f"is nested deeper than {MAX_DEPTH} levels")
        elif event in ("end_map", "end_array"):
            if not stack:
                return  # the end of the top-level array
            done = stack.pop()
            keys.pop()
            if not stack:
                yield done
            continue
        if stack:
            if isinstance(stack[-1], dict):
                stack[-1][keys[-1]] = value
            else:
                stack[-1].append(value)
        if event in ("start_map", "start_array"):
            stack.append(value)
            keys.append(None)
        elif not stack:
            yield value  # a scalar record


def _position(handle: BinaryIO) -> int:
    return handle.tell()


def _check_is_array(path: Path) -> None:
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip()
    if not head.startswith(b"["):
        raise CatalogFileError(f"{path} is not a JSON array of card objects")


def store_symbol_hashes(engine: Engine, symbols_dir: Path, summary: ImportSummary) -> None:
    """Store each `<set code>.png` symbol's canonical phash on its expansion, one transaction per symbol (a file that
    is not a PNG, JPEG or WebP by content is unreadable, whatever its name)."""
    from PIL import UnidentifiedImageError

    from stage_e_dagster.domain.evidence.hashing import symbol_phash
    from stage_e_dagster.domain.evidence.load import open_image

    for png in sorted(symbols_dir.glob("*.png")):
        code = png.stem.lower()
        try:
            with open_image(png) as img:
                value = symbol_phash(img)
        except (OSError, UnidentifiedImageError, ValueError):
            summary.symbols_unreadable.append(png.name)
            continue
        with engine.begin() as conn:
            result = conn.execute(update(Expansion).where(Expansion.code == code).values(symbol_phash=value))
        if result.rowcount:
            summary.symbols_stored += 1
        else:
            summary.symbols_unknown_set.append(code)


def store_printed_totals(conn: Connection, sets_path: Path, summary: ImportSummary) -> None:
    """Store each set's `printed_size` from a Scryfall sets file (the `/sets` list object, or a JSON array of set
    objects) on its expansion, as `printed_total`; a set with no printed size is left as it is. Sets that name no
    imported expansion are listed in `summary.totals_unknown_set`."""
    if sets_path.stat().st_size > MAX_SETS_BYTES:
        raise CatalogLimitError(f"{sets_path.name} is larger than {MAX_SETS_BYTES} bytes: not a Scryfall sets file")
    try:
        document = json.loads(sets_path.read_bytes())
    except ValueError as err:
        raise CatalogFileError(f"{sets_path.name} is not valid JSON: {err}") from None
    sets = document.get("data") if isinstance(document, dict) else document
    if not isinstance(sets, list):
        raise CatalogFileError(f"{sets_path.name} holds no list of set objects")
    totals = {str(item["code"]).lower(): item["printed_size"] for item in sets
              if isinstance(item, dict) and isinstance(item.get("code"), str)
              and isinstance(item.get("printed_size"), int) and item["printed_size"] > 0}
    for code, total in sorted(totals.items()):
        result = conn.execute(update(Expansion).where(Expansion.code == code).values(printed_total=total))
        if result.rowcount:
            summary.totals_stored += 1
        else:
            summary.totals_unknown_set.append(code)
