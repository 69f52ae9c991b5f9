"""The work queue: `card_work` holds exactly the cards that need Stage C or D, kept so by triggers.

`card_work_stage(card_id)` is the one definition of "needs work" (see `domain/work.py`): 'C' when the card has no
current evidence and Stage C logged no skip for its bytes, 'D' when its current evidence is not decided by the
current calculators, NULL otherwise and for a card whose file vanished. "Current" reads `work_rule`, the single row
holding the code's extractor versions, `decided_by` mark and Stage C voter id (`db.work.work_rule.sync` writes it and
recomputes every card when it changes). Triggers on `card`, `image_evidence` and Stage C's `card_scan_log` rows
re-evaluate a card in the transaction that changed it, so looking up work, counting the backlog and claiming a
sweep range read a table as small as the work itself, whatever the size of `card`.

`attempts` and `retry_at` hold the per-card backoff after batches that ended without finishing the card; new
bytes reset them.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

FUNCTIONS = """
CREATE FUNCTION card_work_stage(p_card bigint) RETURNS char(1) LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN c.missing_since IS NOT NULL THEN NULL
        WHEN e.card_id IS NOT NULL AND e.decided_by IS DISTINCT FROM r.decided_by THEN 'D'
        WHEN e.card_id IS NOT NULL THEN NULL
        WHEN EXISTS (SELECT 1 FROM card_scan_log s WHERE s.card_id = c.id AND s.anonymous_id = r.stage_c_id
                     AND s.evidence_key = c.content_sha256) THEN NULL
        ELSE 'C'
    END
    FROM card c
    CROSS JOIN work_rule r
    LEFT JOIN image_evidence e
        ON e.card_id = c.id AND e.content_sha256 = c.content_sha256 AND e.extractor_versions @> r.current_versions
    WHERE c.id = p_card
$$;

CREATE FUNCTION refresh_card_work(p_card bigint, p_reset boolean DEFAULT false) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    wanted char(1) := card_work_stage(p_card);
BEGIN
    IF wanted IS NULL THEN
        DELETE FROM card_work WHERE card_id = p_card;
    ELSIF p_reset THEN
        INSERT INTO card_work (card_id, stage) VALUES (p_card, wanted)
        ON CONFLICT (card_id) DO UPDATE SET stage = EXCLUDED.stage, attempts = 0, retry_at = NULL, since = now();
    ELSE
        INSERT INTO card_work (card_id, stage) VALUES (p_card, wanted)
        ON CONFLICT (card_id) DO UPDATE SET stage = EXCLUDED.stage
        WHERE card_work.stage IS DISTINCT FROM EXCLUDED.stage;
    END IF;
END
$$;

CREATE FUNCTION card_work_on_card() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM refresh_card_work(NEW.id, TG_OP = 'INSERT' OR NEW.content_sha256 IS DISTINCT FROM OLD.content_sha256);
    RETURN NULL;
END
$$;

CREATE FUNCTION card_work_on_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM refresh_card_work(OLD.card_id);
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.card_id <> OLD.card_id) THEN
        PERFORM refresh_card_work(NEW.card_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION card_work_on_scan_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM refresh_card_work(NEW.card_id);
    RETURN NULL;
END
$$;

CREATE TRIGGER card_work_card AFTER INSERT OR UPDATE OF content_sha256, missing_since ON card
    FOR EACH ROW EXECUTE FUNCTION card_work_on_card();
CREATE TRIGGER card_work_evidence AFTER INSERT OR UPDATE OR DELETE ON image_evidence
    FOR EACH ROW EXECUTE FUNCTION card_work_on_evidence();
CREATE TRIGGER card_work_scan_log AFTER INSERT ON card_scan_log
    FOR EACH ROW WHEN (NEW.anonymous_id LIKE 'stage-c-%') EXECUTE FUNCTION card_work_on_scan_log();
"""

DROP_FUNCTIONS = """
DROP TRIGGER IF EXISTS card_work_scan_log ON card_scan_log;
DROP TRIGGER IF EXISTS card_work_evidence ON image_evidence;
DROP TRIGGER IF EXISTS card_work_card ON card;
DROP FUNCTION IF EXISTS card_work_on_scan_log();
DROP FUNCTION IF EXISTS card_work_on_evidence();
DROP FUNCTION IF EXISTS card_work_on_card();
DROP FUNCTION IF EXISTS refresh_card_work(bigint, boolean);
DROP FUNCTION IF EXISTS card_work_stage(bigint);
"""


def upgrade() -> None:
    op.create_table(
        "work_rule",
        sa.Column("id", sa.SmallInteger(), primary_key=True, server_default=sa.text("1")),
        sa.Column("current_versions", sa.dialects.postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'{}'::jsonb")),
        sa.Column("decided_by", sa.Text(), nullable=False, server_default=""),
        sa.Column("stage_c_id", sa.Text(), nullable=False, server_default=""),
        sa.Column("recomputed_through", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.text("now()")),
        sa.CheckConstraint("id = 1", name="ck_work_rule_single_row"),
    )
    # An empty rule differs from any code's rule: the first `db.work.work_rule.sync` fills it and recomputes every card.
    op.execute("INSERT INTO work_rule (id, recomputed_through) VALUES (1, 0)")
    op.create_table(
        "card_work",
        sa.Column("card_id", sa.BigInteger(), sa.ForeignKey("card.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("stage", sa.CHAR(1), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("retry_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False, server_default=sa.text("now()")),
        sa.CheckConstraint("stage IN ('C', 'D')", name="ck_card_work_stage"),
    )
    op.create_index("ix_card_work_stage_card", "card_work", ["stage", "card_id"])
    op.execute(FUNCTIONS)


def downgrade() -> None:
    op.execute(DROP_FUNCTIONS)
    op.drop_index("ix_card_work_stage_card", table_name="card_work")
    op.drop_table("card_work")
    op.drop_table("work_rule")
