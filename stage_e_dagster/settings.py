"""Every setting of stage-e-dagster: one typed object, read once from the environment.

Each field of `Settings` names its environment variable, its default and its meaning; `Settings.from_env()` reads
and validates them all, and a bad value fails with a message naming the variable and the form it wants. The fields
are declared by concern in `setting_groups` (place, OCR and envelope, stream and schedules, sources and remote
fetch, consensus and review, eligibility), and `Settings` is made of those groups: this module stays the one map
every caller imports. The README's configuration table is generated from these fields (`tools/readme_tables.py`)
and a test keeps the two equal. Every knob an operator may need is a field here, including every resource's;
internal constants (heartbeat period, grace periods, retry base) stay in the module that owns them, each with its
reason.

Nothing else in the package reads the environment; `runtime.py` only writes to it, for the processes it starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from stage_e_dagster.domain.kinds import Conventions
from stage_e_dagster.domain.remote import CREDENTIAL_NAME, Credentials
from stage_e_dagster.setting_groups.declare import path, setting
from stage_e_dagster.setting_groups.eligibility import EligibilitySettings
from stage_e_dagster.setting_groups.ocr import EnvelopeSettings, OcrSettings
from stage_e_dagster.setting_groups.places import PlaceSettings, SuiteSettings
from stage_e_dagster.setting_groups.review import ReviewSettings
from stage_e_dagster.setting_groups.sources import SourceSettings
from stage_e_dagster.setting_groups.stream import ScheduleSettings, StreamSettings

__all__ = ["CREDENTIAL_PARTS", "Settings", "SettingsError", "conventions", "credential_variables", "default_note",
           "review_page_url", "s3_credentials", "setting", "var_name"]


class SettingsError(ValueError):
    """An environment variable holds a value its setting cannot take; the message names both."""


@dataclass(frozen=True)
class Settings(SuiteSettings, EligibilitySettings, ReviewSettings, ScheduleSettings, SourceSettings, StreamSettings,
               EnvelopeSettings, OcrSettings, PlaceSettings):
    """The whole configuration. Unset variables take their defaults; `None` means "work it out" (see meaning).

    A dataclass takes its bases' fields last base first, so the groups are listed in reverse: the fields run from
    `PlaceSettings` to `SuiteSettings`, the order of the README's configuration table."""

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
            settings = cls(**{**values, "home": path(str(settings.home))})
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


CREDENTIAL_PARTS = ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "SESSION_TOKEN")


def credential_variables(name: str) -> tuple[str, str, str]:
    """The environment variables of credential set `name`: `STAGE_E_S3_CREDENTIALS_<NAME>_ACCESS_KEY_ID`,
    `..._SECRET_ACCESS_KEY` and (optional) `..._SESSION_TOKEN`."""
    base = f"STAGE_E_S3_CREDENTIALS_{name.upper()}_"
    return tuple(base + part for part in CREDENTIAL_PARTS)  # type: ignore[return-value]


def s3_credentials(name: str | None, environ: Mapping[str, str] | None = None) -> Credentials | None:
    """Credential set `name` from the environment (None for an anonymous source, `name` None). A set that is named
    but not configured is a SettingsError naming the variables to set. The secrets live only here and in the store
    client: never in the database, run config, metadata or logs."""
    if name is None:
        return None
    if not CREDENTIAL_NAME.match(name):
        raise SettingsError(f"credential set {name!r}: letters, digits and _ only")
    env = os.environ if environ is None else environ
    key_var, secret_var, token_var = credential_variables(name)
    key, secret = env.get(key_var, "").strip(), env.get(secret_var, "").strip()
    if not key or not secret:
        raise SettingsError(f"credential set {name!r} is not configured: set {key_var} and {secret_var}")
    return Credentials(key, secret, env.get(token_var, "").strip() or None)
