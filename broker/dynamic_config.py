"""Dynamic configs of this node: the broker keys AlterConfigs may change, checked as Kafka checks them, recorded in
``broker-configs.json`` and applied at once.

A change reaches the storage through new broker defaults (``LogManager.set_defaults``: every log without an
override of the key follows), and the other parts that read a dynamic key (the cleaner, the transaction
verification) through the callbacks registered with :meth:`DynamicConfigs.on_change`. A key Kafka lets change at
runtime but that this broker only reads at startup (``listeners``, ``max.connections``) is refused with Kafka's
"Cannot update these configs dynamically" (README, Differences from Kafka).

Kafka 4's KRaft formatter records the cluster-wide ``min.insync.replicas`` as a dynamic default (KIP-966, eligible
leader replicas): DescribeConfigs shows it as DYNAMIC_DEFAULT_BROKER_CONFIG and AlterConfigs refuses to remove it.
The first start of a log directory records it the same way, so clients see Kafka's answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from broker.config import KEYS, PER_BROKER, BrokerConfig, parse_key
from broker.config_layers import BrokerLayers
from protocol.errors import ErrorCode
from storage.broker_configs import BrokerConfigFile, DynamicBrokerConfigs
from storage.config import LogConfig, topic_defaults
from storage.errors import InvalidConfigError, LogDirError

__all__ = ["CLUSTER", "NODE", "ConfigRequestError", "DynamicConfigs"]

log = structlog.get_logger("broker.configs")

#: Which dynamic map a broker resource names: "" (every broker's default) or this node's id.
CLUSTER = "cluster"
NODE = "node"
_MIN_ISR = "min.insync.replicas"
#: Settings Kafka checks on the whole resulting config (``KafkaConfig``'s ``require``), with its words.
_AT_LEAST_ONE = ("log.roll.ms", "log.roll.jitter.ms")


class ConfigRequestError(Exception):
    """A refusal with the code and message Kafka answers for it."""

    def __init__(self, error_code: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


ChangeListener = Callable[[BrokerLayers], None]


class DynamicConfigs:
    """The layers of broker configs (:class:`BrokerLayers`) with the dynamic maps kept durable and applied."""

    def __init__(self, static: BrokerConfig, log_dir_file: BrokerConfigFile) -> None:
        self._file = log_dir_file
        first_start = not log_dir_file.exists()
        loaded = log_dir_file.load()
        if first_start:
            loaded = DynamicBrokerConfigs({_MIN_ISR: str(static[_MIN_ISR])}, {})
            log_dir_file.save(loaded)
        self.layers = BrokerLayers(static, loaded)
        self._listeners: list[ChangeListener] = []

    def on_change(self, listener: ChangeListener) -> None:
        """Call ``listener`` with the new layers after every applied change."""
        self._listeners.append(listener)

    # -- what the rest of the broker is configured from --------------------------------------------------------

    def topic_defaults(self) -> dict[str, str]:
        """Every topic key's default under the current broker configs, as DescribeConfigs shows it."""
        return topic_defaults(self.layers.values())

    def log_defaults(self) -> LogConfig:
        return LogConfig().with_overrides(self.topic_defaults(), validated=True)

    def value(self, name: str) -> Any:
        return self.layers.value(name)

    # -- broker resources --------------------------------------------------------------------------------------

    def current(self, scope: str) -> Mapping[str, str]:
        return self.layers.cluster if scope == CLUSTER else self.layers.node

    def check(self, scope: str, proposed: Mapping[str, str], set_keys: frozenset[str], named: frozenset[str]) -> None:
        """Kafka's checks of a broker resource's new dynamic map, in Kafka's order; ``set_keys`` are the keys the
        request sets (AlterConfigs: all of them; IncrementalAlterConfigs: those it SETs, APPENDs or SUBTRACTs),
        ``named`` every key it names (DELETEs too)."""
        fixed = [name for name in set_keys if name in KEYS and KEYS[name].dynamic is None]
        refused = [
            name for name in set_keys if name in KEYS and KEYS[name].dynamic is not None and not KEYS[name].alterable
        ]
        if fixed or refused:
            names = ", ".join(sorted(fixed + refused))
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: [{names}]")
        for name in sorted(set_keys):
            if name in KEYS:
                try:
                    parse_key(KEYS[name], proposed[name])
                except InvalidConfigError as exc:
                    raise ConfigRequestError(ErrorCode.INVALID_REQUEST, str(exc)) from None
        per_broker = sorted(n for n in set_keys if n in KEYS and KEYS[n].dynamic == PER_BROKER)
        if scope == CLUSTER and per_broker:
            names = ", ".join(per_broker)
            message = f"Cannot update these configs at default cluster level, broker id must be specified: [{names}]"
            raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
        for name in _AT_LEAST_ONE:
            if name in proposed and name in set_keys and int(proposed[name].strip()) < 1:
                message = f"requirement failed: {name} must be greater than or equal to 1"
                raise ConfigRequestError(ErrorCode.INVALID_REQUEST, message)
        self._check_min_isr(scope, proposed, named)

    def _check_min_isr(self, scope: str, proposed: Mapping[str, str], named: frozenset[str]) -> None:
        """KIP-966: with eligible leader replicas (on in Kafka 4), min.insync.replicas is cluster-wide only."""
        current = self.current(scope)
        if scope == CLUSTER and _MIN_ISR in current and _MIN_ISR not in proposed:
            message = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
            raise ConfigRequestError(ErrorCode.INVALID_CONFIG, message)
        if scope == NODE and (_MIN_ISR in named or current.get(_MIN_ISR) != proposed.get(_MIN_ISR)):
            message = "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
            raise ConfigRequestError(ErrorCode.INVALID_CONFIG, message)

    def replace(self, scope: str, configs: Mapping[str, str]) -> None:
        """Make ``configs`` the whole dynamic map of ``scope`` (checked already): recorded first, then applied."""
        dynamic = self.layers.dynamic
        changed = (
            DynamicBrokerConfigs(dict(configs), dynamic.node)
            if scope == CLUSTER
            else DynamicBrokerConfigs(dynamic.cluster, dict(configs))
        )
        try:
            self._file.save(changed)
        except OSError as exc:
            raise LogDirError(f"cannot record the dynamic broker configs: {exc}") from exc
        self.layers = BrokerLayers(self.layers.static, changed)
        log.info("broker_configs_altered", scope=scope, configs=dict(sorted(configs.items())))
        for listener in self._listeners:
            listener(self.layers)
