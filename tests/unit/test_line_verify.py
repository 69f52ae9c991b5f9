"""Asking a recogniser's character probabilities which printing's string a collector line shows (`line_verify`).

Most cases build the probabilities by hand: a line spelled frame by frame ("_" for no character), each frame's
character at 0.999. Each case names the breakage it catches.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from stage_e_dagster.domain.evidence.collector import read_collector
from stage_e_dagster.domain.evidence.line_verify import (
    LONE_MAX_COST,
    MAX_COST,
    MAX_STRINGS,
    Printed,
    choose,
    forced_costs,
    printed_strings,
    star_seen,
    verify,
)
from stage_e_dagster.domain.evidence.ocr_rapid import RapidOcrEngine
from stage_e_dagster.domain.evidence.read_catalog import ReadCatalog
from stage_e_dagster.domain.printed_lines import CENTRED, LEGAL_NUMBER, MODERN, NUMBERLESS, RARITY_FIRST

ALPHABET = {ch: k for k, ch in enumerate("_0123456789/★*. CUWIncJolus") if k}


def _probs(frames: str, doubt: dict[int, str] | None = None) -> np.ndarray:
    """Probabilities spelling `frames`; `doubt` splits a frame's 0.999 evenly between its character and another."""
    out = np.full((len(frames), len(ALPHABET) + 1), 0.001 / len(ALPHABET))
    for t, ch in enumerate(frames):
        column = 0 if ch == "_" else ALPHABET[ch]
        if doubt and t in doubt:
            out[t, column] = out[t, ALPHABET[doubt[t]]] = 0.4995
        else:
            out[t, column] = 0.999
    return out


LEGAL = "_I_n_c_._ _2_1_7_/_2_6_7__"


def _legal(key: tuple[str, str], total: int = 267) -> list[Printed]:
    return printed_strings(key, total, [LEGAL_NUMBER])


def test_the_printed_string_costs_nothing_and_a_shorter_number_inside_it_pays() -> None:
    """Breakage caught: digits allowed just before the string ("17/267" found inside "217/267": half a number)."""
    whole, cut, other = forced_costs(_probs(LEGAL), ALPHABET, ["217/267", "17/267", "211/267"])
    assert whole is not None and whole < 0.01
    assert cut is not None and cut > MAX_COST
    assert other is not None and other > MAX_COST


def test_a_string_must_end_its_line() -> None:
    """Breakage caught: anything allowed after the string (a modern line's "17/30 C" read as a legal line's end)."""
    (cost,) = forced_costs(_probs("_1_7_/_3_0_ _C__"), ALPHABET, ["17/30"])
    assert cost is not None and cost > MAX_COST


def test_the_line_is_taken_as_the_one_string_it_shows() -> None:
    """Breakage caught: the best string not returned, or a string at the line's start scored at its end."""
    strings = _legal(("abc", "217")) + _legal(("abc", "211")) + printed_strings(("xyz", "217"), 300, [MODERN])
    chosen = choose(_probs(LEGAL), ALPHABET, strings)
    assert chosen is not None and chosen.key == ("abc", "217")
    modern = choose(_probs("_2_1_7_/_3_0_0_ _C__"), ALPHABET, strings)
    assert modern is not None and modern.key == ("xyz", "217")


def test_a_doubtful_digit_chooses_nothing() -> None:
    """Breakage caught: the margin over the next printing's string not required."""
    doubted = _probs(LEGAL, doubt={LEGAL.index("7"): "1"})
    assert choose(doubted, ALPHABET, _legal(("abc", "217")) + _legal(("abc", "211"))) is None
    assert choose(doubted, ALPHABET, _legal(("abc", "217")) + _legal(("abc", "45"))).key == ("abc", "217")


