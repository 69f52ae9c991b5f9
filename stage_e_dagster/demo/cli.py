"""The `demo` click group: `demo generate` writes a synthetic catalogue and card scans for the pipeline."""

from __future__ import annotations

import time
from pathlib import Path

import click

from stage_e_dagster.demo.generate import generate


@click.group("demo")
def demo() -> None:
    """Synthetic demo data: a printing catalogue and realistic proxy-card scans."""


@demo.command("generate")
@click.option("--printings", type=click.IntRange(min=1), required=True, help="Catalogue size (printings).")
@click.option("--cards", type=click.IntRange(min=0), required=True, help="How many scans to render.")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output directory."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed; the same seed writes the same data.")
@click.option(
    "--degraded-fraction",
    type=click.FloatRange(0.0, 1.0),
    default=0.3,
    show_default=True,
    help="Share of scans given scanner damage (blur, noise, rotation, scale, JPEG).",
)
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Render processes (default: CPUs, max 4).")
@click.option("--kinds", is_flag=True, default=False,
              help="Draw every kind of upload (tokens, card backs, custom art, foreign, suffixed numbers, cards "
                   "without collector numbers, language markers) in the shares of demo.forms.")
def generate_command(
    printings: int, cards: int, out_dir: Path, seed: int, degraded_fraction: float, workers: int | None,
    kinds: bool,
) -> None:
    """Write catalog.json, symbols/, scans/ and manifest.json under OUT."""
    with click.progressbar(length=cards, label="rendering scans", show_pos=True) as bar:
        summary = generate(
            out_dir,
            printings=printings,
            cards=cards,
            seed=seed,
            degraded_fraction=degraded_fraction,
            progress=bar.update,
            workers=workers,
            kinds=kinds,
        )
    click.echo(summary.line())


@demo.command("feed")
@click.argument("source", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("inbox", type=click.Path(file_okay=False, path_type=Path))
@click.option("--wave", type=click.IntRange(min=1), default=50, show_default=True, help="Scans per wave.")
@click.option("--every", type=click.FloatRange(min=0), default=20.0, show_default=True,
              help="Seconds between waves.")
def feed_command(source: Path, inbox: Path, wave: int, every: float) -> None:
    """Copy SOURCE's scans into INBOX (a registered source directory) in waves; stops when all are there."""
    from stage_e_dagster.demo.feed import Feeder

    feeder = Feeder(source, inbox, wave=wave, every=every, say=click.echo)
    feeder.start()
    try:
        while feeder.running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        click.echo(f"stopped after {feeder.copied} scans")
    finally:
        feeder.stop()
