"""docker-compose.yml and the Dockerfile cannot run here (no Docker engine), so their structure is checked: the
compose file parses, builds this repository's image, and the command the image runs exists and is a valid broker
configuration (every override and environment key is one the broker accepts), for both services: `broker` (host
networking) and `broker-published` (published ports and a control API token, for Docker Desktop), each service's
environment interpolated from the shell as compose does. `docker run IMAGE ARGS...` is
reproduced as Docker does it (ENTRYPOINT + ARGS replacing CMD, the image's ENV under the user's `-e`), so the
image's defaults are shown to survive a user's `--override`; `.dockerignore` keeps the build context small."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from broker.config import BrokerConfig, ConfigError, load_config, parse_control_listener

ROOT = Path(__file__).parents[2]
_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def _dockerfile_instruction(name: str) -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name}\s+(\[.*\])\s*$", text, re.MULTILINE)
    assert match, f"Dockerfile has no JSON-form {name}"
    value: list[str] = json.loads(match.group(1))
    return value


def _dockerfile_env() -> dict[str, str]:
    """The image's `ENV K=V ...` defaults."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in re.findall(r"^ENV\s+(.*)$", text, re.MULTILINE):
        env.update(item.split("=", 1) for item in shlex.split(line))
    return env


def _docker_run(args: list[str], env: Mapping[str, str] | None = None) -> BrokerConfig:
    """The configuration `docker run [-e K=V] IMAGE ARGS...` starts with: ARGS replace CMD, `-e` wins over ENV."""
    entrypoint = _dockerfile_instruction("ENTRYPOINT")
    argv = entrypoint[2:] + (args or _dockerfile_instruction("CMD"))
    properties = ROOT / argv[0]
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--override"]
    return load_config(properties, overrides, {**_dockerfile_env(), **(env or {})})


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


def _interpolate(value: str, shell: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` as compose substitutes them from the shell's environment."""
    return _VARIABLE.sub(lambda m: shell.get(m.group(1)) or (m.group(2) or ""), value)


def _service_config(service: str, shell: Mapping[str, str] | None = None) -> BrokerConfig:
    """The configuration `docker compose up <service>` starts the broker with, the shell's variables `shell`."""
    environment = _compose()["services"][service]["environment"]
    return _docker_run([], {key: _interpolate(str(value), shell or {}) for key, value in environment.items()})


def test_compose_builds_this_repository_with_host_networking() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    broker = compose["services"]["broker"]
    assert broker["build"] == "."
    assert broker["network_mode"] == "host"  # the control API stays on loopback
    assert "broker-data" in compose["volumes"]
    assert broker["volumes"] == ["broker-data:/data"]


def test_the_image_command_exists_and_is_a_valid_configuration() -> None:
    entrypoint = _dockerfile_instruction("ENTRYPOINT")
    cmd = _dockerfile_instruction("CMD")
    assert entrypoint[:2] == ["python", "server.py"]
    for copied in ("server.py", "server.properties"):
        assert (ROOT / copied).is_file()
        assert copied in (ROOT / "Dockerfile").read_text()
    overrides = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--override"]
    environment = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["broker"]["environment"]
    config = load_config(ROOT / entrypoint[2], overrides, {**_dockerfile_env(), **environment})
    assert config["control.listener"] == "http://127.0.0.1:9644"
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 9092)]
    assert config["group.initial.rebalance.delay.ms"] == 0
    assert config.log_dir == Path("/data")


def test_a_users_override_keeps_the_images_defaults() -> None:
    """`docker run IMAGE --override ...` replaces CMD: the defaults must not live there."""
    config = _docker_run(["--override", "group.max.size=5"])
    assert config["group.max.size"] == 5
    assert config.log_dir == Path("/data")
    assert config["control.listener"] == "http://127.0.0.1:9644"
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 9092)]


def test_the_documented_way_to_set_the_port() -> None:
    """README, "Docker": `-e KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:19092`."""
    config = _docker_run([], {"KAFKA_LISTENERS": "PLAINTEXT://127.0.0.1:19092"})
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 19092)]
    assert config.log_dir == Path("/data")
    assert "-e KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:19092" in (ROOT / "README.md").read_text()


def test_the_image_copies_every_package_the_server_imports() -> None:
    """`python server.py` in the image imports the CLI and the toolkit too, not only the broker's layers."""
    first_party = ["protocol", "coordinator", "storage", "broker", "toolkit", "cli", "pipeline"]
    probe = "import sys, server, cli.serve; print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    needed = set(loaded.stdout.split()) & set(first_party)
    copied = set(re.findall(r"^COPY\s+(\w+)\s+\./\1$", (ROOT / "Dockerfile").read_text(), re.MULTILINE))
    assert needed <= copied, f"the Dockerfile does not copy {sorted(needed - copied)}"


def test_the_build_context_leaves_out_environments_data_and_caches() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if not line.startswith("#")}
    assert {".venv", "node_modules", "data", "pipeline-out", ".git", "**/__pycache__", ".mypy_cache"} <= ignored


def test_the_published_service_needs_a_token_and_advertises_a_host_reachable_address() -> None:
    """Docker Desktop: `GROUP_BROKER_CONTROL_TOKEN=... docker compose up broker-published`."""
    service = _compose()["services"]["broker-published"]
    assert service["build"] == "." and service["profiles"] == ["published"] and "network_mode" not in service
    config = _service_config("broker-published", {"GROUP_BROKER_CONTROL_TOKEN": "s3cret"})
    assert config["control.listener.token"] == "s3cret"
    control_host, control_port = parse_control_listener(config["control.listener"], token=True)
    [(_, listen_host, listen_port)] = config.listeners
    assert control_host == listen_host == "0.0.0.0"  # every interface of the container
    assert config.advertised_listeners == [("PLAINTEXT", "127.0.0.1", 9092)]
    assert sorted(service["ports"]) == sorted([f"{listen_port}:{listen_port}", f"{control_port}:{control_port}"])
    assert config.log_dir == Path("/data")
    elsewhere = _service_config(
        "broker-published", {"GROUP_BROKER_CONTROL_TOKEN": "s3cret", "GROUP_BROKER_HOST": "docker.example"}
    )
    assert elsewhere.advertised_listeners == [("PLAINTEXT", "docker.example", 9092)]


def test_without_the_token_the_published_service_refuses_to_start_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="environment variable KAFKA_CONTROL_LISTENER_TOKEN") as refused:
        _service_config("broker-published")
    assert "control.listener.token" in str(refused.value) and "\n" not in str(refused.value)


def test_the_host_service_needs_no_token_and_each_service_has_its_own_volume() -> None:
    assert _service_config("broker")["control.listener.token"] is None
    services = _compose()["services"]
    assert "profiles" not in services["broker"]  # a plain `docker compose up` starts it alone
    sources = [service["volumes"][0].split(":")[0] for service in services.values()]
    assert len(set(sources)) == len(services) and set(sources) == set(_compose()["volumes"])
