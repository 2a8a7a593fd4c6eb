"""KafkaPrincipal parsing and ssl.principal.mapping.rules, with the cases of Kafka's SslPrincipalMapperTest.

The expected names and messages of the edge cases (splitting, ``$n`` beyond the groups, escapes) are what Kafka
4.4's ``SslPrincipalMapper.fromRules(...).getName(...)`` answers.
"""

from __future__ import annotations

import pytest

from broker.security.principal import (
    ANONYMOUS,
    KafkaPrincipal,
    NoMatchingRule,
    PrincipalMappingError,
    SslPrincipalMapper,
    user,
)


def test_principals_parse_and_print_as_type_colon_name() -> None:
    assert KafkaPrincipal.parse("User:alice") == user("alice")
    assert KafkaPrincipal.parse("User:CN=a:b") == KafkaPrincipal("User", "CN=a:b")
    assert KafkaPrincipal.parse("Group:") == KafkaPrincipal("Group", "")
    assert str(user("bob")) == "User:bob"
    assert str(ANONYMOUS) == "User:ANONYMOUS"


@pytest.mark.parametrize("text", ["", "alice"])
def test_a_principal_without_a_type_is_refused_with_kafkas_message(text: str) -> None:
    with pytest.raises(ValueError, match=f"^expected a string in format principalType:principalName but got {text}$"):
        KafkaPrincipal.parse(text)


@pytest.mark.parametrize(
    "rules",
    [
        "DEFAULT",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
        "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
        "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
        "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
        "",
        None,
    ],
)
def test_kafkas_valid_rules_are_accepted(rules: str | None) -> None:
    SslPrincipalMapper(rules)


@pytest.mark.parametrize(
    ("rules", "error"),
    [
        ("default", "Invalid rule: `default`, unmatched substring: `default`"),
        ("DEFAUL", "Invalid rule: `DEFAUL`, unmatched substring: `DEFAUL`"),
        ("DEFAULT/L", "Invalid rule: `DEFAULT/L`, unmatched substring: `/L`"),
        ("DEFAULT/U", "Invalid rule: `DEFAULT/U`, unmatched substring: `/U`"),
        # Without its two slashes a rule is split at its first comma, as Kafka's splitter does.
        ("RULE:CN=(.*?),OU=ServiceUsers.*/$1", "Invalid rule: `RULE:CN=(.*?)`, unmatched substring: `RULE:CN=(.*?)`"),
        (
            "RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U",
            "Invalid rule: `RULE:CN=(.*?),OU=ServiceUsers.*/$1/L/U`, unmatched substring: `/U`",
        ),
        ("RULE:CN=(.*?),OU=ServiceUsers.*/L", "Invalid rule: `RULE:CN=(.*?)`, unmatched substring: `RULE:CN=(.*?)`"),
        ("RULE:CN=(.*?),OU=ServiceUsers.*/U", "Invalid rule: `RULE:CN=(.*?)`, unmatched substring: `RULE:CN=(.*?)`"),
        ("RULE:CN=(.*?),OU=ServiceUsers.*/LU", "Invalid rule: `RULE:CN=(.*?)`, unmatched substring: `RULE:CN=(.*?)`"),
    ],
)
def test_kafkas_invalid_rules_are_refused(rules: str, error: str) -> None:
    with pytest.raises(PrincipalMappingError) as failure:
        SslPrincipalMapper(rules)
    assert str(failure.value) == error


MAPPER_RULES = ", ".join(
    [
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
        "DEFAULT",
    ]
)


@pytest.mark.parametrize(
    ("rules", "dn", "name"),
    [
        (MAPPER_RULES, "CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"),
        (MAPPER_RULES, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"),
        (MAPPER_RULES, "cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"),
        (MAPPER_RULES, "cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"),
        (MAPPER_RULES, "OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
        ("DEFAULT", "CN=kafka,O=Org", "CN=kafka,O=Org"),
        (None, "CN=kafka,O=Org", "CN=kafka,O=Org"),
        ("RULE:^CN=(.*),OU=(.*)$/$1 \\/ $2/", "CN=a,OU=b", "a / b"),
        ("RULE:^CN=(.*?),OU=(.*?)$/$1$2$3/", "CN=a,OU=b", "ab$3"),
        ("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT", "CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz", "Tkac\\, Adam"),
        ("RULE:^CN=(.*?)(,.*|$)/$1/L, RULE:^.*$/other/", "CN=First,O=x", "first"),
        ("RULE:^CN=(.*?),OU=(.*?)$/$13$24/", "CN=a,OU=b", "a3b4"),
        ("RULE:^.*$/x/", "abc", "x"),
    ],
)
def test_kafkas_documented_mappings(rules: str | None, dn: str, name: str) -> None:
    assert SslPrincipalMapper(rules).name(dn) == name


def test_a_dn_no_rule_maps_fails_with_kafkas_message() -> None:
    mapper = SslPrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L")
    with pytest.raises(NoMatchingRule) as failure:
        mapper.name("CN=alice,OU=Humans")
    assert str(failure.value) == "No rules apply to CN=alice,OU=Humans, rules [RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L]"
    assert str(mapper) == "SslPrincipalMapper(rules = [RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L])"
