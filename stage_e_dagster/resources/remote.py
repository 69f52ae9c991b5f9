"""How Stage C fetches remote cards' bytes: the fleet-wide rate, this process's concurrency, limits and the cache.

No secret is a field here: a source names its credential set, and the secrets are read from the environment when a
batch opens the store (`settings.s3_credentials`), so they never reach run config, the UI or metadata.
"""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field
from sqlalchemy import Engine

from stage_e_dagster.settings import Settings, s3_credentials


class RemoteFetch(ConfigurableResource):
    """Stage C's fetching of remote cards (S3-compatible prefixes, HTTP manifests)."""

    rate: float = Field(default=Settings.fetch_rate, gt=0,
                        description="Object fetches per second, shared by every process on every host.")
    jitter_seconds: float = Field(default=Settings.fetch_jitter_seconds, ge=0,
                                  description="How late a request may reach the store without breaking the rate.")
    concurrency: int = Field(default=Settings.fetch_concurrency, ge=1,
                             description="Fetches this process has in flight at once.")
    timeout_seconds: float = Field(default=Settings.fetch_timeout_seconds, gt=0,
                                   description="A fetch not complete after this long is broken (fetch-timeout).")
    max_bytes: int = Field(default=Settings.fetch_max_bytes, ge=1,
                           description="A larger object is not fetched (fetch-too-large).")
    lockout_forbidden: int = Field(default=Settings.fetch_lockout_403s, ge=1,
                                   description="403s in a row from a source that answered before: a lockout trip.")
    broken_retries: int = Field(default=Settings.fetch_broken_retries, ge=1,
                                description="Broken fetches of one object before its skip is final.")
    recover_after: int = Field(default=Settings.fetch_recover_after, ge=1,
                               description="Clean responses in a row after which a halved pace doubles again.")
    fallback_share: float = Field(default=Settings.fetch_fallback_share, gt=0, le=1,
                                  description="Share of the rate one process uses while Postgres is unreachable.")
    cache_dir: str | None = Field(default=None, description="Where fetched bytes wait for extraction on this host; "
                                                            "None: fetch_cache under STAGE_E_HOME.")

    def fetcher(self, engine: Engine, run_id: str | None, log=lambda message: None):
        """The fetcher of one batch."""
        from stage_e_dagster.stages.stage_c_fetch import FetchSettings, RemoteFetcher

        cache = Path(self.cache_dir) if self.cache_dir else Settings.from_env().home / "fetch_cache"
        settings = FetchSettings(cache_dir=cache, rate=self.rate, jitter_seconds=self.jitter_seconds,
                                 concurrency=self.concurrency,
                                 timeout_seconds=self.timeout_seconds, max_bytes=self.max_bytes,
                                 lockout_forbidden=self.lockout_forbidden, broken_retries=self.broken_retries,
                                 recover_after=self.recover_after, fallback_share=self.fallback_share)
        return RemoteFetcher(engine, settings, s3_credentials, run_id=run_id, log=log)
