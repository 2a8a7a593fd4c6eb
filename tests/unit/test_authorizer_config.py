"""`authorizer.class.name`, `super.users` and `allow.everyone.if.no.acl.found` with Kafka's names and defaults.

Kafka starts without an authorizer (the key is empty) and refuses an authorizer class it cannot load; the only class
this broker serves is Kafka's KRaft ``StandardAuthorizer``, so any other name is a startup error, never silently
ignored (an operator who asked for authorization and got none would not know).
"""

from __future__ import annotations

import pytest

from broker.config import STANDARD_AUTHORIZER, BrokerConfig, ConfigError, parse_properties
from tests.support.readme import block_starting


def test_defaults_are_kafkas_no_authorizer() -> None:
    config = BrokerConfig()
    assert config["authorizer.class.name"] == ""
    assert config["super.users"] == ""
    assert config["allow.everyone.if.no.acl.found"] is False


def test_the_standard_authorizer_is_accepted_with_its_settings() -> None:
    config = BrokerConfig(
        {
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": "User:admin;User:ops",
            "allow.everyone.if.no.acl.found": "true",
        }
    )
    assert config["authorizer.class.name"] == STANDARD_AUTHORIZER
    assert config["super.users"] == "User:admin;User:ops"
    assert config["allow.everyone.if.no.acl.found"] is True


@pytest.mark.parametrize("name", ["kafka.security.authorizer.AclAuthorizer", "com.example.MyAuthorizer"])
def test_another_authorizer_class_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(ConfigError, match=r"authorizer\.class\.name") as refused:
        BrokerConfig({"authorizer.class.name": name})
    assert "\n" not in str(refused.value)
    assert name in str(refused.value)


def test_the_readme_authorization_properties_load() -> None:
    """README, Security, "Authorization (ACLs)": the block is a valid configuration with the authorizer on."""
    block = block_starting("properties", "# server.properties: ACLs with")
    config = BrokerConfig(parse_properties(block.body))
    assert config["authorizer.class.name"] == STANDARD_AUTHORIZER
    assert config["super.users"] == "User:CN=admin;User:ANONYMOUS"
