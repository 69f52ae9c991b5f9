"""The hostile corpus of drill 5: scan files and catalogues that have broken, or could break, the pipeline.

`write_scans` adds hostile files to a directory of good scans before ingest; `replace_after_ingest` then swaps some
ingested files for worse things (Stage C meets them, not ingest); `write_catalogues` writes catalogue files built to
exhaust memory. Each returns what the pipeline must make of every file.
"""

from __future__ import annotations

import os
import struct
import unicodedata
import zlib
from pathlib import Path

from PIL import Image

EVIDENCE = "evidence"
"""The file is a fine image with an odd name: it must end with evidence like any other."""

# Files present at ingest, with what they must become.
NOT_UTF8 = b"Not UTF-8 \xff\xfe [XLN].png"
NEWLINE = "Line\nBreak [XLN].png"
NFC = unicodedata.normalize("NFC", "Caf\u00e9 Twin [XLN].png")
NFD = unicodedata.normalize("NFD", NFC)
BOMB = "Bomb [XLN].png"
FIFO_AT_INGEST = "Stalled [XLN].png"

# Files ingested as good scans and replaced before Stage C, with the skip each must become.
REPLACED = {
    "To Outside [XLN].png": "file-symlink",  # a symlink to a file outside the source
    "To Zero [XLN].png": "file-symlink",  # a symlink to /dev/zero
    "Grown [XLN].png": "file-too-large",  # grew to several GB (sparse)
    "Became Fifo [XLN].png": "not-a-regular-file",  # a FIFO now: opening it to read would block
    "linked/In Dir [XLN].png": "file-symlink",  # its directory became a symlink to outside the source
    "Escape [XLN].png": "outside-source",  # its stored path now points outside the source (`escape_identifier`)
}
ESCAPED = "../outside/secret.png"


def bomb_png(width: int = 60_000, height: int = 60_000) -> bytes:
    """A tiny PNG whose header claims width x height pixels (a decompression bomb by its header)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\x00" * 1024 * 64, 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def _variant(good: Path, target: Path, shade: int) -> None:
    """A copy of the scan `good` with one corner pixel changed, so its bytes (and content hash) are its own."""
    with Image.open(good) as img:
        img = img.convert("RGB")
        img.putpixel((0, 0), (shade, 255 - shade, shade // 2))
        target.parent.mkdir(parents=True, exist_ok=True)
        img.save(target, format="PNG")


def write_scans(scans: Path, good: Path) -> dict[str, str]:
    """Add the hostile files to `scans`, made from the good scan `good`. Returns {identifier: what it must end
    as}: `EVIDENCE`, a Stage C skip reason, or `refused: <why>` for a file ingest must refuse."""
    expected: dict[str, str] = {}
    for shade, name in enumerate((NEWLINE, NFC, NFD, *REPLACED), start=1):
        _variant(good, scans / name, shade * 7)
        expected[name] = EVIDENCE
    expected.update(REPLACED)
    _variant(good, Path(os.fsdecode(os.fsencode(scans) + b"/" + NOT_UTF8)), 99)
    expected[os.fsencode(NOT_UTF8).decode("utf-8", "backslashreplace")] = "refused: name is not valid UTF-8"
    (scans / BOMB).write_bytes(bomb_png())
    expected[BOMB] = "too-large"
    os.mkfifo(scans / FIFO_AT_INGEST)
    expected[FIFO_AT_INGEST] = "refused: not a regular file"
    return expected


def replace_after_ingest(scans: Path, outside: Path, grown_bytes: int) -> None:
    """Swap the `REPLACED` files for what they must be refused as (the stored path is changed in the database by
    the drill, see `ESCAPED`). `outside` is a directory beside the source holding a secret."""
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.png").write_bytes((scans / "To Outside [XLN].png").read_bytes() + b"secret")
    (outside / "In Dir [XLN].png").write_bytes(b"outside the source")

    def swap(name: str) -> Path:
        path = scans / name
        path.unlink()
        return path

    swap("To Outside [XLN].png").symlink_to(outside / "secret.png")
    swap("To Zero [XLN].png").symlink_to("/dev/zero")
    with open(scans / "Grown [XLN].png", "r+b") as handle:
        handle.truncate(grown_bytes)  # holes: several GB on paper, nothing on disk
    os.mkfifo(swap("Became Fifo [XLN].png"))
    swap("linked/In Dir [XLN].png")
    (scans / "linked").rmdir()
    (scans / "linked").symlink_to(outside, target_is_directory=True)


def write_catalogues(directory: Path, payload_bytes: int) -> dict[str, str]:
    """Catalogue files built to exhaust memory, each about `payload_bytes` big; {file name: what the error must
    say}."""
    directory.mkdir(parents=True, exist_ok=True)
    card = '{"id": "00000000-0000-0000-0000-000000000001", "name": "Opt", "set": "xln", "collector_number": "65"'
    files = {  # name: (head, repeated unit, closing unit repeated as often, tail, what the error says)
        "giant-string.json": ('[' + card + ', "oracle_text": "', "x", "", '"}]', "record 0 spans more than"),
        "deep-nesting.json": ('[' + card + ', "all_parts": ', "[", "]", "}]", "record 0 is nested deeper"),
        "huge-array.json": ('[' + card + ', "all_parts": [', "0,", "", '0]}]', "record 0 spans more than"),
        "scalar-flood.json": ("[", "1,", "", "1]", "malformed records"),
    }
    expected = {}
    for name, (head, unit, closing, tail, message) in files.items():
        repeat = 1024 * 1024 // len(unit)
        blocks = max(1, payload_bytes // (repeat * (len(unit) + len(closing))))
        with open(directory / name, "w") as handle:
            handle.write(head)
            for _ in range(blocks):
                handle.write(unit * repeat)
            for _ in range(blocks if closing else 0):
                handle.write(closing * repeat)
            handle.write(tail)
        expected[name] = message
    return expected
