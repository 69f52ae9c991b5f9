"""The work queue: the work rule (what needs Stage C or D), its SQL fragments, and finding work."""
