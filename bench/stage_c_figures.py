"""What the Stage C bench makes of its runs: accuracy per group, the Stage D calculators' coverage and precision
over the evidence (per kind of upload too), and the printed reports and side-by-side tables."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from stage_c_readers import Run, card_name
from stage_c_sets import RENDERER, Scan, World

from stage_e_dagster.demo.forms import SCAN_KINDS
from stage_e_dagster.demo.render import scan_size
from stage_e_dagster.domain.calculators import CalculatorOutcome, run_calculators
from stage_e_dagster.domain.calculators.era import ERA_ID
from stage_e_dagster.domain.calculators.join_key import JOIN_KEY_ID
from stage_e_dagster.domain.catalog import CardRef
from stage_e_dagster.domain.decisions import Vote
from stage_e_dagster.domain.evidence.model import Evidence
from stage_e_dagster.domain.evidence.parse import normalise_collector_number
from stage_e_dagster.domain.kinds import classify, machine_ineligibility, name_and_hint
from stage_e_dagster.domain.printed_lines import LAYOUTS


def rate(hits: int, total: int) -> str:
    return f"{hits / total:6.1%} ({hits}/{total})" if total else "     - (0/0)"


def accuracy(plans: list[Scan], run: Run) -> dict[str, Counter[str]]:
    """Counts of right numbers, set codes and both, per group: undamaged, degraded, height bin, damage bucket."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for scan, found in zip(plans, run.evidence, strict=True):
        right_n = normalise_collector_number(found.collector_number) == normalise_collector_number(scan.number)
        right_s = found.set_code == scan.set_code
        kind = "degraded" if scan.degraded else "undamaged"
        groups = [kind, f"{scan.layout} {kind}", scan.height_bin,
                  *(f"  {c}" for c in scan.damage_buckets() if c != "undamaged")]
        for group in groups:
            by[group].update(n=1, number=int(right_n), set=int(right_s), both=int(right_n and right_s))
    return by


def group_order(groups: set[str]) -> list[str]:
    order = [g for g in ("undamaged", "degraded") if g in groups]
    order += [f"{layout} {kind}" for layout in (*LAYOUTS, "card-back") for kind in ("undamaged", "degraded")
              if f"{layout} {kind}" in groups]
    order += sorted((g for g in groups if g.endswith("px")), key=lambda g: int(g.split("-")[0]))
    return order + sorted(g for g in groups if g.startswith("  "))


def report_accuracy(plans: list[Scan], run: Run) -> None:
    by = accuracy(plans, run)
    print("    accuracy        collector number          set code                  both")
    for group in group_order(set(by)):
        c = by[group]
        print(f"    {group:14s}  {rate(c['number'], c['n']):24s}  {rate(c['set'], c['n']):24s}  "
              f"{rate(c['both'], c['n'])}")


def card_ref(index: int, scan: Scan) -> CardRef:
    """The scan as Stage D sees it; with a path, its kind and the reason no machine may vote, as the work rule
    derives them from the conventions and the pixel size."""
    if scan.path is None:
        return CardRef(index, scan.card["name"])
    upload = classify(scan.path)
    width, height = scan_size(scan.height, scan.plan.bleed)
    return CardRef(index, card_name(scan), name_and_hint(scan.path)[1], kind=upload.kind,
                   ineligible=machine_ineligibility(upload, width, height))


def stage_d(world: World, plans: list[Scan], run: Run) -> Counter[str]:
    """Join-key, fallback and machine coverage/precision over the extracted evidence (no database)."""
    counts: Counter[str] = Counter()
    for index, (scan, found) in enumerate(zip(plans, run.evidence, strict=True)):
        card = card_ref(index, scan)
        candidates = world.by_name.get(card.name, [])
        outcome = run_calculators(card, found, candidates, world.expansions)
        machine = [v for v in outcome.votes if v.printing_id is not None or v.is_no_match]
        if scan.kind is not None:
            _count_kind(counts, scan, found, card, outcome, machine, world)
        if scan.card["id"] is None:
            continue  # a card back: no printing to be right about
        truth = world.printings[scan.card["id"]]
        _count_layout(counts, scan, found, outcome, machine, truth.id)
        join_key = [v for v in machine if v.anonymous_id == JOIN_KEY_ID]
        counts["cards"] += 1
        counts["join-key vote"] += any(v.printing_id is not None for v in join_key)
        counts["machine vote"] += any(v.printing_id is not None for v in machine)
        counts["votes"] += sum(v.printing_id is not None for v in machine)
        counts["right votes"] += sum(v.printing_id == truth.id for v in machine)
        counts["no-match votes"] += sum(v.is_no_match for v in machine)
        old = scan.set_code is None
        unique = sum(p.collector_number == truth.collector_number for p in candidates) == 1
        if old and unique:
            counts["old unique"] += 1
            counts["old unique join-key"] += any(v.printing_id == truth.id for v in join_key)
    return counts


