"""The breakage table's rows for the card finder: whether an image is a photo, the card's outline, straightening
and way up, and the named skips (`breakage_rows.BREAKAGES` lists them after the evidence rows)."""

from __future__ import annotations

from tools.breakage_row import Breakage

FINDER_BREAKAGES = (
    Breakage(
        "scans sent down the photo path", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if is_card_shaped(width, height):\n        return FoundCard(image, image_corners(), SCAN)",
          "    if False:\n        return FoundCard(image, image_corners(), SCAN)"),),
        ("tests/unit/test_card_finder.py::test_an_ordinary_scan_is_already_a_card",),
        what="the card-proportions test skipped"),
    Breakage(
        "a photo of several cards taken as one", "stage_e_dagster/domain/evidence/card_choice.py",
        (("    if rivals:\n", "    if False:\n"),),
        ("tests/unit/test_card_finder.py::test_a_photo_of_two_cards_skips_as_several",),
        what="rival cards ignored"),
    Breakage(
        "a card cut off by the frame not seen", "stage_e_dagster/domain/evidence/card_choice.py",
        (("    if cut:\n        best = max(cut", "    if False:\n        best = max(cut"),),
        ("tests/unit/test_card_finder.py::test_a_card_cut_off_by_the_frame_skips_as_cut_off",),
        what="cut-off outlines ignored"),
    Breakage(
        "a cut-off card's art box answered too small", "stage_e_dagster/domain/evidence/card_finder.py",
        (("            if art_box_runs_off(full_quad, (width, height), lambda q: edges_seen_inside(",
          "            if False and art_box_runs_off(full_quad, (width, height), lambda q: edges_seen_inside("),),
        ("tests/unit/test_card_cut_off.py::test_an_art_box_whose_card_runs_off_the_photo_is_a_card_cut_off",),
        what="an art box whose card runs off the photo not called cut off"),
    Breakage(
        "a cut-off card's frame taken for a second card", "stage_e_dagster/domain/evidence/card_choice.py",
        (("    if parts and max(o.area for o in parts) > best.area:", "    if False:"),),
        ("tests/unit/test_card_cut_off.py::"
         "test_a_frame_inside_a_card_run_off_the_photo_outweighs_a_small_whole_shape",),
        what="a frame inside a cut-off outline ignored"),
    Breakage(
        "a card in a top-loader run off the photo not proved by its lines",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("    if not top and proved is not None:", "    if False:"),),
        ("tests/unit/test_card_proof.py::test_a_card_in_a_top_loader_run_off_the_photo_is_found_by_its_frame_lines",),
        what="no card-like outline off the surface proved by its frame lines"),
    Breakage(
        "a small card near the frame called cut off", "stage_e_dagster/domain/evidence/card_faces.py",
        (("    return any((np.any(card < 0) or np.any(card > limit)) and seen(card) for card in _cards_round(quad))",
          "    return any((np.any(card < 0) or np.any(card > limit)) for card in _cards_round(quad))"),),
        ("tests/unit/test_card_cut_off.py::test_a_small_card_near_the_frame_is_not_called_cut_off",),
        what="the card round an art box taken as run off without its edges seen"),
    Breakage(
        "two parts of one card taken for two cards", "stage_e_dagster/domain/evidence/card_choice.py",
        (("    if len(rivals) == 1 and proved is not None:", "    if False:"),),
        ("tests/unit/test_card_proof.py::test_two_parts_of_one_card_split_by_a_line_across_it_are_one_card",),
        what="no join of two card-like parts proved by their frame lines"),
    Breakage(
        "a card's frame taken for it in its sleeve, no other outline read",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("        if held is None:  # another outline over the same card", "        if False:  # another outline"),),
        ("tests/unit/test_card_proof.py::"
         "test_a_card_whose_frame_passed_for_it_is_found_by_another_outline_over_it",),
        what="no other outline over the card read when its face shows too few lines"),
    Breakage(
        "a card's frame inside a dark border never grown to the card",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("            held = round_frame(image, full_quad)", "            held = None"),),
        ("tests/unit/test_card_proof.py::"
         "test_a_card_whose_outline_lay_on_its_frame_inside_a_dark_border_is_found_round_it",),
        what="an outline on the frame not straightened larger when its face shows too few lines"),
    Breakage(
        "a card grown round its outline need not hold it",
        "stage_e_dagster/domain/evidence/card_faces.py",
        (("    return found if np.all(inside >= -FRAME_HELD) and np.all(inside <= 1 + FRAME_HELD) else None",
          "    return found"),),
        ("tests/unit/test_card_proof.py::test_a_card_grown_round_its_outline_must_hold_it",),
        what="a card fitted round a frame kept though a side moved in past the outline"),
    Breakage(
        "corners fitted off the photo keep the fit's line share",
        "stage_e_dagster/domain/evidence/card_straighten.py",
        (("            score = first\n", "            pass\n"),),
        ("tests/unit/test_card_finder.py::"
         "test_corners_fitted_off_the_photo_leave_the_outline_with_its_own_line_share",),
        what="the unmoved outline returned with the moved one's line share"),
    Breakage(
        "a band grown on to the frame round a whole card calls it cut off",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if grown.runs_off and not proved(quad):", "    if grown.runs_off:"),),
        ("tests/unit/test_card_proof.py::"
         "test_a_band_grown_on_to_the_frame_round_a_card_proved_whole_is_no_cut_off_card",),
        what="a border band run off the photo calls the card cut off though its face proves it whole"),
    Breakage(
        "a card inside a cut-off shape never proved by its face",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("        looks = outer + [c for c in card_like if all(c is not o for o in outer)",
          "        looks = outer + [c for c in () if all(c is not o for o in outer)"),),
        ("tests/unit/test_card_proof.py::"
         "test_a_card_inside_a_cut_off_shape_proved_whole_by_its_face_is_the_card",),
        what="only outlines inside no cut-off shape read for their frame lines"),
    Breakage(
        "a card split by a line across it not joined with its part off the surface",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("        best = _split_card(best, card_like, proved, w, h)", "        pass"),),
        ("tests/unit/test_card_parts.py::"
         "test_a_card_split_by_a_line_across_it_is_joined_with_its_part_off_the_surface",),
        what="no card-like part beside the chosen outline joined with it"),
    Breakage(
        "a card whose edge left no outline not looked for round its printed boxes",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("            return FoundCard(image, image_corners(), SCAN, detail={\"loose\": True})\n"
          "        return _by_parts(image, found, prepared, factor, min_area) or chosen",
          "            return FoundCard(image, image_corners(), SCAN, detail={\"loose\": True})\n"
          "        return chosen"),),
        ("tests/unit/test_card_parts.py::test_a_card_whose_edge_left_no_outline_is_found_round_its_text_box",),
        what="no card guessed round a text box or art box when no outline made one"),
    Breakage(
        "a second card whose edge left no outline not seen", "stage_e_dagster/domain/evidence/card_finder.py",
        (("        second = second_by_parts(image, found, prepared, factor, _grown(quad_full * factor, HOLDER_REACH))",
          "        second = None"),),
        ("tests/unit/test_card_parts.py::test_a_second_card_whose_edge_left_no_outline_makes_a_photo_of_several",),
        what="no second card looked for round a part of its printing"),
    Breakage(
        "a small card never seen closer", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if zoom and isinstance(answer, CardNotFound) and answer.reason in (NO_CARD, CARD_CUT_OFF):",
          "    if False:"),),
        ("tests/unit/test_card_parts.py::test_a_small_card_seen_closer_is_too_small_not_absent",),
        what="no crop round a small card-shaped outline looked at afresh"),
    Breakage(
        "a small card on a palm never looked at round the palm", "stage_e_dagster/domain/evidence/card_finder.py",
        (("ZOOM_ASPECT, ZOOM_MIN_CARD, ZOOM_FULL = (ASPECT_RANGE[0], 1.0), 0.01, 0.85",
          "ZOOM_ASPECT, ZOOM_MIN_CARD, ZOOM_FULL = ASPECT_RANGE, 0.01, 0.85"),),
        ("tests/unit/test_card_closer.py::test_a_small_card_on_a_palm_is_seen_closer_round_the_palm",),
        what="crops only round outlines in a card's proportions"),
    Breakage(
        "a small card with no outline never looked for on a larger copy",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if small is None and larger:", "    if False:"),),
        ("tests/unit/test_card_closer.py::test_a_small_card_with_no_outline_is_seen_on_a_larger_copy",),
        what="no second outline search"),
    Breakage(
        "a crop looked at closer held to the photo's least card area",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if area < min_area:\n        return CardNotFound(CARD_TOO_SMALL, {\"area\": round(area, 4), "
          "\"min_area\": min_area})\n    second = ",
          "    if area < MIN_CARD_AREA:\n        return CardNotFound(CARD_TOO_SMALL, {\"area\": round(area, 4)})\n"
          "    second = "),),
        ("tests/unit/test_card_closer.py::test_a_crop_looked_at_closer_finds_a_card_under_the_photo_s_least_area",),
        what="a small card in a crop answered too small there, not found"),
    Breakage(
        "a small card looked at no closer than the photo", "stage_e_dagster/domain/evidence/card_finder.py",
        (("ZOOM, ZOOM_SIDE, ZOOM_LOOKS, ZOOM_AREA = (2.5, 1.5, 1.1), 480, 3, (0.01, 0.2)",
          "ZOOM, ZOOM_SIDE, ZOOM_LOOKS, ZOOM_AREA = (2.5,), 480, 3, (0.01, 0.2)"),
         ("            if side > ZOOM_FULL * min(width, height):\n                continue", "")),
        ("tests/unit/test_card_closer.py::test_a_small_card_in_a_palm_blob_taken_for_an_art_box_is_seen_closer",),
        what="one crop per outline, the photo's size at most"),
    Breakage(
        "a second card with a frame line hidden not counted", "stage_e_dagster/domain/evidence/card_parts.py",
        (("SECOND_LINES = 0.85", "SECOND_LINES = 0.9"),),
        ("tests/unit/test_card_closer.py::test_a_second_card_whose_glare_hides_a_frame_line_makes_several",),
        what="a second card needs a found card's share of its lines"),
    Breakage(
        "a part near the frame called cut off before the card round it is looked for",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("            return _by_parts(image, found, prepared, factor, min_area) or chosen\n        if chosen.reason",
          "            return chosen\n        if chosen.reason"),),
        ("tests/unit/test_card_closer.py::test_two_cards_seen_only_by_their_boxes_near_the_frame_are_several_not_cut_off",),
        what="no card looked for round the parts"),
    Breakage(
        "a frame grown to the photo's edge called cut off though its card lies whole",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("        held = _round_frame_within(image, settle(quad, directional, colours) / factor)",
          "        held = None"),),
        ("tests/unit/test_card_closer.py::test_a_black_bordered_card_whose_frame_grew_to_the_photo_edge_is_found_round_it",),
        what="no card looked for round the frame"),
    Breakage(
        "a patch of the surface round the card kept for it", "stage_e_dagster/domain/evidence/card_finder.py",
        (("        if retry and any(proved(o.polygon) for o in _inside(picked, found)):", "        if False:"),),
        ("tests/unit/test_card_closer.py::test_a_card_inside_a_patch_of_the_surface_taken_for_it_is_chosen_again",),
        what="no card chosen again inside an outline of no card's shape"),
    Breakage(
        "an outline of no card's shape called cut off before the card round its boxes is looked for",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("        return _by_parts(image, found, prepared, factor, min_area, quad) or CardNotFound(",
          "        return None or CardNotFound("),),
        ("tests/unit/test_card_closer.py::test_a_card_whose_outline_is_no_card_s_shape_is_looked_for_round_its_boxes",),
        what="no card looked for round the parts"),
    Breakage(
        "a top-loader's edge kept for its card", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if lines >= LAYOUT_MIN and corners_moved(full_quad, quad_full) > HOLDER_MOVED:", "    if False:"),),
        ("tests/unit/test_card_closer.py::"
         "test_a_card_in_a_top_loader_whose_face_shows_its_lines_is_chosen_over_the_holder",),
        what="no card looked for inside an outline whose fit moved its corners"),
    Breakage(
        "a card guessed round a box kept though its inside is the surface",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("    return len(pixels) > 0 and float(np.mean(", "    return True or len(pixels) > 0 and float(np.mean("),),
        ("tests/unit/test_card_parts.py::test_a_card_guessed_round_a_box_whose_inside_is_the_surface_is_no_card",),
        what="`_printed` passes every guess"),
    Breakage(
        "a card whose outline is cut short or drawn long never looked for along it",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("    cards = [(card, False) for card in (cards_along(along) if along is not None else [])]",
          "    cards = [(card, False) for card in ([] if along is not None else [])]"),),
        ("tests/unit/test_card_along.py::test_a_card_whose_outline_a_glare_band_cut_short_is_found_along_it",
         "tests/unit/test_card_along.py::test_a_card_whose_outline_a_palm_drew_long_is_found_along_it"),
        what="no card along the chosen outline read"),
    Breakage(
        "a part of a card called too small before the cards along it are read",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("            small_part = area < min_area and not runs_off_round(picked, found, (sh, sw))",
          "            if area < min_area:\n                return CardNotFound(CARD_TOO_SMALL, {})\n"
          "            small_part = area < min_area and not runs_off_round(picked, found, (sh, sw))"),),
        ("tests/unit/test_card_along.py::test_a_card_whose_outline_a_glare_band_cut_short_is_found_along_it",),
        what="a part under the least card area answered too small by its own area"),
    Breakage(
        "a card along an outline kept though its fitted sides lie off edges",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("((part and _printed(moved, prepared)) or edges_seen(moved, prepared.gradient))",
          "((part and _printed(moved, prepared)) or not part)"),),
        ("tests/unit/test_card_along.py::test_a_card_along_an_outline_fitted_past_its_edges_is_not_answered",),
        what="a card along the outline kept on its frame lines alone"),
    Breakage(
        "a part of a card cut off called too small", "stage_e_dagster/domain/evidence/card_finder.py",
        (("            small_part = area < min_area and not runs_off_round(picked, found, (sh, sw))",
          "            small_part = area < min_area"),),
        ("tests/unit/test_card_along.py::test_a_part_of_a_card_inside_a_shape_run_off_the_frame_is_a_card_cut_off",
         "tests/unit/test_card_along.py::"
         "test_a_part_of_a_card_inside_a_shape_ending_just_short_of_the_frame_is_a_card_cut_off"),
        what="a small unproved part answered too small inside a shape run off the frame"),
    Breakage(
        "a photographed card never turned upright", "stage_e_dagster/domain/evidence/card_straighten.py",
        (("    if turn:\n", "    if False:\n"),),
        ("tests/unit/test_card_finder.py::test_a_photographed_card_is_found_straightened_and_upright",),
        what="orientation ignored"),
    Breakage(
        "a small card seen closer only twice", "stage_e_dagster/domain/evidence/card_finder.py",
        (("ZOOM, ZOOM_SIDE, ZOOM_LOOKS, ZOOM_AREA = (2.5, 1.5, 1.1),",
          "ZOOM, ZOOM_SIDE, ZOOM_LOOKS, ZOOM_AREA = (2.5, 1.5),"),),
        ("tests/unit/test_card_closer.py::"
         "test_a_small_card_on_a_palm_is_seen_closer_still_when_the_palm_s_crop_shows_too_much",),
        what="no look just round a palm's blob"),
    Breakage(
        "two parts of a card cut off taken for two cards",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("        beside = [o for o in beside if not cut_beside(o, found)]", "        beside = list(beside)"),),
        ("tests/unit/test_card_along.py::"
         "test_two_parts_of_a_card_cut_off_beside_its_cut_text_box_are_a_card_cut_off",),
        what="a part beside an unproved part, a cut-off card within reach of both, counted as a second card"),
    Breakage(
        "a part of a card beside a card cut off called too small", "stage_e_dagster/domain/evidence/card_choice.py",
        ((" for o in found) or cut_beside(part, found)", " for o in found)"),),
        ("tests/unit/test_card_along.py::"
         "test_two_parts_of_a_card_cut_off_beside_its_cut_text_box_are_a_card_cut_off",),
        what="no cut-off shape looked for within a part's reach"),
    Breakage(
        "a patch of the surface beside a proved card taken for a second card",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("    return rest if any(proved(c.polygon) for c in rest) else top", "    return top"),),
        ("tests/unit/test_card_proof.py::"
         "test_a_patch_of_wood_in_a_card_s_shape_beside_a_small_card_is_no_second_card",),
        what="card-like patches of the surface kept beside a card proved by its lines"),
    Breakage(
        "a second card whose face has the surface's colours not counted",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("        if score >= PART_LAYOUT:  # (every line", "        if False:  # (every line"),
         ("            if apart_from(moved, reach) and (held[3] >= PART_LAYOUT",
          "            if apart_from(moved, reach) and (False")),
        ("tests/unit/test_card_closer.py::test_a_second_card_whose_face_looks_like_the_wood_makes_several",),
        what="a second card with every frame line, as read or once fitted, still needs a printed inside"),
    Breakage(
        "a patch of the surface beside a card cut off taken for the card",
        "stage_e_dagster/domain/evidence/card_choice.py",
        (("        return [] if cut_seen else top", "        return top"),),
        ("tests/unit/test_card_along.py::test_a_patch_of_wood_in_a_card_s_shape_beside_a_card_cut_off_is_no_card",),
        what="card-like patches of the surface kept when a card cut off is seen"),
    Breakage(
        "a second card grazing the found card's reach taken for part of it",
        "stage_e_dagster/domain/evidence/card_faces.py",
        (("SECOND_GRAZE = 0.02", "SECOND_GRAZE = 0.0"),),
        ("tests/unit/test_card_parts.py::"
         "test_a_second_card_turned_beside_the_first_grazing_its_holders_reach_makes_a_photo_of_several",),
        what="no graze allowed"),
    Breakage(
        "a second card's outline not fitted to its lines", "stage_e_dagster/domain/evidence/card_faces.py",
        (("        if score >= SECOND_FIT:  # (its outline a little off the card: fitted to its lines)",
          "        if False:"),),
        ("tests/unit/test_card_parts.py::"
         "test_a_small_second_card_whose_outline_is_a_little_off_is_fitted_to_its_lines",),
        what="`second_card` reads only the outline's own face"),
    Breakage(
        "a card round a part whose face shares the surface's colours not found",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("                and ((part and _printed(moved, prepared)) or edges_seen(moved, prepared.gradient))):",
          "                and (_printed(moved, prepared) if part else edges_seen(moved, prepared.gradient))):"),),
        ("tests/unit/test_card_parts.py::"
         "test_a_card_round_a_box_whose_face_shares_the_surface_s_colours_is_found_by_its_edges",),
        what="a card round a part needs a printed inside even when its fitted sides lie on edges"),
    Breakage(
        "a top-loader beside a card cut by the frame answered as no card",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("CARD_CUT_OFF if area < min_area or cut_beside(picked, found)", "CARD_CUT_OFF if area < min_area"),),
        ("tests/unit/test_card_parts.py::test_a_top_loader_beside_a_card_cut_by_the_frame_is_a_card_cut_off",),
        what="a cut-off shape beside an unproved card-like outline ignored"),
    Breakage(
        "a card cut off told only by its text box answered as no card",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("        if answer.reason == NO_CARD and cut_off_round_part(found, prepared):", "        if False:"),),
        ("tests/unit/test_card_parts.py::test_a_card_cut_off_whose_edge_left_no_outline_is_told_by_its_text_box",),
        what="a part's card running off the photo not looked for"),
    Breakage(
        "a whole card's box taken for a card cut off",
        "stage_e_dagster/domain/evidence/card_parts.py",
        ((" and not any(edges for inside, _, edges in seen if inside)):", "):"),),
        ("tests/unit/test_card_parts.py::test_a_whole_card_s_box_says_nothing_of_a_card_cut_off[0-278]",),
        what="the card round the box inside the photo not weighed"),
    Breakage(
        "a card leaving the photo by a corner taken for a card cut off",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("                side_off = any(side is None for side in inside_parts(card, (h, w)))",
          "                side_off = not whole"),),
        ("tests/unit/test_card_parts.py::test_a_whole_card_s_box_says_nothing_of_a_card_cut_off[5-201]",),
        what="any card running off counts, a corner enough"),
    Breakage(
        "a card along a half outline estimated only in the outline's perspective",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("        if not np.allclose(straight, cards[-1], atol=ALONG_APART):", "        if False:"),),
        ("tests/unit/test_card_along.py::test_an_outline_narrowed_at_its_far_end_gives_the_card_straight_on_too",
         "tests/unit/test_card_parts.py::test_a_second_card_outlined_only_to_its_middle_makes_a_photo_of_several"),
        what="`cards_along` without its straight estimate"),
    Breakage(
        "a second card along a half outline not looked for",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("along = [card for o in strong(beside)[:PART_LOOKS]", "along = [card for o in strong(beside)[:0]"),),
        ("tests/unit/test_card_parts.py::test_a_second_card_outlined_only_to_its_middle_makes_a_photo_of_several",),
        what="`second_by_parts` reads cards round parts only"),
    Breakage(
        "a fitted second card whose face has the surface's colours not counted",
        "stage_e_dagster/domain/evidence/card_parts.py",
        (("            if apart_from(moved, reach) and (held[3] >= PART_LAYOUT",
          "            if apart_from(moved, reach) and (False"),),
        ("tests/unit/test_card_parts.py::test_a_second_card_outlined_only_to_its_middle_makes_a_photo_of_several",),
        what="a fitted second card always needs a printed inside"),
    Breakage(
        "a small photo searched at its own size", "stage_e_dagster/domain/evidence/card_finder.py",
        (("    if enlarge and max(width, height) < FIND_LONG_SIDE:", "    if False:"),),
        ("tests/unit/test_card_small_photo.py::test_a_photo_a_thousand_pixels_long_is_found_as_at_a_phones_size",),
        what="a photo under FIND_LONG_SIDE not enlarged"),
    Breakage(
        "a small photo's card cut out of its enlargement", "stage_e_dagster/domain/evidence/card_finder.py",
        (("            seen, image=image if seen.kind == SCAN else warp_card(image, seen.corners))",
          "            seen, image=image if seen.kind == SCAN else seen.image)"),),
        ("tests/unit/test_card_small_photo.py::test_a_small_photos_card_is_cut_from_the_photo_itself",),
        what="the enlarged copy's card kept"),
    Breakage(
        "a small card beside a small shape run off the photo answered cut off",
        "stage_e_dagster/domain/evidence/card_finder.py",
        (("answer.reason == NO_CARD or cut_small)", "answer.reason == NO_CARD)"),),
        ("tests/unit/test_card_closer.py::"
         "test_a_small_card_beside_a_small_shape_run_off_the_photo_is_seen_on_a_larger_copy",),
        what="only a photo with no card searched on the larger copy"),
)
