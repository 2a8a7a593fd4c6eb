"""Every code block of the README is a test (issue #12): the complete pytest example runs as copied into a fresh
project, and every other block is checked against the code it shows, without a running broker.

`INVENTORY` classifies every fenced block (with or without a language) by its language and first line, and says
which test covers it; a block it does not list fails `test_every_block_is_in_the_inventory`, so a new block
cannot go untested. How each kind is covered:

| block (README section) | covered by |
|---|---|
| sh, Quick start: `make run` ... | every line: the target exists (`make -n`), its `VAR=` is one the Makefile uses |
| properties, ACLs with the StandardAuthorizer | tests/unit/test_authorizer_config.py loads it |
| python, ACLs with kafka-python's admin client | parses; tests/e2e/test_acls.py runs the flow |
| python, Using it from clients | parses; the clients' own suites: tests/e2e/test_{aiokafka,kafka_python,confluent}.py |
| python, a secured group_broker | parses; tests/toolkit/test_security_fixture.py runs each client family that way |
| js, kafkajs constructor | tests/e2e/test_kafkajs.py |
| java, the Java client's constructor | tests/e2e/test_java_client.py (reference/clients/*.java build the same) |
| sh, `kcat -b ...` | tests/e2e/test_kcat.py (kcat is external: its options are its own) |
| python, test_billing.py, test_failover.py | run as copied into a fresh project: test_the_complete_pytest_example_... |
| ini, pytest.ini | the same test (the project's only config) |
| sh, `$ python server.py ... --override` | the server's parser, then `load_config` with every override |
| sh, `curl ... $C/...` | route, body fields, query parameters against `endpoints()`; `group-broker` by its parser |
| js, control API from JavaScript | routes and body keys against `endpoints()` |
| sh, Operator CLI | `cli.main`'s parser, `serve`'s and `dump-log`'s own parsers |
| text, `offsets reset` output | `cli.describe_format.format_reset` renders it byte for byte |
| text, `groups describe --members --verbose` output | `cli.describe_format.format_members` renders it byte for byte |
| text, `transactions describe` output | `cli.transactions.table` renders it byte for byte |
| sh, pipeline Install and run | `pip` extras in pyproject.toml; `pipeline.cli.build_parser` |
| sh, Spark standalone cluster | zipped directories exist; `spark-submit`'s application by the pipeline parser |
| sh, differential suite | `tests.differential`'s parser |
| (no language), Developer map | its rows are the layers of import-linter's contract in pyproject.toml |

The Docker lines of the prose (`docker run IMAGE --override ...`, `-e KAFKA_LISTENERS=...`) are reproduced and
checked in tests/unit/test_docker.py (`test_a_users_override_keeps_the_images_defaults`,
`test_the_documented_way_to_set_the_port`); they are not repeated here.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.readme import ROOT, Block, block_starting, readme_blocks, readme_text, shell_commands
from tests.support.readme_commands import EXTERNAL, check_control_call, check_line, optional_variants

#: The README's complete pytest examples, run as copied into a fresh project (the billing one of issue #12, the
#: three-node failover of issue #19).
EXAMPLES = ("test_billing.py", "test_failover.py")
COMMANDS = "commands"  # every shell line through tests/support/readme_commands.py
INVENTORY: dict[tuple[str, str], tuple[str, str]] = {
    ("sh", "make run "): (COMMANDS, "Makefile targets and variables"),
    ("python", "# aiokafka"): ("python", "tests/e2e/test_aiokafka.py"),
    ("js", "// kafkajs"): ("elsewhere", "tests/e2e/test_kafkajs.py"),
    ("java", "// the Java client"): ("elsewhere", "tests/e2e/test_java_client.py"),
    ("sh", "kcat -b "): (COMMANDS, "tests/e2e/test_kcat.py"),
    ("python", "# test_billing.py"): ("runs", "test_the_complete_pytest_example_runs_as_copied_into_a_fresh_project"),
    ("python", "# test_failover.py"): ("runs", "test_the_complete_pytest_example_runs_as_copied_into_a_fresh_project"),
    ("ini", "# pytest.ini"): ("runs", "test_the_complete_pytest_example_runs_as_copied_into_a_fresh_project"),
    ("sh", "$ python server.py "): (COMMANDS, "cli.serve parser and broker.config.load_config"),
    ("sh", "C=http://127.0.0.1:"): (COMMANDS, "toolkit.control_api.endpoints()"),
    ("js", "const control = "): ("js-control", "toolkit.control_api.endpoints()"),
    ("sh", "group-broker serve "): (COMMANDS, "cli.main, cli.serve and storage.dump parsers"),
    ("text", "GROUP           TOPIC"): ("reset-table", "cli.describe_format.format_reset"),
    ("text", "GROUP           CONSUMER-ID"): ("members-table", "cli.describe_format.format_members"),
    ("text", "CoordinatorId\tTransactionalId"): ("txn-describe-table", "cli.transactions.table"),
    ("sh", "pip install -e "): (COMMANDS, "pyproject.toml extras, pipeline.cli.build_parser"),
    ("sh", "# the cluster "): (COMMANDS, "repository directories, pipeline.cli.build_parser"),
    ("sh", "python -m tests.differential"): (COMMANDS, "tests.differential parser"),
    ("sh", "group-broker certs "): (COMMANDS, "cli.certs parser"),
    ("properties", "# server.properties: an SSL listener"): ("elsewhere", "tests/e2e/test_ssl.py"),
    ("python", "# over SSL with mutual TLS"): ("python", "tests/e2e/test_ssl.py"),
    ("properties", "# server.properties: ACLs with"): ("elsewhere", "tests/unit/test_authorizer_config.py"),
    ("python", "# ACLs with kafka-python's"): ("python", "tests/e2e/test_acls.py"),
    ("js", "// over SSL with mutual TLS"): ("elsewhere", "tests/e2e/test_ssl.py"),
    ("python", "# a secured group_broker"): ("python", "tests/toolkit/test_security_fixture.py"),
    ("properties", "# server.properties: SASL_PLAINTEXT with PLAIN"): ("elsewhere", "tests/e2e/test_sasl.py"),
    ("sh", "group-broker scram add "): (COMMANDS, "cli.main parser"),
    ("python", "# over SASL: PLAIN on 9094"): ("python", "tests/e2e/test_sasl.py"),
    ("js", "// over SASL: kafkajs"): ("elsewhere", "tests/e2e/test_sasl.py"),
    ("", "toolkit : cli : pipeline "): ("layers", "pyproject.toml [tool.importlinter] layers contract"),
}
"""(language, start of the first line) -> (how the block is checked, what it is checked against)."""


def _classified(block: Block) -> tuple[str, str] | None:
    matches = [
        how for (lang, first), how in INVENTORY.items() if block.lang == lang and block.first_line.startswith(first)
    ]
    return matches[0] if len(matches) == 1 else None


def _blocks_checked_as(how: str) -> list[Block]:
    blocks = [b for b in readme_blocks() if (_classified(b) or ("", ""))[0] == how]
    assert blocks, f"no README block is checked as {how!r}"
    return blocks


def test_the_complete_pytest_example_runs_as_copied_into_a_fresh_project(tmp_path: Path) -> None:
    """Issue #12: under pytest-asyncio's default (strict) mode it failed (`async def functions are not natively
    supported`) and warned. Here it runs in an empty directory with only the README's `pytest.ini`, warnings as
    errors, the plugin found through its installed entry point."""
    for example in EXAMPLES:
        (tmp_path / example).write_text(block_starting("python", f"# {example}").body)
    (tmp_path / "pytest.ini").write_text(block_starting("ini", "# pytest.ini").body)
    assert "asyncio_mode" not in (tmp_path / "pytest.ini").read_text()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-W", "error", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "mode=Mode.STRICT" in output, output
    summary = output.strip().splitlines()[-1]
    assert f"{len(EXAMPLES)} passed" in summary and "warning" not in summary, output


def test_every_python_block_runs_or_is_a_fragment_that_parses() -> None:
    python = [b for b in readme_blocks() if b.lang == "python"]
    assert python
    for block in python:
        assert block.fragment or block.body.startswith(tuple(f"# {e}" for e in EXAMPLES)), f"README line {block.line}"
        ast.parse(block.body)


def test_every_block_not_run_is_marked_a_fragment() -> None:
    """What the README shows without running it is marked as such: a reader knows what was tried."""
    run = {("ini", "# pytest.ini")} | {("python", f"# {example}") for example in EXAMPLES}
    for block in readme_blocks():
        if not any(block.lang == lang and block.body.startswith(first) for lang, first in run):
            assert block.fragment, f"README line {block.line} ({block.lang}): run it in a test or mark it"


def _route_exists(method: str, path: str) -> bool:
    return not check_control_call(method, path)


def test_the_control_api_calls_in_the_readme_are_declared_routes() -> None:
    calls: list[tuple[str, str]] = []
    for block in readme_blocks():
        for method, path in re.findall(r"curl -s (?:-X (\w+) )?\"?\$C(/[^\s\"?]*)", block.body):
            calls.append((method or "GET", path))
        calls += [("POST", path) for path in re.findall(r"post\('([^']+)'", block.body)]
    assert len(calls) >= 10, calls
    assert [call for call in calls if not _route_exists(*call)] == []


def test_the_make_targets_and_subcommands_in_the_readme_exist() -> None:
    makefile = (ROOT / "Makefile").read_text()
    sh = "".join(b.body for b in readme_blocks() if b.lang == "sh")
    targets = set(re.findall(r"^make ([a-z0-9-]+)", sh, flags=re.M))
    assert targets >= {"run", "test", "report"}
    assert [t for t in targets if not re.search(rf"^{t}:", makefile, flags=re.M)] == []
    commands = set(re.findall(r"^group-broker ([a-z-]+)", sh, flags=re.M))
    done = subprocess.run(
        [sys.executable, "-c", "from cli.main import main; main()", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    listed = re.search(r"\{([a-z,-]+)\}", done.stdout)
    assert listed, done.stdout + done.stderr
    assert commands and commands <= set(listed.group(1).split(",")), (commands, done.stdout)


def test_every_block_is_in_the_inventory() -> None:
    """A block nobody classified is a block nobody tests; an inventory entry without its block is stale."""
    blocks = readme_blocks()
    assert [(b.line, b.lang, b.first_line) for b in blocks if _classified(b) is None] == []
    for lang, first in INVENTORY:
        assert any(b.lang == lang and b.first_line.startswith(first) for b in blocks), f"no block {lang} {first!r}"


def test_the_tests_the_inventory_names_exist() -> None:
    for _, by in INVENTORY.values():
        for path in re.findall(r"tests/[\w/]+\.py", by):
            assert (ROOT / path).is_file(), path
        if by.startswith("test_"):
            assert by in globals(), by


def test_every_shell_line_passes_its_checker() -> None:
    """Each README command line, parsed by the real parsers (unknown options, missing values, bad choices fail),
    its make targets and variables, config keys, control API routes and body fields; all failures listed at once."""
    failures = []
    lines = 0
    for block in _blocks_checked_as(COMMANDS):
        for command in shell_commands(block):
            lines += 1
            failures += [f"README line {command.line}: {problem}" for problem in check_line(command.argv())]
    assert lines >= 30, lines
    assert failures == []


def test_every_make_command_quoted_in_the_prose_passes_its_checker() -> None:
    """`make run PORT=19092` and the like, written inline (also inside a block's comments)."""
    quoted = re.findall(r"`(make [^`<]*)`", readme_text())
    assert "make run PORT=19092" in quoted
    failures = [problem for line in quoted for problem in check_line(line.split())]
    assert failures == []


def test_the_javascript_control_calls_are_declared_routes_with_their_body_fields() -> None:
    [block] = _blocks_checked_as("js-control")
    calls = re.findall(r"post\('([^']+)'(?:, \{([^}]*)\})?\)", block.body)
    assert len(calls) >= 2, block.body
    failures = []
    for path, literal in calls:
        failures += check_control_call("POST", path, re.findall(r"(\w+)\s*:", literal))
    assert failures == []


def test_the_reset_output_is_what_the_cli_prints() -> None:
    from cli.describe_format import format_reset

    [block] = _blocks_checked_as("reset-table")
    rows = [
        dict(zip(("group", "topic", "partition", "new_offset"), line.split(), strict=True))
        for line in block.body.splitlines()[1:]
    ]
    assert (
        format_reset([r | {"partition": int(r["partition"]), "new_offset": int(r["new_offset"])} for r in rows])
        == block.body
    )


def test_the_members_output_is_what_the_cli_prints() -> None:
    from cli.describe_format import format_members
    from cli.group_describe import GroupDescription, MemberDescription

    [block] = _blocks_checked_as("members-table")
    members = []
    for line in block.body.splitlines()[1:]:
        _, member, host, client, _, epoch, current, target_epoch, target = line.split()

        def parsed(text: str) -> dict[str, list[int]]:
            return {} if text == "-" else {text.split(":")[0]: [int(p) for p in text.split(":")[1].split(",")]}

        assigned, wanted = parsed(current), parsed(target)
        members.append(MemberDescription(member, None, host, client, assigned, int(epoch), wanted, int(target_epoch)))
    group = GroupDescription("billing", "consumer", "Reconciling", "uniform", ("127.0.0.1", 9092, 1), members, 2, 2)
    assert format_members(group, verbose=True) == block.body


def test_the_transactions_describe_output_is_what_the_cli_prints() -> None:
    from cli.transactions import DESCRIBE_HEADERS, table

    [block] = _blocks_checked_as("txn-describe-table")
    header, row = ([value.rstrip(" ") for value in line.split("\t")[:-1]] for line in block.body.splitlines())
    assert header == list(DESCRIBE_HEADERS)
    assert table(DESCRIBE_HEADERS, [row]) == block.body


def test_the_developer_map_rows_are_the_import_layers() -> None:
    [block] = _blocks_checked_as("layers")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [c["layers"] for c in config if c["type"] == "layers"]
    rows = [re.split(r"\s{2,}", line.strip())[0] for line in block.body.splitlines()]
    assert rows == layers


BROKEN_LINES = [
    ("group-broker groups list --bootstrap-servers 127.0.0.1:9092", "unrecognized arguments"),
    ("group-broker groups describe", "the following arguments are required: group"),
    ("group-broker offsets reset billing --to-earliest --to-latest", "not allowed with argument"),
    ("group-broker groups nosuch", "invalid choice"),
    ("group-broker storage --control", "expected one argument"),
    ("group-broker dump-log data/x.log --offset-decoder", "unrecognized arguments"),
    ("group-broker serve server.properties --log-level chatty", "invalid choice"),
    ("python -m cli groups timeline billing [--jsonn]", "unrecognized arguments"),
    ("python server.py server.properties --override no.such.key=1", "unknown config key 'no.such.key'"),
    ("python server.py server.properties --override group.max.size=many", "group.max.size"),
    ("python server.py nosuch.properties", "no properties file"),
    ("python -m pipeline analyze --data-dir ./data", "the following arguments are required: --out"),
    ("python -m pipeline stream --data-dir d --out o [--once | --interval 60s] --once", "not allowed with argument"),
    ("python -m pipeline describe --data-dir d --as-off max", "unrecognized arguments"),
    ("spark-submit --master local pipeline/cli.py analyze --data-dir d --out o --tick", "expected one argument"),
    ("spark-submit --master local pipeline/nosuch.py", "no file pipeline/nosuch.py"),
    ("make nosuch", "No rule to make target"),
    ("make run PROT=19092", "does not use the variable PROT"),
    ("curl -s $C/nosuch", "no route GET /nosuch"),
    ("curl -s -X DELETE $C/time", "no route DELETE /time"),
    ("curl -s -X POST $C/time/advance -d '{\"millis\": 5}'", "takes no body field 'millis'"),
    ('curl -s -X POST $C/groups/g/rebalance -d \'{"reason": "x", "force": true}\'', "no body field 'force'"),
    ("curl -s -X POST $C/time/advance -d '{ms: 5}'", "not JSON"),
    ("curl -s '$C/requests?api=Heartbeat&group=billing'", "takes no query parameter 'group'"),
    ('curl -s -X POST $C/faults/latency -d \'{"api": "Fetch", "ms": 5}\' | grep x', "no body field 'ms'"),
    ("pip install -e '.[pipline]'", "no extra 'pipline'"),
    ("zip -qr x.zip protocol nosuchdir -x '*.pyc'", "no directory nosuchdir"),
    ("docker run image", "no checker knows `docker`"),
]


@pytest.mark.parametrize(("line", "reported"), BROKEN_LINES, ids=[line for line, _ in BROKEN_LINES])
def test_a_broken_line_is_reported(line: str, reported: str) -> None:
    """Each checker can fail: a misspelled option, a missing value, a bad choice, an unknown target, variable,
    config key, route, body field or query parameter is reported with the line."""
    import shlex

    problems = check_line(shlex.split(line))
    assert any(reported in problem for problem in problems), problems


def test_optional_groups_are_checked_in_every_variant() -> None:
    argv = ["x", "a", "[--b", "c]", "[--d", "|", "--e", "f]", "g"]
    assert optional_variants(argv) == [
        ["x", "a", "g"],
        ["x", "a", "--b", "c", "g"],
        ["x", "a", "--d", "g"],
        ["x", "a", "--e", "f", "g"],
        ["x", "a", "--b", "c", "--d", "g"],
    ]
    assert optional_variants(["--master", "local[2]"]) == [["--master", "local[2]"]]


def test_the_external_programs_are_only_those_with_a_reason() -> None:
    assert set(EXTERNAL) == {"kcat", "spark-class", "grep"}