def _count_layout(counts: Counter[str], scan: Scan, found: Evidence, outcome: CalculatorOutcome,
                  machine: list[Vote], truth: int) -> None:
    """One scan's per-layout figures: number read right (clean and degraded apart), set code right where one is
    printed, machine vote, right votes, the era calculator's votes, review."""
    key = f"layout:{scan.layout}"
    state = "degraded" if scan.degraded else "clean"
    counts[f"{key}|n"] += 1
    counts[f"{key}|{state}"] += 1
    counts[f"{key}|{state}-number"] += normalise_collector_number(found.collector_number) == \
        normalise_collector_number(scan.number)
    counts[f"{key}|set"] += found.set_code == scan.set_code
    counts[f"{key}|machine"] += any(v.printing_id is not None for v in machine)
    counts[f"{key}|votes"] += sum(v.printing_id is not None for v in machine)
    counts[f"{key}|right"] += sum(v.printing_id == truth for v in machine)
    counts[f"{key}|era"] += any(v.anonymous_id == ERA_ID and v.printing_id is not None for v in machine)
    counts[f"{key}|review"] += outcome.slow_path is not None
    if not any(v.printing_id is not None for v in machine) and outcome.slow_path is not None:
        why = outcome.slow_path.detail.get("why") or ["-"]
        counts[f"{key}|why:{why[0]}"] += 1  # the first calculator's reason: the join key's, where it spoke


def report_layouts(counts: Counter[str]) -> None:
    """One line per collector-line layout: numbers read (clean, degraded), set code, machine coverage and
    precision, era votes and review; then, per layout, why the cards no machine voted on went without a vote (the
    first reason the slow path names: a join-key abstention such as `suffix-sibling`, where it spoke)."""
    layouts = [layout for layout in (*LAYOUTS, "card-back") if counts[f"layout:{layout}|n"]]
    if not layouts:
        return
    print("    per layout      number clean              number degraded           set code right            "
          "machine coverage          machine precision         era votes / review")
    for layout in layouts:
        c = {key.split("|", 1)[1]: value for key, value in counts.items() if key.startswith(f"layout:{layout}|")}
        print(f"    {layout:14s}  {rate(c.get('clean-number', 0), c.get('clean', 0)):24s}  "
              f"{rate(c.get('degraded-number', 0), c.get('degraded', 0)):24s}  {rate(c.get('set', 0), c['n']):24s}  "
              f"{rate(c.get('machine', 0), c['n']):24s}  {rate(c.get('right', 0), c.get('votes', 0)):24s}  "
              f"{c.get('era', 0)} / {c.get('review', 0)}")
    for layout in layouts:
        c = {key.split("|why:", 1)[1]: value for key, value in counts.items()
             if key.startswith(f"layout:{layout}|why:")}
        if c:
            reasons = ", ".join(f"{why} {n}" for why, n in sorted(c.items(), key=lambda item: -item[1]))
            print(f"    {layout:14s}  no machine vote, by the first reason: {reasons}")


def _count_kind(counts: Counter[str], scan: Scan, found: Evidence, card: CardRef, outcome: CalculatorOutcome,
                machine: list[Vote], world: World) -> None:
    """One scan's per-kind figures: number read right (none read, for a kind that prints none), machine vote,
    right votes, and where it went (the reason no machine may vote, review, or a machine hit)."""
    kind = scan.kind
    truth = world.printings[scan.card["id"]].id if scan.card["id"] is not None else None
    counts[f"{kind}|n"] += 1
    counts[f"{kind}|number"] += normalise_collector_number(found.collector_number) == normalise_collector_number(
        scan.number)
    counts[f"{kind}|machine"] += any(v.printing_id is not None for v in machine)
    counts[f"{kind}|votes"] += sum(v.printing_id is not None for v in machine)
    counts[f"{kind}|right"] += sum(v.printing_id is not None and v.printing_id == truth for v in machine)
    counts[f"{kind}|no-match"] += sum(v.is_no_match for v in machine)
    where = card.ineligible or ("to-review" if outcome.slow_path is not None else "machine")
    counts[f"{kind}|to:{where}"] += 1


