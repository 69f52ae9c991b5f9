"""URL helpers for the application database: the driver SQLAlchemy must use, a printable form, the libpq form."""

from __future__ import annotations

from sqlalchemy.engine import make_url


def normalise_url(url: str) -> str:
    """Force the psycopg2 driver: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername not in ("postgresql", "postgres"):
        return url
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def redact(url: str) -> str:
    """A URL safe to print: the password hidden."""
    parsed = make_url(url)
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)


def libpq_dsn(url: str) -> str:
    """The libpq form of a SQLAlchemy URL, for dedicated psycopg2 connections."""
    parsed = make_url(normalise_url(url))
    parts = {"dbname": parsed.database, "user": parsed.username, "password": parsed.password,
             "host": parsed.host or parsed.query.get("host"), "port": parsed.port}
    for key, value in parsed.query.items():
        if key != "host":
            parts[key] = value
    return " ".join(f"{k}='{_escape(str(v))}'" for k, v in parts.items() if v not in (None, ""))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")
