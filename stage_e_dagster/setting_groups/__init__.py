"""The fields of `stage_e_dagster.settings.Settings`, declared by concern: one frozen dataclass per group, each
field naming its environment variable, default and meaning. `Settings` is made of these groups; nothing here reads
the environment (`Settings.from_env` does)."""
