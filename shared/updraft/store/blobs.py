"""Values stored compressed inline, or in S3 when an item could not hold them (serialized DAGs, XComs)."""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from updraft.store.config import StoreConfig
from updraft.store.errors import StoreError, ValueTooLarge

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


def _gzip(data: bytes) -> bytes:
    # mtime=0: the same value always compresses to the same bytes, so rewrites are byte-identical.
    return gzip.compress(data, compresslevel=6, mtime=0)


@dataclass(frozen=True)
class Oversized:
    """A value left unread because its JSON is longer than its reader asked for (``Blobs.unpack``'s
    ``max_json_bytes``); ``s3_key``: where it is stored, gzip-compressed JSON ``{"v": value}`` (None: inline)."""

    s3_key: str | None


class Blobs:
    """Packs a JSON value for an item attribute: (inline gzip bytes, None) or (None, S3 key) above
    ``large_item_bytes``, and unpacks either form."""

    def __init__(self, config: StoreConfig, s3_client: S3Client | None = None) -> None:
        self.config = config
        self._s3 = s3_client

    def pack(self, value_json: bytes, blob_key: str) -> tuple[bytes | None, str | None]:
        packed = _gzip(value_json)
        if len(packed) > self.config.large_item_bytes:
            return None, self._put(blob_key, packed)
        return packed, None

    def unpack(self, data: bytes | None, s3_key: str | None, max_json_bytes: int | None = None) -> Any:
        """The JSON value packed (any JSON: a serialized DAG's document, an XCom's value).

        With ``max_json_bytes``, a value whose JSON is longer comes back as :class:`Oversized`, decompressed no
        further than that (a small item may hold a value a thousand times larger); 0 reads nothing, S3 included."""
        if max_json_bytes == 0:
            return Oversized(s3_key)
        packed = self._get(s3_key) if s3_key is not None else data
        if packed is None:
            raise StoreError("an item holds neither inline data nor an S3 key")
        if max_json_bytes is None:
            return json.loads(gzip.decompress(packed))
        reader = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip's header and trailer
        raw = reader.decompress(packed, max_json_bytes + 1)
        if len(raw) > max_json_bytes or reader.unconsumed_tail:
            return Oversized(s3_key)
        return json.loads(raw + reader.flush())

    def _put(self, key: str, body: bytes) -> str:
        if self._s3 is None or not self.config.s3_bucket:
            raise ValueTooLarge(
                f"{key}: {len(body)} compressed bytes exceed large_item_bytes={self.config.large_item_bytes} "
                "and the store has no S3 bucket/client for large values")
        full = self.config.s3_prefix + key
        self._s3.put_object(Bucket=self.config.s3_bucket, Key=full, Body=body, ContentEncoding="gzip",
                            ContentType="application/json")
        return full

    def _get(self, key: str) -> bytes:
        if self._s3 is None or not self.config.s3_bucket:
            raise StoreError(f"{key} is stored in S3 but the store has no S3 bucket/client")
        return self._s3.get_object(Bucket=self.config.s3_bucket, Key=key)["Body"].read()

    def delete(self, key: str) -> None:
        """Remove a value stored in S3 (its item is being deleted); an absent object is not an error."""
        if self._s3 is not None and self.config.s3_bucket:
            self._s3.delete_object(Bucket=self.config.s3_bucket, Key=key)
