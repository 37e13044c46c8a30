"""Ingest: files -> CleanDoc. Find the sources (discover), decode their bytes (decode; PDF, DOCX, RTF, DOC through
containers/), date them, and hand each to its format's adapter (adapters/), which keeps the text worth reading
and accounts for every discarded character (clean.Ledger). Reads raw/, --corpus folders and their fetched.json."""
