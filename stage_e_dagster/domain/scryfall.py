"""Scryfall card objects as catalogue records: validation and the fields the `printing` table keeps."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from stage_e_dagster.domain.catalog import normalise_name

REQUIRED = ("id", "name", "set", "collector_number")
MAX_FACES = 16


class MalformedCard(ValueError):
    """A card object that cannot become a printing; the message says which field is wrong."""


@dataclass(frozen=True)
class PrintingRecord:
    """One printing, ready to upsert (`set_code` lower case; `released_at` None when absent)."""

    scryfall_id: str
    name: str
    name_normalised: str
    set_code: str
    set_name: str
    collector_number: str
    lang: str | None
    released_at: date | None
    rarity: str | None
    artist: str | None
    border_color: str | None
    frame: str | None
    layout: str | None
    face_names: list[str] | None
    face_names_normalised: list[str] | None = None  # what the face-name lookup matches a card's name against


def _text(obj: dict[str, Any], key: str, limit: int) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise MalformedCard(f"{key!r} is {type(value).__name__}, not a string")
    if len(value) > limit:
        raise MalformedCard(f"{key!r} is longer than {limit} characters")
    return value


def parse_card(obj: Any) -> PrintingRecord:
    """Validate one Scryfall card object; raise `MalformedCard` naming the problem."""
    if not isinstance(obj, dict):
        raise MalformedCard(f"expected an object, got {type(obj).__name__}")
    missing = [key for key in REQUIRED if not obj.get(key)]
    if missing:
        raise MalformedCard(f"missing {', '.join(missing)}")
    released = obj.get("released_at")
    try:
        released_at = date.fromisoformat(released) if released else None
    except (TypeError, ValueError) as err:
        raise MalformedCard(f"released_at {released!r} is not a YYYY-MM-DD date") from err
    faces = obj.get("card_faces")
    face_names = None
    if faces is not None:
        if not isinstance(faces, list) or not all(isinstance(f, dict) and f.get("name") for f in faces):
            raise MalformedCard("card_faces is not a list of named faces")
        if len(faces) > MAX_FACES:
            raise MalformedCard(f"card_faces has {len(faces)} faces, more than {MAX_FACES}")
        face_names = [_text(f, "name", 300) or "" for f in faces]
    name = _text(obj, "name", 300) or ""
    set_code = (_text(obj, "set", 8) or "").lower()
    return PrintingRecord(
        scryfall_id=_text(obj, "id", 36) or "",
        name=name,
        name_normalised=normalise_name(name),
        set_code=set_code,
        set_name=_text(obj, "set_name", 300) or set_code.upper(),
        collector_number=_text(obj, "collector_number", 16) or "",
        lang=_text(obj, "lang", 8),
        released_at=released_at,
        rarity=_text(obj, "rarity", 16),
        artist=_text(obj, "artist", 500),
        border_color=_text(obj, "border_color", 16),
        frame=_text(obj, "frame", 16),
        layout=_text(obj, "layout", 32),
        face_names=face_names,
        face_names_normalised=None if face_names is None else [normalise_name(face) for face in face_names],
    )
