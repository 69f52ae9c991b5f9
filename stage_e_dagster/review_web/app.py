"""The review page: a small Starlette app where people confirm or correct the machine's pick, one key per card.

Flow: sign in (a reviewer name; the access token when one is required; optionally the admin token) -> `/next`
claims the reviewer's next card (`db.review.claims`) and redirects to `/card/<id>` -> a number key votes for a
candidate, `n` votes no-match, `s` skips -> the vote goes through `db.judgement.votes.cast_human_vote` (the code
`stage-e vote` uses) with the page's precondition (`db.review.page.page_vote_check`) -> the claim is released and
the next card is claimed in the same request, so it loads at once.

Every request is first checked against the hosts the page serves (`security.HostPolicy`). A card of a remote
source shows its scan through `review_web.remote_scans` (the fetch cache, else one fetch in the fleet's rate).
Numbers from the URL are read strictly (`domain.numbers`): anything but a plain number in range is "no such card"
or the first page, never an error.

Database and image work runs in the thread pool; handlers only parse, check and render.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from stage_e_dagster.db.judgement.votes import VoteError, cast_human_vote, check_user_name
from stage_e_dagster.db.review import claims as review_claims
from stage_e_dagster.db.review.page import (
    NotACandidate,
    StaleEntry,
    card_corners,
    labels_of,
    load_card_view,
    page_vote_check,
    queue_counts,
    queue_entries,
    scan_location,
)
from stage_e_dagster.domain.numbers import parse_count
from stage_e_dagster.review_web import files
from stage_e_dagster.review_web.pages import render, secure, static
from stage_e_dagster.review_web.security import (
    SESSION_SECONDS,
    HostCheck,
    HostPolicy,
    Session,
    SessionCodec,
    cross_site,
    tokens_equal,
)

GRID_PAGE = 48
MAX_GRID_PAGE = 10**9
MAX_BODY = 16 * 1024


@dataclass(frozen=True)
class ReviewConfig:
    """How the app runs: its database's engine, consensus policy, tokens (None: not required / no admin votes), the
    claim lease, the port (which names the session cookie, so pages on two ports do not sign each other out), the
    address it listens on, its base URL and the other host names it answers to (`security.HostPolicy`; an https base
    URL makes its cookies Secure), and how it reads remote scans (`remote_scans.RemoteScans`; None: it shows none)."""

    engine: Engine
    policy: str = "funnel"
    token: str | None = None
    admin_token: str | None = None
    lease_seconds: float = 120.0
    port: int = 8765
    secret: bytes | None = None
    bind_host: str = "127.0.0.1"
    base_url: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    remote: Any = None

    def __repr__(self) -> str:  # the database URL and the tokens are secrets
        return f"ReviewConfig(policy={self.policy!r}, port={self.port}, token_required={self.token is not None})"


class Refusal(Exception):
    """A request the page refuses: the status code and the message shown."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


Handler = Callable[[Request, Session], Awaitable[Response]]


