"""`catalog_version`, and `printing.face_names_normalised` for a face-name lookup by index.

`catalog_version` is one row whose `version` changes in every transaction that changes the catalogue.

Statement triggers on `printing` and `expansion` set it to the changing transaction's id when the statement changed
at least one row (their transition tables are not empty), so an import that changes nothing leaves it alone, and
every writer (the importer, a test's own INSERT, an operator's UPDATE) moves it. A transaction id is never reused
on a server, so a database created afresh (from a template, with the same name) never repeats a version a process
has cached for another catalogue. An OCR worker's catalogue is kept while the version it was read under is current.

`face_names_normalised` holds each face's normalised name (GIN-indexed), so finding the printings with a face of a
card's name is an index lookup instead of a read of every multi-faced printing; existing rows are filled here.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from stage_e_dagster.domain.catalog import normalise_name

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_EVENTS = (("insert", "NEW"), ("update", "NEW"), ("delete", "OLD"))


def upgrade() -> None:
    op.add_column("printing", sa.Column("face_names_normalised", postgresql.ARRAY(sa.Text()), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, face_names FROM printing WHERE face_names IS NOT NULL")).all()
    for printing_id, faces in rows:
        conn.execute(sa.text("UPDATE printing SET face_names_normalised = :faces WHERE id = :id"),
                     {"faces": [normalise_name(face) for face in faces], "id": printing_id})
    op.create_index("ix_printing_face_names_normalised", "printing", ["face_names_normalised"],
                    postgresql_using="gin")
    op.execute(
        """
        CREATE TABLE catalog_version (
            id boolean PRIMARY KEY DEFAULT true CHECK (id),
            version bigint NOT NULL,
            changed_at timestamptz NOT NULL DEFAULT now()
        );
        INSERT INTO catalog_version (version) VALUES (txid_current());
        CREATE FUNCTION bump_catalog_version() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM changed_rows) THEN
                UPDATE catalog_version SET version = txid_current(), changed_at = now()
                WHERE version IS DISTINCT FROM txid_current();
            END IF;
            RETURN NULL;
        END $$;
        """
    )
    for table in ("printing", "expansion"):
        for event, side in _EVENTS:
            op.execute(
                f"CREATE TRIGGER {table}_{event}_bumps_catalog_version AFTER {event.upper()} ON {table} "
                f"REFERENCING {side} TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_catalog_version()"
            )


def downgrade() -> None:
    for table in ("printing", "expansion"):
        for event, _side in _EVENTS:
            op.execute(f"DROP TRIGGER {table}_{event}_bumps_catalog_version ON {table}")
    op.execute("DROP FUNCTION bump_catalog_version(); DROP TABLE catalog_version")
    op.drop_index("ix_printing_face_names_normalised", table_name="printing")
    op.drop_column("printing", "face_names_normalised")
