"""The fsspec provider: `FsspecFileSystem`, any fsspec storage (memory, S3, SFTP, …) as a
`dsh_fs.fs.FileSystem`.

Its rooms: the storage families and what "version" and "publish" mean on each (`_store`,
S3's ETags and conditional requests in `_s3`), what it remembers of content for size +
mtime versions (`_digests`), paths under the root (`_paths`), streamed and ranged text
(`_stream`, `_ranged`), the walk (`_walk`), the change journal's store on the same
storage (`_journal_store`), change sets' intent records (`_set_records`), and the one
place where fsspec, s3fs and botocore exceptions become `FsError`s (`_errors`). Loaded
only when asked for.
"""

from ._filesystem import FsspecFileSystem

__all__ = ["FsspecFileSystem"]
