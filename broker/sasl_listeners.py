"""The SASL settings of each SASL listener, read the Kafka way, checked before anything is served.

Kafka's keys: `sasl.enabled.mechanisms` (per listener as `listener.name.<listener>.sasl.enabled.mechanisms`), the
JAAS config per listener and mechanism (`listener.name.<listener>.<mechanism>.sasl.jaas.config`, one login module:
PLAIN's users are its `user_<name>="<password>"` options, OAUTHBEARER's unsecured validator reads its
`unsecuredValidator*` options) and `connections.max.reauth.ms` (per listener, or per mechanism with the same
prefix). Security settings are never silently ignored: a mechanism this broker does not implement (Kafka's default,
GSSAPI, among them), a PLAIN listener without users, a JAAS config Kafka would refuse, or a broker-wide
`sasl.jaas.config` (which Kafka ignores with a warning) is a one-line `StartupError` naming the key.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from broker.config import BrokerConfig
from broker.security.authenticator import SaslSettings
from broker.security.jaas import JaasConfigError, LoginModule, plain_users, single_login_module
from broker.security.oauthbearer import OAUTHBEARER, OAuthBearerServer, UnsecuredValidator
from broker.security.plain import PLAIN, PlainServer
from broker.security.sasl import SaslServer
from broker.security.scram import MECHANISMS as SCRAM_MECHANISMS
from broker.security.scram import ScramCredential, ScramMechanism, ScramServer
from broker.startup import StartupError

__all__ = ["IMPLEMENTED_MECHANISMS", "SASL_PROTOCOLS", "ScramLookup", "sasl_settings"]

SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
IMPLEMENTED_MECHANISMS = (PLAIN, *SCRAM_MECHANISMS, OAUTHBEARER)
#: Where SCRAM servers find a user's credential: the live credential store.
ScramLookup = Callable[[str, ScramMechanism], ScramCredential | None]


def sasl_settings(
    config: BrokerConfig, scram_lookup: ScramLookup, wall_ms: Callable[[], int]
) -> dict[str, SaslSettings]:
    """The settings of every SASL listener, by upper-cased name; a bad setting is a one-line `StartupError`."""
    if "sasl.jaas.config" in config.explicit:
        raise StartupError(
            "'sasl.jaas.config' is not read by a broker (Kafka ignores it): set "
            "'listener.name.<listener>.<mechanism>.sasl.jaas.config', "
            "e.g. listener.name.sasl_plaintext.plain.sasl.jaas.config"
        )
    settings = {}
    for name, _, _ in config.listeners:
        if config.security_protocol_map.get(name.upper()) in SASL_PROTOCOLS:
            settings[name.upper()] = _listener(config, name, scram_lookup, wall_ms)
    return settings


def _listener(config: BrokerConfig, name: str, scram_lookup: ScramLookup, wall_ms: Callable[[], int]) -> SaslSettings:
    mechanisms, key = config.listener_values(name)["sasl.enabled.mechanisms"]
    if not mechanisms:
        raise StartupError(f"listener {name}: '{key}' is empty: No SASL mechanisms are enabled")
    unknown = [m for m in mechanisms if m not in IMPLEMENTED_MECHANISMS]
    if unknown:
        raise StartupError(
            f"listener {name}: invalid value for '{key}': {', '.join(unknown)} is not implemented by group-broker "
            f"(implemented: {', '.join(IMPLEMENTED_MECHANISMS)})"
        )
    factories: dict[str, Callable[[], SaslServer]] = {}
    max_reauth: dict[str, int] = {}
    for mechanism in dict.fromkeys(mechanisms):
        module = _login_module(config, name, mechanism)
        factories[mechanism] = _factory(config, name, mechanism, module, scram_lookup, wall_ms)
        max_reauth[mechanism] = int(config.mechanism_value(name, mechanism, "connections.max.reauth.ms")[0] or 0)
    return SaslSettings(
        listener=name,
        mechanisms=tuple(dict.fromkeys(mechanisms)),
        new_server=lambda mechanism: factories[mechanism](),
        max_reauth_ms=max_reauth,
        max_receive_bytes=config["sasl.server.max.receive.size"],
        wall_ms=wall_ms,
    )


def _login_module(config: BrokerConfig, listener: str, mechanism: str) -> LoginModule | None:
    text, key = config.mechanism_value(listener, mechanism, "sasl.jaas.config")
    if text is None:
        return None
    try:
        return single_login_module(text)
    except JaasConfigError as exc:
        raise StartupError(f"invalid value for '{key}': {exc}") from None


def _factory(
    config: BrokerConfig,
    listener: str,
    mechanism: str,
    module: LoginModule | None,
    scram_lookup: ScramLookup,
    wall_ms: Callable[[], int],
) -> Callable[[], SaslServer]:
    key = config.mechanism_value(listener, mechanism, "sasl.jaas.config")[1]
    if mechanism == PLAIN:
        users = plain_users(module) if module is not None else {}
        if not users:
            raise StartupError(
                f"listener {listener}: PLAIN needs users: set '{key}' to "
                'org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>="<password>";'
            )
        return partial(PlainServer, lambda user, password: users.get(user) == password)
    if mechanism == OAUTHBEARER:
        try:
            validator = UnsecuredValidator.from_options(module.options if module is not None else {})
        except ValueError as exc:
            raise StartupError(f"invalid value for '{key}': {exc}") from None
        return partial(OAuthBearerServer, validator, wall_ms)
    scram = SCRAM_MECHANISMS[mechanism]
    return partial(ScramServer, scram, lambda user: scram_lookup(user, scram))
