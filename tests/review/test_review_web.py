"""The review page over real HTTP (uvicorn on loopback, a real Postgres): sign-in, tokens, CSRF, admin votes,
bad input, double submits, and serving scans only from inside their source directory."""

from __future__ import annotations

import os

from click.testing import CliRunner
from sqlalchemy import text

from stage_e_dagster.db.core.engine import get_engine
from stage_e_dagster.stages.stage_d import run_stage_d
from testkit.review import Browserless, card_state, human_votes, serve


def _confirm_card(corpus):
    return next(scan for scan in corpus if scan.scenario == "clean")


def test_a_token_is_required_when_configured_and_a_reviewer_name_always(review_db, corpus):
    card = corpus[0].card_id
    with serve(review_db, token="s3cret-token") as base:
        anonymous = Browserless(base)
        for path in ("/next", "/grid", "/counts", f"/card/{card}", f"/card/{card}/scan",
                     f"/card/{card}/crop/collector.png"):
            assert anonymous.get(path).status_code == 401, path
        assert "s3cret-token" not in anonymous.get("/").text
        assert anonymous.signin("alice").status_code == 401
        assert "Wrong access token" in anonymous.signin("alice", token="guess").text
        assert "Reviewer name" in anonymous.signin("  ", token="s3cret-token").text
        assert anonymous.signin("stage-d-me", token="s3cret-token").status_code == 400
        forged = Browserless(base)
        forged.http.cookies.set(f"stage_e_review_{base.rsplit(':', 1)[1]}", "e30.deadbeef")
        assert forged.get("/next").status_code == 401

        alice = Browserless(base)
        signed = alice.signin("alice", token="s3cret-token")
        assert (signed.status_code, signed.headers["location"]) == (303, "/next")
        first = alice.get("/next")
        assert first.status_code == 303 and first.headers["location"].startswith(f"/card/{card}")
        page = alice.get(f"/card/{card}")
        assert page.status_code == 200 and "s3cret-token" not in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        scan = alice.get(f"/card/{card}/scan")
        assert scan.status_code == 200 and scan.headers["content-type"] == "image/png"
        crop = alice.get(f"/card/{card}/crop/collector.png")
        assert crop.status_code == 200 and crop.content.startswith(b"\x89PNG")
        assert alice.get(f"/card/{card}/crop/..%2F..%2Fscan.png").status_code == 404
        assert alice.get("/static/..%2Fapp.py").status_code == 404


