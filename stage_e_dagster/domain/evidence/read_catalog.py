"""What the collector reader knows of the catalogue, and the check that lets a single OCR reading stand.

One reading is enough when the catalogue confirms it: the number exists in the snapped set, the printed total read
beside it is that set's total (when the total is known), the card's name has that printing, and no other printing
of the name that the reading could also stand for (a longer number it could be a piece of, a suffixed twin:
`fragments`) is left once the set code, the total and the layout have had their say. Anything less is read again.
The same knowledge settles what OCR text alone cannot: which split of a digit run ("1297280") is the number, and
which of two look-alike set codes the token meant.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from zlib import crc32

from stage_e_dagster.domain.catalog import normalise_name
from stage_e_dagster.domain.evidence.fragments import rivalry
from stage_e_dagster.domain.evidence.parse import CollectorParse, normalise_collector_number
from stage_e_dagster.domain.evidence.set_codes import snap_set_code
from stage_e_dagster.domain.printed_lines import CODE_LAYOUTS, RARITY_FIRST, layout_bits, layouts_in

Key = tuple[str, str]  # (set code, normalised collector number)
CODELESS_FRAMES = ("1993", "1997", "2003")
"""Scryfall frames whose collector line prints no set code: a set all of whose printings use them is codeless."""


@dataclass(frozen=True, eq=False)
class NameIndex:
    """Each normalised name's printings, packed: the names are one UTF-8 blob cut by `name_ends`, found through an
    open-addressing hash table (`slots`, crc32 of the name, linear probing: a lookup costs the same at any size);
    a name's printings are the slice `keys[key_starts[i]:key_starts[i + 1]]`, each key `set index << 32 | number
    index` into the interned `codes` and `numbers`. About 60 bytes a name, its printings included, where dicts of
    tuples take about 470 (docs/performance.md); it pickles as a few flat buffers."""

    blob: bytes
    name_ends: array  # 'I': end offset of name i in `blob`
    slots: array  # 'I': name index + 1, or 0 for an empty slot; its length is a power of two
    key_starts: array  # 'I': len(names) + 1 offsets into `keys`
    keys: array  # 'Q'
    codes: tuple[str, ...]
    numbers: tuple[str, ...]

    @classmethod
    def build(cls, by_name: Mapping[str, Iterable[Key]]) -> NameIndex:
        code_ids: dict[str, int] = {}
        number_ids: dict[str, int] = {}
        blob = bytearray()
        name_ends, key_starts, keys = array("I"), array("I", [0]), array("Q")
        size = 1 << max(3, (2 * len(by_name)).bit_length())
        slots = array("I", bytes(4 * size))
        for index, (name, printings) in enumerate(by_name.items()):
            encoded = name.encode()
            blob += encoded
            name_ends.append(len(blob))
            slot = crc32(encoded) & (size - 1)
            while slots[slot]:
                slot = (slot + 1) & (size - 1)
            slots[slot] = index + 1
            for code, number in printings:
                keys.append(code_ids.setdefault(code, len(code_ids)) << 32
                            | number_ids.setdefault(number, len(number_ids)))
            key_starts.append(len(keys))
        return cls(bytes(blob), name_ends, slots, key_starts, keys, tuple(code_ids), tuple(number_ids))

    def __len__(self) -> int:
        return len(self.name_ends)

    def _find(self, name: str) -> int | None:
        encoded = name.encode()
        mask = len(self.slots) - 1
        slot = crc32(encoded) & mask
        while index := self.slots[slot]:
            index -= 1
            start = self.name_ends[index - 1] if index else 0
            if self.blob[start:self.name_ends[index]] == encoded:
                return index
            slot = (slot + 1) & mask
        return None

    def get(self, name: str) -> tuple[Key, ...]:
        """The printings of the normalised `name`, in the order they were given; () when it has none."""
        index = self._find(name)
        if index is None:
            return ()
        codes, numbers = self.codes, self.numbers
        return tuple((codes[key >> 32], numbers[key & 0xFFFFFFFF])
                     for key in self.keys[self.key_starts[index]:self.key_starts[index + 1]])

    def all_keys(self) -> Iterator[Key]:
        for key in self.keys:
            yield self.codes[key >> 32], self.numbers[key & 0xFFFFFFFF]

    def bytes_held(self) -> int:
        """The packed buffers' size (the interned strings are counted by the caller that wants them)."""
        return len(self.blob) + sum(a.itemsize * len(a) for a in (self.name_ends, self.slots, self.key_starts,
                                                                    self.keys))

    def _state(self) -> tuple:
        return (self.blob, self.name_ends, self.slots, self.key_starts, self.keys, self.codes, self.numbers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NameIndex) and self._state() == other._state()

    def __hash__(self) -> int:
        return hash((self.blob, len(self.keys)))


@dataclass(frozen=True)
class ReadCatalog:
    """Set codes, each set's collector numbers and printed total (where known), each name's printings, and the
    sets whose collector line prints no set code (frames before 2015), when known.

    The names' printings are packed (`NameIndex`): one OCR worker carries the whole catalogue, and a full Scryfall
    file has hundreds of thousands of printings. `numbers` is derived from them when asked for."""

    set_codes: frozenset[str]
    totals: Mapping[str, int]
    by_name: NameIndex
    codeless: frozenset[str] | None = None
    layouts: Mapping[str, int] | None = None
    """Each set's collector-line layouts (`printed_lines.layout_bits`); None: unknown."""

    @classmethod
    def build(cls, printings: Iterable[tuple[str, str, str]], totals: Mapping[str, int] | None = None,
              set_codes: Iterable[str] = (), codeless: Iterable[str] | None = None,
              layouts: Mapping[str, Iterable[str | None]] | None = None) -> ReadCatalog:
        """From (card name, set code, collector number) triples, printed totals by set code, any further set codes
        (sets without printings yet), the sets printing no set code (None: unknown) and each set's layouts (None:
        unknown). A triple given twice counts once."""
        by_name: dict[str, dict[Key, None]] = {}
        codes: set[str] = set()
        interned: dict[str, str] = {}
        for name, set_code, number in printings:
            code = interned.setdefault(set_code.lower(), set_code.lower())
            norm = normalise_collector_number(number)
            key = (code, interned.setdefault(norm, norm))
            codes.add(code)
            by_name.setdefault(normalise_name(name.split(" // ")[0]), {})[key] = None
            if " // " in name:
                by_name.setdefault(normalise_name(name), {})[key] = None
        return cls(
            set_codes=frozenset(codes) | {code.lower() for code in set_codes},
            totals={code.lower(): total for code, total in (totals or {}).items()},
            by_name=NameIndex.build(by_name),
            codeless=None if codeless is None else frozenset(code.lower() for code in codeless),
            layouts=None if layouts is None else {code.lower(): layout_bits(kinds) for code, kinds in layouts.items()},
        )

    @cached_property
    def numbers(self) -> Mapping[str, frozenset[str]]:
        """Each set's normalised collector numbers (sets with printings only)."""
        out: dict[str, set[str]] = {}
        for code, number in self.by_name.all_keys():
            out.setdefault(code, set()).add(number)
        return {code: frozenset(values) for code, values in out.items()}

    def layouts_of(self, set_code: str) -> tuple[str, ...] | None:
        """The collector-line layouts the set prints, newest first; None when unknown."""
        if self.layouts is None or set_code not in self.layouts:
            return None
        return layouts_in(self.layouts[set_code])

    def expected_layouts(self, name: str | None) -> frozenset[str] | None:
        """The collector-line layouts the printings of `name` print; None when unknown (no name, no printings, or
        a set whose layouts the catalogue does not know)."""
        if self.layouts is None:
            return None
        bits = 0
        for code, _ in self.printings_of(name):
            if code not in self.layouts:
                return None
            bits |= self.layouts[code]
        return frozenset(layouts_in(bits)) if bits else None

    def printings_of(self, name: str | None) -> tuple[Key, ...]:
        """(set code, normalised number) of every printing of `name` (the front face of "A // B" also matches)."""
        if not name:
            return ()
        key = normalise_name(name)
        return self.by_name.get(key) or self.by_name.get(normalise_name(name.split(" // ")[0]))


@dataclass(frozen=True)
class Resolution:
    """The number and set code a parse stands for, whether the catalogue confirms them, and whether it settles
    the printing beyond doubt: confirmed with the set code read, or with the set's known total read.
    `settled_if_agreed`: the one doubt is a neighbour one digit away in the same set (the basic lands of a set),
    which a second read that agrees removes; with it the printing is settled as above."""

    number: str | None
    total: int | None
    set_code: str | None  # snapped, lower case
    set_code_raw: str | None
    confirmed: bool = False
    settled: bool = False
    settled_if_agreed: bool = False


def _total_fits(total: int | None, set_code: str, catalog: ReadCatalog) -> bool:
    known = catalog.totals.get(set_code)
    return total is None or known is None or total == known


def _bare(parse: CollectorParse, total: int | None, set_code: str, catalog: ReadCatalog) -> bool:
    """Whether a reading is a bare number where its set prints a total: no slash seen (no total read, not even a cut
    one) and no rarity-first line. Digits in garbage ("€ 20 Wo 0d e Ct bs 20") are such, and a name's printing
    that happens to carry them is no confirmation; agreeing reads still may accept it."""
    return total is None and parse.total is None and parse.layout != RARITY_FIRST and \
        catalog.totals.get(set_code) is not None


def _total_near(total: int | None, set_code: str, catalog: ReadCatalog) -> bool:
    """Whether a total read differs from the set's known total in one digit of as many ("591" for "391", "30.3" for
    "363"): small blurred type misreads a digit of the total as often as one of the number."""
    known = catalog.totals.get(set_code)
    if total is None or known is None or total == known or len(str(total)) != len(str(known)):
        return False
    return sum(a != b for a, b in zip(str(total), str(known), strict=True)) == 1


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


def _layout_fits(layout: str | None, set_code: str, catalog: ReadCatalog) -> bool:
    """Whether a set may print what a reading's layout says: a code layout (modern, rarity first) against a set
    printing one, a legal-line layout against a set printing none (the 2003 and 1997 frames are one family: where
    a legal line is centred is geometry, not text)."""
    printed = catalog.layouts_of(set_code)
    if layout is None or printed is None:
        return True
    return any((kind in CODE_LAYOUTS) == (layout in CODE_LAYOUTS) for kind in printed)


def rivals(norm: str, printings: Iterable[Key]) -> list[Key]:
    """The printings whose number a reading `norm` could be a piece of, or a suffixed twin of (`fragments`)."""
    return [(code, number) for code, number in printings if rivalry(norm, number) is not None]


def neighbours(norm: str, printings: Iterable[Key]) -> list[Key]:
    """The printings whose number is one digit away from `norm` (same length): the basic lands of a set, numbered
    one after another. A single read cannot tell them apart from a confident misread; two reads that agree can."""
    return [(code, number) for code, number in printings if len(number) == len(norm) and number != norm
            and sum(a != b for a, b in zip(number, norm, strict=True)) == 1]


def resolve(parse: CollectorParse, known: Collection[str], catalog: ReadCatalog | None = None,
            name: str | None = None) -> Resolution:
    """The parse's (number, set code), confirmed when the catalogue holds that printing of `name` and the reading
    singles it out.

    A reading with a set code is confirmed when the name has that printing, the total read fits the set, and no
    other printing of the name in that set is one the reading could be a piece of, or one digit away from (the
    basic lands of a set: two agreeing reads are wanted there). One with no set-code token at
    all is confirmed when exactly one printing of the name has the number, in a set that prints no code (when the
    catalogue knows which do), its set's total fits, and no printing of the name in a set the reading fits (total,
    layout) has a number the reading could be a piece of. Without a catalogue and name nothing is confirmed: the
    reader then wants readings that agree.

    Unconfirmed, the parse stands for its first reading, unless a later one is a printing of the name one digit from
    another in its set ("10395" read for a basic land's "L 0395": 395, not 10/395): that one, so that two reads
    that agree on it agree on the printing.
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
    held: Resolution | None = None
    for number, total in parse.number_options:
        norm = normalise_collector_number(number)
        for token, code in snaps:
            if (code, norm) in owned and _total_fits(total, code, catalog):
                in_set = [p for p in printings if p[0] == code]
                if rivals(norm, in_set):
                    break  # a piece of another number in this very set: read again
                if neighbours(norm, in_set):
                    held = held or Resolution(number, total, code, token, settled_if_agreed=True)
                    break  # one digit from another number in this very set: a second read must agree
                return Resolution(number, total, code, token, confirmed=True, settled=True)
        if not parse.set_tokens:
            fitting = [p for p in printings if _total_fits(total, p[0], catalog)
                       and _layout_fits(parse.layout, p[0], catalog)]
            matches = [code for code, value in fitting if value == norm]
            codeless = catalog.codeless is None or (len(matches) == 1 and matches[0] in catalog.codeless)
            if len(matches) == 1 and codeless and not rivals(norm, fitting) and \
                    not _bare(parse, total, matches[0], catalog):
                settled = total is not None and catalog.totals.get(matches[0]) == total
                if not neighbours(norm, fitting):
                    return Resolution(number, total, None, None, confirmed=True, settled=settled)
                if (number, total) == (default.number, default.total):
                    default = replace(default, settled_if_agreed=settled)
    return held or _misread_total(parse, printings, catalog) or default


def _misread_total(parse: CollectorParse, printings: tuple[Key, ...], catalog: ReadCatalog) -> Resolution | None:
    """A reading whose total is its set's with one digit misread ("133/591" for a printing numbered 133 in a set of
    391), in a set that prints no code: confirmed, with the set's total, when exactly one printing of the name has
    that number, nothing else of the name could be meant (no printing whose number the reading could be a piece of,
    none one digit away) and no total read fits another printing. Never settled: the total did not match."""
    if parse.set_tokens:
        return None
    for number, total in parse.number_options:
        norm = normalise_collector_number(number)
        if total is None or any(_total_fits(total, code, catalog) for code, _ in printings):
            continue
        near = [p for p in printings if _total_near(total, p[0], catalog) and _layout_fits(parse.layout, p[0], catalog)]
        matches = [code for code, value in near if value == norm]
        codeless = catalog.codeless is None or (len(matches) == 1 and matches[0] in catalog.codeless)
        if len(matches) == 1 and codeless and not rivals(norm, printings) and not neighbours(norm, printings):
            return Resolution(number, catalog.totals[matches[0]], None, None, confirmed=True)
    return None
