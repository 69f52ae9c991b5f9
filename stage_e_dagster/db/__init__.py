"""The application database by concern: each sub-package owns one kind of state and its queries.

A function takes a `Connection` when it is one transaction or a read: the caller opens it (`with engine.begin() as
conn:` for a write, `engine.connect()` for a read) and so decides what shares a transaction. It takes an `Engine`
only when it must own its transactions: it commits in chunks (imports, ingest, the work-rule recompute), retries a
transaction from the start (`core.transactions.in_transaction`), or spreads its work over short transactions
on purpose (sweep claims, source syncs). URLs are resolved into an engine once, at the edges (the `AppDatabase`
resource, `commands.app_engine`, the test kit). Below them a URL is taken only where that is the point, each said in
its module: the schema edge (`core.migrate`), the URL helpers (`core.urls`, `core.engine.get_engine`) and the
dedicated advisory-lock connections (`core.advisory_locks`, `slots`), which a pooled connection must never be.
"""
