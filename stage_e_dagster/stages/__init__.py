"""The Stage C, D and E runners: one batch through each stage without Dagster.

The assets and `stage-e run` call these; they orchestrate `db/` (storage) and `domain/` (rules) and own no SQL.
Each takes the application database's engine and opens the transactions its stage needs.
"""
