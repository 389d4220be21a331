"""What the image must show, and the checks that say where it does not.

Each reason code comes from one of these modules (the README's reason table says which):

- `expected`: the source text of the stem and each option, as it must read.
- `scoring`: one field's text checks (`text_mismatch`, numbers, units, short options, labels),
  the one scorer of both modes; `tokens`: the numbers, units and short options it checks.
- `meaning`: word accounting (`word_changed`, `word_dropped`, `word_added`); `relations`:
  comparisons read with another meaning (`relation_changed`); `findings`: what settles either.
- `labels`, `lookalikes`, `glyphs`, `fonts`: option labels as read, what OCR reads in place of
  what, the glyphs a face draws alike, what the verifier knows of a family.
- `formula_record`: a formula typeset from other TeX (`formula_changed`).
- `layout_checks`, `legibility`: the render record's checks and the final pixels' legibility.
- `figures`, `figure_search`: figure presence with a layout record, and without one.
"""
