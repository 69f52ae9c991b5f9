"""Reporting: the pipeline's status and the invariant queries."""
