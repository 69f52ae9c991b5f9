"""Settings of eligibility: the source conventions that say what kind of upload a file is (token, card back), its
tags and its language, and which scans a machine may vote on."""

from __future__ import annotations

from dataclasses import dataclass

from stage_e_dagster.domain.kinds import DEFAULT_MIN_DPI, LANGUAGE_CODES, LANGUAGE_FOLDERS
from stage_e_dagster.setting_groups.declare import comma_list, flag, pairs, positive_int, setting


@dataclass(frozen=True)
class EligibilitySettings:
    """The source conventions (which files are tokens, card backs, custom art or in a language) and which
    scans a machine may vote on."""

    token_folders: tuple[str, ...] = comma_list(
        "STAGE_E_TOKEN_FOLDERS", ("tokens",), "folders (any depth of a source) whose files are tokens")
    token_tags: tuple[str, ...] = comma_list(
        "STAGE_E_TOKEN_TAGS", ("token",), "bracketed file-name tags that make a token (`Goblin [token].png`)")
    cardback_folders: tuple[str, ...] = comma_list(
        "STAGE_E_CARDBACK_FOLDERS", ("cardbacks",), "folders whose files are card backs")
    cardback_tags: tuple[str, ...] = comma_list(
        "STAGE_E_CARDBACK_TAGS", ("cardback",), "file-name tags that make a card back")
    custom_art_tags: tuple[str, ...] = comma_list(
        "STAGE_E_CUSTOM_ART_TAGS", ("custom art", "custom-art"), "file-name tags that mark custom art")
    language_codes: tuple[str, ...] = comma_list(
        "STAGE_E_LANGUAGE_CODES", LANGUAGE_CODES, "language codes a file-name tag (`[de]`) or a folder of that name "
        "sets", shown="Scryfall's: `" + ",".join(LANGUAGE_CODES) + "`")
    language_folders: tuple[tuple[str, str], ...] = comma_list(
        "STAGE_E_LANGUAGE_FOLDERS", LANGUAGE_FOLDERS, "more folder names that set a language, as `folder=code` "
        "pairs", pairs, shown="English and native names, e.g. `german=de,deutsch=de,japanese=ja` (README, Kinds of "
        "upload)")
    min_dpi: int = setting(
        "STAGE_E_MIN_DPI", DEFAULT_MIN_DPI, "scans under this resolution (pixels over the card's 63 x 88 mm, the "
        "smaller axis) get no machine vote and go to review as `low-dpi` (applied by the next `stage-e db upgrade` or "
        "`stage-e dev`)",
        positive_int)
    english_match: bool = setting(
        "STAGE_E_MATCH_FOREIGN_TO_ENGLISH", False, "`on`: a non-English scan is machine-voted onto its English "
        "printing instead of going to review as `non-english` (applied like `STAGE_E_MIN_DPI`)", flag,
        shown="off")
