"""What the collector reader knows of the catalogue, and the check that lets a single OCR reading stand.

One reading is enough when the catalogue confirms it: the number exists in the snapped set, the printed total read
beside it is that set's total (when the total is known), and the card's name has that printing. Anything less is
read again. The same knowledge settles what OCR text alone cannot: which split of a digit run ("1297280") is the
number, and which of two look-alike set codes the token meant.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.parse import (
    CollectorParse,
    normalise_collector_number,
    snap_set_code,
)

Key = tuple[str, str]  # (set code, normalised collector number)
CODELESS_FRAMES = ("1993", "1997", "2003")
"""Scryfall frames whose collector line prints no set code: a set all of whose printings use them is codeless."""


@dataclass(frozen=True)
class ReadCatalog:
    """Set codes, each set's collector numbers and printed total (where known), each name's printings, and the
    sets whose collector line prints no set code (frames before 2015), when known."""

    set_codes: frozenset[str]
    numbers: Mapping[str, frozenset[str]]
    totals: Mapping[str, int]
    by_name: Mapping[str, tuple[Key, ...]]
    codeless: frozenset[str] | None = None

    @classmethod
    def build(cls, printings: Iterable[tuple[str, str, str]], totals: Mapping[str, int] | None = None,
              set_codes: Iterable[str] = (), codeless: Iterable[str] | None = None) -> ReadCatalog:
        """From (card name, set code, collector number) triples, printed totals by set code, any further set codes
        (sets without printings yet) and the sets printing no set code (None: unknown)."""
        numbers: dict[str, set[str]] = {}
        by_name: dict[str, list[Key]] = {}
        for name, set_code, number in printings:
            code, norm = set_code.lower(), normalise_collector_number(number)
            numbers.setdefault(code, set()).add(norm)
            by_name.setdefault(normalise_name(name.split(" // ")[0]), []).append((code, norm))
            if " // " in name:
                by_name.setdefault(normalise_name(name), []).append((code, norm))
        codes = frozenset(numbers) | {code.lower() for code in set_codes}
        return cls(
            set_codes=codes,
            numbers={code: frozenset(values) for code, values in numbers.items()},
            totals={code.lower(): total for code, total in (totals or {}).items()},
            by_name={name: tuple(dict.fromkeys(keys)) for name, keys in by_name.items()},
            codeless=None if codeless is None else frozenset(code.lower() for code in codeless),
        )

    def printings_of(self, name: str | None) -> tuple[Key, ...]:
        """(set code, normalised number) of every printing of `name` (the front face of "A // B" also matches)."""
        if not name:
            return ()
        key = normalise_name(name)
        return self.by_name.get(key) or self.by_name.get(normalise_name(name.split(" // ")[0]), ())


@dataclass(frozen=True)
class Resolution:
    """The number and set code a parse stands for, whether the catalogue confirms them, and whether it settles
    the printing beyond doubt: confirmed with the set code read, or with the set's known total read."""

    number: str | None
    total: int | None
    set_code: str | None  # snapped, lower case
    set_code_raw: str | None
    confirmed: bool = False
    settled: bool = False


def _total_fits(total: int | None, set_code: str, catalog: ReadCatalog) -> bool:
    known = catalog.totals.get(set_code)
    return total is None or known is None or total == known


def _snaps(parse: CollectorParse, known: Collection[str], name_sets: Collection[str]) -> list[tuple[str, str]]:
    """(raw token, code) for every token that snaps to a known code, then to one of the name's sets only."""
    out: list[tuple[str, str]] = []
    for token in parse.set_tokens:
        for pool in (known, name_sets):
            code = snap_set_code(token, pool) if pool else None
            if code is not None and (token, code) not in out:
                out.append((token, code))
                break
    return out


def resolve(parse: CollectorParse, known: Collection[str], catalog: ReadCatalog | None = None,
            name: str | None = None) -> Resolution:
    """The parse's (number, set code), confirmed when the catalogue holds that printing of `name`.

    A reading with a set code is confirmed when the name has that printing and the total read fits the set. One
    with no set-code token at all is confirmed when exactly one printing of the name has the number, in a set
    that prints no code (when the catalogue knows which do), and its set's total fits. Without a catalogue and
    name nothing is confirmed: the reader then wants readings that agree.
    """
    snaps = _snaps(parse, known, ())
    default_token = snaps[0][0] if snaps else next((t for t in parse.set_tokens if any(c.isalpha() for c in t)),
                                                     None)
    default = Resolution(parse.number, parse.total, snaps[0][1] if snaps else None, default_token)
    printings = catalog.printings_of(name) if catalog is not None else ()
    if catalog is None or not printings:
        return default
    snaps = _snaps(parse, known, {code for code, _ in printings})
    owned = set(printings)
    for number, total in parse.number_options:
        norm = normalise_collector_number(number)
        for token, code in snaps:
            if (code, norm) in owned and _total_fits(total, code, catalog):
                return Resolution(number, total, code, token, confirmed=True, settled=True)
        if not parse.set_tokens:
            matches = [code for code, value in printings if value == norm]
            codeless = catalog.codeless is None or (len(matches) == 1 and matches[0] in catalog.codeless)
            if len(matches) == 1 and codeless and _total_fits(total, matches[0], catalog):
                settled = total is not None and catalog.totals.get(matches[0]) == total
                return Resolution(number, total, None, None, confirmed=True, settled=settled)
    return default
