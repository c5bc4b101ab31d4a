"""The file formats ``import`` reads, by name (kept apart so the CLI can list them without loading a store)."""

FORMATS = ("echo-user", "echo-env", "memory-md", "echo-history", "ethan-facts", "ethan-procedures", "ethan-profile",
           "jsonl", "parquet")
