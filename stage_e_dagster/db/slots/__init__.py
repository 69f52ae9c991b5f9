"""OCR slots: the advisory-lock cap and who holds it."""
