"""docker-compose.yml and the Dockerfile cannot run here (no Docker engine), so their structure is checked: the
compose file parses, builds this repository's image, and the command the image runs exists and is a valid broker
configuration (every override and environment key is one the broker accepts)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from broker.config import load_config

ROOT = Path(__file__).parents[2]


def _dockerfile_instruction(name: str) -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name}\s+(\[.*\])\s*$", text, re.MULTILINE)
    assert match, f"Dockerfile has no JSON-form {name}"
    value: list[str] = json.loads(match.group(1))
    return value


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
    config = load_config(ROOT / entrypoint[2], overrides, environment)
    assert config["control.listener"] == "http://127.0.0.1:9644"
    assert config.listeners == [("PLAINTEXT", "127.0.0.1", 9092)]
    assert config["group.initial.rebalance.delay.ms"] == 0
    assert config.log_dir == Path("/data")
