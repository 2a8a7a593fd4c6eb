"""docker-compose.yml and the Dockerfile cannot run here (no Docker engine), so their structure is checked: the
compose file parses, builds this repository's image, and the command the image runs exists and is a valid broker
configuration (every override and environment key is one the broker accepts). `docker run IMAGE ARGS...` is
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

import yaml

from broker.config import BrokerConfig, load_config

ROOT = Path(__file__).parents[2]


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