def test_a_printing_with_a_suffix_twin_is_never_chosen() -> None:
    """Breakage caught: the twin check dropped ("261★/383" seen as "261/383" voted for the unstarred printing)."""
    frames = "_I_n_c_._ _2_6_1_/_3_8_3__"
    assert choose(_probs(frames), ALPHABET, _legal(("m19", "261"), 383) + _legal(("m19", "261*"), 383)) is None
    assert choose(_probs(frames), ALPHABET, _legal(("m19", "261"), 383)).key == ("m19", "261")


def test_two_sets_printing_the_same_string_choose_nothing() -> None:
    """Breakage caught: the margin not required (a string two sets print taken as one of them)."""
    assert choose(_probs(LEGAL), ALPHABET, _legal(("abc", "217")) + _legal(("def", "217"))) is None


def test_a_lone_string_is_taken_at_a_higher_cost_only_when_no_printing_is_unknown() -> None:
    """Breakage caught: a lone string held to the rivals' cost (the only numbered printing of a name never chosen
    from a smeared digit), or taken so when another printing's string is unknown (that printing may be the card)."""
    frames = _probs("_I_n_c_._ _2_7_1_/_3_0_1__")  # the last digit read as "1": forcing "5" costs about 10 nats
    (cost,) = forced_costs(frames, ALPHABET, ["275/301"])
    assert cost is not None and MAX_COST < cost < LONE_MAX_COST
    lone = _legal(("abc", "275"), 301)
    assert choose(frames, ALPHABET, lone, complete=True).key == ("abc", "275")
    assert choose(frames, ALPHABET, lone, complete=False) is None
    assert choose(frames, ALPHABET, lone + _legal(("def", "12"), 40), complete=True) is None


def test_a_printing_without_a_known_string_leaves_the_lone_string_to_the_lower_cost() -> None:
    """Breakage caught: a set with no total in the catalogue counted as printing no number."""
    line = "_I_n_c_._ _2_7_1_/_3_0_1__"
    numberless = ReadCatalog.build([("Shivan Dragon", "abc", "275"), ("Shivan Dragon", "old", "99")],
                                   totals={"abc": 301}, layouts={"abc": {LEGAL_NUMBER}, "old": {NUMBERLESS}})
    assert verify(Probing(line), Image.new("L", (8, 8)), numberless, "Shivan Dragon").key == ("abc", "275")
    untold = ReadCatalog.build([("Shivan Dragon", "abc", "275"), ("Shivan Dragon", "new", "12")],
                               totals={"abc": 301}, layouts={"abc": {LEGAL_NUMBER}, "new": {LEGAL_NUMBER}})
    assert verify(Probing(line), Image.new("L", (8, 8)), untold, "Shivan Dragon") is None


def test_no_legal_string_without_the_sets_total() -> None:
    """Breakage caught: a bare number scored at a legal line's end, where a copyright year's digits would pass
    for it ("© 1993-2000 ..." chosen as Portal's Plains #199)."""
    assert printed_strings(("por", "199"), None, [LEGAL_NUMBER, CENTRED]) == []
    assert printed_strings(("por", "199"), None, [NUMBERLESS]) == []


def test_a_rarity_first_line_is_read_with_its_set_code() -> None:
    """Breakage caught: the string read as a line the parser does not take for the layout (no set code)."""
    (printed, _) = printed_strings(("dsk", "172"), None, [RARITY_FIRST])
    assert (printed.text, printed.place, printed.reads_as) == ("0172", "end", "C 0172\nDSK • EN")


def test_a_one_digit_rarity_first_number_is_not_read_off_a_line_ending_in_a_stroke() -> None:
    """Breakage caught: a rarity-first printing's bare one-digit string ("1" for "C 0001") scored, which any line
    ending in a stroke fits (a numberless printing's artist credit, on a small photo's card, voted for another
    set's #1); a number of two digits or more keeps its string without the zeros."""
    assert [p.text for p in printed_strings(("man", "1"), None, [RARITY_FIRST])] == ["0001"]
    assert [p.text for p in printed_strings(("man", "14"), None, [RARITY_FIRST])] == ["0014", "14"]
    strings = printed_strings(("man", "1"), None, [RARITY_FIRST]) + _legal(("mxn", "349"), 388)
    assert choose(_probs("_J_o_n_ _C_o_l__", {13: "1"}), ALPHABET, strings) is None


