"""The current version of each Stage C extractor: stored with the evidence it produced, and read by the work rule
to know which evidence is stale. A module of its own so that reading the versions imports no image code.

`card` is the card finder (`card_finder.find_card`): its field is where the card lies in the image. Every other
extractor reads the card it cut out, so when a photo's `card` version is stale, Stage C reads the photo afresh
(`extract.extract_from_loaded`); a scan, which already is the card, only has its corners written."""

from __future__ import annotations

EXTRACTOR_VERSIONS: dict[str, str] = {
    "geometry": "geometry-v3",
    "collector": "collector-v15",
    "legal": "legal-v3",
    "hashes": "hashes-v2",
    "quality": "quality-v2",
    "card": "card-v13",
}
EXTRACTORS = tuple(EXTRACTOR_VERSIONS)


def stale_extractors(stored_versions: dict[str, str] | None) -> set[str]:
    """Extractors whose stored version differs from the current one (all of them when nothing is stored)."""
    stored = stored_versions or {}
    return {name for name, version in EXTRACTOR_VERSIONS.items() if stored.get(name) != version}
