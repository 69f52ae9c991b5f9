"""Which of a name's printings a collector line shows, asked of a recogniser's character probabilities instead of
its best guess.

A CTC recogniser (PP-OCR's, `ocr_rapid`) gives, for each column of a text line, a probability for every character
and for "no character". Its best guess on small blurred type is often wrong in one or two characters, while the
right string still scores well: so where reading failed, each printing of the card's name is scored as the string
its layout prints ("217/267" at the end of a legal line, "078/221" at the start of a modern number line, "0172"
at the end of a rarity-first one), and the line is taken as the best string when

- forcing it costs little against the recogniser's own best path (`MAX_COST` nats), and
- every other printing's string costs clearly more (`MIN_MARGIN` nats); another set printing the same string
  costs the same, so the line chooses neither.

A name whose printings print one string between them (the others print no number) has no rival to beat: its string
is taken at a higher cost (`LONE_MAX_COST`), below what a numberless line costs. Not when a printing's string is
unknown (a legal line's set with no total in the catalogue): that printing may be the one the line shows.

The string is placed where its layout prints it: what comes before a line-ending string is free, except that it
must not end in a digit, and after it stands nothing (for a line-starting string, the mirror image). So a shorter
number never fits inside a longer one ("27/350" inside "127/350" pays for the "1"), and a copyright year never
passes for a number: every string but the rarity-first one carries its set's total. A star or letter suffix is
what such a recogniser sees worst, so a printing with a suffix twin (30/30a, 261/261★) is never chosen here.

The same scores check a number that Tesseract's reads agreed on where agreement is what settles it (a basic land
one digit from its neighbours, `doubted`): the line fitting a neighbour's string clearly and better says the two
reads smeared a digit alike.

The engine supplies the probabilities and its alphabet; the rest is numpy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import (
    CENTRED,
    LEGAL_NUMBER,
    MODERN,
    NUMBERED_LAYOUTS,
    NUMBERLESS,
    RARITY_FIRST,
)

MAX_COST = 8.0
"""Nats the best string may cost against the recogniser's best path: above it the line shows no printing's string
clearly enough (another set's, or smeared past reading)."""
MIN_MARGIN = 6.0
"""Nats by which every other string must cost more than the best."""
LONE_MAX_COST = 12.0
"""Nats the string may cost when it is the only printing's the name prints (`complete`): with no rival to be clearly
worse than, what it must clearly beat is a line without a number, a numberless printing's, which costs far more
(17 nats and up on the tuning seeds' numberless scans)."""
MAX_STRINGS = 4000
"""Strings scored at most per line: every printing of a basic land, in every layout it prints, is a few thousand
in a full catalogue. A name with more is not asked about: a string left out could be the one the line shows, and
the margin over the rest would mean nothing."""
STAR_ABSENT = 20.0
"""Nats by which a legal line's number string with a star ("83★/293") must cost more than without ("83/293") for the
line to show no star. The recogniser sees a small star poorly but its absence well: on the tuning seeds' star twins,
an unstarred line's starred string costs 23-31 nats more (its plain string clearly shown), a starred line's at most
about 10 more than its plain one."""
STAR_SHOWN = 6.0
"""Nats the starred string ("83★/293") may cost more than the plain one ("83/293") for the line to show the star (it
may cost less), the starred string itself costing at most MAX_COST: on the tuning seeds' star twins, a starred
line's starred string costs at most about 4.5 nats more than its plain one (up to 6.5 where the total was misread and
the line is judged against its set's), an unstarred line's 16 and more."""
BARE_DIGITS = 2
"""Digits a rarity-first number must have for its string without the leading zeros ("14" for "0014") to be scored
too: the recogniser may lose a smeared zero or two, but a bare digit ("1" for "0001") is no reading of the line, for
any line ending in a stroke fits it (an artist credit's last letter)."""
END, START = "end", "start"
DIGITS = "0123456789"
_NEG = -1e18


@dataclass(frozen=True)
class Printed:
    """A printing's collector line as a string and where the line holds it (`END` or `START`), and the text to
    parse for it."""

    key: tuple[str, str]  # (set code, normalised number)
    text: str
    place: str
    reads_as: str


def printed_strings(key: tuple[str, str], total: int | None, layouts: Iterable[str]) -> list[Printed]:
    """The strings a printing's layouts print for its number: a legal line's "217/267" (only with its set's total: a
    bare number there would pass for a year's digits), a modern line's "078/221" (padded and not), a rarity-first line's
    "0172" (and "172", not "1" for "0001": `BARE_DIGITS`). The star a normalised number carries is printed as "★". Each
    reads as its collector line: with the set code where the layout prints one under the number, since the string was
    chosen among this name's printings only when no other printing prints it (`choose`)."""
    code, number = key
    shown = number.replace("*", "★")
    out: list[Printed] = []
    for layout in layouts:
        if layout in (LEGAL_NUMBER, CENTRED) and total:
            out.append(Printed(key, f"{shown}/{total}", END, f"Wizards of the Coast {shown}/{total}"))
        elif layout == MODERN and total:
            for text in (f"{shown:0>3}/{total:0>3}", f"{shown}/{total}"):
                out.append(Printed(key, text, START, f"{text}\n{code.upper()} • EN"))
        elif layout == RARITY_FIRST:  # (its leading zeros may smear away, but not most of its digits)
            for text in (f"{shown:0>4}", shown) if len(_base(number)) >= BARE_DIGITS else (f"{shown:0>4}",):
                out.append(Printed(key, text, END, f"C {text}\n{code.upper()} • EN"))
    return list(dict.fromkeys(out))


def forced_costs(probs: np.ndarray, alphabet: Mapping[str, int], texts: Sequence[str]) -> list[float | None]:
    """Each text's cost (nats) as the end of the line against the best path: the best CTC alignment of a prefix
    not ending in a digit, the text, then only "no character", beside the unconstrained best path. None for a text
    with a character the alphabet lacks. `probs`: frames x characters, column 0 "no character"."""
    log = np.log(np.maximum(probs.astype(np.float64), 1e-12))
    frames = log.shape[0]
    labels = [[alphabet.get(ch) for ch in text] for text in texts]
    usable = [k for k, row in enumerate(labels) if row and None not in row]
    out: list[float | None] = [None] * len(texts)
    if not usable or frames == 0:
        return out
    digits = [alphabet[d] for d in DIGITS if d in alphabet]
    others = log.copy()
    others[:, digits] = _NEG
    others[:, 0] = _NEG
    other_best, digit_best, blank = others.max(1), log[:, digits].max(1), log[:, 0]
    width = 2 * max(len(labels[k]) for k in usable) + 1
    ext = np.zeros((len(usable), width), dtype=np.int64)
    valid = np.zeros((len(usable), width), dtype=bool)
    for row, k in enumerate(usable):
        seq = [0]
        for label in labels[k]:
            seq += [label, 0]
        ext[row, :len(seq)] = seq
        valid[row, :len(seq)] = True
    skip = np.zeros_like(valid)
    skip[:, 2:] = (ext[:, 2:] != 0) & (ext[:, 2:] != ext[:, :-2]) & valid[:, 2:]
    alpha = np.full(ext.shape, _NEG)
    ends_other, ends_digit = 0.0, _NEG  # best prefix ending in no digit (or empty), and in a digit
    for t in range(frames):
        moved = alpha.copy()
        moved[:, 1:] = np.maximum(moved[:, 1:], alpha[:, :-1])
        moved[:, 2:] = np.where(skip[:, 2:], np.maximum(moved[:, 2:], alpha[:, :-2]), moved[:, 2:])
        moved[:, :2] = np.maximum(moved[:, :2], ends_other)
        alpha = np.where(valid, moved + log[t, ext], _NEG)
        either = max(ends_other, ends_digit)
        ends_other, ends_digit = (max(ends_other + blank[t], either + other_best[t]),
                                  max(ends_digit + blank[t], either + digit_best[t]))
    best = float(log.max(1).sum())
    for row, k in enumerate(usable):
        last = 2 * len(labels[k])
        out[k] = best - float(max(alpha[row, last], alpha[row, last - 1]))
    return out


def _base(number: str) -> str:
    return re.sub(r"\D", "", number)


def _costs(probs: np.ndarray, alphabet: Mapping[str, int], strings: Sequence[Printed]) -> dict[Printed, float]:
    costs: dict[Printed, float] = {}
    for place, frames in ((END, probs), (START, probs[::-1])):
        group = [s for s in strings if s.place == place]
        texts = [s.text if place == END else s.text[::-1] for s in group]
        for printed, cost in zip(group, forced_costs(frames, alphabet, texts), strict=True):
            if cost is not None:
                costs[printed] = cost
    return costs


def choose(probs: np.ndarray, alphabet: Mapping[str, int], strings: Sequence[Printed],
           complete: bool = False) -> Printed | None:
    """The printing's string the line shows beyond doubt (see the module), or None. `strings` are every printing
    of the name's (`printed_strings`); `complete`: every printing that prints a number has its strings among them.
    The probabilities are the line's as read."""
    costs = _costs(probs, alphabet, strings)
    if not costs:
        return None
    best = min(costs, key=costs.__getitem__)
    alone = complete and all(s.key == best.key for s in strings)
    if costs[best] > (LONE_MAX_COST if alone else MAX_COST):
        return None
    number = best.key[1]
    if any(_base(s.key[1]) == _base(number) and s.key[1] != number for s in strings):
        return None  # a suffix twin: the suffix is what this reading sees worst
    rivals = [cost for printed, cost in costs.items() if printed.key != best.key]  # another set's same string too
    if rivals and min(rivals) - costs[best] < MIN_MARGIN:
        return None
    return best


def _strings(catalog: ReadCatalog, name: str) -> list[Printed]:
    strings = [printed for key in catalog.printings_of(name)
               for printed in printed_strings(key, catalog.totals.get(key[0]), _layouts(catalog, key[0]))]
    return strings if len(strings) <= MAX_STRINGS else []


def _layouts(catalog: ReadCatalog, code: str) -> tuple[str, ...]:
    return catalog.layouts_of(code) or NUMBERED_LAYOUTS


def _complete(catalog: ReadCatalog, name: str, strings: Sequence[Printed]) -> bool:
    """Whether every printing of `name` that prints a number has its strings among `strings`."""
    keys = {s.key for s in strings}
    return all(key in keys or set(_layouts(catalog, key[0])) <= {NUMBERLESS} for key in catalog.printings_of(name))


def verify(engine: object, line: Image.Image, catalog: ReadCatalog, name: str) -> Printed | None:
    """The string of the name's printings that the text line `line` shows (`choose`), by `engine`'s character
    probabilities; None when the engine gives none (only a CTC recogniser does: `char_probs`)."""
    char_probs = getattr(engine, "char_probs", None)
    if char_probs is None:
        return None
    strings = _strings(catalog, name)
    if not strings:
        return None
    probs, alphabet = char_probs(line)
    return choose(probs, alphabet, strings, _complete(catalog, name, strings))


def doubted(engine: object, line: Image.Image, catalog: ReadCatalog, name: str, number: str,
            set_code: str | None) -> bool:
    """Whether `engine`'s character probabilities of the text line `line` fit another printing's string of the
    name better than the string of the reading's (its normalised `number`, in `set_code` when one was read or
    resolved), and fit it clearly (`MAX_COST`): a reading two Tesseract reads agreed on is then not beyond doubt.
    False when the engine gives no probabilities, the name has no such printing, or the line shows no printing's
    string clearly (a crop that missed the number line, type smeared past reading)."""
    char_probs = getattr(engine, "char_probs", None)
    strings = _strings(catalog, name)
    mine = {s.key for s in strings if s.key[1] == number and set_code in (None, s.key[0])}
    if char_probs is None or not mine:
        return False
    costs = _costs(*char_probs(line), strings)
    own = min((cost for printed, cost in costs.items() if printed.key in mine), default=None)
    other = min((cost for printed, cost in costs.items() if printed.key[1] != number), default=None)
    return own is not None and other is not None and other < own and other <= MAX_COST


def star_seen(engine: object, line: Image.Image, number: str, total: int) -> bool | None:
    """Whether the legal line `line`, ending in the number `number` (normalised, its star dropped if any) over
    `total`, shows a star after it, by `engine`'s probabilities of the two strings: False when the plain string
    costs at most MAX_COST and the starred one at least STAR_ABSENT more; True when the starred string costs at most
    MAX_COST and at most STAR_SHOWN more than the plain one; None when neither, when the engine gives no
    probabilities, or when either string cannot be scored."""
    char_probs = getattr(engine, "char_probs", None)
    if char_probs is None:
        return None
    base = number.rstrip("*")
    texts = [printed_strings(("", key), total, (LEGAL_NUMBER,))[0].text for key in (base, f"{base}*")]
    probs, alphabet = char_probs(line)
    plain, starred = forced_costs(probs, alphabet, texts)
    if plain is None or starred is None:
        return None
    if plain <= MAX_COST and starred - plain >= STAR_ABSENT:
        return False
    if starred <= MAX_COST and starred - plain <= STAR_SHOWN:
        return True
    return None