class Probing:
    """A rescue engine that reads nothing but gives the probabilities of a line spelling `frames`."""

    name = "probing"

    def __init__(self, frames: str) -> None:
        self.frames = frames

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        return ""

    def char_probs(self, image: Image.Image) -> tuple[np.ndarray, dict[str, int]]:
        return _probs(self.frames), ALPHABET


def _modern_band() -> Image.Image:
    band = Image.new("RGB", (700, 70), (15, 15, 15))
    draw = ImageDraw.Draw(band)
    draw.text((40, 22), "171/274 C", font=ImageFont.load_default(size=13), fill=(230, 230, 230))
    draw.text((40, 40), "BFZ . EN Jon Doe", font=ImageFont.load_default(size=13), fill=(230, 230, 230))
    return band


def test_the_reader_asks_the_rescue_engine_last() -> None:
    """Breakage caught: the verification not reached after the rescue's reads, or its reading not confirmed."""
    catalog = ReadCatalog.build([("Ulamog's Crusher", "bfz", n) for n in ("171", "45")], totals={"bfz": 274},
                                layouts={"bfz": {MODERN}})
    blank = type("Blank", (), {"name": "blank", "read": lambda self, image, psm=6, whitelist=None: ""})()
    reading = read_collector(_modern_band(), set(), blank, catalog=catalog, name="Ulamog's Crusher",
                             rescue=Probing("_1_7_1_/_2_7_4_ _C__"))
    assert (reading.number, reading.set_code, reading.confirmed) == ("171", "bfz", True)
    reading = read_collector(_modern_band(), set(), blank, catalog=catalog, name="Ulamog's Crusher",
                             rescue=Probing("_1_7_/_2_7_4_ _C__"))
    assert reading.number is None


def test_the_rescue_engines_probabilities_choose_a_blurred_legal_lines_printing() -> None:
    """Breakage caught: the engine's alphabet off by a column, or its frames taken from another image size."""
    line = Image.new("L", (330, 24), 235)
    ImageDraw.Draw(line).text((6, 5), "Wizards of the Coast, Inc. 217/267", font=ImageFont.load_default(size=13),
                              fill=30)
    line = line.filter(ImageFilter.GaussianBlur(1.2)).resize((660, 48), Image.LANCZOS)
    catalog = ReadCatalog.build([("Plains", "abc", n) for n in ("217", "211", "271", "17")], totals={"abc": 267},
                                layouts={"abc": {LEGAL_NUMBER}})
    chosen = verify(RapidOcrEngine(), line, catalog, "Plains")
    assert chosen is not None and chosen.key == ("abc", "217")


class Scripted:
    """A first engine that reads the same text of every image."""

    name = "scripted"

    def __init__(self, text: str) -> None:
        self.text = text

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        return self.text


def _legal_band() -> Image.Image:
    band = Image.new("RGB", (700, 80), (236, 236, 232))
    draw = ImageDraw.Draw(band)
    draw.text((50, 24), "Illus. Jon Doe", font=ImageFont.load_default(size=12), fill=(20, 20, 20))
    draw.text((50, 42), "TM & (c) 2012 Wizards of the Coast 275/301", font=ImageFont.load_default(size=12),
              fill=(20, 20, 20))
    return band


def test_reads_that_agree_on_a_neighbour_the_rescue_engine_prefers_withdraw_their_number() -> None:
    """Breakage caught: two Tesseract reads that smear a digit alike settle a basic land's neighbour (Plains #346
    voted for #345) although the second engine's probabilities fit #345 better."""
    catalog = ReadCatalog.build([("Island", "abc", n) for n in ("274", "275", "276")], totals={"abc": 301},
                                codeless={"abc"}, layouts={"abc": {LEGAL_NUMBER}})
    read = Scripted("TM & (c) 2012 Wizards of the Coast 275/301")
    doubted = read_collector(_legal_band(), set(), read, catalog=catalog, name="Island",
                             rescue=Probing("_I_n_c_._ _2_7_4_/_3_0_1__"))
    assert doubted.number is None
    agreed = read_collector(_legal_band(), set(), read, catalog=catalog, name="Island",
                            rescue=Probing("_I_n_c_._ _2_7_5_/_3_0_1__"))
    assert (agreed.number, agreed.settled) == ("275", True)


