"""The current version of each Stage C extractor: stored with the evidence it produced, and read by the work rule
to know which evidence is stale. A module of its own so that reading the versions imports no image code."""

from __future__ import annotations

EXTRACTOR_VERSIONS: dict[str, str] = {
    "geometry": "geometry-v3",
    "collector": "collector-v3",
    "legal": "legal-v3",
    "hashes": "hashes-v2",
    "quality": "quality-v2",
}
EXTRACTORS = tuple(EXTRACTOR_VERSIONS)


def stale_extractors(stored_versions: dict[str, str] | None) -> set[str]:
    """Extractors whose stored version differs from the current one (all of them when nothing is stored)."""
    stored = stored_versions or {}
    return {name for name, version in EXTRACTOR_VERSIONS.items() if stored.get(name) != version}
