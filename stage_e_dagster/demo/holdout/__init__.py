"""A second scan renderer, written apart from the first (`demo.render` and `demo.hard`), for measuring only.

The reader is tuned on the first renderer's scans; this one's scans say how it does on scans it was never tuned
on. It shares nothing with the first renderer but the Scryfall shape of a card object, and takes from the domain
only the layout names (`domain.printed_lines`) and the catalogue interface the reader is told through. It has its
own catalogue with a real one's shares of eras and quirks (`catalog`), the text each layout prints (`lines`), fonts
and type setting (`type`), the bottom border's geometry by layout (`border`), frame geometry by era and art
(`render`, `art`) and damage (`damage`). `plan.plan_holdout` plans a set of scans; `plan.read_catalog_of` is what
the reader may know of its catalogue.
"""
