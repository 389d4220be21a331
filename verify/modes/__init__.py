"""The two audits: with a layout record (region mode) and without one (whole-image mode).

- `regions`: region mode; its ordered `SETTLERS` and `settle_located`, which whole-image mode
  uses to read a field in place where its words are found.
- `whole_image`: whole-image mode: the page read whole, fields aligned by their option labels.
"""
