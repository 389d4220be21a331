"""The page as pixels: images read, text regions cut out and normalised, contrast measured.

- `images`: reading an image file (alpha flattened onto white).
- `crops`: a region's quad rectified and prepared for OCR (polarity, background, specks, rules).
- `contrast`: the WCAG ratio of text over its background, from CSS or from pixels.
"""
