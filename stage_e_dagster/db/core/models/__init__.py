"""SQLAlchemy 2.0 typed models for every table in the design. Table and column names are a contract.

One module per table family; every model is importable from here, and `Base.metadata` (which Alembic reads) holds
every table once this package is imported. The families are imported in a fixed order, which is the order of the
tables in `Base.metadata`.
"""

from stage_e_dagster.db.core.models.base import Base
from stage_e_dagster.db.core.models.intake import Card, FetchHost, Source

# isort: split
from stage_e_dagster.db.core.models.catalogue import CatalogVersion, Expansion, Printing

# isort: split
from stage_e_dagster.db.core.models.judgement import CardPrintingTag, CardPrintingTagArchive, CardScanLog, ImageEvidence

# isort: split
from stage_e_dagster.db.core.models.work import CardWork, DispatchLedger, EnvelopeTrip, FetchPace, SweepCursor, WorkRule

# isort: split
from stage_e_dagster.db.core.models.review import ReviewClaim

__all__ = [
    "Base",
    "Source", "Card", "FetchHost",
    "Expansion", "Printing", "CatalogVersion",
    "ImageEvidence", "CardPrintingTag", "CardPrintingTagArchive", "CardScanLog",
    "DispatchLedger", "WorkRule", "CardWork", "EnvelopeTrip", "FetchPace", "SweepCursor",
    "ReviewClaim",
]
