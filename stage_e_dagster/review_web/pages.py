"""Rendering for the review page: the Jinja templates, the static files, and the headers every response carries.

Templates autoescape everything. The Content-Security-Policy allows only this origin's scripts, styles and
images (no inline script), and no framing, so a scan's file name or OCR text can never run in the page.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
STATIC_TYPES = {"review.js": "text/javascript", "review.css": "text/css"}


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(loader=PackageLoader("stage_e_dagster.review_web", "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True,
                      undefined=StrictUndefined)
    env.filters["pct"] = lambda value: "-" if value is None else f"{round(float(value) * 100)}%"
    env.filters["show"] = lambda value: "-" if value in (None, "") else str(value)
    return env


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A template as an HTML response that is never cached."""
    body = _environment().get_template(name).render(**{"session": None, "counts": None, "flash": None, **context})
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


@lru_cache(maxsize=len(STATIC_TYPES))
def _static_body(name: str) -> bytes:
    return resources.files("stage_e_dagster.review_web").joinpath("static", name).read_bytes()


def static(name: str) -> Response:
    """One of the page's own static files (a fixed list: no path from the request reaches the file system)."""
    if name not in STATIC_TYPES:
        return Response("not found", status_code=404, media_type="text/plain")
    return Response(_static_body(name), media_type=STATIC_TYPES[name], headers={"Cache-Control": "max-age=300"})


def secure(response: Response) -> Response:
    """Add the security headers to a response."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