def report_kinds(counts: Counter[str]) -> None:
    """One line per kind: number read, machine coverage and precision, and where the cards went."""
    kinds = [kind for kind in SCAN_KINDS if counts[f"{kind}|n"]]
    if not kinds:
        return
    print("    per kind        number read               machine coverage          machine precision         "
          "routed")
    for kind in kinds:
        n = counts[f"{kind}|n"]
        routed = ", ".join(f"{key.split('|to:')[1]} {value}" for key, value in sorted(counts.items())
                           if key.startswith(f"{kind}|to:"))
        print(f"    {kind:15s} {rate(counts[f'{kind}|number'], n):24s}  {rate(counts[f'{kind}|machine'], n):24s}  "
              f"{rate(counts[f'{kind}|right'], counts[f'{kind}|votes']):24s}  {routed}"
              + (f"; no-match votes {counts[f'{kind}|no-match']}" if counts[f"{kind}|no-match"] else ""))


def report_stage_d(plans: list[Scan], run: Run, counts: Counter[str]) -> None:
    n = counts["cards"]
    legal = [(s, f) for s, f in zip(plans, run.evidence, strict=True) if f.legal_raw is not None]
    years = sum(f.copyright_year == int(s.card["released_at"][:4]) for s, f in legal)
    print(f"    legal line read on {rate(len(legal), n)} of the cards (the rest settled by the catalogue); "
          f"copyright year right on {rate(years, len(legal))} of those")
    print(f"    stage D: join-key coverage {rate(counts['join-key vote'], n)}; machine coverage "
          f"{rate(counts['machine vote'], n)}; machine precision {rate(counts['right votes'], counts['votes'])}; "
          f"no-match votes {counts['no-match votes']} (every printing is in the catalogue, so each is wrong); "
          f"join-key coverage on old-style scans of unique numbers "
          f"{rate(counts['old unique join-key'], counts['old unique'])}")
    report_layouts(counts)
    report_kinds(counts)


def report_speed(run: Run, n: int, baseline: Run | None) -> None:
    per = " ".join(f"{key} {1000 * value / n:.1f}" for key, value in sorted(run.timings.items(),
                                                                          key=lambda kv: -kv[1]))
    ratio = ""
    if baseline is not None:
        ratio = (f"; cost {run.ms_per_card / baseline.ms_per_card:.2f}x the naive read's "
                 f"({run.cpu_ms_per_card / baseline.cpu_ms_per_card:.2f}x in CPU time)")
    p95 = 1000 * sorted(run.seconds)[int(0.95 * (len(run.seconds) - 1))]
    print(f"  {run.label}: {1000 / run.ms_per_card:5.1f} cards/s, {run.ms_per_card:5.1f} ms/card (p95 {p95:.0f}, "
          f"CPU {run.cpu_ms_per_card:.1f}), {run.calls / n:.2f} OCR calls/card{ratio}")
    if per:
        print(f"    ms/card per extractor: {per}")


@dataclass
class SetResult:
    """What one set's measurement left for the side-by-side tables."""

    name: str
    plans: list[Scan]
    baseline: Run
    project: Run
    stage_d: Counter[str]


def side_by_side(results: list[SetResult]) -> None:
    """Each set's project figures in columns: number / set code right per group, Stage D, cost ratio."""
    tables = {r.name: accuracy(r.plans, r.project) for r in results}
    groups = group_order(set().union(*(set(t) for t in tables.values())))
    width = 27
    print("\n== side by side (project, with catalogue): collector number / set code right")
    print(f"    {'':14s}" + "".join(f"{r.name + ' (' + RENDERER[r.name] + ')':>{width}s}" for r in results))
    for group in groups:
        cells = []
        for r in results:
            c = tables[r.name].get(group)
            cells.append(f"{c['number'] / c['n']:6.1%} / {c['set'] / c['n']:6.1%} ({c['n']:4d})" if c else "-")
        print(f"    {group:14s}" + "".join(f"{cell:>{width}s}" for cell in cells))
    rows = {
        "machine coverage": lambda d: rate(d["machine vote"], d["cards"]),
        "machine precision": lambda d: rate(d["right votes"], d["votes"]),
        "join-key coverage": lambda d: rate(d["join-key vote"], d["cards"]),
        "no-match votes": lambda d: str(d["no-match votes"]),
    }
    for label, cell in rows.items():
        print(f"    {label:18s}" + "".join(f"{cell(r.stage_d):>{width - 4}s}    " for r in results))
    costs = [f"{r.project.ms_per_card / r.baseline.ms_per_card:.2f}x wall, "
             f"{r.project.cpu_ms_per_card / r.baseline.cpu_ms_per_card:.2f}x CPU" for r in results]
    print(f"    {'cost vs naive':18s}" + "".join(f"{cost:>{width - 4}s}    " for cost in costs))
    print(f"    {'OCR calls/card':18s}" + "".join(
        f"{f'{r.project.calls / len(r.plans):.2f}':>{width - 4}s}    " for r in results))
