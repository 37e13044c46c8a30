"""Queries over the published tables: history (one rule's lineage), compare (two editions or files), cite
(citations remapped and checked), identify (which editions an undated fragment agrees with)."""
