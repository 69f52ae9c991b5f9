"""The stream's decisions, in one place: what may start (gates), what is already under way (the run queue), which
batches died and get their cards back (the reaper), what a failed run means (failures), and how often a running
batch proves it is alive (heartbeat).

Sensors, schedules, assets, `bulk.py` and the CLI call these functions; none of them decides on its own. Dagster's
private APIs are reached only through `dagster_api.py`. Each takes the application database's engine and opens
its own short transactions on it, never holding a connection across a Dagster call.
"""