def test_forms_from_another_site_or_without_the_csrf_token_change_nothing(review_db, corpus):
    card = _confirm_card(corpus)
    with serve(review_db) as base:
        alice = Browserless(base)
        alice.signin("alice")
        _, csrf, version = alice.card_page(card.card_id)
        vote = {"csrf": csrf, "version": version, "choice": card.truth_scryfall}
        assert alice.post(f"/card/{card.card_id}/vote", {**vote, "csrf": ""}).status_code == 403
        assert alice.post(f"/card/{card.card_id}/vote", {**vote, "csrf": "x" + csrf}).status_code == 403
        evil = alice.post(f"/card/{card.card_id}/vote", vote, headers={"Origin": "http://evil.example"})
        assert evil.status_code == 403 and "another site" in evil.text
        fetched = alice.post(f"/card/{card.card_id}/vote", vote, headers={"Sec-Fetch-Site": "cross-site"})
        assert fetched.status_code == 403
        bob = Browserless(base)
        bob.signin("bob")
        assert bob.post(f"/card/{card.card_id}/vote", vote).status_code == 403  # alice's token is not bob's
        assert human_votes(review_db) == []
        ok = alice.post(f"/card/{card.card_id}/vote", vote, headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
        assert ok.status_code == 303
        assert [v[:3] for v in human_votes(review_db)] == [(card.card_id, "alice", "user")]


def test_admin_votes_need_the_admin_token(review_db, corpus):
    card = _confirm_card(corpus)
    with serve(review_db, admin_token="adm1n") as base:
        plain = Browserless(base)
        plain.signin("alice")
        _, csrf, version = plain.card_page(card.card_id)
        refused = plain.post(f"/card/{card.card_id}/vote",
                             {"csrf": csrf, "version": version, "choice": card.truth_scryfall, "admin": "1"})
        assert refused.status_code == 403 and "admin token" in refused.text
        assert human_votes(review_db) == [] and card_state(review_db, card.card_id) == ("unresolved", None)
        assert "Wrong admin token" in Browserless(base).signin("root", admin_token="guess").text

        root = Browserless(base)
        assert root.signin("root", admin_token="adm1n").status_code == 303
        page, csrf, version = root.card_page(card.card_id)
        assert 'name="admin" value="1" checked' in page.text and "adm1n" not in page.text
        voted = root.post(f"/card/{card.card_id}/vote",
                          {"csrf": csrf, "version": version, "choice": card.truth_scryfall, "admin": "1"})
        assert voted.status_code == 303
        assert human_votes(review_db) == [(card.card_id, "root", "admin", card.truth, False)]
        assert card_state(review_db, card.card_id) == ("resolved", card.truth)  # weight 5, as `stage-e vote --admin`


def test_bad_input_gets_a_clear_message_and_a_double_submit_counts_once(review_db, corpus):
    card, other = _confirm_card(corpus), corpus[1]
    with serve(review_db) as base:
        alice = Browserless(base)
        alice.signin("alice")
        _, csrf, version = alice.card_page(card.card_id)
        unknown = alice.get("/card/999999")
        assert unknown.status_code == 404 and "No card has id 999999" in unknown.text
        assert alice.post("/card/999999/vote", {"csrf": csrf, "version": version, "choice": "no-match"}
                          ).status_code == 404
        with get_engine(review_db).connect() as conn:
            foreign = conn.execute(text("SELECT scryfall_id FROM printing WHERE name <> :n LIMIT 1"),
                                   {"n": card.name}).scalar()
        wrong = alice.post(f"/card/{card.card_id}/vote", {"csrf": csrf, "version": version, "choice": foreign})
        assert wrong.status_code == 400 and "not among the candidates" in wrong.text
        nonsense = alice.post(f"/card/{card.card_id}/vote", {"csrf": csrf, "version": version, "choice": "nope"})
        assert nonsense.status_code == 400 and "no printing has Scryfall id" in nonsense.text
        stale = alice.post(f"/card/{card.card_id}/vote", {"csrf": csrf, "version": "0.0.0", "choice": "no-match"})
        assert stale.status_code == 409 and "changed since you opened it" in stale.text
        assert human_votes(review_db) == []

        vote = {"csrf": csrf, "version": version, "choice": card.truth_scryfall}
        first = alice.post(f"/card/{card.card_id}/vote", vote)
        second = alice.post(f"/card/{card.card_id}/vote", vote)
        assert first.status_code == second.status_code == 303
        assert first.headers["location"].startswith("/card/") and str(card.card_id) not in first.headers["location"]
        assert "you had already voted that" in alice.get(second.headers["location"]).text
        assert human_votes(review_db) == [(card.card_id, "alice", "user", card.truth, False)]
        counts = alice.get("/counts").json()
        unresolved = sum(card_state(review_db, scan.card_id)[0] == "unresolved" for scan in corpus)
        assert (counts["awaiting"], counts["for_reviewer"]) == (unresolved, len(corpus) - 1)

        _, csrf, version = alice.card_page(other.card_id)
        skipped = alice.post(f"/card/{other.card_id}/skip", {"csrf": csrf})
        assert skipped.status_code == 303 and f"/card/{other.card_id}" not in skipped.headers["location"]
        assert human_votes(review_db, other.card_id) == []

        opened = skipped.headers["location"].split("?")[0]  # the card alice holds now
        bob = Browserless(base)
        bob.signin("bob")
        assert f'href="{opened}"' in bob.get("/grid").text and "open by alice" in bob.get("/grid").text
        bob_csrf = bob.card_page(corpus[-1].card_id)[1]
        assert bob.post(f"{opened}/claim", {"csrf": bob_csrf}).json() == {"held_by": "alice"}
        assert alice.post(f"{opened}/claim", {"csrf": csrf}).json() == {"held_by": None}
        assert alice.post("/signout", {"csrf": csrf}).status_code == 303
        assert alice.get("/next").status_code == 401
        assert bob.post(f"{opened}/claim", {"csrf": bob_csrf}).json() == {"held_by": None}  # released at sign-out


def _add_card(url: str, location: str, identifier: str) -> int:
    with get_engine(url).begin() as conn:
        source = conn.execute(text(
            "INSERT INTO source (key, kind, location) VALUES (:k, 'directory', :l) "
            "ON CONFLICT (key) DO UPDATE SET location = EXCLUDED.location RETURNING id"),
            {"k": "paths", "l": location}).scalar_one()
        return conn.execute(text(
            "INSERT INTO card (source_id, identifier, name, name_normalised, content_sha256, size_bytes) "
            "VALUES (:s, :i, 'x', 'x', repeat('0', 64), 1) RETURNING id"), {"s": source, "i": identifier}).scalar_one()


def test_scans_are_served_only_from_inside_their_source_directory(review_db, corpus, tmp_path):
    root, outside = tmp_path / "source", tmp_path / "secret"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n secret")
    (root / "sub" / "inside.png").write_bytes(b"\x89PNG\r\n\x1a\n inside")
    os.symlink(outside / "secret.png", root / "escape.png")
    os.symlink(outside, root / "dir-link")
    os.symlink(root / "sub" / "inside.png", root / "alias.png")
    (root / "notes.txt").write_text("not an image")
    cases = {
        "sub/inside.png": 200, "alias.png": 200, "escape.png": 404, "dir-link/secret.png": 404,
        "../secret/secret.png": 404, str(outside / "secret.png"): 404, "notes.txt": 404, "gone.png": 404,
    }
    ids = {identifier: _add_card(review_db, str(root), identifier) for identifier in cases}
    with serve(review_db) as base:
        alice = Browserless(base)
        alice.signin("alice")
        for identifier, status in cases.items():
            response = alice.get(f"/card/{ids[identifier]}/scan")
            assert response.status_code == status, identifier
            assert b"secret" not in response.content and str(tmp_path) not in response.text


def test_serve_beyond_loopback_draws_a_token_and_prints_it(review_db, monkeypatch):
    import uvicorn

    from stage_e_dagster.cli import main

    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.update(app=app, **options))
    monkeypatch.setenv("STAGE_E_DATABASE_URL", review_db)
    for name in ("STAGE_E_REVIEW_TOKEN", "STAGE_E_REVIEW_ADMIN_TOKEN", "STAGE_E_REVIEW_HOST"):
        monkeypatch.delenv(name, raising=False)
    loopback = CliRunner().invoke(main, ["review", "serve", "--port", "8799"])
    assert loopback.exit_code == 0, loopback.output
    assert "no token (loopback only)" in loopback.output and started["host"] == "127.0.0.1"
    wide = CliRunner().invoke(main, ["review", "serve", "--host", "0.0.0.0", "--port", "8799"])
    assert wide.exit_code == 0 and started["host"] == "0.0.0.0"
    token = wide.output.split("access token (drawn for this run; set STAGE_E_REVIEW_TOKEN to keep one): ")[1].split()[0]
    assert len(token) >= 24 and review_db not in wide.output
    monkeypatch.setenv("STAGE_E_REVIEW_TOKEN", "configured-token")
    configured = CliRunner().invoke(main, ["review", "serve"])
    assert "access token (from STAGE_E_REVIEW_TOKEN): configured-token" in configured.output


def test_the_page_and_the_grid_show_why_no_machine_may_vote(review_db, corpus):
    card = _confirm_card(corpus).card_id
    with get_engine(review_db).begin() as conn:  # filed as custom art: the work rule has Stage D judge it again
        conn.execute(text("UPDATE card SET tags = '{custom-art}' WHERE id = :id"), {"id": card})
    run_stage_d(get_engine(review_db), [card], "rerun")
    with serve(review_db) as base:
        alice = Browserless(base)
        alice.signin("alice")
        page = alice.get(f"/card/{card}").text
        assert 'id="ineligible"' in page and "<b>custom-art</b>" in page and "No machine vote." in page
        assert '<span class="badge ineligible">custom-art</span>' in alice.get("/grid").text
        others = [scan.card_id for scan in corpus if scan.card_id != card]
        assert all('id="ineligible"' not in alice.get(f"/card/{other}").text for other in others)
