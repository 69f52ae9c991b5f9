"""Ingest: every image under a directory becomes a card; re-ingest is idempotent; bad files never crash it."""

from __future__ import annotations

import os

import pytest
from PIL import Image
from sqlalchemy import select, text

from stage_e_dagster.db.core.engine import get_engine, session_scope
from stage_e_dagster.db.core.models import Card
from stage_e_dagster.db.intake.ingest import ingest_directory
from stage_e_dagster.db.intake.sources import card_counts
from stage_e_dagster.domain.kinds import Conventions
from testkit.sql import rows


def _png(path, colour=(200, 10, 10), size=(63, 88)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def _cards(db_url) -> dict[str, Card]:
    with session_scope(get_engine(db_url)) as s:
        return {c.identifier: c for c in s.scalars(select(Card))}


@pytest.fixture
def scans(tmp_path):
    root = tmp_path / "scans"
    _png(root / "Opt [XLN].png")
    _png(root / "sub" / "Lightning Bolt [M10] (2).jpg".replace(".jpg", ".png"))
    Image.new("RGB", (63, 88), "blue").save(root / "sub" / "Counterspell.jpg")
    (root / "notes.txt").write_text("not an image")
    return root


def test_ingest_registers_images_with_parsed_names_and_hashes(db_url, db_engine, scans):
    summary = ingest_directory(db_engine, scans, "local")
    assert (summary.new, summary.unchanged) == (3, 0)
    cards = _cards(db_url)
    assert set(cards) == {"Opt [XLN].png", "sub/Lightning Bolt [M10] (2).png", "sub/Counterspell.jpg"}
    opt = cards["Opt [XLN].png"]
    assert (opt.name, opt.expansion_hint) == ("Opt", "xln")
    assert len(opt.content_sha256) == 64 and opt.content_phash is not None
    assert -(2**63) <= opt.content_phash < 2**63
    assert cards["sub/Counterspell.jpg"].expansion_hint is None


def test_reingest_is_idempotent_and_changes_update_the_row(db_url, db_engine, scans):
    ingest_directory(db_engine, scans, "local")
    again = ingest_directory(db_engine, scans, "local")
    assert (again.new, again.changed, again.unchanged) == (0, 0, 3)
    before = _cards(db_url)["Opt [XLN].png"]
    _png(scans / "Opt [XLN].png", colour=(10, 200, 10), size=(70, 90))
    changed = ingest_directory(db_engine, scans, "local")
    assert (changed.new, changed.changed, changed.unchanged) == (0, 1, 2)
    after = _cards(db_url)["Opt [XLN].png"]
    assert after.id == before.id and after.content_sha256 != before.content_sha256


def test_vanished_files_are_reported_and_marked(db_url, db_engine, scans):
    ingest_directory(db_engine, scans, "local")
    (scans / "sub" / "Counterspell.jpg").unlink()
    summary = ingest_directory(db_engine, scans, "local")
    assert summary.vanished == ["sub/Counterspell.jpg"]
    assert _cards(db_url)["sub/Counterspell.jpg"].missing_since is not None
    Image.new("RGB", (63, 88), "blue").save(scans / "sub" / "Counterspell.jpg")
    ingest_directory(db_engine, scans, "local")
    assert _cards(db_url)["sub/Counterspell.jpg"].missing_since is None


def test_unreadable_files_are_counted_and_registered_without_a_phash(db_url, db_engine, scans):
    (scans / "empty.png").write_bytes(b"")
    (scans / "text.jpg").write_text("hello")
    summary = ingest_directory(db_engine, scans, "local")
    assert sorted(summary.unreadable) == ["empty.png", "text.jpg"]
    cards = _cards(db_url)
    assert cards["text.jpg"].content_phash is None and cards["empty.png"].size_bytes == 0


def test_symlinks_and_escaping_paths_are_refused(db_url, db_engine, scans, tmp_path):
    outside = tmp_path / "outside"
    _png(outside / "Secret.png")
    os.symlink(outside / "Secret.png", scans / "Secret.png")
    os.symlink(outside, scans / "linked-dir")
    summary = ingest_directory(db_engine, scans, "local")
    assert sorted(summary.refused) == [("Secret.png", "symlink"), ("linked-dir", "symlink")]
    assert "Secret.png" not in _cards(db_url)


def test_missing_directory_is_a_clear_error(db_engine, tmp_path):
    with pytest.raises(NotADirectoryError):
        ingest_directory(db_engine, tmp_path / "nope", "local")


def test_pipes_and_other_special_files_are_refused_not_read(db_engine, scans):
    os.mkfifo(scans / "Stalled [M20].png")  # reading it would block forever
    summary = ingest_directory(db_engine, scans, "local")
    assert ("Stalled [M20].png", "not a regular file") in summary.refused


def test_each_card_takes_its_kind_language_and_tags_from_the_conventions(db_url, db_engine, tmp_path):
    root = tmp_path / "kinds"
    for name in ("tokens/Goblin.png", "cardbacks/Back.png", "Opt [custom art] [XLN].png", "german/Opt.png",
                 "Opt [ja] [M20] [token].png", "Spielsteine/Elf.png"):
        _png(root / name, colour=(len(name), 20, 30))
    ingest_directory(db_engine, root, "kinds")
    seen = {i: (c.kind, c.language, sorted(c.tags), c.name, c.expansion_hint) for i, c in _cards(db_url).items()}
    assert seen == {
        "tokens/Goblin.png": ("token", None, [], "Goblin", None),
        "cardbacks/Back.png": ("cardback", None, [], "Back", None),
        "Opt [custom art] [XLN].png": ("card", None, ["custom-art"], "Opt", "xln"),
        "german/Opt.png": ("card", "de", [], "Opt", None),
        "Opt [ja] [M20] [token].png": ("token", "ja", [], "Opt", "m20"),
        "Spielsteine/Elf.png": ("card", None, [], "Elf", None),
    }

    # An operator's conventions: a re-sync (even one trusting every file unchanged) brings every card in line, and
    # the work rule has Stage D judge a card whose values changed again.
    with db_engine.begin() as conn:
        conn.execute(text("INSERT INTO image_evidence (card_id, content_sha256, extractor_versions, decided_by) "
                          "SELECT c.id, c.content_sha256, r.current_versions, r.decided_by FROM card c, work_rule r"))
        assert conn.execute(text("SELECT count(*) FROM card_work WHERE stage = 'D'")).scalar() == 0
    mine = Conventions.of(token_folders=["spielsteine"], token_tags=[], cardback_folders=["cardbacks"],
                          cardback_tags=[], custom_art_tags=["custom art"], language_codes=["de", "ja"],
                          language_folders=[])
    summary = ingest_directory(db_engine, root, "kinds", trust_before=float("inf"), conventions=mine)
    assert summary.trusted == 6
    kinds = {i: (c.kind, c.language) for i, c in _cards(db_url).items()}
    assert kinds["tokens/Goblin.png"] == ("card", None) and kinds["Spielsteine/Elf.png"] == ("token", None)
    assert kinds["german/Opt.png"] == ("card", None) and kinds["Opt [ja] [M20] [token].png"] == ("card", "ja")
    with db_engine.connect() as conn:
        reopened = set(conn.execute(text("SELECT c.identifier FROM card_work w JOIN card c ON c.id = w.card_id "
                                         "WHERE w.stage = 'D'")).scalars())
    assert reopened == {"tokens/Goblin.png", "Spielsteine/Elf.png", "german/Opt.png", "Opt [ja] [M20] [token].png"}


def test_two_sources_with_the_same_file_names_keep_their_own_cards(db_url, db_engine, tmp_path):
    """Sources `a` and `b` hold files of the same names (one with the same bytes): ingesting one never counts,
    marks, brings back or re-classifies the other's cards, and each source counts its own."""
    a, b = tmp_path / "a", tmp_path / "b"
    _png(a / "Opt.png")
    _png(a / "tokens" / "Goblin.png")
    _png(a / "Bolt.png", colour=(1, 2, 3))
    _png(b / "Opt.png")  # the same bytes as a's
    _png(b / "tokens" / "Goblin.png", colour=(9, 9, 9))
    assert ingest_directory(db_engine, a, "a").new == 3
    first = ingest_directory(db_engine, b, "b", conventions=Conventions(token_folders=frozenset()))
    assert (first.new, first.changed, first.unchanged, first.vanished) == (2, 0, 0, [])

    def cards() -> list[tuple]:
        return rows(db_url, "SELECT s.key, c.identifier, c.kind, c.missing_since IS NOT NULL FROM card c "
                            "JOIN source s ON s.id = c.source_id ORDER BY 1, 2")

    assert cards() == [("a", "Bolt.png", "card", False), ("a", "Opt.png", "card", False),
                       ("a", "tokens/Goblin.png", "token", False), ("b", "Opt.png", "card", False),
                       ("b", "tokens/Goblin.png", "card", False)]
    (a / "Opt.png").unlink()
    (b / "Opt.png").unlink()
    assert ingest_directory(db_engine, a, "a").vanished == ["Opt.png"]
    assert ingest_directory(db_engine, b, "b").vanished == ["Opt.png"]
    _png(b / "Opt.png")
    ingest_directory(db_engine, b, "b")  # b's file is back; a's is not
    assert [(key, name, missing) for key, name, _, missing in cards() if name == "Opt.png"] == [
        ("a", "Opt.png", True), ("b", "Opt.png", False)]
    with get_engine(db_url).connect() as conn:
        assert card_counts(conn) == {"a": (3, 1), "b": (2, 0)}