class ReviewApp:
    """The routes and the state they share (config, session signing)."""

    def __init__(self, config: ReviewConfig) -> None:
        self.config = config
        self.codec = SessionCodec(config.secret)
        self.cookie = f"stage_e_review_{config.port}"
        self.tls = bool(config.base_url and config.base_url.lower().startswith("https://"))

    # --- plumbing -------------------------------------------------------------------------------------------
    def session(self, request: Request) -> Session | None:
        return self.codec.loads(request.cookies.get(self.cookie))

    def finish(self, response: Response, session: Session | None) -> Response:
        if session is not None:
            response.set_cookie(self.cookie, self.codec.dumps(session), max_age=SESSION_SECONDS, httponly=True,
                                samesite="strict", path="/", secure=self.tls)
        return secure(response)

    def db(self, work: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        def run() -> Any:
            with self.config.engine.begin() as conn:
                return work(conn, *args)
        return run_in_threadpool(run)

    @staticmethod
    async def form(request: Request) -> dict[str, str]:
        body = await request.body()
        if len(body) > MAX_BODY:
            raise Refusal(413, "That form is too large.")
        try:
            fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
        except (UnicodeDecodeError, ValueError) as err:
            raise Refusal(400, "That form could not be read.") from err
        return {key: values[0] for key, values in fields.items()}

    def check_post(self, request: Request, session: Session | None, fields: dict[str, str]) -> Session:
        """A POST must come from this site and carry the session's CSRF token."""
        if cross_site(request.headers, request.headers.get("host")):
            raise Refusal(403, "Refused: this form was sent from another site.")
        if session is None or not tokens_equal(fields.get("csrf"), session.csrf):
            raise Refusal(403, "Refused: the form's security token is missing or out of date. Reload the page.")
        return session

    def guarded(self, handler: Handler, *, post: bool = False, plain: bool = False) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            session = self.session(request)
            try:
                if post:
                    request.state.fields = await self.form(request)
                    self.check_post(request, session, request.state.fields)
                if session is None or not session.reviewer or not session.authed:
                    if plain:
                        return secure(Response("sign in first", status_code=401, media_type="text/plain"))
                    session = session or Session()
                    return self.finish(self.signin_page(session, "Sign in first.", 401), session)
                response = await handler(request, session)
            except Refusal as refusal:
                if plain:
                    return secure(Response(refusal.message, status_code=refusal.status, media_type="text/plain"))
                return self.finish(render("message.html", refusal.status, message=refusal.message,
                                          session=session, continue_to="/next"), session)
            return self.finish(response, None if plain else session)
        return endpoint

    def signin_page(self, session: Session, error: str | None = None, status: int = 200) -> Response:
        return render("signin.html", status, session=session, error=error,
                      token_required=self.config.token is not None, admin_enabled=self.config.admin_token is not None)

    @staticmethod
    def card_id(request: Request) -> int:
        found = parse_count(request.path_params["card_id"])
        if found is None:
            raise Refusal(404, "There is no such card.")
        return found

    # --- sign in and out ------------------------------------------------------------------------------------
    async def index(self, request: Request) -> Response:
        session = self.session(request)
        if session is not None and session.reviewer and session.authed:
            return self.finish(RedirectResponse("/next", 303), session)
        session = session or Session()
        return self.finish(self.signin_page(session), session)

    async def signin(self, request: Request) -> Response:
        session = self.session(request)
        try:
            fields = await self.form(request)
            session = self.check_post(request, session, fields)
        except Refusal as refusal:
            fresh = Session()
            return self.finish(self.signin_page(fresh, refusal.message, refusal.status), fresh)
        if self.config.token is not None and not tokens_equal(fields.get("token"), self.config.token):
            return self.finish(self.signin_page(session, "Wrong access token.", 401), session)
        try:
            reviewer = check_user_name(fields.get("reviewer", ""))
        except VoteError as err:
            return self.finish(self.signin_page(session, f"Reviewer name: {err}.", 400), session)
        admin = False
        if fields.get("admin_token"):
            if self.config.admin_token is None:
                return self.finish(self.signin_page(session, "Admin votes are not enabled on this server.", 400),
                                   session)
            if not tokens_equal(fields["admin_token"], self.config.admin_token):
                return self.finish(self.signin_page(session, "Wrong admin token.", 401), session)
            admin = True
        signed = Session(reviewer=reviewer, authed=True, admin=admin)
        return self.finish(RedirectResponse("/next", 303), signed)

    async def signout(self, request: Request, session: Session) -> Response:
        await self.db(review_claims.release_all, session.reviewer)
        fresh = Session()
        for name in vars(fresh):  # the wrapper stores this session object: empty it
            setattr(session, name, getattr(fresh, name))
        return RedirectResponse("/", 303)

    # --- the queue ------------------------------------------------------------------------------------------
    async def go_next(self, session: Session) -> RedirectResponse:
        """Claim the reviewer's next card and redirect to it (to `/next`, which says so, when none is left)."""
        nxt = await run_in_threadpool(review_claims.claim_next, self.config.engine, session.reviewer,
                                      self.config.lease_seconds, session.skipped)
        if nxt.card_id is None:
            return RedirectResponse("/next", 303)
        then = f"?then={nxt.then}" if nxt.then is not None else ""
        return RedirectResponse(f"/card/{nxt.card_id}{then}", 303)

    async def next_card(self, request: Request, session: Session) -> Response:
        redirect = await self.go_next(session)
        if redirect.headers["location"] != "/next":
            return redirect
        counts = await self.db(queue_counts, session.reviewer)
        flash, session.flash = session.flash, None
        return render("done.html", session=session, counts=counts, flash=flash)

    async def card(self, request: Request, session: Session) -> Response:
        card_id = self.card_id(request)

        def work(conn: Any) -> tuple[Any, str | None]:
            view = load_card_view(conn, card_id, self.config.policy)
            if view is None:
                return None, None
            mine = any(v.voter == session.reviewer for v in view.human_votes)
            held = None
            if view.awaiting and not mine:
                held = review_claims.claim(conn, card_id, session.reviewer, self.config.lease_seconds)
            return view, held

        view, held_by = await self.db(work)
        if view is None:
            raise Refusal(404, f"No card has id {card_id}.")
        then = parse_count(request.query_params.get("then"))
        flash, session.flash = session.flash, None
        return render("card.html", session=session, view=view, held_by=held_by, flash=flash,
                      then=then, admin_enabled=self.config.admin_token is not None,
                      lease_ms=int(self.config.lease_seconds * 1000),
                      my_vote=next((v for v in view.human_votes if v.voter == session.reviewer), None))

    async def counts(self, request: Request, session: Session) -> Response:
        counts = await self.db(queue_counts, session.reviewer)
        return JSONResponse(vars(counts), headers={"Cache-Control": "no-store"})

    async def grid(self, request: Request, session: Session) -> Response:
        number = max(1, parse_count(request.query_params.get("page"), MAX_GRID_PAGE) or 1)

        def work(conn: Any) -> tuple[Any, Any]:
            entries = queue_entries(conn, reviewer=session.reviewer, limit=GRID_PAGE + 1,
                                    offset=(number - 1) * GRID_PAGE)
            return entries, queue_counts(conn, session.reviewer)

        entries, counts = await self.db(work)
        return render("grid.html", session=session, entries=entries[:GRID_PAGE], counts=counts, page=number,
                      more=len(entries) > GRID_PAGE)

    # --- voting ---------------------------------------------------------------------------------------------
    async def vote(self, request: Request, session: Session) -> Response:
        card_id = self.card_id(request)
        fields = request.state.fields
        choice, version = fields.get("choice", "").strip(), fields.get("version", "")
        admin = fields.get("admin") == "1"
        if admin and not session.admin:
            raise Refusal(403, "Admin votes need the admin token: sign in again with it. Nothing was recorded.")
        if not choice:
            raise Refusal(400, "Choose a candidate, no match, or skip. Nothing was recorded.")
        no_match = choice == "no-match"
        check = page_vote_check(card_id, session.reviewer, version, "admin" if admin else "user", self.config.policy)
        try:
            result = await run_in_threadpool(
                cast_human_vote, self.config.engine, card_id, session.reviewer,
                scryfall_id=None if no_match else choice, no_match=no_match, admin=admin, policy=self.config.policy,
                check=check)
        except StaleEntry as err:
            raise Refusal(409, str(err)) from err
        except NotACandidate as err:
            raise Refusal(400, str(err)) from err
        except VoteError as err:
            status = 404 if str(err).startswith("no card") else 400
            raise Refusal(status, f"{err}. Nothing was recorded.") from err
        labels = await self.db(labels_of, [p for p in (result.printing_id, result.resolved_printing_id) if p])
        said = labels.get(result.printing_id, "no match") if result.printing_id else "no match"
        how = "unchanged (you had already voted that)" if result.write.already_voted else "recorded"
        outcome = result.printing_status.replace("_", " ")
        if result.resolved_printing_id:
            outcome += f" as {labels.get(result.resolved_printing_id, result.resolved_printing_id)}"
        session.flash = f"Card {card_id}: you said {said}, {how}{' as admin' if admin else ''}. Consensus: {outcome}."
        await self.db(review_claims.release, card_id, session.reviewer)
        return await self.go_next(session)

    async def skip(self, request: Request, session: Session) -> Response:
        card_id = self.card_id(request)
        session.skip(card_id)
        await self.db(review_claims.release, card_id, session.reviewer)
        session.flash = f"Card {card_id} skipped."
        return await self.go_next(session)

    async def unskip(self, request: Request, session: Session) -> Response:
        session.skipped = []
        return RedirectResponse("/next", 303)

    async def renew(self, request: Request, session: Session) -> Response:
        card_id = self.card_id(request)
        held_by = await self.db(review_claims.claim, card_id, session.reviewer, self.config.lease_seconds)
        return JSONResponse({"held_by": held_by})

    # --- images ---------------------------------------------------------------------------------------------
    async def scan_bytes(self, card_id: int) -> tuple[bytes, str]:
        """The scan's bytes and media type (by content: PNG, JPEG or WebP only), from its source directory or, for
        a remote card, through `remote_scans`."""
        where = await self.db(scan_location, card_id)
        if where is None:
            raise Refusal(404, "no such card")
        try:
            if where.remote:
                if self.config.remote is None:
                    raise files.ScanRefused("this server reads no remote scans")
                data = await run_in_threadpool(self.config.remote.read, where)
            else:
                data, _ = await run_in_threadpool(files.read_scan, where.location, where.identifier)
            return data, files.media_type(data)
        except files.ScanRefused as err:
            raise Refusal(404, "scan not available") from err

    async def scan(self, request: Request, session: Session) -> Response:
        data, media_type = await self.scan_bytes(self.card_id(request))
        return Response(data, media_type=media_type, headers={"Cache-Control": "private, max-age=300"})

    async def crop(self, request: Request, session: Session) -> Response:
        which = request.path_params["which"]
        if which not in files.CROPS:
            raise Refusal(404, "no such crop")
        card_id = self.card_id(request)
        data, _ = await self.scan_bytes(card_id)
        corners = await self.db(card_corners, card_id)
        try:
            png = await run_in_threadpool(files.crop, data, which, corners)
        except files.ScanRefused as err:
            raise Refusal(404, "scan not readable") from err
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})

    async def thumb(self, request: Request, session: Session) -> Response:
        card_id = self.card_id(request)
        data, _ = await self.scan_bytes(card_id)
        corners = await self.db(card_corners, card_id)
        try:
            jpeg = await run_in_threadpool(files.thumbnail, data, 320, corners)
        except files.ScanRefused as err:
            raise Refusal(404, "scan not readable") from err
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=300"})

    async def static_file(self, request: Request) -> Response:
        return secure(static(request.path_params["name"]))

    def routes(self) -> list[Route]:
        g = self.guarded
        return [
            Route("/", self.index),
            Route("/signin", self.signin, methods=["POST"]),
            Route("/signout", g(self.signout, post=True), methods=["POST"]),
            Route("/next", g(self.next_card)),
            Route("/grid", g(self.grid)),
            Route("/counts", g(self.counts, plain=True)),
            Route("/unskip", g(self.unskip, post=True), methods=["POST"]),
            Route("/card/{card_id}", g(self.card)),
            Route("/card/{card_id}/vote", g(self.vote, post=True), methods=["POST"]),
            Route("/card/{card_id}/skip", g(self.skip, post=True), methods=["POST"]),
            Route("/card/{card_id}/claim", g(self.renew, post=True), methods=["POST"]),
            Route("/card/{card_id}/scan", g(self.scan, plain=True)),
            Route("/card/{card_id}/crop/{which}.png", g(self.crop, plain=True)),
            Route("/card/{card_id}/thumb.jpg", g(self.thumb, plain=True)),
            Route("/static/{name}", self.static_file),
        ]


def build_app(config: ReviewConfig) -> Starlette:
    """The review page as an ASGI app."""
    policy = HostPolicy.serving(config.bind_host, config.base_url, config.allowed_hosts)
    return Starlette(routes=ReviewApp(config).routes(), max_body_size=MAX_BODY,
                     middleware=[Middleware(HostCheck, policy=policy)])
