"""URL helpers for the application database: the driver SQLAlchemy must use, a printable form, the libpq form.

These are the URL edge's tools: the commands, the resources and the test kit resolve a URL into an engine once
(`db.core.engine.get_engine`), and the dedicated advisory-lock connections turn an engine's URL into a libpq DSN.
They take a URL, string or `sqlalchemy.URL`, by nature.
"""

from __future__ import annotations

from urllib.parse import unquote_plus

from sqlalchemy.engine import URL, make_url


def normalise_url(url: str) -> str:
    """Force the psycopg2 driver: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername not in ("postgresql", "postgres"):
        return url
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def redact(url: str | URL) -> str:
    """A URL safe to print: the password hidden (an engine's URL is shown as it is written, not percent-encoded)."""
    parsed = make_url(url)
    if parsed.password is not None:
        return parsed.render_as_string(hide_password=True)
    if isinstance(url, str):
        return url
    base, _, query = parsed.render_as_string(hide_password=False).partition("?")
    return f"{base}?{unquote_plus(query)}" if query else base


def libpq_dsn(url: str | URL) -> str:
    """The libpq form of a SQLAlchemy URL (an engine's `url` too), for dedicated psycopg2 connections."""
    parsed = make_url(url)
    parts = {"dbname": parsed.database, "user": parsed.username, "password": parsed.password,
             "host": parsed.host or parsed.query.get("host"), "port": parsed.port}
    for key, value in parsed.query.items():
        if key != "host":
            parts[key] = value
    return " ".join(f"{k}='{_escape(str(v))}'" for k, v in parts.items() if v not in (None, ""))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
