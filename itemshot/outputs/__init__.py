"""The output set's record: the typed manifest row and the one reader and writer of its files.

Public surface:

- `ManifestRow`: one typed, versioned row (`SCHEMA_VERSION`), built with
  `ManifestRow.for_job`, `for_plan_failure`, `for_load_error`, `generated`;
  `from_json`/`to_json` keep fields it does not know. Reads as a Mapping.
- `read_manifest(out) -> list[ManifestRow]`, `load_manifest(out) -> Manifest`
  (rows and the lines that were not rows), `scan_manifest` (rows with the
  byte offsets of their lines), `read_row_at`, `read_summary`.
- `write_manifest(out, rows, owns=...)`: the merging, atomic write of
  `manifest.jsonl`; `write_summary(out, summary)`; `ManifestDraft` for a
  writer that rewrites every row it read.
- `file_sha256`, `bytes_sha256`: the image hash verdicts are bound to.
"""

from __future__ import annotations

from itemshot.outputs.rows import (
    RENDER_FIELDS,
    REVIEW_FIELDS,
    SCHEMA_VERSION,
    TYPED_FIELDS,
    VERDICT_FIELDS,
    ManifestRow,
    ManifestRowError,
    as_row,
)
from itemshot.outputs.store import (
    MANIFEST,
    SUMMARY,
    VERDICT_OWNER,
    Manifest,
    ManifestDraft,
    ManifestProblem,
    bytes_sha256,
    file_sha256,
    load_manifest,
    manifest_path,
    merge_row,
    merge_rows,
    read_manifest,
    read_row_at,
    read_summary,
    row_key,
    scan_manifest,
    summary_path,
    with_earlier,
    write_manifest,
    write_summary,
)

__all__ = [
    "MANIFEST",
    "RENDER_FIELDS",
    "REVIEW_FIELDS",
    "SCHEMA_VERSION",
    "SUMMARY",
    "TYPED_FIELDS",
    "VERDICT_FIELDS",
    "VERDICT_OWNER",
    "Manifest",
    "ManifestDraft",
    "ManifestProblem",
    "ManifestRow",
    "ManifestRowError",
    "as_row",
    "bytes_sha256",
    "file_sha256",
    "load_manifest",
    "manifest_path",
    "merge_row",
    "merge_rows",
    "read_manifest",
    "read_row_at",
    "read_summary",
    "row_key",
    "scan_manifest",
    "summary_path",
    "with_earlier",
    "write_manifest",
    "write_summary",
]
