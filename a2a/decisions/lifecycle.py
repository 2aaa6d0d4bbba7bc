"""Amending, deleting and linking stored decisions (CONTRACT.md, "Lifecycle of a decision")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from a2a.auth.scopes import Scopes, allows
from a2a.decisions.links import REVERSE, detached, link_errors, neighbours, reaches, relink
from a2a.decisions.locks import KeyedLocks
from a2a.decisions.params import CHANGEABLE, DeleteDecisionParams, UpdateDecisionParams
from a2a.decisions.writes import Written
from a2a.errors import FieldError, InvalidParams, MissingScope
from a2a.records import Change, DecisionRecord, Reason, differences
from a2a.store.async_store import AsyncStore
from a2a.store.pages import StoredRecord

log = logging.getLogger(__name__)

#: Times a writer re-reads when the records linked to its target changed while it waited
#: for their locks; past it the store is being rewritten faster than links can be taken.
MAX_ATTEMPTS: Final = 20

Commit = Callable[[Written], Awaitable[bool]]
Forget = Callable[[Sequence[str]], Awaitable[None]]


def unknown_id() -> InvalidParams:
    """-32602 on `id`: no stored decision has it."""
    return InvalidParams([FieldError("id", "no decision with this id")])


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """updateDecision, deleteDecision and the links of recordDecision, over one store.

    Every record a change touches (the decision and each one it links to or from) is locked
    (KeyedLocks, shared with DecisionService, taken in sorted order) and read afresh before
    anything is written, so concurrent updates of one record each land in its history, and
    everything is checked before the first write: a refused call changes nothing.
    `commit` stores one record (GroupCommit.submit), `forget` drops deleted ids from the
    in-process index. Raises InvalidParams (-32602), MissingScope (-32004),
    StoreUnavailable (-32003).
    """

    store: AsyncStore
    locks: KeyedLocks
    commit: Commit
    clock: Callable[[], datetime]
    forget: Forget | None = None
    #: The tenant of `store`, named in the deletion log line.
    tenant: str = "default"

    # -- record ------------------------------------------------------------------------------

    async def record(self, record: DecisionRecord, written: Written, agent: str) -> bool:
        """Store a new record (`written`) and the reverse of its links; `created` as
        BatchWriter answers it. Unknown or repeated link ids and cycles are refused on
        `decision.supersedes[n]` / `decision.relatedTo[n]` before anything is written."""
        wanted = {record.id} | neighbours(record)
        self.store.start_deadline()  # a holder of these locks may be waiting on Chroma
        async with self.locks.hold_all(wanted):
            known = await self._read(neighbours(record))
            await self._check_links(record.id, _links_of(record), known, "decision")
            created = await self.commit(written)
            # Also on a retry (created false): a retry completes what a failed call began.
            await self._write(self._reverse_links(record, None, known, agent), known)
        return created

    # -- update ------------------------------------------------------------------------------

    async def update(self, params: UpdateDecisionParams, agent: str) -> DecisionRecord:
        """Apply `params.changes` to the stored record, keep them in its history, and
        update the reverse links of what it links to; the record after the change."""
        sent = params.changes.model_fields_set
        async with self._locked(params.id, _sent_links(params)) as (stored, known):
            old = stored.decision
            new = _changed(old, params)
            await self._check_links(
                old.id, {n: getattr(new, n) for n in sent if n in REVERSE}, known, "changes"
            )
            changes = differences(old, new, CHANGEABLE)
            if not changes:
                # Nothing differs: nothing to keep; reverse links a failed call left
                # unwritten are completed (a retry finishes what it began).
                await self._write(self._reverse_links(old, old, known, agent), known)
                return old
            at = self.clock()
            entry = Change(at=at, by=agent, reason=params.reason, changes=changes)
            new = new.model_copy(update={"history": [*old.history, entry]})
            content = any(n in changes for n in ("title", "context", "decision", "reasons", "tags"))
            await self.commit(Written(new, None if content else stored.document, replace=True))
            await self._write(self._reverse_links(new, old, known, agent), known)
        return new

    # -- delete ------------------------------------------------------------------------------

    async def delete(self, params: DeleteDecisionParams, agent: str, scopes: Scopes) -> None:
        """Remove the decision and every link to it; logged as one line (no content).

        Someone else's decision needs scope `admin`: MissingScope("admin").
        """
        async with self._locked(params.id, ()) as (stored, known):
            record = stored.decision
            if record.recorded_by != agent and not allows(scopes, "admin"):
                raise MissingScope("admin")
            changed = detached(known.records.values(), record, at=self.clock(), by=agent)
            await self._write(changed, known)
            await self.store.delete([record.id])
            if self.forget is not None:
                await self.forget([record.id])
        log.info(
            "decision deleted",
            extra={
                "agent": agent,
                "tenant": self.tenant,
                "id": params.id,
                "reason": params.reason,
            },
        )

    # -- parts -------------------------------------------------------------------------------

    @asynccontextmanager
    async def _locked(
        self, record_id: str, extra: Collection[str]
    ) -> AsyncIterator[tuple[StoredRecord, Linked]]:
        """The stored `record_id` and every other record it links to or `extra` names (those
        that exist), all locked for the block. Unknown id: InvalidParams on `id`."""
        for _ in range(MAX_ATTEMPTS):
            first = await self._one(record_id)
            wanted = neighbours(first.decision) | set(extra)
            async with self.locks.hold_all(wanted | {record_id}):
                stored = await self._one(record_id)
                if neighbours(stored.decision) - wanted:
                    continue  # its links changed meanwhile: lock the new set
                known = await self._read(wanted - {record_id})
                yield stored, known
                return
        raise RuntimeError(f"the links of {record_id!r} kept changing")

    async def _one(self, record_id: str) -> StoredRecord:
        rows = await self.store.get(ids=[record_id], documents=True)
        if not rows:
            raise unknown_id()
        return rows[0]

    async def _read(self, ids: Collection[str]) -> Linked:
        if not ids:
            return Linked()
        rows = await self.store.get(ids=sorted(ids), documents=True)
        return Linked(
            {row.id: row.decision for row in rows},
            {row.id: row.document for row in rows},
        )

    async def _check_links(
        self,
        record_id: str,
        links: dict[str, list[str]],
        known: Linked,
        prefix: str,
    ) -> None:
        errors = link_errors(record_id, links, known.records, prefix)
        if not errors and links.get("supersedes"):
            graph = await self._supersession_graph(links["supersedes"], known.records)
            if reaches(links["supersedes"], record_id, graph):
                field = f"{prefix}.supersedes"
                errors.append(FieldError(field, "would make a cycle of supersession"))
        if errors:
            raise InvalidParams(errors)

    async def _supersession_graph(
        self, start: list[str], known: dict[str, DecisionRecord]
    ) -> dict[str, list[str]]:
        """id -> the ids it supersedes, for every record reachable from `start` (read from
        the store level by level; chains of supersession are short)."""
        graph: dict[str, list[str]] = {}
        frontier = set(start)
        while frontier:
            found = {i: known[i] for i in frontier if i in known}
            missing = frontier - set(found)
            if missing:
                rows = await self.store.get(ids=sorted(missing))
                found.update({row.id: row.decision for row in rows})
            for i, record in found.items():
                graph[i] = list(record.supersedes)
            frontier = {n for r in found.values() for n in r.supersedes} - set(graph)
        return graph

    def _reverse_links(
        self,
        new: DecisionRecord,
        old: DecisionRecord | None,
        known: Linked,
        agent: str,
    ) -> list[DecisionRecord]:
        """The linked records whose reverse lists change as `old` (None: nothing stored
        before) becomes `new`; a link already in place changes nothing."""
        at = self.clock()
        targets = dict(known.records)
        changed: set[str] = set()
        for name in ("supersedes", "related_to"):
            before = set() if old is None else set(getattr(old, name))
            after = set(getattr(new, name))
            for target_id in sorted(before | after):
                target = targets.get(target_id)
                if target is None:
                    continue
                updated = relink(target, new.id, name, target_id in after, at=at, by=agent)
                if updated is not target:
                    targets[target_id] = updated
                    changed.add(target_id)
        return [targets[i] for i in sorted(changed)]

    async def _write(self, records: list[DecisionRecord], known: Linked) -> None:
        """Store `records` with their embedded text as stored (links change no content)."""
        await asyncio.gather(
            *(self.commit(Written(r, known.documents.get(r.id), replace=True)) for r in records)
        )


@dataclass(frozen=True, slots=True)
class Linked:
    """Stored records a change touches, by id, and the text each was embedded from."""

    records: dict[str, DecisionRecord] = field(default_factory=dict)
    documents: dict[str, str | None] = field(default_factory=dict)


def _links_of(record: DecisionRecord) -> dict[str, list[str]]:
    return {"supersedes": record.supersedes, "related_to": record.related_to}


def _sent_links(params: UpdateDecisionParams) -> set[str]:
    ids: set[str] = set()
    for name in ("supersedes", "related_to"):
        ids.update(getattr(params.changes, name) or ())
    return ids


def _changed(old: DecisionRecord, params: UpdateDecisionParams) -> DecisionRecord:
    """`old` with the sent changes applied, validated whole (InvalidParams on `changes`)."""
    update: dict[str, Any] = {}
    for name in params.changes.model_fields_set:
        value = getattr(params.changes, name)
        if name == "reasons":
            value = [Reason(type=r.type, text=r.text) for r in value]
        update[name] = list(value) if name in ("tags", "supersedes", "related_to") else value
    data = {**old.model_dump(), **update}
    try:
        new = DecisionRecord.model_validate(data)
    except ValueError as exc:
        raise InvalidParams([FieldError("changes", str(exc).splitlines()[0])]) from None
    return new.model_copy(update={"origin_hash": old.origin_hash})
