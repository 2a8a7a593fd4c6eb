"""What transactional clients sent and were told, and the crash-safety invariants of issue #15 checked against what
a restarted broker serves.

Every record value names its transaction (`<transactional id>|<number>|<partition>|<index>`), so each record a
reader gets is traced back to one `Txn`; each transaction commits distinct offsets for its group (one group per
transactional id), so committed offsets are traced back too. Invariants:

* settled (no transaction left open: every id Empty/CompleteCommit/CompleteAbort, every output partition's last
  stable offset at its high watermark, so no hanging transaction blocks read_committed):
  - read_committed sees, for each transaction, all of its records in every partition or none (no partial result);
  - it sees those of every transaction whose EndTxn(commit) was answered, and none of a transaction whose EndTxn
    (commit) was never sent (aborted, or Ongoing at the crash: aborted at its timeout or by the next producer);
  - the group's committed offsets are exactly those of the id's latest visible transaction (never half-committed:
    every partition from that one transaction), for OffsetFetch with and without require_stable, which answers
    no UNSTABLE_OFFSET_COMMIT any more;
* at any moment after a restart, before settling:
  - read_committed never sees a record of a transaction whose EndTxn(commit) was never sent, and within one
    partition sees all of a transaction's records there or none (markers may have reached only some partitions);
  - OffsetFetch serves all the offsets of one transaction whose EndTxn(commit) was sent, or none (never those
    of a transaction still open or aborted, never some partitions from one transaction and some from another);
  - require_stable answers UNSTABLE_OFFSET_COMMIT while the transaction that committed offsets is still Ongoing,
    and never once the id is Empty/CompleteCommit/CompleteAbort (the offsets are decided and written).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from protocol.errors import ErrorCode
from tests.broker.wire import WireClient
from tests.durability.offsets_client import create_topic
from tests.support.txn_wire import CommittedView, describe, offsets, read_committed

SETTLED_STATES = frozenset({"Empty", "CompleteCommit", "CompleteAbort"})
UNSTABLE = ErrorCode.UNSTABLE_OFFSET_COMMIT


@dataclass(eq=False)
class Txn:
    """One transaction as its client planned it and saw it (compared by identity)."""

    transactional_id: str
    number: int
    offsets: dict[int, int]
    partitions: list[int]  # the output partitions it writes to
    per_partition: int  # records per partition
    commit: bool  # how the client means to end it
    added: bool = False  # AddPartitionsToTxn answered
    sent: dict[int, list[bytes]] = field(default_factory=dict)  # output partition -> values sent in Produce
    acked: set[int] = field(default_factory=set)  # output partitions whose Produce was answered
    offsets_added: bool = False  # AddOffsetsToTxn answered
    offsets_acked: bool = False  # TxnOffsetCommit answered
    end: bool | None = None  # None: no EndTxn sent; True: commit; False: abort
    end_answer: ErrorCode | None = None  # None: no answer (killed before it)

    def value(self, partition: int, index: int) -> bytes:
        return f"{self.transactional_id}|{self.number}|{partition}|{index}".encode()

    @property
    def committed(self) -> bool:
        """The client was told the commit is decided."""
        return self.end is True and self.end_answer == ErrorCode.NONE

    @property
    def may_commit(self) -> bool:
        """Its EndTxn(commit) was sent, so the broker may have decided commit."""
        return self.end is True and self.end_answer in (None, ErrorCode.NONE)

    def where(self) -> str:
        return f"{self.transactional_id} #{self.number} (end={self.end}, answer={self.end_answer})"


def offsets_of(number: int, partitions: list[int]) -> dict[int, int]:
    """The distinct offsets transaction `number` of an id commits for its group."""
    return {p: 100 * (number + 1) + p for p in partitions}


@dataclass
class Ledger:
    """All transactions of all ids, the output topic and the consumed (input) topic of the groups."""

    output: str
    output_partitions: list[int]
    input: str
    input_partitions: list[int]
    txns: dict[tuple[str, int], Txn] = field(default_factory=dict)

    async def create_topics(self, client: WireClient) -> None:
        await create_topic(client, self.output, len(self.output_partitions))
        await create_topic(client, self.input, len(self.input_partitions))

    @staticmethod
    def group(transactional_id: str) -> str:
        return f"group-{transactional_id}"

    def begin(self, transactional_id: str, partitions: list[int], per_partition: int, commit: bool) -> Txn:
        number = 1 + max((n for tid, n in self.txns if tid == transactional_id), default=-1)
        offsets = offsets_of(number, self.input_partitions)
        txn = Txn(transactional_id, number, offsets, partitions, per_partition, commit)
        self.txns[(transactional_id, number)] = txn
        return txn

    def ids(self) -> list[str]:
        return sorted({tid for tid, _ in self.txns})

    def of(self, value: bytes) -> Txn:
        transactional_id, number, _, _ = value.decode().split("|")
        found = self.txns.get((transactional_id, int(number)))
        assert found is not None, f"read_committed served a record no client sent: {value!r}"
        return found

    async def views(self, client: WireClient) -> dict[int, CommittedView]:
        return {p: await read_committed(client, self.output, p) for p in self.output_partitions}

    # -- at any moment ---------------------------------------------------------------------------------------

    async def check_unsettled(self, client: WireClient, where: str) -> None:
        """The invariants that hold at every moment after a restart (module docstring)."""
        for partition, view in (await self.views(client)).items():
            seen: dict[Txn, set[bytes]] = defaultdict(set)
            for _, value in view.records:
                seen[self.of(value)].add(value)
            for txn, values in seen.items():
                assert txn.may_commit, f"{where}: read_committed sees {txn.where()} in partition {partition}"
                assert values == set(txn.sent.get(partition, [])), (
                    f"{where}: partial result of {txn.where()} in partition {partition}: {sorted(values)}"
                )
        for transactional_id in self.ids():
            await self._check_stability(client, transactional_id, where)

    async def _check_stability(self, client: WireClient, transactional_id: str, where: str) -> None:
        group = self.group(transactional_id)
        before = await describe(client, transactional_id)
        answered = await offsets(client, group, self.input, self.input_partitions, require_stable=True)
        after = await describe(client, transactional_id)
        unstable = {p for p, (_, error) in answered.items() if error == UNSTABLE}
        if before.state in SETTLED_STATES:
            assert not unstable, f"{where}: {transactional_id} is {before.state}, {group} still unstable {unstable}"
        plain = await offsets(client, group, self.input, self.input_partitions, require_stable=False)
        served = {p: o for p, (o, _) in plain.items()}
        possible = [t.offsets for t in self.txns.values() if t.transactional_id == transactional_id and t.may_commit]
        assert served in [*possible, dict.fromkeys(self.input_partitions, -1)], (
            f"{where}: {group} serves {served}, not all the offsets of one transaction that may have committed"
        )
        last = self.last(transactional_id)
        if after.state == "Ongoing" and last is not None and last.offsets_acked and last.end is None:
            assert unstable == set(self.input_partitions), (
                f"{where}: {last.where()} still Ongoing with acknowledged offsets; require_stable answered {answered}"
            )

    def last(self, transactional_id: str) -> Txn | None:
        """The id's latest transaction."""
        numbers = [n for tid, n in self.txns if tid == transactional_id]
        return self.txns[(transactional_id, max(numbers))] if numbers else None

    # -- once settled ----------------------------------------------------------------------------------------

    async def settled(self, client: WireClient) -> bool:
        """No transaction left open: every id settled, every output partition readable to its end."""
        for transactional_id in self.ids():
            if (await describe(client, transactional_id)).state not in SETTLED_STATES:
                return False
        views = await self.views(client)
        return all(view.last_stable_offset == view.high_watermark for view in views.values())

    async def check_settled(self, client: WireClient, where: str) -> None:
        """The invariants once every transaction is decided and written (module docstring)."""
        visible: dict[Txn, dict[int, list[bytes]]] = defaultdict(lambda: defaultdict(list))
        for partition, view in (await self.views(client)).items():
            assert view.last_stable_offset == view.high_watermark, f"{where}: partition {partition} {view}"
            for _, value in view.records:
                visible[self.of(value)][partition].append(value)
        for txn in self.txns.values():
            sent = {p: values for p, values in txn.sent.items() if values}
            got = visible.get(txn)
            if got is not None:
                assert txn.may_commit, f"{where}: read_committed sees {txn.where()}"
                assert dict(got) == sent, f"{where}: partial or repeated result of {txn.where()}: {dict(got)}"
            assert not txn.committed or got is not None or not sent, f"{where}: committed {txn.where()} is lost"
        for transactional_id in self.ids():
            await self._check_offsets(client, transactional_id, set(visible), where)

    async def _check_offsets(self, client: WireClient, transactional_id: str, visible: set[Txn], where: str) -> None:
        """Exactly the offsets of the latest transaction of the id that committed, or none."""
        decided = [
            t
            for t in self.txns.values()
            if t.transactional_id == transactional_id and t.offsets_acked and (t in visible or t.committed)
        ]
        latest = max(decided, key=lambda t: t.number, default=None)
        expected = latest.offsets if latest is not None else dict.fromkeys(self.input_partitions, -1)
        group = self.group(transactional_id)
        for stable in (False, True):
            answered = await offsets(client, group, self.input, self.input_partitions, require_stable=stable)
            assert answered == {p: (o, ErrorCode.NONE) for p, o in expected.items()}, (
                f"{where}: {group} (require_stable={stable}) answered {answered}, expected those of "
                f"{latest.where() if latest else 'no transaction'}: {expected}"
            )
