"""Broker configuration: Kafka's names and defaults, layering, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.config import BrokerConfig, ConfigError, env_overrides, load_config, parse_properties


def test_defaults_are_kafkas() -> None:
    config = BrokerConfig()
    assert config["group.initial.rebalance.delay.ms"] == 3000
    assert config["group.min.session.timeout.ms"] == 6000
    assert config["group.max.session.timeout.ms"] == 1800000
    assert config["offsets.topic.num.partitions"] == 50
    assert config["socket.request.max.bytes"] == 104857600
    assert config.retention_ms == 168 * 3_600_000
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 9092)]


def test_unknown_key_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"unknown config key 'group\.max\.sise'"):
        BrokerConfig({"group.max.sise": "5"})


def test_bad_value_names_its_key() -> None:
    with pytest.raises(ConfigError, match=r"'group\.max\.size'"):
        BrokerConfig({"group.max.size": "many"})
    with pytest.raises(ConfigError, match=r"'num\.partitions'.*at least 1"):
        BrokerConfig({"num.partitions": "0"})
    with pytest.raises(ConfigError, match="'listeners'"):
        BrokerConfig({"listeners": "127.0.0.1:9092"})


def test_layering_file_then_env_then_override(tmp_path: Path) -> None:
    props = tmp_path / "server.properties"
    props.write_text("# comment\nnum.partitions=3\ngroup.max.size = 10\nlog.dirs=/a,/b\n")
    config = load_config(props, ["group.max.size=7"], {"KAFKA_NUM_PARTITIONS": "4", "KAFKA_VERSION": "4.0"})
    assert config["num.partitions"] == 4
    assert config["group.max.size"] == 7
    assert config.log_dir == Path("/a")


def test_env_names_follow_the_docker_convention() -> None:
    env = {"KAFKA_LOG_RETENTION_MS": "1", "KAFKA_SOME__UNDERSCORE": "2", "KAFKA_A___DASH": "3", "PATH": "/bin"}
    assert env_overrides(env) == {"log.retention.ms": "1", "some_underscore": "2", "a-dash": "3"}


def test_properties_parser_handles_colons_and_comments() -> None:
    assert parse_properties("a: 1\n! bang\n#x\nb=c=d\n") == {"a": "1", "b": "c=d"}


def test_shipped_server_properties_is_valid_and_sets_no_initial_delay() -> None:
    config = load_config(Path(__file__).parents[2] / "server.properties", [], {})
    assert config["group.initial.rebalance.delay.ms"] == 0
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 9092)]
    assert config.log_dir == Path("./data")


def test_readme_config_table_is_generated_from_the_code() -> None:
    from broker.config import markdown_table

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert markdown_table() in readme, "regenerate with: .venv/bin/python -m broker.config"


def test_readme_testing_examples_are_the_tested_files() -> None:
    root = Path(__file__).parents[2]
    for name in ("test_readme_example.py", "test_readme_failover_example.py"):
        example = (root / "tests" / "toolkit" / name).read_text()
        assert "```python\n" + example + "```" in (root / "README.md").read_text(), name


def test_an_unknown_key_from_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(None, [], {"KAFKA_NO_SUCH_KEY": "1"})
    assert str(raised.value) == "unknown config key 'no.such.key' (from environment variable KAFKA_NO_SUCH_KEY)"
    with pytest.raises(ConfigError, match=r"'group\.max\.size' \(from environment variable KAFKA_GROUP_MAX_SIZE\)"):
        load_config(None, [], {"KAFKA_GROUP_MAX_SIZE": "many"})


def test_a_bad_key_from_the_file_or_the_command_line_names_its_source(tmp_path: Path) -> None:
    props = tmp_path / "server.properties"
    props.write_text("no.such.key=1\n")
    with pytest.raises(ConfigError, match=rf"'no\.such\.key' \(from {props}\)$"):
        load_config(props, [], {})
    with pytest.raises(ConfigError, match=r"'no\.such\.key' \(from --override\)$"):
        load_config(None, ["no.such.key=1"], {})


def test_precedence_override_then_environment_then_file_then_default(tmp_path: Path) -> None:
    """README, "Configuration": `--override` > `KAFKA_*` environment > properties file > defaults."""
    props = tmp_path / "server.properties"
    props.write_text("group.max.size=1\n")
    env = {"KAFKA_GROUP_MAX_SIZE": "2"}
    assert load_config(props, ["group.max.size=3"], env)["group.max.size"] == 3
    assert load_config(props, [], env)["group.max.size"] == 2
    assert load_config(props, [], {})["group.max.size"] == 1
    assert load_config(None, [], {})["group.max.size"] == BrokerConfig()["group.max.size"]
    # a bad environment value does not matter when --override replaces it
    assert load_config(None, ["group.max.size=3"], {"KAFKA_GROUP_MAX_SIZE": "many"})["group.max.size"] == 3
