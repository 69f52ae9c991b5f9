"""The test corpus of every kind: `demo_corpus(kinds=True)` imports the catalogue's token and numberless printings
and ingests each scan as the kind it was drawn as (ingest reads the kind from the path's conventions)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from testkit.corpus import demo_corpus
from testkit.sql import rows

KIND_OF = {"card-back": "cardback", "token": "token"}


def test_the_corpus_of_every_kind_is_ingested_as_drawn(db_url, tmp_path: Path) -> None:
    root = demo_corpus(db_url, tmp_path / "demo", cards=30, printings=200, seed=3, workers=1, kinds=True)
    manifest = json.loads((root / "manifest.json").read_text())
    drawn = Counter(KIND_OF.get(truth["kind"], "card") for truth in manifest.values())
    assert set(drawn) == {"card", "token", "cardback"}
    assert Counter(dict(rows(db_url, "SELECT kind, count(*) FROM card GROUP BY kind"))) == drawn
    # every custom-art and foreign scan carries its tag or language (this seed draws five and one)
    stored = {ident: (tags, language) for ident, tags, language in rows(db_url,
                                                                      "SELECT identifier, tags, language FROM card")}
    for kind, expected in (("custom-art", lambda tags, language: "custom-art" in tags),
                           ("foreign", lambda tags, language: language not in (None, "en"))):
        paths = [path for path, truth in manifest.items() if truth["kind"] == kind]
        assert paths, kind
        for path in paths:
            (found,) = [value for ident, value in stored.items() if ident.endswith(path)]
            assert expected(*found), (path, found)
    layouts = dict(rows(db_url, "SELECT layout, count(*) FROM printing GROUP BY layout"))
    assert layouts.get("token", 0) > 0
    assert rows(db_url, "SELECT count(*) FROM printing WHERE frame = '1993'")[0][0] > 0
