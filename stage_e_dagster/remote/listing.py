"""Listing one remote source on the wire, as `control.intake.sync_source` and the `source_inbox` tick do: open its
store client, take the source's lock, list it page by page (S3) or read its manifest, hand what was listed to the
state layer (`db.intake.remote_sync`, which stores it and the pass's cursor), and say how it went as a `SourceSync`.

The wire calls the state layer here, never the reverse: `db/` holds the SQL of a listing, this module the requests.

A listing the store refused (throttled, forbidden, unreachable, a manifest too big or too slow) or a source this
process cannot open (a missing credential set) leaves the source as it was and says why (`unavailable`); a pass under
way resumes later (`listing`). The tick never waits for the lock: a source another process is syncing is skipped
(`busy`). A manifest read within a tick's budget is cut off at the end of the budget (whatever its server drips) and
left to a sync run (`too_big`). Whatever a store or a manifest sends, the outcome is one of these: bad input is
never an exception out of here (a database error still is).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from stage_e_dagster.db.intake.remote_sync import RemotePass, list_manifest, list_s3
from stage_e_dagster.db.intake.sources import SourceRow, SourceSync, source_lock
from stage_e_dagster.domain.addresses import shown_location
from stage_e_dagster.remote.stores import SourceConfigError, StoreError, client_for

Opener = Callable[[SourceRow], Any]
"""Opens a source row's store client (`remote.stores.client_for`; tests hand in a stand-in)."""


def sync_remote(engine: Engine, source: SourceRow, *, full: bool = False, budget_seconds: float | None = None,
                open_store: Opener = client_for) -> SourceSync:
    """List `source` (to the end without a budget; else until `budget_seconds` ran out) and merge its cards."""
    started = time.monotonic()

    def result(status: str, done: RemotePass | None = None, detail: str = "") -> SourceSync:
        sync = SourceSync(source.key, shown_location(source.location), status, full, kind=source.kind,
                          detail=detail, seconds=round(time.monotonic() - started, 3))
        if done is not None:
            sync.summary = done.summary
        return sync

    try:
        client = open_store(source)
    except SourceConfigError as err:
        return result("unavailable", detail=str(err))
    with source_lock(engine, source.id, wait=budget_seconds is None) as held:
        if not held:
            return result("busy", detail="another process is syncing it")
        try:
            if source.kind == "s3":
                done = list_s3(engine, source.id, client.pages, full=full, budget_seconds=budget_seconds)
            else:
                manifest = client.manifest
                if budget_seconds is not None:
                    manifest = partial(client.manifest, deadline=started + budget_seconds)
                done = list_manifest(engine, source.id, source.list_token, manifest, full=full,
                                     budget_seconds=budget_seconds)
        except StoreError as err:
            if source.kind == "http" and budget_seconds is not None and err.reason == "fetch-timeout":
                return result("too_big", detail=f"manifest not read within {budget_seconds:g} s; left to a sync run")
            return result("unavailable", detail=f"listing failed: {err.reason} ({err.status or 'no status'}) "
                                                f"{err.detail[:120]}")
        except SQLAlchemyError:
            raise
        except Exception as err:  # noqa: BLE001 - whatever a store or a manifest sent, one source never fails a tick
            return result("unavailable", detail=f"listing failed: {type(err).__name__}: {str(err)[:120]}")
    if done.complete:
        return result("synced", done, "manifest unchanged" if done.unchanged else f"{done.listed} listed")
    if source.kind == "s3":
        return result("listing", done, f"{done.listed} listed this time; the pass resumes after the last key")
    return result("too_big", done, f"manifest not read within {budget_seconds:g} s; left to a sync run")
