"""The rows of the breakage table (`tools/breakages.py` runs them): each a deliberate breakage of one file, and the
tests that must catch it; Stage C's reader, parsers and card finder have theirs in `breakage_rows_evidence`, listed
last. Adding a row: a `Breakage` in the module of its concern (the exact text to break, which must occur once, and
the tests), then `python tools/breakages.py --write` regenerates docs/testing.md's table."""

from __future__ import annotations

from tools.breakage_row import Breakage
from tools.breakage_rows_evidence import EVIDENCE_BREAKAGES
from tools.breakage_rows_finder import FINDER_BREAKAGES
from tools.breakage_rows_twins import TWIN_BREAKAGES

__all__ = ["BREAKAGES", "Breakage"]

BREAKAGES = (
    Breakage(
        "the run-start trip gate removed", "stage_e_dagster/assets/stage_c.py",
        (("halted = run_start_gate(engine, config.mode, stream.enabled, config.trip_override)", "halted = None"),),
        ("tests/db/test_run_gates.py", "tests/db/test_micro_batch_failures.py::"
         "test_envelope_breach_halts_the_stream_until_acknowledged"),
        what="`run_start_gate` not called"),
    Breakage(
        "the reaper disabled", "stage_e_dagster/control/reaper.py",
        (('''    ended: list[str] = []
    if instance is not None:
        fail_unopened_runs''', '''    ended: list[str] = []
    if True:
        return []
    if instance is not None:
        fail_unopened_runs'''),),
        ("tests/db/test_stranded_runs.py", "tests/db/test_ledger_liveness.py"),
        what="`reclaim_dead_batches` returns nothing"),
    Breakage(
        "ON CONFLICT DO NOTHING turned into a plain insert", "stage_e_dagster/db/judgement/votes.py",
        (('"ON CONFLICT DO NOTHING RETURNING card_id, anonymous_id"', '"RETURNING card_id, anonymous_id"'),),
        ("tests/db/test_votes.py::test_lost_insert_race_is_absorbed_not_raised",),
        what="the vote insert"),
    Breakage(
        "the slot cap ignored", "stage_e_dagster/db/slots/cap.py",
        (("        count = self.slot_count\n        keys = [self.lock_key(slot) for slot in range(count)]",
          "        count = MAX_SLOTS\n        keys = [self.lock_key(slot) for slot in range(count)]"),),
        ("tests/db/test_ocr_slots.py::test_cap_of_two_refuses_a_third_session_until_one_releases",
         "tests/db/test_ocr_slots.py::test_eight_processes_never_exceed_a_cap_of_two"),
        what="every slot up to `MAX_SLOTS` offered"),
    Breakage(
        "catalogue reopen skipped", "stage_e_dagster/db/catalog/upsert.py",
        (("return len(changed), reopen_for_stage_d(conn, cards_to_reopen(conn, candidate_names(touched), "
          "lacking=True))", "return len(changed), set()"),),
        ("tests/db/test_catalog_reopen.py",),
        what="changed printings re-open no card"),
    Breakage(
        "identity-group copying off", "stage_e_dagster/stages/stage_c_copies.py",
        (("    def carry(self, card_ids: Collection[int]) -> None:\n        if not self.force:",
          "    def carry(self, card_ids: Collection[int]) -> None:\n        if False:"),
         ("        followers = [c for c in self.groups[sha] if c != result.card_id]", "        followers = []")),
        ("tests/db/test_identity_groups.py::test_one_batch_extracts_each_image_once_and_carries_it_to_its_copies",),
        what="no carry to copies"),
    Breakage(
        "machine votes allowed to settle a card alone", "stage_e_dagster/domain/consensus.py",
        (('    if policy == "machine-quorum":\n        agreed = _quorum_outcome(unique, human_outcomes)',
          '    if policy in POLICIES:\n        agreed = _quorum_outcome(unique, human_outcomes)'),),
        ("tests/unit/test_consensus.py", "tests/db/test_asset_checks.py"),
        what="the machine quorum applied under the funnel policy"),
    Breakage(
        "the review page's CSRF check removed", "stage_e_dagster/review_web/app.py",
        (('        if session is None or not tokens_equal(fields.get("csrf"), session.csrf):',
          "        if session is None:"),),
        ("tests/review/test_review_web.py::test_forms_from_another_site_or_without_the_csrf_token_change_nothing",)),
    Breakage(
        "a hostile symlink followed", "stage_e_dagster/domain/scan_files.py",
        (("            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)",
          "            info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=True)"),
         ("os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NOCTTY",
          "os.open(parts[-1], os.O_RDONLY | os.O_NOCTTY")),
        ("tests/db/test_read_scan.py",),
        what="`read_scan` follows the file's symlink"),
    Breakage(
        "OCR workers started without the OpenMP thread limit", "stage_e_dagster/workers/ocr_crew.py",
        (("    if _context is None:\n        limit_ocr_threads()\n", "    if _context is None:\n"),),
        ("tests/db/test_stage_c_processes.py::test_ocr_workers_run_with_one_openmp_thread",),
        what="`limit_ocr_threads` not called"),
    Breakage(
        "the default host-load ceiling lowered to the CPU count", "stage_e_dagster/host.py",
        (('    """The envelope\'s default host-load ceiling: twice the CPU count."""\n    return 2.0 * cpus()',
          '    """The envelope\'s default host-load ceiling: twice the CPU count."""\n    return 1.0 * cpus()'),),
        ("tests/db/test_governor.py::test_the_defaults_never_trip_under_the_work_they_were_sized_for",),
        what="`default_load_ceiling` at one load per CPU"),
    Breakage(
        "claims no longer serialised", "stage_e_dagster/db/runs/ledger.py",
        (('    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _CLAIM_LOCK_KEY})\n', ""),),
        ("tests/db/test_claims.py::test_concurrent_claims_never_share_a_card_and_take_every_one",),
        what="the claim lock removed"),
    Breakage(
        "a draining run ignores an open trip", "stage_e_dagster/control/drain.py",
        (("            halted = halt_reason()\n", "            halted = None\n"),),
        ("tests/unit/test_drain_loop.py::test_an_open_trip_stops_it_before_the_next_claim",),
        what="`halt_reason` not asked before a claim"),
    Breakage(
        "card backs owed Stage D like any card", "stage_e_dagster/db/work/rule.sql",
        (("""        WHEN e.card_id IS NOT NULL AND c.kind = 'cardback'
             AND NOT EXISTS (SELECT 1 FROM card_printing_tag t WHERE t.card_id = c.id
                             AND t.anonymous_id LIKE 'stage-d-%') THEN NULL
""", ""),),
        ("tests/db/test_work_queue.py::test_the_queue_and_the_full_rule_agree_whatever_is_written",),
        what="the card-back branch of `card_work_stage` removed"),
    Breakage(
        "tokens and cards voted onto any printing of their name", "stage_e_dagster/domain/calculators/slow_path.py",
        (("    candidates = [p for p in candidates if printing_fits(card.kind, p.layout, p.set_type)]\n", ""),),
        ("tests/unit/test_calculators_kinds.py", "tests/db/test_eligibility_e2e.py::"
         "test_each_kind_gets_its_eligibility_and_its_reason")),
    Breakage(
        "the fetch limiter's shared turns not spaced", "stage_e_dagster/remote/limiter.py",
        (("granted = pace.grant(conn, self.interval)", "granted = pace.grant(conn, 0.0)"),),
        ("tests/db/test_remote_limiter.py::test_two_processes_share_one_rate",)),
    Breakage(
        "a throttled fetch not slowing the fleet", "stage_e_dagster/remote/limiter.py",
        (("                    if kind == THROTTLED:\n                        factor = pace.throttled(",
          "                    if False:\n                        factor = pace.throttled("),),
        ("tests/db/test_remote_limiter.py::test_a_throttled_response_halves_the_shared_pace_once_and_clean_ones_"
         "restore_it",
         "tests/db/test_remote_fetch.py::test_a_throttled_card_is_deferred_never_failed_and_the_shared_pace_halves_"
         "then_recovers")),
    Breakage(
        "fetch turns granted before a lockout still sent", "stage_e_dagster/stages/stage_c_fetch.py",
        (("timeout_seconds=self.settings.timeout_seconds, stopped=self._stop.is_set)",
          "timeout_seconds=self.settings.timeout_seconds)"),),
        ("tests/db/test_remote_fetch.py::test_requests_waiting_for_their_turn_when_a_lockout_trips_are_never_sent",)),
    Breakage(
        "a 403 judged without waiting for a lockout being recorded", "stage_e_dagster/db/intake/fetch_state.py",
        (('    if conn.execute(locked, {"h": host}).first() is None:', "    if False:"),),
        ("tests/db/test_remote_fetch.py::test_a_403_judged_while_another_process_records_the_lockout_is_deferred_not_"
         "skipped",)),
    Breakage(
        "the catalogue version left alone by changes",
        "stage_e_dagster/db/core/migrations/versions/0014_catalog_version.py",
        (("IF EXISTS (SELECT 1 FROM changed_rows) THEN", "IF false THEN"),),
        ("tests/db/test_catalog_version.py",),
        what="the statement trigger moves no version"),
    Breakage(
        "the kept ReadCatalog kept whatever the version", "stage_e_dagster/db/catalog/read.py",
        (("if kept is not None and kept[0] == version:", "if kept is not None:"),),
        ("tests/db/test_catalog_version.py::test_the_kept_read_catalogue_is_reused_until_an_import_changes_it",),
        what="the version not compared"),
    Breakage(
        "name lookups read every language's record", "stage_e_dagster/db/catalog/lookup.py",
        (("\"(p.lang IS NULL OR p.lang = 'en' OR NOT EXISTS (\"", "\"(true OR NOT EXISTS (\""),),
        ("tests/db/test_all_cards_import.py",),
        what="the language filter of the lookup record removed"),
    Breakage(
        "printings stored without their faces' normalised names", "stage_e_dagster/domain/scryfall.py",
        (("face_names_normalised=None if face_names is None else", "face_names_normalised=None if True else"),),
        ("tests/db/test_all_cards_import.py::test_each_layouts_names_are_found_once_per_printing",),
        what="`face_names_normalised` always empty"),
    Breakage(
        "near-identical set symbols allowed to decide", "stage_e_dagster/domain/calculators/matching.py",
        (("    out = set(kept)\n", "    return set(kept)\n"),),
        ("tests/unit/test_calculators_era.py", "tests/db/test_era_stage_d.py")),
    Breakage(
        "the era calculator blind to the copyright year", "stage_e_dagster/domain/calculators/era.py",
        (('CHECKS: dict[str, Check] = {"year": year_check, ', 'CHECKS: dict[str, Check] = {'),),
        ("tests/unit/test_calculators_era.py",)),
    Breakage(
        "a draining run whose process died left started", "stage_e_dagster/control/reaper.py",
        (("        if owner and owner_is_gone(owner):", "        if False:"),),
        ("tests/db/test_drain_runs.py::test_a_draining_run_whose_process_is_gone_is_failed_and_no_longer_holds_the_stream",),
        what="`fail_dead_drains` fails none"),
    Breakage(
        "surplus draining runs kept working", "stage_e_dagster/control/run_queue.py",
        (("    return run_id in ordered and ordered.index(run_id) >= drain_runs", "    return False"),),
        ("tests/db/test_drain_runs.py::test_the_draining_runs_beyond_the_limit_are_surplus_oldest_first",),
        what="`surplus_drain` never true"),
    Breakage(
        "an acknowledged failure-rate trip's failures judged again", "stage_e_dagster/db/runs/image_loads.py",
        (("        WHERE bar = :bar AND acknowledged_at IS NOT NULL", "        WHERE false"),),
        ("tests/db/test_envelope.py::test_an_acknowledged_failure_rate_trip_leaves_its_failures_unjudged",),
        what="no acknowledgement found"),
    Breakage(
        "a manifest line naming loopback off its origin listed", "stage_e_dagster/domain/remote.py",
        (("    refused = literal_refusal(url, manifest_url, allow_private)\n", "    refused = None\n"),),
        ("tests/db/test_remote_hostile.py::test_a_manifest_cannot_reach_loopback_beyond_its_own_origin",
         "tests/unit/test_remote_addresses.py::test_an_entry_is_judged_on_its_own_and_never_raises"),
        what="`literal_refusal` not asked"),
    Breakage(
        "redirect hops and resolved names let past the address rule", "stage_e_dagster/remote/address.py",
        (("        trusted = self.allow_private or origin(self.manifest_url) == found", "        trusted = True"),),
        ("tests/db/test_remote_hostile.py::test_a_manifest_cannot_reach_loopback_beyond_its_own_origin",
         "tests/unit/test_remote_addresses.py::test_a_name_is_refused_when_any_address_it_resolves_to_is_not_public"),
        what="every target trusted"),
    Breakage(
        "connections made to the name instead of the checked address", "stage_e_dagster/remote/http_source.py",
        (("            self.conn = HTTPConnection(target.address, target.port, timeout=connect)",
          "            self.conn = HTTPConnection(target.host, target.port, timeout=connect)"),),
        ("tests/unit/test_remote_addresses.py::test_the_connection_goes_to_the_address_that_was_checked",),
        what="a plain-HTTP connection to `target.host`"),
    Breakage(
        "--allow-private not passed to the store client", "stage_e_dagster/remote/stores.py",
        (("            return HttpSource(where, timeout_seconds=timeout_seconds, allow_private=allow_private,",
          "            return HttpSource(where, timeout_seconds=timeout_seconds, allow_private=False,"),),
        ("tests/db/test_remote_hostile.py::test_a_private_host_is_reached_only_when_the_source_allows_it",),
        what="`open_source` drops it"),
    Breakage(
        "numbers from outside read with str.isdigit", "stage_e_dagster/domain/numbers.py",
        (("    if text is None or not _DIGITS.fullmatch(text):\n        return None\n    value = int(text)\n"
          "    return value if value <= maximum else None",
          "    return int(text) if text and text.isdigit() else None"),),
        ("tests/db/test_remote_hostile.py::test_a_content_length_that_is_no_number_is_a_named_skip_not_a_failed_batch",
         "tests/review/test_review_hostile.py::test_cookies_are_secure_behind_tls_and_numbers_in_urls_never_give_an_error"),
        what="`int(text) if text.isdigit()`"),
    Breakage(
        "a manifest name with a NUL taken in", "stage_e_dagster/domain/remote.py",
        (("    if not storable(entry.identifier, MAX_NAME if name else MAX_URL) or not storable(entry.file_name):",
          "    if False:"),),
        ("tests/db/test_remote_hostile.py::test_one_unreadable_manifest_line_is_refused_by_name_and_the_tick_lists_every_source",
         "tests/unit/test_remote_addresses.py::test_an_entry_is_judged_on_its_own_and_never_raises"),
        what="the entry's `storable` check removed"),
    Breakage(
        "a manifest URL that does not parse raised", "stage_e_dagster/domain/remote.py",
        (("    except (ValueError, TypeError) as err:  # urlsplit's",
          "    except ZeroDivisionError as err:  # urlsplit's"),),
        ("tests/db/test_remote_hostile.py::test_one_unreadable_manifest_line_is_refused_by_name_and_the_tick_lists_every_source",
         "tests/unit/test_remote_addresses.py::test_an_entry_is_judged_on_its_own_and_never_raises"),
        what="`parse_entry` lets its `ValueError` out"),
    Breakage(
        "an S3 page obstore refuses not read raw", "stage_e_dagster/remote/stores.py",
        (("                if not _refused_page(err):", "                if True:"),),
        ("tests/db/test_remote_hostile.py::test_keys_obstore_refuses_are_named_and_the_listing_pages_past_them",),
        what="every listing error raised"),
    Breakage(
        "the request deadline's watchdog never started", "stage_e_dagster/remote/address.py",
        (("        self._timer.daemon = True\n        self._timer.start()\n", "        self._timer.daemon = True\n"),),
        ("tests/db/test_remote_hostile.py::test_a_host_that_drips_its_headers_is_cut_off_at_the_fetch_deadline",
         "tests/db/test_remote_hostile.py::test_a_slow_manifest_holds_a_tick_no_longer_than_its_budget"),
        what="`Watchdog`'s timer not started"),
    Breakage(
        "manifest size and entry caps ignored", "stage_e_dagster/remote/http_source.py",
        (("        if self.seen > self.max_bytes:", "        if False:"),
         ("                if index >= self.max_manifest_entries:", "                if False:")),
        ("tests/db/test_remote_hostile.py::test_a_manifest_beyond_its_caps_fails_its_listing_and_says_why",),
        what="both checks off"),
    Breakage(
        "the review page answers any Host", "stage_e_dagster/review_web/security.py",
        (("            if not self.policy.allows(host):", "            if False:"),),
        ("tests/review/test_review_hostile.py::test_a_host_the_page_does_not_serve_is_refused_before_anything_else",),
        what="`HostCheck` lets every request through"),
    Breakage(
        "the 403 streak counted per source, not per host", "stage_e_dagster/stages/stage_c_fetch.py",
        (('        host = result.host or f"source:{job.source_id}"', '        host = f"source:{job.source_id}"'),),
        ("tests/db/test_remote_hostile.py::test_403s_from_a_host_that_never_answered_are_named_skips_never_a_lockout",),
        what="every fetch of a source keyed as one host"),
    Breakage(
        "gzip bodies decoded before they are judged", "stage_e_dagster/remote/http_source.py",
        (("            chunk = self.response.read1(size, decode_content=False)",
          "            chunk = self.response.read1(size, decode_content=True)"),),
        ("tests/db/test_remote_hostile.py::test_a_gzip_body_is_judged_by_its_real_bytes",),
        what="`read1(..., decode_content=True)`"),
    Breakage(
        "URL secrets kept in what is stored and shown", "stage_e_dagster/domain/addresses.py",
        (("    if netloc == parts.netloc and not secret_query:", "    if True:"),),
        ("tests/db/test_remote_hostile.py::test_no_secret_in_a_url_is_stored_or_shown",
         "tests/unit/test_remote_addresses.py::test_a_url_is_shown_and_stored_without_its_secrets"),
        what="`redact_url` returns the URL as it is"),
    Breakage(
        "review cookies never Secure behind TLS", "stage_e_dagster/review_web/app.py",
        (("samesite=\"strict\", path=\"/\", secure=self.tls)", "samesite=\"strict\", path=\"/\", secure=False)"),),
        ("tests/review/test_review_hostile.py::test_cookies_are_secure_behind_tls_and_numbers_in_urls_never_give_an_error",),
        what="`secure=False`"),
    Breakage(
        "the review page reads a remote scan as a local file", "stage_e_dagster/review_web/app.py",
        (("            if where.remote:", "            if False:"),),
        ("tests/review/test_review_hostile.py::test_a_remote_scan_shows_through_the_cache_or_one_fetch_that_counts_like_any_other",),
        what="the remote branch of `scan_bytes` skipped"),
    Breakage(
        "a review-page fetch's 403 not counted", "stage_e_dagster/review_web/remote_scans.py",
        (("            elif result.kind == FORBIDDEN:", "            elif False:"),),
        ("tests/review/test_review_hostile.py::test_a_remote_scan_shows_through_the_cache_or_one_fetch_that_counts_like_any_other",),
        what="the 403 branch of `_record` skipped"),
    Breakage(
        "a photo's skip not routed to review", "stage_e_dagster/db/judgement/evidence_store.py",
        (("    route_skips_to_review(conn, [card_id], run_id)\n    return True", "    return True"),),
        ("tests/db/test_stage_c_photos.py",),
        what="`log_skip` writes no `to-review` marker"),
    Breakage(
        "the corners not used by the review crop", "stage_e_dagster/review_web/files.py",
        (("    if is_whole_image(corners) or pairs is None:", "    if True:"),),
        ("tests/review/test_review_photos.py",),
        what="crops and thumbnails cut from the whole photo"),
    Breakage(
        "a number read from the copyright year votes", "stage_e_dagster/domain/calculators/join_key.py",
        (("    untrusted = (evidence.collector_total is None and not by_set",
          "    untrusted = (False and not by_set"),),
        ("tests/unit/test_calculators_half_numbers.py::test_a_number_from_the_copyright_year_does_not_vote",),
        what="`doubt` never suspects the year"),
    Breakage(
        "a run's failure recorded without locking its ledger row", "stage_e_dagster/db/runs/ledger.py",
        (('"SELECT status FROM dispatch_ledger WHERE run_id = :run_id FOR UPDATE"',
          '"SELECT status FROM dispatch_ledger WHERE run_id = :run_id"'),),
        ("tests/db/test_ledger_races.py::test_two_failure_records_of_one_run_defer_its_cards_once",),
        what="`mark_failed` reads the row's status without `FOR UPDATE`"),
    Breakage(
        "sweep cursors moved without comparing", "stage_e_dagster/db/work/queue.py",
        (('" WHERE name = :name AND position = :position AND wrap_count = :wrap_count"',
          '" WHERE name = :name AND CAST(:position AS bigint) IS NOT NULL AND CAST(:wrap_count AS int) IS NOT NULL"'),),
        ("tests/db/test_store_races.py::test_two_reconcile_steps_at_once_never_take_the_same_window",
         "tests/db/test_backstop_sweep.py::test_two_concurrent_sweepers_claim_disjoint_ranges_covering_every_card"),
        what="`_move_cursor` swaps whatever the cursor holds"),
    Breakage(
        "the work rule synced without its lock", "stage_e_dagster/db/work/work_rule.py",
        (('        conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": _SYNC_LOCK_KEY})\n', ""),),
        ("tests/db/test_store_races.py::test_two_syncs_of_a_changed_rule_recompute_it_once",),
        what="`sync` takes no advisory lock"),
    Breakage(
        "a review claim taken from its holder", "stage_e_dagster/db/review/claims.py",
        (('"WHERE rc.reviewer = EXCLUDED.reviewer OR rc.expires_at <= now() "', ""),),
        ("tests/review/test_review_page.py::test_reviewers_claiming_at_the_same_moment_never_share_a_card",),
        what="the claim's upsert takes the card whoever holds it"),
    Breakage(
        "the state layer reaching the wire again", "stage_e_dagster/db/intake/sources.py",
        (("    if source.remote:\n        raise ValueError(",
          "    if source.remote:\n        from stage_e_dagster.remote.listing import sync_remote\n\n"
          "        return sync_remote(engine, source, full=full)\n        raise ValueError("),),
        ("tests/unit/test_import_contracts.py::test_every_enforced_import_contract_is_kept",),
        what="`sync_directory` lists a remote source through a deferred import of `remote.listing`"),
    Breakage(
        "one generation's throttles halving the pace twice", "stage_e_dagster/db/intake/pace.py",
        (("    WHERE id = 1 AND generation = :generation", "    WHERE id = 1"),),
        ("tests/db/test_fetch_races.py::test_two_throttled_responses_of_one_generation_halve_the_pace_once",),
        what="the compare-and-swap on `generation` dropped"),
    Breakage(
        "a fetch's bytes stored on a card that moved to a new version", "stage_e_dagster/db/intake/fetch_state.py",
        (('"fetch_attempts = 0, updated_at = now() WHERE id = :id AND remote_token = :token"),',
          '"fetch_attempts = 0, updated_at = now() WHERE id = :id"),'),),
        ("tests/db/test_fetch_races.py::test_an_outcome_for_the_old_version_that_meets_a_sync_of_the_new_one_is_dropped",),
        what="`record_fetched` without its compare-and-swap on `remote_token`"),
    *EVIDENCE_BREAKAGES,
    *FINDER_BREAKAGES,
    *TWIN_BREAKAGES,
)
