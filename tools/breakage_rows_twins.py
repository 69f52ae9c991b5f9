"""The breakage table's rows for printings told apart by the pixels: star twins ("24" and "24★") and letter twins
("30a" and "30b") judged by the glyph before a legal line's slash, and the join key's use of what it shows
(`breakage_rows.BREAKAGES` lists them after the evidence rows)."""

from __future__ import annotations

from tools.breakage_row import Breakage

TWIN_BREAKAGES = (
    Breakage(
        "the star the pixels show does not tell star twins apart", "stage_e_dagster/domain/calculators/join_key.py",
        (("            and not star_told(number, normalise_collector_number(p.collector_number), "
          "evidence.collector_star)\n", "\n"),),
        ("tests/unit/test_calculators_half_numbers.py::test_the_star_the_pixels_show_tells_a_star_twin_apart",),
        what="`doubt` keeps the twin the star evidence rules out"),
    Breakage(
        "the star check never sees a star", "stage_e_dagster/domain/evidence/star_mark.py",
        (("        return True if _star_shaped(before) else None", "        return None"),),
        ("tests/unit/test_star_mark.py::test_a_clean_line_tells_whether_its_number_is_starred",
         "tests/unit/test_star_mark.py::test_stage_c_records_the_star_of_a_star_twins_scan"),
        what="`_judge` answers None for a star"),
    Breakage(
        "any glyph of a star's size is taken for a star", "stage_e_dagster/domain/evidence/star_mark.py",
        (("        return True if _star_shaped(before) else None", "        return True"),),
        ("tests/unit/test_star_mark.py::test_an_ink_blot_before_the_slash_is_no_star",),
        what="`_judge` skips `_star_shaped`"),
    Breakage(
        "a star is taken for a digit", "stage_e_dagster/domain/evidence/star_mark.py",
        (("    if before.w <= DIGIT_WIDTH * digit and abs(before.h - digit) <= 0.07 * digit and not _pointed(before):",
          "    if before.w <= 1.3 * digit:"),),
        ("tests/unit/test_star_mark.py::test_a_clean_line_tells_whether_its_number_is_starred",),
        what="`_judge` calls any glyph up to a star's width a digit"),
    Breakage(
        "a 7 is taken for the slash", "stage_e_dagster/domain/evidence/star_mark.py",
        (("    return int(crown.sum()) <= 0.6 * glyph.w", "    return True"),),
        ("tests/unit/test_star_mark.py::test_only_a_slash_is_taken_for_the_slash",),
        what="`_slanted` does not look at the glyph's top"),
    Breakage(
        "a slash is taken without the total's digits after it", "stage_e_dagster/domain/evidence/star_mark.py",
        (("        if len(after) > total_digits or any(abs(g.h - digit) > 0.12 * digit for g in after):\n"
          "            continue", "        pass"),),
        ("tests/unit/test_star_mark.py::test_a_slash_must_be_followed_by_the_totals_digits",),
        what="`_judge` does not check what follows the slash"),
    Breakage(
        "Stage C does not record the star", "stage_e_dagster/domain/evidence/extract.py",
        (("            evidence.collector_star = _star(band, reading, rescue, _twins_total(reading, catalog, name))",
          "            pass"),),
        ("tests/unit/test_star_mark.py::test_stage_c_records_the_star_of_a_star_twins_scan",),
        what="the star check not run"),
    Breakage(
        "letter twins' heights not told apart", "stage_e_dagster/domain/evidence/star_mark.py",
        (("    if 0.5 * digit <= before.h <= 0.85 * digit:\n        return X_HEIGHT",
          "    if 0.5 * digit <= before.h <= 0.85 * digit:\n        return FULL"),),
        ("tests/unit/test_star_mark.py::test_the_glyph_before_the_slash_stands_at_x_height_or_full_height",),
        what="`_height` calls an x-height letter full"),
    Breakage(
        "Stage C does not record the height before the slash", "stage_e_dagster/domain/evidence/extract.py",
        (("            evidence.collector_end_height = end_height(band, reading.block, reading.total)",
          "            pass"),),
        ("tests/unit/test_star_mark.py::test_stage_c_records_the_height_before_the_slash_of_a_letter_twins_scan",),
        what="the height check not run"),
    Breakage(
        "the join key ignores the height before the slash", "stage_e_dagster/domain/calculators/join_key.py",
        (("            and not height_told(number, normalise_collector_number(p.collector_number),\n"
          "                                evidence.collector_end_height)]", "]"),),
        ("tests/unit/test_calculators_half_numbers.py::test_the_height_before_the_slash_tells_letter_twins_apart",),
        what="letter twins stay rivals whatever the pixels show"),
    Breakage(
        "a height that contradicts the reading is trusted", "stage_e_dagster/domain/evidence/fragments.py",
        (("    return height is not None and letter_twins(read, other) and _end_height(read) == height and \\\n",
          "    return height is not None and letter_twins(read, other) and \\\n"),),
        ("tests/unit/test_calculators_half_numbers.py::test_the_height_before_the_slash_tells_letter_twins_apart",),
        what="`height_told` does not check the reading's own height"),
    Breakage(
        "a misread total rules a twin out", "stage_e_dagster/domain/calculators/join_key.py",
        (("        evidence = replace(evidence, collector_total=None)\n    number = starred(",
          "        pass\n    number = starred("),),
        ("tests/unit/test_calculators_half_numbers.py::test_a_misread_total_rules_out_no_twin",),
        what="`doubt` filters rivals by a total the match does not fit either"),
    Breakage(
        "the fallback blind to the total read", "stage_e_dagster/domain/calculators/fallback.py",
        (('                                   "layout": layout_check, "total": total_check}',
          '                                   "layout": layout_check}'),),
        ("tests/unit/test_calculators_fallback.py::"
         "test_a_total_read_outweighs_a_set_symbol_nearer_another_sets_reference",),
        what="the total sub-check not run"),
    Breakage(
        "a misread total rules every printing out in the fallback", "stage_e_dagster/domain/calculators/fallback.py",
        (("    if total not in totals.values():\n        return None\n", ""),),
        ("tests/unit/test_calculators_fallback.py::test_total_check",),
        what="`total_check` reads a total no candidate's set prints"),
    Breakage(
        "the recogniser never asked whether a star twin's star is absent",
        "stage_e_dagster/domain/evidence/extract.py",
        (("    if seen is not None or rescue is None:\n        return seen", "    if True:\n        return seen"),),
        ("tests/unit/test_star_mark.py::"
         "test_where_the_pixels_cannot_tell_the_recogniser_tells_a_star_twin_without_its_star",),
        what="`_star` returns the pixel check's answer alone"),
    Breakage(
        "a star taken as absent on a few nats", "stage_e_dagster/domain/evidence/line_verify.py",
        (("STAR_ABSENT = 20.0", "STAR_ABSENT = 5.0"),),
        ("tests/unit/test_line_verify.py::test_a_line_clearly_showing_its_number_and_no_star_tells_the_star_twin_out",),
        what="`STAR_ABSENT` lowered to 5 nats"),
    Breakage(
        "a star taken as absent where the number is not shown", "stage_e_dagster/domain/evidence/line_verify.py",
        (("plain <= MAX_COST and starred - plain >= STAR_ABSENT", "starred - plain >= STAR_ABSENT"),),
        ("tests/unit/test_line_verify.py::test_a_line_clearly_showing_its_number_and_no_star_tells_the_star_twin_out",),
        what="the plain string's own cost not bounded"),
    Breakage(
        "the recogniser never asked whether a star twin's star is shown",
        "stage_e_dagster/domain/evidence/line_verify.py",
        (("    if starred <= MAX_COST and starred - plain <= STAR_SHOWN:\n        return True\n", ""),),
        ("tests/unit/test_star_mark.py::"
         "test_where_the_pixels_cannot_tell_the_recogniser_tells_a_star_twin_with_its_star",),
        what="`star_seen` answers only False or None"),
    Breakage(
        "a star taken as shown on a starred string costing clearly more",
        "stage_e_dagster/domain/evidence/line_verify.py",
        (("STAR_SHOWN = 6.0", "STAR_SHOWN = 15.0"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_line_whose_starred_string_costs_little_more_than_its_plain_one_shows_the_star",),
        what="`STAR_SHOWN` raised to 15 nats"),
    Breakage(
        "a star taken as shown where the number is not shown",
        "stage_e_dagster/domain/evidence/line_verify.py",
        (("starred <= MAX_COST and starred - plain <= STAR_SHOWN", "starred - plain <= STAR_SHOWN"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_line_whose_starred_string_costs_little_more_than_its_plain_one_shows_the_star",),
        what="the starred string's own cost not bounded"),
    Breakage(
        "a star twin's line judged against a misread total", "stage_e_dagster/domain/evidence/extract.py",
        (("_star(band, reading, rescue, _twins_total(reading, catalog, name))",
          "_star(band, reading, rescue, reading.total)"),),
        ("tests/unit/test_star_mark.py::test_a_star_twin_whose_total_was_misread_is_judged_against_its_sets_total",),
        what="`_star` given the total as read"),
    Breakage(
        "a total one of the name's sets prints taken for a misread", "stage_e_dagster/domain/evidence/extract.py",
        (("any(catalog.totals.get(code) == reading.total for code, _ in printings)", "False"),),
        ("tests/unit/test_star_mark.py::test_only_a_total_no_set_of_the_names_prints_is_taken_for_a_misread",),
        what="`_twins_total` replaces every total read"),
    Breakage(
        "twins in sets of different totals given one of them", "stage_e_dagster/domain/evidence/extract.py",
        (("    only = totals.pop() if len(totals) == 1 else None", "    only = totals.pop()"),),
        ("tests/unit/test_star_mark.py::test_only_a_total_no_set_of_the_names_prints_is_taken_for_a_misread",),
        what="`_twins_total` takes any of the twins' totals"),
)
