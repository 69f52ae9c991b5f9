"""Names that say which cards still need work, shared by Stage C, the stream sensor and the backstop sweep.

A card needs Stage C when it has no *current* evidence (a row for its `content_sha256` whose extractor versions
cover every current version) and Stage C has not already logged a skip for those exact bytes (a skip's
`evidence_key` is the content hash it was judged on). A card needs Stage D when it has current evidence and
the current Stage D calculators have not decided on that evidence row yet (`image_evidence.decided_by`).
Cards whose file vanished are left alone.

A catalogue change re-opens a card for Stage D (no new OCR) when its candidate set changed: its name is the name,
or a face name, of a printing that was added, removed or changed (`candidate_names`), or a calculator's latest
conclusion on it is an abstention for lack of a printing (`LACK_OF_PRINTING`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from stage_e_dagster.domain.calculators import CALCULATORS, SLOW_PATH_ID, Calculator
from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.kinds import DEFAULT_MIN_DPI

STAGE_C_ID = "stage-c-extract-v1"
"""`card_scan_log.anonymous_id` of Stage C's named skips (unreadable, truncated, too large, missing file...)."""

LOAD_FAILURES = ("empty-file", "unreadable-image", "truncated-image", "too-large")
"""Skip reasons that count as failed image loads for the envelope's `image_failure_rate` bar."""

FILE_SKIPS = ("file-missing", "content-changed", "file-symlink", "not-a-regular-file", "outside-source",
              "file-too-large")
"""Skip reasons about the file rather than its pixels (`domain.scan_files.read_scan` names most of them): one
copy's file, never carried to its copies; re-ingest clears them by changing the content hash."""


def decided_by(registry: Sequence[Calculator] = CALCULATORS, *, min_dpi: int = DEFAULT_MIN_DPI,
               english_match: bool = False) -> str:
    """The `image_evidence.decided_by` mark Stage D leaves: every calculator id and the router's, then the
    eligibility settings it judged under, so adding a calculator, bumping a version or changing an eligibility
    setting changes it and re-opens every card for Stage D."""
    calculators = "+".join((*(calc.id for calc in registry), SLOW_PATH_ID))
    return f"{calculators};min-dpi={min_dpi};english-match={'on' if english_match else 'off'}"


def owed_stage(*, missing: bool, current: bool, decided: bool, skipped: bool, kind: str = "card",
               machine_voted: bool = False) -> str | None:
    """The work rule for one card (`db/work/rule.sql`'s `card_work_stage`, stated in Python): 'C', 'D' or None.

    `current`: it holds current evidence; `decided`: that evidence carries the current `decided_by` mark;
    `skipped`: Stage C logged a skip for its bytes; `machine_voted`: it holds a machine vote. A card back with
    current evidence is owed no Stage D, unless it still holds machine votes (from before it was a card back),
    which Stage D then withdraws.
    """
    if missing:
        return None
    if current:
        if kind == "cardback" and not machine_voted:
            return None
        return None if decided else "D"
    return None if skipped else "C"


DECIDED_BY = decided_by()


RETRY_BASE_SECONDS = 30.0
RETRY_CAP_SECONDS = 3600.0
THROTTLE_RETRY_SECONDS = 30.0


def retry_backoff(status: str) -> tuple[float, float, float]:
    """How long a card waits before it is offered again after a batch that held it ended with `status` without
    finishing it, as (first, base, cap): `first` seconds after its first such batch, then
    `min(base * 2**(attempts - 1), cap)` seconds, where `attempts` counts the earlier ones.

    A halted batch is the host's fault, not the card's: its cards come back as soon as nothing gates them (after
    the trip's acknowledgement). A throttled batch found no OCR slot: a short fixed wait. Anything else (failed,
    reclaimed, completed with the card still owed work) is retried at once the first time (the batch died, perhaps
    of something else), then backs off exponentially, so a poisonous card never loops hot.
    """
    if status == "halted":
        return 0.0, 0.0, 0.0
    if status == "throttled":
        return THROTTLE_RETRY_SECONDS, THROTTLE_RETRY_SECONDS, THROTTLE_RETRY_SECONDS
    return 0.0, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS


LACK_OF_PRINTING = ("no-candidates", "number-not-found", "unknown-set-code")
"""Calculator abstentions that say the catalogue lacked the printing (no printing of that name, none with that
collector number, an unknown set code): any catalogue change may supply it, so each change re-opens them."""


def candidate_names(printings: Iterable[tuple[str, Sequence[str] | None]]) -> set[str]:
    """The normalised card names whose candidate sets contain printings with these (normalised name, face names):
    the name itself, and each face's name (a double-faced card scanned and named by one face)."""
    names: set[str] = set()
    for name_normalised, faces in printings:
        names.add(name_normalised)
        names.update(normalise_name(face) for face in faces or ())
    return names