def test_a_basic_lands_string_the_recogniser_chooses_is_read_though_its_neighbours_are_a_digit_away() -> None:
    """Breakage caught: the chosen string of a basic land (#275 between #274 and #276) dropped because the catalogue
    wants a second read where a neighbour is one digit away; the choice beat the neighbours' strings by the margin."""
    catalog = ReadCatalog.build([("Island", "abc", n) for n in ("274", "275", "276")], totals={"abc": 301},
                                codeless={"abc"}, layouts={"abc": {LEGAL_NUMBER}})
    reading = read_collector(_legal_band(), set(), Scripted(""), catalog=catalog, name="Island",
                             rescue=Probing("_I_n_c_._ _2_7_5_/_3_0_1__"))
    assert (reading.number, reading.total, reading.settled) == ("275", 301, True)
    unclear = read_collector(_legal_band(), set(), Scripted(""), catalog=catalog, name="Island",
                             rescue=Probing("_I_n_c_._ _2_7_/_3_0_1__"))  # the last digit lost
    assert unclear.number is None


class Recording(Probing):
    """A `Probing` engine that keeps every image its probabilities are asked of."""

    def __init__(self, frames: str) -> None:
        super().__init__(frames)
        self.seen: list[Image.Image] = []

    def char_probs(self, image: Image.Image) -> tuple[np.ndarray, dict[str, int]]:
        self.seen.append(image)
        return super().char_probs(image)


