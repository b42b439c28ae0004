"""The variable aggregate: one item per Airflow Variable, its value encrypted with the environment's KMS key.

``VARIABLE#<key>`` / ``META``, listed through the keys-only list index under ``VARIABLES``. A set is one
unconditional put (the last writer wins, as Airflow's ``Variable.set``), a delete one delete; both are
idempotent, so a redelivered event or a retried request changes nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.item_size import check_item_size
from updraft.store.models import VariableItem
from updraft.store.writes import conditional, item_absent, item_present


@dataclass
class VariableRecord:
    key: str
    value: str
    description: str | None = None
    is_encrypted: bool = False


class VariableStore(StoreBase):
    def _variable_item(self, key: str) -> VariableItem | None:
        V = self.models.variable
        try:
            return V.get(keys.variable_pk(key), keys.META, consistent_read=True)
        except V.DoesNotExist:
            return None

    def _variable_record(self, item: VariableItem) -> VariableRecord:
        raw = bytes(item.value or b"")
        value = (self.cipher.decrypt(raw, item=item.pk) if item.encrypted and self.cipher is not None
                 else raw.decode("utf-8"))
        if item.encrypted and self.cipher is None:
            raise ValueError(f"variable {item.key!r} is encrypted and this store has no KMS key to read it")
        return VariableRecord(key=item.key, value=value, description=item.description, is_encrypted=item.encrypted)

    def get_variable(self, key: str) -> VariableRecord | None:
        item = self._variable_item(key)
        return self._variable_record(item) if item is not None else None

    def set_variable(self, key: str, value: str, description: str | None = None, *,
                     only_if_new: bool = False) -> VariableRecord | None:
        """Create or replace the variable; with ``only_if_new``, None (nothing written) when it exists.
        :class:`~updraft.store.errors.ValueTooLarge` when its value and description do not fit one item (or, with
        a KMS key, the value is over KMS's 4 KB)."""
        pk = keys.variable_pk(key)
        encrypted = self.cipher is not None
        stored = self.cipher.encrypt(value, item=pk) if self.cipher is not None else value.encode("utf-8")
        item = self.models.variable(pk, keys.META, key=key, value=stored, encrypted=encrypted,
                                    description=description, list_pk=keys.VARIABLES_LIST_PK, list_sk=key)
        check_item_size(item, f"variable {key!r}")
        if only_if_new:
            if not conditional(lambda: item.save(item_absent(self.models.variable))):
                return None
        else:
            item.save()
        return VariableRecord(key=key, value=value, description=description, is_encrypted=encrypted)

    def delete_variable(self, key: str) -> bool:
        """False when there was no such variable."""
        V = self.models.variable
        row = V(keys.variable_pk(key), keys.META)
        return conditional(lambda: row.delete(item_present(V)))

    def list_variables(self) -> list[VariableRecord]:
        """Every variable, by key (strongly consistent reads of what the index found)."""
        V = self.models.variable
        found = self._listed_keys(V.list_index, [keys.VARIABLES_LIST_PK])
        records = [self._variable_record(i) for i in self._batch_get(V, sorted(found))]
        return sorted(records, key=lambda r: r.key)
