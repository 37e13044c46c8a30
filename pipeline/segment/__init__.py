"""Segment: CleanDoc -> Rule, Edition. Each paragraph analysed once by spaCy (nlp) becomes Rule records (rules);
the records of every source of one edition merge into one per rule (edition). fragment reads an undated piece,
dating dates one by its rules (edition = "auto"), read is the whole chain from files for commands and tools."""
