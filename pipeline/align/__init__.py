"""Align: two editions' Rule lists -> Match -> RuleChange, and lineages across every edition. match pairs the rules
(body, headings and glossary, each a module; every threshold of the alignment, named and explained, is in
scoring), trace follows sentences through splits and merges, diff turns a pair into word operations (data),
lineage carries each rule's identity, overrides are a person's word."""
