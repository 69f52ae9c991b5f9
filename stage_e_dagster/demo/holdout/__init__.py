"""A second scan renderer, written apart from the first (`demo.render` and `demo.hard`), for measuring only.

The reader is tuned on the first renderer's scans; this one's scans say how it does on scans it was never tuned
on. It shares nothing with the first renderer but the Scryfall shape of a card object: its own catalogue quirks
(`catalog`), collector-line styles (`lines`), fonts and type setting (`type`), frame geometry and art (`render`,
`art`) and damage (`damage`). `plan.plan_holdout` plans a set of scans; `plan.read_catalog_of` is what the reader
may know of its catalogue.
"""
