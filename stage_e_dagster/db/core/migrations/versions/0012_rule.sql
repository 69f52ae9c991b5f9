-- The work rule: which cards still need Stage C or D, and which no machine may vote on, written once.
--
-- card_work_stage(card) is the one definition of "needs work": 'C' when the card has no current evidence and
-- Stage C logged no skip for its bytes, 'D' when its current evidence is not decided by the current calculators,
-- NULL otherwise and for a card whose file vanished. Evidence is current when it is for the card's bytes
-- (content_sha256) and its extractor versions cover every version in the work_rule row, which holds the running
-- code's extractor versions, Stage D's decided_by mark, Stage C's voter id and the eligibility settings
-- (db/work/work_rule.py writes it).
--
-- Eligibility: card_ineligibility(card) names why no machine may vote on a card, or is NULL (domain/kinds.py
-- states the same rule in Python); eligibility_reason(...) is the rule over the values, which set-based readers
-- (Stage D's inputs, stage-e status) apply to a join of card, work_rule and current evidence: a card back ('card-back'), custom art ('custom-art'), a language other than
-- English unless work_rule.english_match ('non-english'), or current evidence whose pixel size is under
-- work_rule.min_dpi on the card's 63 x 88 mm ('low-dpi', compared in whole numbers: px * 254 < dpi * 10 * mm).
-- A card back gets evidence and a 'card-back' row in the scan log, and is owed no Stage D unless it still holds
-- machine votes from before it was a card back (Stage D then withdraws them). Every other card is owed Stage D as
-- before; Stage D reads card_ineligibility and routes an ineligible card to review with its reason, unvoted.
-- A change of a card's kind, language or tags clears its evidence's decided_by mark, so Stage D judges it again.
--
-- The triggers re-evaluate a card in the transaction that changed it, so card_work always holds exactly the cards
-- that need work. Every statement is idempotent (CREATE OR REPLACE, DROP ... IF EXISTS): the migration that loads
-- this file may run over a database that already has any version of it.
--
-- Changing the rule: edit this file, add a migration that loads it (work_rule_sql()), and paste the text the
-- previous loading migration used into that migration as its frozen copy.

CREATE OR REPLACE FUNCTION eligibility_reason(p_kind text, p_tags text[], p_language text, p_width integer,
                                              p_height integer, p_min_dpi integer, p_english_match boolean)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_kind = 'cardback' THEN 'card-back'
        WHEN 'custom-art' = ANY(p_tags) THEN 'custom-art'
        WHEN p_language IS NOT NULL AND p_language <> 'en' AND NOT p_english_match THEN 'non-english'
        WHEN p_width > 0 AND p_height > 0
             AND (least(p_width, p_height)::bigint * 254 < p_min_dpi::bigint * 630
                  OR greatest(p_width, p_height)::bigint * 254 < p_min_dpi::bigint * 880) THEN 'low-dpi'
        ELSE NULL
    END
$$;

CREATE OR REPLACE FUNCTION card_ineligibility(p_card bigint) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT eligibility_reason(c.kind, c.tags, c.language, e.width, e.height, r.min_dpi, r.english_match)
    FROM card c
    CROSS JOIN work_rule r
    LEFT JOIN image_evidence e
        ON e.card_id = c.id AND e.content_sha256 = c.content_sha256 AND e.extractor_versions @> r.current_versions
    WHERE c.id = p_card
$$;

CREATE OR REPLACE FUNCTION card_work_stage(p_card bigint) RETURNS char(1) LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN c.missing_since IS NOT NULL THEN NULL
        WHEN e.card_id IS NOT NULL AND c.kind = 'cardback'
             AND NOT EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id
                             AND t.anonymous_id LIKE 'stage-d-%') THEN NULL
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

CREATE OR REPLACE FUNCTION log_card_back(p_card bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO card_scan_log (card_id, anonymous_id, skip_reason, evidence_key, detail)
    SELECT c.id, 'stage-e-eligibility-v1', 'card-back', c.content_sha256, jsonb_build_object('kind', c.kind)
    FROM card c
    JOIN work_rule r ON true
    JOIN image_evidence e
        ON e.card_id = c.id AND e.content_sha256 = c.content_sha256 AND e.extractor_versions @> r.current_versions
    WHERE c.id = p_card AND c.kind = 'cardback'
      AND NOT EXISTS (SELECT 1 FROM card_scan_log s WHERE s.card_id = c.id AND s.anonymous_id = 'stage-e-eligibility-v1'
                      AND s.skip_reason = 'card-back' AND s.evidence_key = c.content_sha256)
$$;

CREATE OR REPLACE FUNCTION refresh_card_work(p_card bigint, p_reset boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    wanted char(1) := card_work_stage(p_card);
BEGIN
    PERFORM log_card_back(p_card);
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
    IF TG_OP = 'UPDATE' AND (NEW.kind, NEW.language, NEW.tags) IS DISTINCT FROM (OLD.kind, OLD.language, OLD.tags) THEN
        UPDATE image_evidence SET decided_by = NULL WHERE card_id = NEW.id AND decided_by IS NOT NULL;
    END IF;
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
CREATE TRIGGER card_work_card AFTER INSERT OR UPDATE OF content_sha256, missing_since, kind, language, tags ON card
    FOR EACH ROW EXECUTE FUNCTION card_work_on_card();
DROP TRIGGER IF EXISTS card_work_evidence ON image_evidence;
CREATE TRIGGER card_work_evidence AFTER INSERT OR UPDATE OR DELETE ON image_evidence
    FOR EACH ROW EXECUTE FUNCTION card_work_on_evidence();
DROP TRIGGER IF EXISTS card_work_scan_log ON card_scan_log;
CREATE TRIGGER card_work_scan_log AFTER INSERT ON card_scan_log
    FOR EACH ROW WHEN (NEW.anonymous_id LIKE 'stage-c-%') EXECUTE FUNCTION card_work_on_scan_log();
