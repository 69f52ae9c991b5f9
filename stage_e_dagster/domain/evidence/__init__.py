"""Stage C evidence extraction: pure functions from scan bytes to `Evidence` (see `extract.extract_evidence`)."""
