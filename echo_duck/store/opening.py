"""What a writable open does after the schema is current, in order.

1. Delete a half-written copy left by a purge rewrite that was killed before its rename (erasure.py).
2. Finish or undo an archive export a crash interrupted (archive.recover).
3. Rebuild ``memories_all`` over the readable archive files; a damaged file is skipped and reported.
4. Rebuild the BM25 postings if their signature moved on (segmenter, stop words, hash(), index text).
5. Record the embedding model, so stale_vectors is right at once.
6. Finish purges whose file rewrite was still due (pending_purges): archive files, then the store file.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from ..index.indexing import Indexer
from ..lifecycle import archive, erasure
from ..storage.db import Db


def open_writable(db: Db, indexer: Indexer, archive_dir: Path | None, now: datetime) -> tuple[Path, ...]:
    """Run the steps above; returns the damaged archive files that were skipped."""
    erasure.discard_leftovers(db.path)
    archive.recover(db, archive_dir, now)
    damaged = archive.refresh_view(db, archive_dir)
    indexer.keyword.ensure_ready()
    _ = indexer.vectors  # records the store's current model
    erasure.finish_pending(db, archive_dir)
    return damaged
