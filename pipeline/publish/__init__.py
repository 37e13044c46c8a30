"""Publish: records -> tables in processed/ (CSV, Parquet, SQLite, JSON, the data package), published all or
nothing (transaction), and read back typed (load). stagefiles: what each stage hands the next in .stages/."""
