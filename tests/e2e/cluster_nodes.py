"""A three-node group-broker process (`cluster.nodes=3`, issue #19) for the end-to-end failover flows, and the node
faults a test injects from outside the process through its HTTP control API (`toolkit/controls.py`): stop and start
a node, move a partition's leader or a group's coordinator, ask which node coordinates a group.

Topics get three replicas by default (`default.replication.factor=3`), so a stopped node's partitions elect another
in-sync replica instead of going offline; `__consumer_offsets` has few partitions so that its load on a new node is
quick.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.e2e.broker_requests import requests_answered
from tests.support.broker_process import BrokerProcess, control_url, wait_until

NODES = 3
SETTINGS = {
    "cluster.nodes": str(NODES),
    "default.replication.factor": str(NODES),
    "offsets.topic.num.partitions": "6",
    "control.listener": "http://127.0.0.1:0",
}


@dataclass
class ThreeNodes:
    """The broker process and its control API; `bootstrap` lists the three nodes, `node_bootstrap` one of them."""

    broker: BrokerProcess
    control: str

    @classmethod
    def of(cls, broker: BrokerProcess) -> ThreeNodes:
        return cls(broker, control_url(broker))

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def node_bootstrap(self, node_id: int) -> str:
        """One node's address only (node ids are 1, 2, 3, in the order of `bootstrap`)."""
        return self.bootstrap.split(",")[node_id - 1]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.control + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            exc.add_note(f"{method} {path}: {exc.read().decode(errors='replace')}")
            raise

    def nodes(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "/nodes")["nodes"])

    def start_stopped(self) -> None:
        """Start every stopped node again: a test leaves the cluster whole for the next one, even when it fails."""
        for node in self.nodes():
            if not node["running"]:
                self.start_node(node["node_id"])

    def stop_node(self, node_id: int) -> list[dict[str, Any]]:
        """Its connections drop, its partitions and coordinators move; the leader changes."""
        return list(self._call("POST", f"/nodes/{node_id}/stop")["leader_changes"])

    def start_node(self, node_id: int) -> list[dict[str, Any]]:
        return list(self._call("POST", f"/nodes/{node_id}/start")["leader_changes"])

    def move_leader(self, topic: str, partition: int, node_id: int) -> list[dict[str, Any]]:
        path = f"/topics/{topic}/partitions/{partition}/leader"
        return list(self._call("POST", path, {"node_id": node_id})["leader_changes"])

    def coordinator_node(self, group: str) -> int:
        return int(self._call("GET", f"/groups/{group}/coordinator")["node_id"])

    def move_group_coordinator(self, group: str, node_id: int) -> list[dict[str, Any]]:
        return list(self._call("POST", f"/groups/{group}/coordinator", {"node_id": node_id})["leader_changes"])

    def group(self, group: str) -> dict[str, Any] | None:
        """The coordinator's view of a group (`GET /groups/{id}`: state, members...); None while it has none."""
        try:
            return dict(self._call("GET", f"/groups/{group}"))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def group_state(self, group: str) -> str | None:
        found = self.group(group)
        return None if found is None else str(found["state"])

    def requests(self, api: str, error: str | None = None) -> float:
        """Requests of `api` the nodes answered so far (the broker's metrics, every node together)."""
        return requests_answered(self.broker, api, error)

    def other_node(self, *than: int) -> int:
        """A node id other than those given."""
        return next(n for n in range(1, NODES + 1) if n not in than)

    def wait_group_state(self, group: str, state: str, step: Callable[[], object] | None = None) -> None:
        """Wait until the coordinator has the group in `state`, taking `step` (a client's poll) meanwhile."""
        wait_until(
            lambda: self.group_state(group) == state,
            20,
            what=f"group {group!r} to be {state}",
            detail=lambda: f"it is {self.group_state(group)}",
            step=step,
        )
