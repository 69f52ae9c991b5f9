"""Settings of consensus and review: the consensus policy and the review page."""

from __future__ import annotations

from dataclasses import dataclass

from stage_e_dagster.domain.consensus import POLICIES
from stage_e_dagster.setting_groups.declare import choice, comma_list, port, positive_float, setting


@dataclass(frozen=True)
class ReviewSettings:
    """The consensus policy and the review page (address, sign-in tokens, links, leases)."""

    consensus_policy: str = setting(
        "STAGE_E_CONSENSUS_POLICY", "funnel", "or `machine-quorum`", choice(*POLICIES), shown="`funnel`")
    review_host: str = setting(
        "STAGE_E_REVIEW_HOST", "127.0.0.1",
        "address `stage-e review serve` listens on; beyond loopback it needs a token", shown="`127.0.0.1`")
    review_port: int = setting(
        "STAGE_E_REVIEW_PORT", 8765, "port of the review page", port)
    review_token: str | None = setting(
        "STAGE_E_REVIEW_TOKEN", None, "token reviewers enter to sign in (required when set, and always beyond "
        "loopback)", shown="unset (beyond loopback: drawn at start and printed)", secret=True)
    review_admin_token: str | None = setting(
        "STAGE_E_REVIEW_ADMIN_TOKEN", None, "signing in with it makes a reviewer's votes admin votes",
        shown="unset: no admin votes on the page", secret=True)
    review_base_url: str | None = setting(
        "STAGE_E_REVIEW_BASE_URL", None, "the review page's address in links (Stage D metadata)",
        shown="`http://<host>:<port>`")
    review_allowed_hosts: tuple[str, ...] = comma_list(
        "STAGE_E_REVIEW_ALLOWED_HOSTS", (), "host names the review page answers to besides its own address, "
        "loopback names on a loopback bind, and the host of `STAGE_E_REVIEW_BASE_URL` (a request naming any other "
        "`Host` is refused)", shown="none")
    review_lease_seconds: float = setting(
        "STAGE_E_REVIEW_LEASE_SECONDS", 120.0, "how long a card one reviewer has open is kept from the others",
        positive_float, shown="120")
