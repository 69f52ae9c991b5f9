"""64-bit hash arithmetic on signed integers (how Postgres BIGINT stores hashes), with no imaging imports, so
the calculators can compare hashes without loading PIL, numpy or scipy."""

from __future__ import annotations

_MASK64 = (1 << 64) - 1


def to_signed64(value: int) -> int:
    """An unsigned 64-bit value as the signed integer with the same bits."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def to_unsigned64(value: int) -> int:
    """A signed 64-bit value as the unsigned integer with the same bits."""
    return value & _MASK64


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two 64-bit hashes (signed or unsigned)."""
    return ((a ^ b) & _MASK64).bit_count()
