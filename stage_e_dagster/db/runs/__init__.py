"""Run state: the dispatch ledger, envelope trips and recent image loads."""
