"""Postgres array literals for set-based statements (`unnest(CAST(:x AS bigint[]))`, `= ANY(...)`).

psycopg2 renders a Python list as `ARRAY[v1, v2, ...]`, one SQL constant per element, which Postgres must parse and
plan one by one (about 130 ms for 20,000 ids). One `'{...}'` string literal per array costs a single constant.
"""

from __future__ import annotations

from collections.abc import Iterable


def int_array(values: Iterable[int | None]) -> str:
    """`{1,2,NULL}` for a bigint[] parameter."""
    return "{" + ",".join("NULL" if v is None else str(int(v)) for v in values) + "}"


def float_array(values: Iterable[float | None]) -> str:
    """`{0.85,NULL}` for a double precision[] parameter."""
    return "{" + ",".join("NULL" if v is None else repr(float(v)) for v in values) + "}"


def bool_array(values: Iterable[bool]) -> str:
    """`{t,f}` for a boolean[] parameter."""
    return "{" + ",".join("t" if v else "f" for v in values) + "}"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def text_array(values: Iterable[str | None]) -> str:
    """`{"a","b \\"c\\"",NULL}` for a text[] parameter; every element quoted, so any text round-trips."""
    return "{" + ",".join("NULL" if v is None else _quoted(v) for v in values) + "}"
