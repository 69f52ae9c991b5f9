"""The database core: engine, models, migrations, array literals, advisory locks and URL helpers."""
