"""The JSONL batch engine: one reader and writer of the format (`lines`, on msgspec),
lines grouped by text and run by the fast backend or the slow evaluator (`engine`), one
on-disk cache of compiled programs (`programs`, `cache`), a process pool over windows
of lines (`run`)."""
