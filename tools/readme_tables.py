"""Print the README's two generated tables: the environment variables (`settings.configuration_table`) and the
resource fields (`reference.resource_table`). Paste them over the README's tables after changing either; the tests
`test_settings.py` and `test_reference.py` fail until the README matches."""

from stage_e_dagster.reference import resource_table
from stage_e_dagster.settings import configuration_table

if __name__ == "__main__":
    print(configuration_table())
    print()
    print(resource_table())
