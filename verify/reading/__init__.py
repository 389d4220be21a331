"""Readings of the page: the OCR engines and the text they return.

- `ocr`: tesseract in-process (one engine per language per worker), stacked crops, whole pages.
- `second_reader`: PP-OCRv5 line recognition, asked where tesseract's reading fails a check.
- `text`: normalisation and the accuracy score; `variants`: kanji variant forms folded.
- `align`: where a field's text sits in a page's OCR text (whole-image mode).
"""