def test_the_recogniser_is_asked_about_the_number_line_its_type_nearly_filling_it() -> None:
    """Breakage caught: the line given with the margins and padding Tesseract wants, which leave the type about a
    third of the image's height, where the recogniser scores small blurred digits far worse."""
    catalog = ReadCatalog.build([("Shivan Dragon", "abc", n) for n in ("275", "198")], totals={"abc": 301},
                                codeless={"abc"}, layouts={"abc": {LEGAL_NUMBER}})
    rescue = Recording("_I_n_c_._ _2_7_5_/_3_0_1__")
    reading = read_collector(_legal_band(), set(), Scripted(""), catalog=catalog, name="Shivan Dragon",
                             rescue=rescue)
    assert reading.number == "275"
    (line,) = rescue.seen
    rows = np.flatnonzero((np.asarray(line.convert("L")) < 128).any(axis=1))
    assert line.height == 48 and rows[-1] - rows[0] + 1 >= 0.55 * line.height
    assert np.asarray(line.convert("L"))[:, : line.width // 2].min() < 128  # the line's words, not only its end


def test_a_line_that_shows_no_printings_string_clearly_doubts_nothing() -> None:
    """Breakage caught: agreeing reads withdrawn whenever another string costs less, though the line fits none of
    them (smeared type: every string costs more than a clear one, the neighbour's least)."""
    catalog = ReadCatalog.build([("Island", "abc", n) for n in ("274", "275", "276")], totals={"abc": 301},
                                codeless={"abc"}, layouts={"abc": {LEGAL_NUMBER}})
    read = Scripted("TM & (c) 2012 Wizards of the Coast 275/301")
    agreed = read_collector(_legal_band(), set(), read, catalog=catalog, name="Island",
                            rescue=Probing("_I_n_c_._ _2_7_4_/_3_0_7__"))  # #274 the nearest, yet no string fits
    assert (agreed.number, agreed.settled) == ("275", True)


def test_a_name_with_more_strings_than_are_scored_is_not_asked_about() -> None:
    """Breakage caught: the strings cut to the first MAX_STRINGS, so that the margin is taken over a part of them
    (the string the line shows may be one left out)."""
    numbers = [str(n) for n in range(1, MAX_STRINGS + 2)]
    catalog = ReadCatalog.build([("Plains", "big", n) for n in numbers], totals={"big": 9999},
                                codeless={"big"}, layouts={"big": {LEGAL_NUMBER}})
    line = Image.new("L", (10, 10))
    assert verify(Probing("_I_n_c_._ _2_1_7_/_9_9_9_9__"), line, catalog, "Plains") is None
    fewer = ReadCatalog.build([("Plains", "big", n) for n in numbers[:MAX_STRINGS]], totals={"big": 9999},
                              codeless={"big"}, layouts={"big": {LEGAL_NUMBER}})
    assert verify(Probing("_I_n_c_._ _2_1_7_/_9_9_9_9__"), line, fewer, "Plains").key == ("big", "217")


class Sharp(Probing):
    """A `Probing` engine whose frames are all but certain (1e-9 left for every other character): forcing a
    character the line does not show costs about 21 nats, as a clearly printed line does on the recogniser."""

    def char_probs(self, image: Image.Image) -> tuple[np.ndarray, dict[str, int]]:
        probs, alphabet = super().char_probs(image)
        sharp = np.where(probs >= 0.4, probs, 1e-9)
        return sharp / sharp.sum(axis=1, keepdims=True), alphabet


def test_a_line_clearly_showing_its_number_and_no_star_tells_the_star_twin_out() -> None:
    """Breakage caught: a star taken as absent where the line shows one, or where the recogniser hardly tells
    (a star it smears into the gap before the slash costs the starred string only a few nats more)."""
    line = Image.new("L", (100, 48), 255)
    assert star_seen(Sharp("_I_n_c_._ _8_3_/_2_9_3__"), line, "83", 293) is False
    assert star_seen(Sharp("_I_n_c_._ _8_3_/_2_9_3__"), line, "83*", 293) is False  # OCR's star is no witness
    assert star_seen(Sharp("_I_n_c_._ _8_3_★_/_2_9_3__"), line, "83", 293) is not False  # the star printed
    assert star_seen(Probing("_I_n_c_._ _8_3_/_2_9_3__"), line, "83", 293) is None  # about 10 nats: no verdict
    assert star_seen(Sharp("_I_n_c_._ _8_9_/_2_9_3__"), line, "83", 293) is None  # the number itself not shown


class Faint(Probing):
    """A `Probing` engine that sees a faint star (0.0007) in the gap before the slash: forcing it there costs about
    7 nats, no more than a clearly shown string may cost (`MAX_COST`), yet more than a starred line's."""

    def char_probs(self, image: Image.Image) -> tuple[np.ndarray, dict[str, int]]:
        probs, alphabet = super().char_probs(image)
        probs[self.frames.index("/") - 1, alphabet["★"]] = 0.0007
        return probs, alphabet


def test_a_line_whose_starred_string_costs_little_more_than_its_plain_one_shows_the_star() -> None:
    """Breakage caught: a star seen where the starred string costs clearly more than the plain one (an unstarred
    line the recogniser reads a little unsure), or where neither string fits the line (its number misread)."""
    line = Image.new("L", (100, 48), 255)
    assert star_seen(Sharp("_I_n_c_._ _8_3_★_/_2_9_3__"), line, "83", 293) is True
    assert star_seen(Probing("_I_n_c_._ _8_3_★_/_2_9_3__"), line, "83*", 293) is True
    assert star_seen(Probing("_I_n_c_._ _8_3_/_2_9_3__"), line, "83", 293) is None  # starred: about 10 nats more
    assert star_seen(Faint("_I_n_c_._ _8_3_/_2_9_3__"), line, "83", 293) is None  # starred: about 7 nats more
    assert star_seen(Sharp("_I_n_c_._ _8_9_★_/_2_9_3__"), line, "83", 293) is None  # "83★" itself not shown