"""The embedded Postgres server, its guardian, and where the databases are (URLs resolved here)."""
