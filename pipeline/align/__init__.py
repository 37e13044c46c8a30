"""Align: two editions' Rule lists -> Match -> RuleChange, and lineages across every edition. match pairs the rules
(its thresholds, named and explained, are at its top), trace follows sentences through splits and merges, diff
turns a pair into word operations (data), lineage carries each rule's identity, overrides are a person's word."""
