"""`stage-e review list` and `stage-e vote`: the human side of Stage D, as thin click shells over `db/`."""

from __future__ import annotations

import click

from stage_e_dagster.commands import app_engine, settings
from stage_e_dagster.domain.consensus import POLICIES
from stage_e_dagster.settings import default_note, var_name


def _show(value: object) -> str:
    return "-" if value in (None, "") else repr(value) if isinstance(value, str) else str(value)


@click.group()
def review() -> None:
    """The human review queue: cards the machines could not identify."""


@review.command("list")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=0), help="Show at most N cards.")
def review_list(limit: int) -> None:
    """Show queued cards (routed to review, still unresolved), oldest first, with what was read and why."""
    from stage_e_dagster.db.review.queue import review_queue, review_queue_size

    with app_engine().connect() as conn:
        total = review_queue_size(conn)
        items = review_queue(conn, limit)
    click.echo(f"{total} card{'s' if total != 1 else ''} awaiting review (showing {len(items)})")
    for item in items:
        click.echo(f"\ncard {item.card_id}  {item.identifier}")
        if item.copies > 1:
            click.echo(f"  copies: {item.copies} cards with these exact bytes; a vote on this card applies to each")
        click.echo(f"  name: {item.name}   hint: {_show(item.expansion_hint)}")
        if item.evidence is None:
            click.echo("  read: no evidence")
        else:
            click.echo(
                f"  read: number {_show(item.read('collector_raw'))} -> {_show(item.read('collector_number'))}, "
                f"set {_show(item.read('set_code_raw'))} -> {_show(item.read('set_code'))}, "
                f"copyright {_show(item.read('copyright_year'))}"
                + (", truncated image" if item.read("truncated") else "")
            )
        click.echo(f"  why: {', '.join(item.why) or '-'}")
        click.echo(f"  evidence version: {item.evidence_key or '-'}; routed {item.routed_at:%Y-%m-%d %H:%M:%S}; "
                   f"human votes: {item.human_votes}")


@review.command("show")
@click.argument("card_id", type=int)
def review_show(card_id: int) -> None:
    """Show CARD_ID's consensus, its copies (same bytes), its current votes and its archived vote history."""
    from stage_e_dagster.db.judgement.vote_archive import card_history

    with app_engine().connect() as conn:
        history = card_history(conn, card_id)
    if history is None:
        raise click.ClickException(f"no card has id {card_id}")
    click.echo(f"card {history.card_id}  {history.identifier}")
    click.echo(f"  name: {history.name}   consensus: {history.printing_status}"
               + (f" ({history.resolved})" if history.resolved else ""))
    others = [str(c) for c in history.copies if c != history.card_id]
    click.echo(f"  copies (same bytes): {', '.join(others) or 'none'}")
    click.echo(f"current votes ({len(history.current)}):")
    for line in history.current:
        click.echo(f"  {_vote_line(line)}")
    click.echo(f"archived votes ({len(history.archived)}), oldest first:")
    for line in history.archived:
        extra = f" ({line.detail['superseded_by']})" if line.detail.get("superseded_by") else ""
        click.echo(f"  {line.archived_at:%Y-%m-%d %H:%M:%S} {line.reason}{extra}: {_vote_line(line)}, "
                   f"archived by run {line.archived_by_run or '-'}")


def _vote_line(line) -> str:
    copy = f", applied from card {line.applied_from_card_id}" if line.applied_from_card_id else ""
    confidence = "" if line.confidence is None else f" conf {line.confidence:g}"
    return (f"{line.anonymous_id} ({line.source}): {line.printing}{confidence}; voted {line.voted_at:%Y-%m-%d %H:%M:%S}"
            f"{copy}, run {line.run_id or '-'}")


