"""Values encrypted with the environment's KMS key before they reach the table (Airflow's Fernet, on KMS).

Variables' values and connections' passwords and extras are secrets, so beyond DynamoDB's own encryption at
rest they are stored as KMS ciphertext: reading the table alone (a backup, an export, a role with table access
but not the key) does not reveal them. Each ciphertext is bound to its table and item by the encryption context,
so a ciphertext copied to another item does not decrypt there. The KMS client is made on first use: a handler
that never touches a secret pays nothing for it.

KMS encrypts at most 4,096 bytes directly; a longer value is refused with an error naming it, rather than
stored in clear.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from updraft.store.errors import ValueTooLarge

KMS_MAX_BYTES = 4096


class SecretTooLarge(ValueTooLarge):
    """A secret over KMS's direct-encryption limit."""


class KmsCipher:
    def __init__(self, client_factory: Callable[[], Any], key_id: str, table: str) -> None:
        self._client_factory = client_factory
        self._client: Any = None
        self.key_id = key_id
        self.table = table

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    def _context(self, item: str) -> dict[str, str]:
        return {"updraft:table": self.table, "updraft:item": item}

    def encrypt(self, plaintext: str, *, item: str) -> bytes:
        data = plaintext.encode("utf-8")
        if len(data) > KMS_MAX_BYTES:
            raise SecretTooLarge(f"value too large: {item} is {len(data)} bytes; encrypted values are limited to "
                                 f"{KMS_MAX_BYTES} bytes (KMS's limit)")
        response = self.client.encrypt(KeyId=self.key_id, Plaintext=data, EncryptionContext=self._context(item))
        return bytes(response["CiphertextBlob"])

    def decrypt(self, blob: bytes, *, item: str) -> str:
        response = self.client.decrypt(CiphertextBlob=blob, EncryptionContext=self._context(item))
        return bytes(response["Plaintext"]).decode("utf-8")
