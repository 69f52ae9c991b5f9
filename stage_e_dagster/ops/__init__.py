"""Op jobs: operator actions launched from the Dagster UI (not assets: they change no data product)."""
