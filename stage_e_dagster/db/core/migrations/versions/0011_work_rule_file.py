"""The work rule from its one file: `card_work_stage`, `refresh_card_work` and the `card_work` triggers, loaded from
`db/work/rule.sql`.

This revision defined the rule exactly as revision 0005 did. A later revision changed the rule and loads the file
in its turn, so this one keeps a frozen copy of the text it loaded (`RULE`), and a fresh upgrade replays every
version in order.

Revision ID: 0011
Revises: 0010
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

RULE = r"""
CREATE OR REPLACE FUNCTION card_work_stage(p_card bigint) RETURNS char(1) LANGUAGE sql STABLE AS $$
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

CREATE OR REPLACE FUNCTION refresh_card_work(p_card bigint, p_reset boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION card_work_on_card() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM refresh_card_work(NEW.id, TG_OP = 'INSERT' OR NEW.content_sha256 IS DISTINCT FROM OLD.content_sha256);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION card_work_on_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE OR REPLACE FUNCTION card_work_on_scan_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM refresh_card_work(NEW.card_id);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS card_work_card ON card;
CREATE TRIGGER card_work_card AFTER INSERT OR UPDATE OF content_sha256, missing_since ON card
    FOR EACH ROW EXECUTE FUNCTION card_work_on_card();
DROP TRIGGER IF EXISTS card_work_evidence ON image_evidence;
CREATE TRIGGER card_work_evidence AFTER INSERT OR UPDATE OR DELETE ON image_evidence
    FOR EACH ROW EXECUTE FUNCTION card_work_on_evidence();
DROP TRIGGER IF EXISTS card_work_scan_log ON card_scan_log;
CREATE TRIGGER card_work_scan_log AFTER INSERT ON card_scan_log
    FOR EACH ROW WHEN (NEW.anonymous_id LIKE 'stage-c-%') EXECUTE FUNCTION card_work_on_scan_log();
"""
"""`db/work/rule.sql` as this revision loaded it (frozen)."""


def upgrade() -> None:
    op.execute(RULE)


def downgrade() -> None:
    # Revision 0005's definition is the same rule: nothing to restore.
    pass
