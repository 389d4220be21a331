"""Settlers that ask the pixels where every engine misread a field (evidence recorded).

- `ink`: a token drawn in the field's face against its rivals, compared on the ink.
- `ink_settle`: which failed checks the ink settles, and how (`glyph_ambiguity` when it cannot).
- `drawn_face`: the catalogue face a page with no layout record was drawn in, told from its ink.
"""
