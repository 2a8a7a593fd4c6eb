"""Kafka's JaasConfig grammar: what parses to what, and every refusal with Kafka's message."""

from __future__ import annotations

import pytest

from broker.security.jaas import JaasConfigError, LoginModule, parse_jaas_config, plain_users, single_login_module

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f'{PLAIN_MODULE} required username="admin" password="admin-secret" user_admin="admin-secret" '
            'user_alice="alice-secret";',
            [
                LoginModule(
                    PLAIN_MODULE,
                    "REQUIRED",
                    {
                        "username": "admin",
                        "password": "admin-secret",
                        "user_admin": "admin-secret",
                        "user_alice": "alice-secret",
                    },
                )
            ],
        ),
        (f"{SCRAM_MODULE} required;", [LoginModule(SCRAM_MODULE, "REQUIRED", {})]),
        (f"{SCRAM_MODULE} Optional;", [LoginModule(SCRAM_MODULE, "OPTIONAL", {})]),
        (
            "test.Module sufficient key=unquoted-value_1$;",
            [LoginModule("test.Module", "SUFFICIENT", {"key": "unquoted-value_1$"})],
        ),
        (
            "test.Module requisite key='single quoted';",
            [LoginModule("test.Module", "REQUISITE", {"key": "single quoted"})],
        ),
        (
            r'test.Module required key="a\"b\\c\td\101";',
            [LoginModule("test.Module", "REQUIRED", {"key": 'a"b\\c\tdA'})],
        ),
        (
            'test.Module required key="with ; and = and //";',
            [LoginModule("test.Module", "REQUIRED", {"key": "with ; and = and //"})],
        ),
        (
            "test.Module required // a comment\n a=b /* another\n one */ c=d;",
            [LoginModule("test.Module", "REQUIRED", {"a": "b", "c": "d"})],
        ),
        (
            "first.Module required a=b; second.Module optional;",
            [LoginModule("first.Module", "REQUIRED", {"a": "b"}), LoginModule("second.Module", "OPTIONAL", {})],
        ),
        ('test.Module required k="unterminated', None),
        ('test.Module required k="é";', [LoginModule("test.Module", "REQUIRED", {"k": "é"})]),
    ],
)
def test_configs_parse_as_kafka_reads_them(text: str, expected: list[LoginModule] | None) -> None:
    if expected is None:
        with pytest.raises(JaasConfigError, match="not terminated by semi-colon"):
            parse_jaas_config(text)
    else:
        assert parse_jaas_config(text) == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "Login module not specified in JAAS config"),
        ("   // only a comment", "Login module not specified in JAAS config"),
        ("test.Module", "Login module control flag not specified in JAAS config"),
        ("test.Module ;", "Login module control flag is not available in the JAAS config"),
        ("test.Module 42;", "Login module control flag is not available in the JAAS config"),
        ("test.Module mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"),
        ("test.Module required", "JAAS config entry not terminated by semi-colon"),
        ("test.Module required a=b", "JAAS config entry not terminated by semi-colon"),
        ("test.Module required a;", "Value not specified for key 'a' in JAAS config"),
        ("test.Module required a=;", "Value not specified for key 'a' in JAAS config"),
        ("test.Module required a=", "Value not specified for key 'a' in JAAS config"),
        ("test.Module required password=123;", "Value not specified for key 'password' in JAAS config"),
        ("test.Module required a b;", "Value not specified for key 'a' in JAAS config"),
        ("42 required;", "Login module class not specified in JAAS config"),
    ],
)
def test_kafkas_refusals_carry_kafkas_messages(text: str, error: str) -> None:
    with pytest.raises(JaasConfigError) as failure:
        parse_jaas_config(text)
    assert str(failure.value) == error


def test_a_broker_listener_config_holds_exactly_one_login_module() -> None:
    assert single_login_module("a.Module required;") == LoginModule("a.Module", "REQUIRED", {})
    with pytest.raises(JaasConfigError) as failure:
        single_login_module("a.Module required; b.Module required;")
    assert str(failure.value) == "JAAS config property contains 2 login modules, should be 1 module"


def test_plain_users_are_the_user_options() -> None:
    module = single_login_module(
        f'{PLAIN_MODULE} required username="admin" password="admin-secret" user_admin="admin-secret" '
        'user_alice="alice-secret" user_="empty-name";'
    )
    assert plain_users(module) == {"admin": "admin-secret", "alice": "alice-secret", "": "empty-name"}
