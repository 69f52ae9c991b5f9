"""Identity groups, calculator families and the vote archive.

- `image_evidence.carried_from_card_id`: the card whose Stage C extraction a row was copied from (a byte-identical
  copy is never extracted twice); NULL for a row extracted from its own card's file.
- `card_printing_tag.applied_from_card_id`: for a human vote applied to every copy of an image, the card the person
  actually voted on; NULL for a vote cast on the card itself.
- `card_printing_tag_archive`: every vote that was replaced or withdrawn, with why and by which run. Append-only:
  a trigger refuses UPDATE, DELETE and TRUNCATE.
- Indexes on `card.content_sha256`, `image_evidence.content_sha256` and Stage C skips' `evidence_key` (the
  identity-group lookups: copies of a card, a copy's evidence or skip), and on abstentions for lack of a printing
  (the cards a catalogue change re-opens).

Data already stored: existing votes and evidence stay as they are (an evidence row without provenance is an
extraction of its own file). The one repair: a card holding machine votes of two versions of one calculator family
(`<family>-v<N>`) keeps the newest version's; the older ones move to the archive as `family-bump`, and those cards'
current evidence is re-opened for Stage D so their consensus is recomputed without the double count.

Every statement is guarded (IF NOT EXISTS, OR REPLACE, a repair that finds nothing to repair the second time), so the
upgrade can run again over a database that already has any part of it.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ARCHIVE_REASONS = "('replaced', 'withdrawn', 'family-bump', 'human-override')"

_SCHEMA = [
    "ALTER TABLE image_evidence ADD COLUMN IF NOT EXISTS carried_from_card_id BIGINT",
    "ALTER TABLE card_printing_tag ADD COLUMN IF NOT EXISTS applied_from_card_id BIGINT",
    "CREATE INDEX IF NOT EXISTS ix_card_content_sha256 ON card (content_sha256)",
    "CREATE INDEX IF NOT EXISTS ix_image_evidence_content_sha256 ON image_evidence (content_sha256)",
    "CREATE INDEX IF NOT EXISTS ix_scan_log_stage_c_key ON card_scan_log (evidence_key) "
    "WHERE anonymous_id = 'stage-c-extract-v1'",
    "CREATE INDEX IF NOT EXISTS ix_scan_log_lack_of_printing ON card_scan_log (card_id) "
    "WHERE skip_reason IN ('no-candidates', 'number-not-found', 'unknown-set-code')",
    f"""
    CREATE TABLE IF NOT EXISTS card_printing_tag_archive (
        id BIGSERIAL PRIMARY KEY,
        tag_id BIGINT NOT NULL,
        card_id BIGINT NOT NULL,
        printing_id BIGINT,
        is_no_match BOOLEAN NOT NULL,
        anonymous_id VARCHAR(100) NOT NULL,
        source VARCHAR(16) NOT NULL,
        confidence DOUBLE PRECISION,
        vote_run_id VARCHAR(64),
        applied_from_card_id BIGINT,
        voted_at TIMESTAMP WITH TIME ZONE NOT NULL,
        reason VARCHAR(16) NOT NULL,
        run_id VARCHAR(64),
        detail JSONB DEFAULT '{{}}'::jsonb NOT NULL,
        archived_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
        CONSTRAINT ck_tag_archive_reason CHECK (reason IN {_ARCHIVE_REASONS})
    )
    """,
    "CREATE INDEX IF NOT EXISTS ix_tag_archive_card ON card_printing_tag_archive (card_id, id)",
    """
    CREATE OR REPLACE FUNCTION card_printing_tag_archive_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'card_printing_tag_archive is append-only (% refused)', TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END
    $$
    """,
    "DROP TRIGGER IF EXISTS tg_tag_archive_append_only ON card_printing_tag_archive",
    "CREATE TRIGGER tg_tag_archive_append_only BEFORE UPDATE OR DELETE ON card_printing_tag_archive "
    "FOR EACH ROW EXECUTE FUNCTION card_printing_tag_archive_append_only()",
    "DROP TRIGGER IF EXISTS tg_tag_archive_no_truncate ON card_printing_tag_archive",
    "CREATE TRIGGER tg_tag_archive_no_truncate BEFORE TRUNCATE ON card_printing_tag_archive "
    "FOR EACH STATEMENT EXECUTE FUNCTION card_printing_tag_archive_append_only()",
]

# Older versions of a machine voter family on a card move to the archive; the card is re-opened for Stage D.
_RETIRE_OLDER_FAMILY_VERSIONS = """
WITH parsed AS (
    SELECT t.id, t.card_id, t.anonymous_id,
           substring(t.anonymous_id FROM '^(.+)-v[0-9]+$') AS family,
           CAST(substring(t.anonymous_id FROM '-v([0-9]+)$') AS integer) AS version
    FROM card_printing_tag AS t
    WHERE t.source = 'ocr' AND t.anonymous_id ~ '^.+-v[0-9]+$'
), newest AS (
    SELECT DISTINCT ON (card_id, family) card_id, family, version, anonymous_id
    FROM parsed ORDER BY card_id, family, version DESC
), stale AS (
    SELECT p.id, n.anonymous_id AS superseded_by
    FROM parsed AS p JOIN newest AS n ON n.card_id = p.card_id AND n.family = p.family
    WHERE p.version < n.version
), gone AS (
    DELETE FROM card_printing_tag AS t USING stale AS s WHERE t.id = s.id
    RETURNING t.id, t.card_id, t.printing_id, t.is_no_match, t.anonymous_id, t.source, t.confidence, t.run_id,
              t.applied_from_card_id, t.created_at, s.superseded_by
), archived AS (
    INSERT INTO card_printing_tag_archive (tag_id, card_id, printing_id, is_no_match, anonymous_id, source,
        confidence, vote_run_id, applied_from_card_id, voted_at, reason, run_id, detail)
    SELECT id, card_id, printing_id, is_no_match, anonymous_id, source, confidence, run_id, applied_from_card_id,
           created_at, 'family-bump', NULL,
           jsonb_build_object('superseded_by', superseded_by, 'by', 'migration 0006')
    FROM gone
    RETURNING card_id
), reopened AS (
    UPDATE image_evidence AS e SET decided_by = NULL
    FROM card AS c
    WHERE c.id IN (SELECT card_id FROM archived) AND e.card_id = c.id AND e.content_sha256 = c.content_sha256
      AND e.decided_by IS NOT NULL
    RETURNING e.card_id
)
UPDATE card SET updated_at = now() WHERE id IN (SELECT card_id FROM reopened)
"""


def upgrade() -> None:
    for statement in _SCHEMA:
        op.execute(statement)
    op.execute(_RETIRE_OLDER_FAMILY_VERSIONS)


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS card_printing_tag_archive")
    op.execute("DROP FUNCTION IF EXISTS card_printing_tag_archive_append_only()")
    op.execute("DROP INDEX IF EXISTS ix_scan_log_lack_of_printing")
    op.execute("DROP INDEX IF EXISTS ix_scan_log_stage_c_key")
    op.execute("DROP INDEX IF EXISTS ix_image_evidence_content_sha256")
    op.execute("DROP INDEX IF EXISTS ix_card_content_sha256")
    op.execute("ALTER TABLE card_printing_tag DROP COLUMN IF EXISTS applied_from_card_id")
    op.execute("ALTER TABLE image_evidence DROP COLUMN IF EXISTS carried_from_card_id")
