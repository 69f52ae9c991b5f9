"""OCR slot lock keys and who holds them: the advisory-lock key layout and the query behind `stage-e slots`.

A slot is a Postgres session advisory lock in the two-integer form `(key1, key2)`:

- `key1` is `NAMESPACE`, a fixed 32-bit id for this project, so every OCR slot on the server is found by one
  filter on `pg_locks.classid` and no other application's advisory locks can collide with ours.
- `key2` (kept below 2**31 so it reads the same as int4 and as `pg_locks.objid`, an oid) packs the scope:

      bit 31      always 0
      bit 30      scope flag: 0 = global (one set of slots for the fleet), 1 = host (one set per host)
      bits 8-29   22-bit hash of the host id (all zero for global)
      bits 0-7    slot index, 0..255

Host and global keys never collide because the scope bit differs. Two hosts collide only when their 22-bit hashes
match (about 1 in 4 million per pair); they then share one set of slots, which is a tighter cap, never a looser one.
Advisory locks live in one database: every worker must point at the same database for the cap to hold.

`list_slot_holders` takes a URL (an engine's `url`, or the CLI's): it reads on a short dedicated connection named
`stage-e slots`, like the lock connections themselves, never on a pooled one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import psycopg2
from sqlalchemy.engine import URL

from stage_e_dagster.db.core.urls import libpq_dsn

Scope = Literal["host", "global"]

NAMESPACE = 0x53454F43  # "SEOC": stage-e OCR; below 2**31 so int4 and oid spell it the same
SLOT_BITS = 8
MAX_SLOTS = 1 << SLOT_BITS  # slot indexes 0..255
HOST_HASH_BITS = 22
HOST_SCOPE_FLAG = 1 << 30

_HOLDERS_SQL = """
SELECT l.objid::bigint AS key2,
       l.pid,
       a.application_name,
       COALESCE(a.state_change, a.backend_start) AS since
FROM pg_locks AS l
LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE l.locktype = 'advisory'
  AND l.objsubid = 2
  AND l.granted
  AND l.classid = %(namespace)s::oid
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY key2, l.pid
"""


def host_key(host_id: str) -> int:
    """The 22-bit hash of a host id that `host`-scoped keys carry; stable across processes and Python runs."""
    digest = hashlib.sha256(host_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & ((1 << HOST_HASH_BITS) - 1)


def slot_key(slot: int, host: int | None) -> tuple[int, int]:
    """The `(key1, key2)` advisory-lock key of `slot`, in host scope when `host` (a `host_key`) is given."""
    if not 0 <= slot < MAX_SLOTS:
        raise ValueError(f"slot index {slot} is outside 0..{MAX_SLOTS - 1}")
    if host is None:
        return NAMESPACE, slot
    if not 0 <= host < (1 << HOST_HASH_BITS):
        raise ValueError(f"host key {host} does not fit in {HOST_HASH_BITS} bits")
    return NAMESPACE, HOST_SCOPE_FLAG | (host << SLOT_BITS) | slot


def decode_key2(key2: int) -> tuple[Scope, int | None, int]:
    """Split a `key2` back into (scope, host key or None, slot index)."""
    slot = key2 & (MAX_SLOTS - 1)
    if key2 & HOST_SCOPE_FLAG:
        return "host", (key2 >> SLOT_BITS) & ((1 << HOST_HASH_BITS) - 1), slot
    return "global", None, slot


@dataclass(frozen=True)
class SlotHolder:
    """One held OCR slot: which slot, whose (application_name names the worker), and since when.

    `pid` is the server backend's pid (`pg_terminate_backend(pid)` frees the slot); the worker's own pid is in
    `application_name`. `since` is when the lock connection went idle, i.e. when the slot was taken, because the
    lock connection runs no query while it holds a slot; it falls back to the backend start.
    """

    slot: int
    scope: Scope
    host_key: int | None
    application_name: str | None
    pid: int
    since: datetime | None


def list_slot_holders(url: str | URL) -> list[SlotHolder]:
    """Every OCR slot held in the database at `url`, from `pg_locks` joined with `pg_stat_activity`."""
    conn = psycopg2.connect(libpq_dsn(url), application_name="stage-e slots", connect_timeout=5)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(_HOLDERS_SQL, {"namespace": NAMESPACE})
            rows = cur.fetchall()
    finally:
        conn.close()
    holders = []
    for key2, pid, application_name, since in rows:
        scope, host, slot = decode_key2(int(key2))
        holders.append(SlotHolder(slot, scope, host, application_name, int(pid), since))
    holders.sort(key=lambda h: (h.scope, h.host_key or 0, h.slot))
    return holders


def format_slot_holders(holders: list[SlotHolder], now: datetime | None = None) -> str:
    """A small fixed-width table of `holders` for the terminal; says so plainly when no slot is held."""
    if not holders:
        return "no OCR slots held"
    header = ("SCOPE", "HOST", "SLOT", "BACKEND PID", "HELD SINCE", "FOR", "HOLDER")
    rows = [header]
    for h in holders:
        since = h.since.isoformat(timespec="seconds") if h.since else "-"
        held_for = "-"
        if h.since is not None:
            reference = now or datetime.now(h.since.tzinfo)
            held_for = f"{max(0.0, (reference - h.since).total_seconds()):.1f}s"
        host = f"{h.host_key:06x}" if h.host_key is not None else "-"
        rows.append((h.scope, host, str(h.slot), str(h.pid), since, held_for, h.application_name or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)
