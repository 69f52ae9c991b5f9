"""Maintenance scripts run from the repository root: README tables, the review-page keyboard run."""
