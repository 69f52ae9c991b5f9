"""A second OCR engine for the lines Tesseract cannot read: RapidOCR (PaddleOCR's PP-OCR models on onnxruntime).

On small, blurred collector lines (digits 6-9 px high smeared over two or three pixels, JPEG at 50-80) PP-OCR's
recogniser reads many lines Tesseract's every variant fails, and few wrong (`bench/ocr_engines.py`,
docs/performance.md). It costs 3-4 times a Tesseract read, so the reader uses it only as a rescue: after the
Tesseract ladder found nothing the catalogue confirms, and only a reading the catalogue confirms is kept
(`collector.read_collector`).

It runs offline, on CPU: the `rapidocr` wheel carries its models (PP-OCRv6 detection and recognition); one
onnxruntime thread per session (`intra_op_num_threads=1`, `inter_op_num_threads=1`: the OpenMP limit does not
reach onnxruntime), like every OCR worker, and inside the worker's OCR slot. The engine is built on its first read
in each process (a forked worker builds its own).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

import numpy as np
from PIL import Image

from stage_e_dagster.domain.evidence.ocr import OcrUnavailableError

RESCUE_NAMES = ("rapidocr", "none")

PARAMS: dict[str, Any] = {
    "Global.log_level": "error",
    "Global.use_cls": False,  # the reader's crops are upright
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    # The default ("min", 736) enlarges a 420x90 strip until its short side is 736 px: over a second a read.
    # "max" leaves a crop under 960 px at its own size.
    "Det.limit_type": "max",
    "Det.limit_side_len": 960,
}


def lines_of(boxes: Any, texts: Any) -> str:
    """Detected text boxes as text lines, top to bottom, each line's boxes left to right: the shape Tesseract's
    page read gives, so that one parser reads both. A box joins the line whose vertical span holds its centre."""
    lines: list[list[tuple[float, float, float, str]]] = []
    entries = [(min(p[1] for p in box), max(p[1] for p in box), min(p[0] for p in box), str(text))
               for box, text in zip(boxes if boxes is not None else (), texts or (), strict=False)]
    for top, bottom, left, text in sorted(entries):
        middle = (top + bottom) / 2
        line = next((ln for ln in lines if ln[0][0] <= middle <= ln[0][1]), None)
        if line is None:
            lines.append([(top, bottom, left, text)])
        else:
            line.append((top, bottom, left, text))
    return "\n".join(" ".join(entry[3] for entry in sorted(line, key=lambda e: e[2])) for line in lines)


class RapidOcrEngine:
    """RapidOCR behind `OcrEngine.read`. `psm` and `whitelist` have no PP-OCR equivalent and are ignored."""

    name = "rapidocr"

    def __init__(self) -> None:
        self._ocr: Any = None
        self._pid = -1
        self._lock = threading.Lock()
        self._alphabet: dict[str, int] | None = None

    def threads(self) -> dict[str, int]:
        """The thread count each onnxruntime session was built with (the detector's and the recogniser's, loaded by
        the first read)."""
        parts = {"det": self._ensure().text_det, "rec": self._ensure().text_rec}
        return {key: part.session.session.get_session_options().intra_op_num_threads
                for key, part in parts.items() if part is not None}

    def _ensure(self) -> Any:
        if self._ocr is not None and self._pid == os.getpid():
            return self._ocr
        try:
            import cv2
            from rapidocr import RapidOCR
        except Exception as exc:
            raise OcrUnavailableError(f"rapidocr is not importable ({exc}); pip install rapidocr onnxruntime") from exc
        cv2.setNumThreads(1)
        self._ocr, self._pid = RapidOCR(params=dict(PARAMS)), os.getpid()
        return self._ocr

    def read(self, image: Image.Image, psm: int = 6, whitelist: str | None = None) -> str:
        """Text of `image` (see `OcrEngine.read`), one line per detected text line."""
        with self._lock:
            out = self._ensure()(np.asarray(image.convert("RGB")))
        return lines_of(out.boxes, out.txts)

    def char_probs(self, image: Image.Image) -> tuple[np.ndarray, dict[str, int]]:
        """The recogniser's character probabilities for `image` taken as one text line (no detection): frames x
        characters, and each character's column (column 0 is CTC's "no character"). See `line_verify`."""
        with self._lock:
            ocr = self._ensure()
            recogniser = ocr._load_rec_model()  # its probabilities are not part of the public API
            pixels = np.asarray(image.convert("RGB"))
            height, width = pixels.shape[:2]
            _, rec_height, rec_width = recogniser.rec_image_shape
            batch = recogniser.resize_norm_img(pixels, max(rec_width / rec_height, width / height))[None]
            probs = recogniser.session(batch.astype(np.float32))[0]
            if self._alphabet is None:
                self._alphabet = {ch: k for k, ch in enumerate(recogniser.postprocess_op.character) if k}
        return probs, self._alphabet


_shared: RapidOcrEngine | None = None


def make_rescue_engine(name: str) -> RapidOcrEngine | None:
    """The rescue engine by name ("none": no rescue), one per process, its packages checked to be installed; they
    are imported on its first read (importing them costs about 0.8 s of CPU, which most workers never need to pay).
    Raises `OcrUnavailableError` naming what is missing, ValueError for an unknown name."""
    global _shared
    if name == "none":
        return None
    if name != "rapidocr":
        raise ValueError(f"unknown rescue OCR engine {name!r}; choose one of {', '.join(RESCUE_NAMES)}")
    missing = [package for package in ("rapidocr", "onnxruntime") if importlib.util.find_spec(package) is None]
    if missing:
        raise OcrUnavailableError(f"{' and '.join(missing)} not installed; pip install rapidocr onnxruntime, or set "
                                  "STAGE_E_OCR_RESCUE=none")
    _shared = _shared or RapidOcrEngine()
    return _shared
