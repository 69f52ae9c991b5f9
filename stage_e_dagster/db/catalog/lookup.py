"""Which printing records the name lookups read: one record per (set, collector number).

Scryfall's "All Cards" file holds a printing once per language it was printed in, each record with its own id and
the English `name`. Every record is stored (a vote or a review may name any of them), but a name's candidates are
its printings, not its translations: the lookups read a record when it is English (or has no language), or, for a
printing with no English record, the one whose language code sorts first. So a set printed in ten languages gives a
name one candidate per printing, and a printing that exists only in Japanese is still found.
"""

from __future__ import annotations

LOOKUP_RECORD = (
    "(p.lang IS NULL OR p.lang = 'en' OR NOT EXISTS ("
    "SELECT 1 FROM printing AS o WHERE o.set_code = p.set_code AND o.collector_number = p.collector_number "
    "AND o.id <> p.id AND (o.lang IS NULL OR o.lang = 'en' OR o.lang < p.lang)))"
)
"""SQL predicate on a `printing AS p` row: whether the name lookups read it (see the module docstring)."""
