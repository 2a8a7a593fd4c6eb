"""Member id generation: `prefix + "-" + UUID`, random in production, seeded when determinism is wanted.

Kafka builds a dynamic member's id from its client id and a static member's from its group instance id
(`ClassicGroup.generateMemberId`). Clients treat ids as opaque, so the UUID's spelling only has to be unique; a
seeded generator makes tests, simulations and golden files reproducible.
"""

from __future__ import annotations

import random
import uuid


class MemberIdGenerator:
    """Makes member ids; `seed=None` draws from the OS (uuid4), an int seed from a private PRNG."""

    __slots__ = ("_rng",)

    def __init__(self, seed: int | None = None) -> None:
        self._rng: random.Random | None = None if seed is None else random.Random(seed)

    def new_uuid(self) -> uuid.UUID:
        """A random (version 4) UUID, from the seeded PRNG when there is one."""
        if self._rng is None:
            return uuid.uuid4()
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def new_id(self, prefix: str) -> str:
        if self._rng is None:
            return f"{prefix}-{uuid.uuid4()}"
        return f"{prefix}-{uuid.UUID(int=self._rng.getrandbits(128), version=4)}"