@review.command("serve")
@click.option("--host", help=f"Address to listen on ({default_note('review_host')}).")
@click.option("--port", type=click.IntRange(1, 65535), help=f"Port ({default_note('review_port')}).")
def review_serve(host: str | None, port: int | None) -> None:
    """Serve the review page: people confirm or correct the machine's pick, one key per card."""
    import uvicorn

    from stage_e_dagster.review_web.app import ReviewConfig, build_app
    from stage_e_dagster.review_web.remote_scans import RemoteScans
    from stage_e_dagster.review_web.security import is_loopback, new_token
    from stage_e_dagster.settings import review_page_url, s3_credentials
    from stage_e_dagster.stages.stage_c_fetch import FetchSettings

    conf = settings()
    host = host or conf.review_host
    port = port or conf.review_port
    token = conf.review_token
    drawn = token is None and not is_loopback(host)
    if drawn:
        token = new_token()
    engine = app_engine()
    config = ReviewConfig(engine=engine, policy=conf.consensus_policy, token=token,
                          admin_token=conf.review_admin_token, lease_seconds=conf.review_lease_seconds, port=port,
                          bind_host=host, base_url=conf.review_base_url, allowed_hosts=conf.review_allowed_hosts,
                          remote=RemoteScans(engine, FetchSettings.from_settings(conf), s3_credentials))
    shown = "[" + host + "]" if ":" in host else host
    click.echo(f"review page: http://{shown}:{port}/  (links from Dagster use {review_page_url(conf)})")
    if token is None:
        click.echo("access: a reviewer name; no token (loopback only)")
    else:
        origin = f"drawn for this run; set {var_name('review_token')} to keep one" if drawn else \
            f"from {var_name('review_token')}"
        click.echo(f"access token ({origin}): {token}")
    click.echo("admin votes: " + ("sign in with the admin token" if config.admin_token else
                                  f"off (set {var_name('review_admin_token')} to allow them)"))
    if not is_loopback(host) and not (conf.review_base_url or "").lower().startswith("https://"):
        click.echo(f"warning: served beyond loopback over plain HTTP; put it behind a TLS proxy and set "
                   f"{var_name('review_base_url')} to its https:// address (docs/deployment.md)", err=True)
    uvicorn.run(build_app(config), host=host, port=port, log_level="info", proxy_headers=False)


@click.command("vote")
@click.argument("card_id", type=int)
@click.option("--printing", "scryfall_id", metavar="SCRYFALL_ID", help="The printing the scan shows.")
@click.option("--no-match", is_flag=True, help="The scan shows no printing in the catalogue.")
@click.option("--user", required=True, help="Who votes (their previous vote on this card is replaced).")
@click.option("--admin", is_flag=True, help="Vote as an admin (weight 5 instead of 1).")
@click.option("--policy", type=click.Choice(POLICIES),
              help=f"Consensus policy for recomputing the card ({default_note('consensus_policy')}).")
def vote(card_id: int, scryfall_id: str | None, no_match: bool, user: str, admin: bool, policy: str | None) -> None:
    """Cast a human vote on CARD_ID (--printing SCRYFALL_ID or --no-match) and recompute its consensus."""
    from stage_e_dagster.db.judgement.votes import VoteError, cast_human_vote

    if (scryfall_id is None) == (not no_match):
        raise click.UsageError("give exactly one of --printing SCRYFALL_ID and --no-match")
    policy = policy or settings().consensus_policy
    try:
        result = cast_human_vote(app_engine(), card_id, user, scryfall_id=scryfall_id, no_match=no_match,
                                 admin=admin, policy=policy)
    except VoteError as err:
        raise click.ClickException(str(err)) from err
    said = f"printing {scryfall_id}" if result.printing_id is not None else "no match"
    how = "recorded" if result.recorded else "unchanged (already voted)"
    click.echo(f"card {card_id}: {user} ({'admin' if admin else 'user'}) says {said}: {how}")
    if result.copies:
        click.echo(f"applied to its copies (same bytes): {', '.join(map(str, result.copies))}")
    outcome = result.printing_status
    if result.resolved_printing_id is not None:
        outcome += f" (printing id {result.resolved_printing_id})"
    click.echo(f"consensus ({policy}): {outcome}" + ("" if outcome != "unresolved" else f" - {result.reason}"))
