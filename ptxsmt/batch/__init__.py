"""The JSONL batch engine (docs/batch.md): the format read and written (`lines`), lines
run by text (`engine`), compiled programs and their cache (`programs`, `cache`), `run`."""
