"""The database core: engine, models, migrations (which load the work rule), advisory locks, URL helpers and the
transactions every writer of cards shares."""
