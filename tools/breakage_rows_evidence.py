"""The breakage table's rows for Stage C's evidence: the collector and legal-line reader, the text parsers and the
photo path through extraction (`breakage_rows.BREAKAGES` lists them last, with the finder's and the twins')."""

from __future__ import annotations

from tools.breakage_row import Breakage

EVIDENCE_BREAKAGES = (
    Breakage(
        "the collector reader's catalogue check bypassed", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("            if (code, norm) in owned and _total_fits(total, code, catalog):", "            if True:"),),
        ("tests/unit/test_evidence_read_catalog.py",)),
    Breakage(
        "the packed name table stops at the first occupied slot", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("                return index\n            slot = (slot + 1) & mask",
          "                return index\n            return None"),),
        ("tests/unit/test_read_catalog_packed.py",)),
    Breakage(
        "prefixed collector numbers not read", "stage_e_dagster/domain/evidence/parse.py",
        (("(?P<prefix>[A-Z]{1,2})", "(?P<prefix>[^\\s\\S]{1,2})"),),
        ("tests/unit/test_evidence_forms.py",)),
    Breakage(
        "any image format Pillow knows decoded", "stage_e_dagster/domain/evidence/load.py",
        (("    return Image.open(source, formats=DECODED_FORMATS)", "    return Image.open(source)"),),
        ("tests/unit/test_evidence_load.py::test_only_png_jpeg_and_webp_are_decoded_whatever_the_name",
         "tests/db/test_catalog_import.py::test_symbols_store_reference_hashes"),
        what="`open_image` without `formats`"),
    Breakage(
        "a photo's skip not recorded", "stage_e_dagster/domain/evidence/extract.py",
        (("    if isinstance(found, CardNotFound):\n        return found.as_skip()\n",
          "    if isinstance(found, CardNotFound):\n"
          "        found = FoundCard(loaded.image, ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)), \"scan\")\n"),),
        ("tests/db/test_stage_c_photos.py",),
        what="a photo with no single whole card read as a scan"),
    Breakage(
        "a photo's corners not stored", "stage_e_dagster/domain/evidence/extract.py",
        (("            evidence.card_corners = flat_corners(card.corners)",
          "            evidence.card_corners = None"),),
        ("tests/db/test_stage_c_photos.py",),
        what="`card_corners` left empty"),
    Breakage(
        "a photo's number not read again with its light flattened", "stage_e_dagster/domain/evidence/extract.py",
        (("        if lit.collector_number is not None:  # the collector line read once",
          "        if False:  # the collector line read once"),),
        ("tests/unit/test_photo_light_read.py::test_a_photo_s_number_is_read_again_with_its_light_flattened",),
        what="the lit read's number dropped"),
    Breakage(
        "a lit read's other fields taken over the first read's", "stage_e_dagster/domain/evidence/extract.py",
        (("        lit = read(replace(found, image=flatten_light(found.image)), only={\"collector\"})",
          "        lit = read(replace(found, image=flatten_light(found.image)))"),
         ("            return evidence\n    if (found.kind", "            return lit\n    if (found.kind")),
        ("tests/unit/test_photo_light_read.py::test_a_photo_s_number_is_read_again_with_its_light_flattened",),
        what="the whole lit read returned"),
    Breakage(
        "the rescue engine never read", "stage_e_dagster/domain/evidence/collector.py",
        (("    if rescue is None or catalog is None or name is None:", "    if True:"),),
        ("tests/unit/test_collector_rescue.py::test_the_rescue_engine_reads_what_tesseract_cannot",),
        what="`_rescue` returns nothing"),
    Breakage(
        "an unconfirmed rescue read kept", "stage_e_dagster/domain/evidence/collector.py",
        (("        if reading.confirmed:\n            return replace(reading, texts=texts)",
          "        if reading.number:\n            return replace(reading, texts=texts)"),),
        ("tests/unit/test_collector_rescue.py::test_a_rescue_read_the_catalogue_does_not_confirm_is_not_kept",),
        what="`_rescue` keeps any reading with a number"),
    Breakage(
        "the rescue engine loaded at every worker's start", "stage_e_dagster/domain/evidence/ocr_rapid.py",
        (("    _shared = _shared or RapidOcrEngine()\n    return _shared",
          "    _shared = _shared or RapidOcrEngine()\n    _shared._ensure()\n    return _shared"),),
        ("tests/unit/test_collector_rescue.py::test_making_the_rescue_engine_imports_nothing_heavy",),
        what="`make_rescue_engine` imports rapidocr"),
    Breakage(
        "specks kept over a text crop's first line", "stage_e_dagster/domain/evidence/preprocess.py",
        (("    arr[:max(0, lines[0].top - halo - top)] = 255\n    arr[max(0, lines[-1].bottom + halo - top):] = 255",
          "    pass"),),
        ("tests/unit/test_collector_rescue.py::test_specks_over_the_first_line_do_not_cost_its_number",
         "tests/unit/test_collector_rescue.py::test_the_margin_outside_the_lines_is_white"),
        what="`_margin_cleared` clears nothing"),
    Breakage(
        "a truncated reading votes", "stage_e_dagster/domain/evidence/fragments.py",
        (("""            digits.startswith(read_digits) or digits.endswith(read_digits)):
        return TRUNCATION""", """            digits.startswith(read_digits) or digits.endswith(read_digits)):
        return None"""),),
        ("tests/unit/test_calculators_half_numbers.py::test_a_truncated_read_does_not_vote_for_the_shorter_number",),
        what="`rivalry` finds no truncation"),
    Breakage(
        "a reading that lost its suffix votes", "stage_e_dagster/domain/evidence/fragments.py",
        (("            return SUFFIX", "            return None"),),
        ("tests/unit/test_calculators_half_numbers.py::test_a_lost_suffix_does_not_vote_for_the_unstarred_twin",),
        what="`rivalry` finds no suffixed twin"),
    Breakage(
        "the reader confirms half a number", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("                if rivals(norm, in_set):", "                if False:"),
         ("                if neighbours(norm, in_set):", "                if False:")),
        ("tests/unit/test_calculators_half_numbers.py::test_the_reader_confirms_no_half_number",),
        what="`resolve` confirms a reading a set's other number could explain"),
    Breakage(
        "a basic land's two agreeing reads leave it unsettled", "stage_e_dagster/domain/evidence/collector.py",
        (("    return replace(reading, texts=texts, settled=True)", "    return replace(reading, texts=texts)"),),
        ("tests/unit/test_calculators_half_numbers.py::"
         "test_two_agreeing_reads_settle_a_printing_whose_only_doubt_was_its_neighbour",),
        what="the legal line read a third time for nothing"),
    Breakage(
        "agreement settles a basic land whose total was not read", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("default = replace(default, settled_if_agreed=settled)",
          "default = replace(default, settled_if_agreed=True)"),),
        ("tests/unit/test_calculators_half_numbers.py::"
         "test_two_agreeing_reads_settle_a_printing_whose_only_doubt_was_its_neighbour",),
        what="the era check's year never read for a number read alone"),
    Breakage(
        "a copyright range taken for the collector number", "stage_e_dagster/domain/evidence/parse.py",
        (("    matches = [m for m in _NUMBER_WITH_TOTAL.finditer(line) if not _is_year_pair(m)]",
          "    matches = list(_NUMBER_WITH_TOTAL.finditer(line))"),),
        ("tests/unit/test_evidence_parse.py::test_a_year_or_a_set_code_is_never_the_number",),
        what="`_with_total` keeps year ranges"),
    Breakage(
        "a photo's card read from the halved decode", "stage_e_dagster/domain/evidence/extract.py",
        (("    if found.kind == PHOTO and data is not None and loaded.scale < 1.0:", "    if False:"),),
        ("tests/unit/test_photo_full_size.py::test_a_photo_decoded_smaller_than_its_file_is_read_from_a_cut_at_full_size",),
        what="the card cut out of the working decode, never the file's own size"),
    Breakage(
        "a credit read again for a year it cannot hold", "stage_e_dagster/domain/evidence/legal_read.py",
        (("    if block is None and skip is not None and skip_is_credit:\n        return None\n", ""),),
        ("tests/unit/test_evidence_extract.py::"
         "test_a_numberless_card_reads_its_credit_once_and_keeps_its_copyright_year",),
        what="`read_legal` reads the whole band again after reads that saw a credit alone"),
    Breakage(
        "a legal line cut before its year taken for a credit", "stage_e_dagster/domain/evidence/legal_text.py",
        (("    return not any(ch.isdigit() for text in texts for ch in text) and not any(\n"
          "        LEGAL_WORDS.search(text) or _PROXY_MARKERS.search(text) for text in texts)",
          "    return not any(ch.isdigit() for text in texts for ch in text)"),),
        ("tests/unit/test_evidence_parse_pinned.py::"
         "test_reads_saw_only_an_artist_credit_with_no_digit_and_no_legal_word",),
        what="`credit_only` blind to legal words (\"s of the Coast, Inc.\" read with its year cut off)"),
    Breakage(
        "a modern block with a long artist's name taken for a legal line",
        "stage_e_dagster/domain/evidence/collector_views.py",
        (("    if len(block.lines) > 1 and first.right - first.left > NUMBER_LINE * glyph:\n        return \"legal\"\n",
          ""),),
        ("tests/unit/test_collector_lines.py::test_a_blocks_shape_says_where_its_number_stands",),
        what="`shape_family` without its first-line rule"),
    Breakage(
        "a read standing for a number the name has no printing of", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("    return held or _misread_total(parse, printings, catalog) or default",
          "    return _misread_total(parse, printings, catalog) or default"),),
        ("tests/unit/test_calculators_half_numbers.py::"
         "test_an_unconfirmed_read_stands_for_the_names_printing_a_second_read_must_agree_on",),
        what="an unconfirmed parse stands for its first reading, never the name's printing one digit from another"),
    Breakage(
        "two reads agreeing on a number the name has no printing of ending the search",
        "stage_e_dagster/domain/evidence/collector.py",
        (("if votes[key] >= votes_needed and not _foreign(reading, catalog, name):",
          "if votes[key] >= votes_needed:"),),
        ("tests/unit/test_collector_rescue.py::"
         "test_reads_that_agree_on_a_number_the_name_has_no_printing_of_keep_reading",),
        what="agreement returns a misread the catalogue knows is foreign to the name; the rescue never runs"),
    Breakage(
        "rescue reads judged alone, never with the reads that agree with them",
        "stage_e_dagster/domain/evidence/collector.py",
        (("            if tally[key] >= votes_needed:", "            if False:"),),
        ("tests/unit/test_collector_rescue.py::"
         "test_a_rescue_read_that_agrees_with_an_earlier_read_settles_a_neighbours_number",),
        what="`_rescue` keeps only a reading the catalogue confirms; a basic land's agreed number is lost"),
    Breakage(
        "rescue reads agreeing on a number foreign to the name kept",
        "stage_e_dagster/domain/evidence/collector.py",
        (("        if reading.accepted and not _foreign(reading, catalog, name):\n            key",
          "        if reading.accepted:\n            key"),),
        ("tests/unit/test_collector_rescue.py::"
         "test_rescue_reads_agreeing_on_a_number_the_name_has_no_printing_of_are_not_kept",),
        what="`_rescue` counts agreement on any accepted number"),
    Breakage(
        "a total shorter than its number kept as the printed total", "stage_e_dagster/domain/evidence/parse.py",
        (("    return options + [option for option in cut if option not in options]", "    return options"),),
        ("tests/unit/test_evidence_parse.py::"
         "test_a_total_shorter_than_its_number_is_dropped_for_the_catalogue_to_confirm_the_number_alone",),
        what="`_total_cut` offers no number without its truncated total"),
    Breakage(
        "a misread copyright year stops a match its total vouches for",
        "stage_e_dagster/domain/calculators/join_key.py",
        (("        if not _total_vouches(evidence, match, expansions):\n", "        if True:\n"),),
        ("tests/unit/test_calculators_join_key_details.py::"
         "test_a_year_that_contradicts_a_match_its_total_vouches_for_was_misread",),
        what="every year contradiction skips, whatever the total read"),
    Breakage(
        "any total read vouches for a match its year contradicts",
        "stage_e_dagster/domain/calculators/join_key.py",
        (("        expansion.printed_total == evidence.collector_total", "        True"),),
        ("tests/unit/test_calculators_join_key_details.py::"
         "test_a_year_that_contradicts_a_match_its_total_vouches_for_was_misread",),
        what="`_total_vouches` true for a total that is not the set's"),
    Breakage(
        "a number's printings never narrowed by the total read", "stage_e_dagster/domain/calculators/join_key.py",
        (("    if len(by_line) == 1:  #", "    if False:  #"),),
        ("tests/unit/test_calculators_join_key_details.py::"
         "test_the_total_read_picks_the_one_printing_of_that_number_whose_set_prints_it",),
        what="several printings of the number go straight to the symbol tie-break"),
    Breakage(
        "a long artist's line hides a modern block's number line", "stage_e_dagster/domain/evidence/collector.py",
        (("        if family(expected) is None and kind == \"legal\" and "
          "number_line_first(blocks[0], band.blocks.glyph):",
          "        if False:"),),
        ("tests/unit/test_collector_rescue.py::test_a_long_artist_line_does_not_hide_a_basic_lands_number_line",),
        what="`number_views` reads no tight view of the other kind"),
    Breakage(
        "the numberless stop skips the number line the shape left open", "stage_e_dagster/domain/evidence/collector.py",
        ((" and not view.guessed:", ":"),),
        ("tests/unit/test_collector_rescue.py::test_a_long_artist_line_does_not_hide_a_basic_lands_number_line",),
        what="the numberless stop before the other kind's tight view"),
    Breakage(
        "a short legal line read as a code block only", "stage_e_dagster/domain/evidence/collector.py",
        (("        if view.after_legal_words and not any(LEGAL_WORDS.search(r.raw) for r in readings):",
          "        if view.after_legal_words:"),),
        ("tests/unit/test_collector_lines.py::test_a_short_legal_line_under_a_short_credit_is_read_at_its_end",),
        what="the legal end of a code-shaped block never read"),
    Breakage(
        "a tilted band read as it lies", "stage_e_dagster/domain/evidence/band.py",
        (("        if blocks.slanted:  # a tilted", "        if False:  # a tilted"),),
        ("tests/unit/test_collector_lines.py::test_lines_a_tilt_runs_together_are_found_once_the_band_is_level",),
        what="`BottomBand.of` does not turn a slanted band level"),
    Breakage(
        "a centred legal line under a wide remnant is placed at the right", "stage_e_dagster/domain/evidence/band.py",
        (("                place = \"centre\"  # a wide", "                pass  # a wide"),),
        ("tests/unit/test_collector_lines.py::test_a_centred_legal_line_under_a_wide_remnant_is_still_centred",),
        what="`find_blocks` places by the widest line"),
    Breakage(
        "a rarity letter read after the total leaves the total wrong", "stage_e_dagster/domain/evidence/parse.py",
        (("    cut += [(number, total // 10) for number, total in options",
          "    cut += [(number, total) for number, total in options"),),
        ("tests/unit/test_evidence_parse.py::"
         "test_a_rarity_letter_read_as_a_digit_after_the_total_leaves_the_total_to_confirm",),
        what="`_total_cut` offers no total without its last digit"),
    Breakage(
        "bare digits confirmed where the set prints a total", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("                    not _bare(parse, total, matches[0], catalog):", "                    True:"),),
        ("tests/unit/test_evidence_read_catalog.py::"
         "test_digits_in_garbage_confirm_nothing_where_the_set_prints_a_total",),
        what="`resolve` confirms a number with no slash seen"),
    Breakage(
        "a total misread by one digit loses the printing", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("    return held or _misread_total(parse, printings, catalog) or default", "    return held or default"),),
        ("tests/unit/test_evidence_read_catalog.py::"
         "test_a_total_misread_by_one_digit_still_confirms_a_codeless_number_unsettled",),
        what="`resolve` never offers the near total"),
    Breakage(
        "any total taken as a misread one", "stage_e_dagster/domain/evidence/read_catalog.py",
        (("    return sum(a != b for a, b in zip(str(total), str(known), strict=True)) == 1", "    return True"),),
        ("tests/unit/test_evidence_read_catalog.py::"
         "test_a_total_misread_by_one_digit_still_confirms_a_codeless_number_unsettled",),
        what="`_total_near` accepts any total of as many digits"),
    Breakage(
        "type over uneven art measured against one level", "stage_e_dagster/domain/evidence/band.py",
        (("        local = max(3, gray.height // 2) | 1 if _uneven(np.asarray(gray)) else 0", "        local = 0"),),
        ("tests/unit/test_collector_lines.py::"
         "test_type_over_art_whose_light_changes_is_found_against_its_own_surroundings",),
        what="`BottomBand.of` never measures the background locally"),
    Breakage(
        "a number found inside a longer one", "stage_e_dagster/domain/evidence/line_verify.py",
        (("        moved[:, :2] = np.maximum(moved[:, :2], ends_other)",
          "        moved[:, :2] = np.maximum(moved[:, :2], max(ends_other, ends_digit))"),),
        ("tests/unit/test_line_verify.py::test_the_printed_string_costs_nothing_and_a_shorter_number_inside_it_pays",),
        what="a string may follow a digit"),
    Breakage(
        "a line-starting string scored at the line's end", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    for place, frames in ((END, probs), (START, probs[::-1])):",
          "    for place, frames in ((END, probs), (START, probs)):"),),
        ("tests/unit/test_line_verify.py::test_the_line_is_taken_as_the_one_string_it_shows",),
        what="a modern number line's string not mirrored"),
    Breakage(
        "a verified line chosen without a margin", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    if rivals and min(rivals) - costs[best] < MIN_MARGIN:", "    if False:"),),
        ("tests/unit/test_line_verify.py::test_a_doubtful_digit_chooses_nothing",)),
    Breakage(
        "a suffix twin chosen by verification", "stage_e_dagster/domain/evidence/line_verify.py",
        (("        return None  # a suffix twin: the suffix is what this reading sees worst", "        pass"),),
        ("tests/unit/test_line_verify.py::test_a_printing_with_a_suffix_twin_is_never_chosen",)),
    Breakage(
        "a legal line's string scored without its total", "stage_e_dagster/domain/evidence/line_verify.py",
        (("        if layout in (LEGAL_NUMBER, CENTRED) and total:", "        if layout in (LEGAL_NUMBER, CENTRED):"),
         ("f\"{shown}/{total}\", END,", "f\"{shown}/{total}\" if total else shown, END,")),
        ("tests/unit/test_line_verify.py::test_no_legal_string_without_the_sets_total",),
        what="a bare number at a legal line's end (a year's digits)"),
    Breakage(
        "the rescue engine's probabilities never asked", "stage_e_dagster/domain/evidence/collector.py",
        (("    return _verified(prepared, block, rescue, known, catalog, name, readings)", "    return None"),),
        ("tests/unit/test_line_verify.py::test_the_reader_asks_the_rescue_engine_last",)),
    Breakage(
        "the recogniser's alphabet off by a column", "stage_e_dagster/domain/evidence/ocr_rapid.py",
        (("enumerate(recogniser.postprocess_op.character) if k}",
          "enumerate(recogniser.postprocess_op.character, start=1) if k}"),),
        ("tests/unit/test_line_verify.py::test_the_rescue_engines_probabilities_choose_a_blurred_legal_lines_printing",)),
    Breakage(
        "agreeing reads settle a neighbour the rescue engine doubts", "stage_e_dagster/domain/evidence/collector.py",
        (("        if doubted(rescue, line, catalog, name, normalise_collector_number(reading.number), code):",
          "        if False:"),),
        ("tests/unit/test_line_verify.py::"
         "test_reads_that_agree_on_a_neighbour_the_rescue_engine_prefers_withdraw_their_number",)),
    Breakage(
        "agreeing reads withdrawn by a line that shows no printing's string",
        "stage_e_dagster/domain/evidence/line_verify.py",
        (("    return own is not None and other is not None and other < own and other <= MAX_COST",
          "    return own is not None and other is not None and other < own"),),
        ("tests/unit/test_line_verify.py::test_a_line_that_shows_no_printings_string_clearly_doubts_nothing",)),
    Breakage(
        "a name's strings cut short for verification", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    return strings if len(strings) <= MAX_STRINGS else []", "    return strings[:MAX_STRINGS]"),),
        ("tests/unit/test_line_verify.py::test_a_name_with_more_strings_than_are_scored_is_not_asked_about",)),
    Breakage(
        "the recogniser given the padded line Tesseract reads", "stage_e_dagster/domain/evidence/collector_views.py",
        (("RECOGNISER_MARGIN = 0.3\n", "RECOGNISER_MARGIN = 1.0\n"),),
        ("tests/unit/test_line_verify.py::"
         "test_the_recogniser_is_asked_about_the_number_line_its_type_nearly_filling_it",),
        what="the line's type a third of the recogniser's input"),
    Breakage(
        "a lone string held to the rivals' cost", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    alone = complete and all(s.key == best.key for s in strings)", "    alone = False"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_lone_string_is_taken_at_a_higher_cost_only_when_no_printing_is_unknown",)),
    Breakage(
        "a lone string taken at the higher cost beside a rival", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    alone = complete and all(s.key == best.key for s in strings)", "    alone = True"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_lone_string_is_taken_at_a_higher_cost_only_when_no_printing_is_unknown",)),
    Breakage(
        "a printing with no known string counted as numberless", "stage_e_dagster/domain/evidence/line_verify.py",
        (("    return all(key in keys or set(_layouts(catalog, key[0])) <= {NUMBERLESS} "
           "for key in catalog.printings_of(name))", "    return True"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_printing_without_a_known_string_leaves_the_lone_string_to_the_lower_cost",)),
    Breakage(
        "a basic land's chosen string wants a second read", "stage_e_dagster/domain/evidence/collector.py",
        (("    if not reading or not (reading.confirmed or reading.settled_if_agreed):",
          "    if not reading or not reading.confirmed:"),),
        ("tests/unit/test_line_verify.py::"
         "test_a_basic_lands_string_the_recogniser_chooses_is_read_though_its_neighbours_are_a_digit_away",)),
    Breakage(
        "digits just after the copyright sign read as the number", "stage_e_dagster/domain/evidence/parse.py",
        (('_COPYRIGHT_BEFORE = re.compile(r"(?:©|\\(c\\))\\s*$", re.IGNORECASE)',
          '_COPYRIGHT_BEFORE = re.compile(r"(?!)")'),),
        ("tests/unit/test_evidence_parse.py::test_a_year_or_a_set_code_is_never_the_number",),
        what="`_COPYRIGHT_BEFORE` never matches"),
    Breakage(
        "a small star read as a symbol before the slash loses the number", "stage_e_dagster/domain/evidence/parse.py",
        (("(?P<star_after>[★☆✶✱⭑*%#¢€])?", "(?P<star_after>[★☆✶✱⭑*%])?"),),
        ("tests/unit/test_evidence_parse.py::test_every_layouts_number",),
        what="`#`, `¢` and `€` before the slash no longer read as the star"),
    Breakage(
        "a small star blurred to a blob taken for nothing", "stage_e_dagster/domain/evidence/star_mark.py",
        (("    if _floating(before, first, digit):\n        return True", "    if False:\n        return True"),),
        ("tests/unit/test_star_mark.py::"
         "test_a_small_star_blurred_to_a_blob_clear_of_the_digits_top_and_baseline_is_a_star",),
        what="only a pointed star's shape is a star"),
    Breakage(
        "a small star blurred to a blob against a slash joined to the total taken for nothing",
        "stage_e_dagster/domain/evidence/star_mark.py",
        (("        return True if _floating_before_total(glyphs, total_digits) else None", "        return None"),),
        ("tests/unit/test_star_mark.py::"
         "test_a_small_star_blurred_to_a_blob_clear_of_the_digits_top_and_baseline_is_a_star",),
        what="the blob looked for only where the slash is parted from the total"),
    Breakage(
        "a one-digit rarity-first number read without its zeros", "stage_e_dagster/domain/evidence/line_verify.py",
        ((" if len(_base(number)) >= BARE_DIGITS else ", " if True else "),),
        ("tests/unit/test_line_verify.py::"
         "test_a_one_digit_rarity_first_number_is_not_read_off_a_line_ending_in_a_stroke",),
        what="the bare string scored for every rarity-first number"),
)
