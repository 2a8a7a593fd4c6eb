"""Checks a README shell command against the code it drives, without running anything long.

Each checker answers the problems it found as sentences (empty: the line is fine), so a test can show every broken
line at once and a negative test can feed a broken line and see it reported:

* `group-broker ...`, `python -m cli ...`, `python server.py ...`: the real argparse parsers (`cli.main`, `cli.serve`,
  `storage.dump`), then the broker's config loader for the properties file and every `--override key=value`;
* `python -m pipeline ...` and `spark-submit ... pipeline/cli.py ...`: the pipeline's parser;
* `python -m tests.differential ...`: the differential runner's parser;
* `make [VAR=value] target`: the target exists (`make -n`) and the Makefile uses the variable;
* `curl ... $C/path`: the control API declares the method and path, and takes every JSON body field and query
  parameter the line sends;
* `pip install -e '.[extra]'`: pyproject.toml declares the extra; `zip ... dirs`: the directories exist.

`[--option value]` and `[--a | --b]` are the README's notation for optional arguments: each line is checked
without them, with each alternative alone, and with every group's first alternative together.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from tests.support.readme import ROOT

EXTERNAL = {
    "kcat": "librdkafka's CLI (tests/e2e/test_kcat.py drives it against the broker)",
    "spark-class": "Spark's own launcher of its master and worker daemons",
    "grep": "a pipe's filter",
}
"""Programs whose options are their own: a README line may call them, their arguments are not checked here."""

Problems = list[str]
_SEPARATORS = {"|", "&", "&&", ";"}


@dataclass
class _Optional:
    """A `[...]` group of a README line: its `|`-separated alternatives."""

    alternatives: list[list[str]]


def optional_variants(argv: Sequence[str]) -> list[list[str]]:
    """The argument lists a line written with `[optional]` groups stands for (see the module docstring)."""
    fixed: list[str | _Optional] = []
    group: _Optional | None = None
    for token in argv:
        if group is None and token.startswith("[") and len(token) > 1:
            group = _Optional([[]])
            token = token[1:]
        if group is None:
            fixed.append(token)
            continue
        closing = token.endswith("]")
        token = token[:-1] if closing else token
        if token == "|":
            group.alternatives.append([])
        elif token:
            group.alternatives[-1].append(token)
        if closing:
            fixed.append(group)
            group = None
    if group is not None:  # unbalanced: keep the text so a parser reports it
        fixed += ["[", *group.alternatives[0]]
    groups = [part for part in fixed if isinstance(part, _Optional)]

    def build(choice: dict[int, list[str]]) -> list[str]:
        out: list[str] = []
        for part in fixed:
            out += [part] if isinstance(part, str) else choice.get(id(part), [])
        return out

    variants = [build({})]
    for g in groups:
        variants += [build({id(g): alternative}) for alternative in g.alternatives]
    if len(groups) > 1:
        variants.append(build({id(g): g.alternatives[0] for g in groups}))
    return [v for i, v in enumerate(variants) if v not in variants[:i]]


def check_line(argv: Sequence[str]) -> Problems:
    """Every problem of a shell line, in each of its optional variants, command by command (`|`, `&`, `;`)."""
    problems: Problems = []
    for variant in optional_variants(argv):
        segment: list[str] = []
        for token in [*variant, "|"]:
            if token not in _SEPARATORS:
                segment.append(token)
                continue
            for problem in check_command(segment) if segment else []:
                if problem not in problems:
                    problems.append(problem)
            segment = []
    return problems


def check_command(argv: Sequence[str]) -> Problems:
    program, args = argv[0], list(argv[1:])
    if re.fullmatch(r"[A-Z_]+=\S*", program) and not args:
        return []  # a shell variable for the lines below
    if program == "group-broker":
        return check_group_broker(args)
    if program in ("python", "python3", "python3.11"):
        return _check_python(args)
    if program in CHECKERS:
        return CHECKERS[program](args)
    if program in EXTERNAL:
        return []
    return [f"no checker knows `{program}`: add one to tests/support/readme_commands.py or list it in EXTERNAL"]


def _check_python(args: list[str]) -> Problems:
    if args[:2] == ["-m", "cli"]:
        return check_group_broker(args[2:])
    if args[:2] == ["-m", "pipeline"]:
        return check_pipeline(args[2:])
    if args[:2] == ["-m", "tests.differential"]:
        return check_differential(args[2:])
    if args[:1] == ["server.py"]:
        return check_serve(args[1:])
    return [f"no checker knows `python {' '.join(args[:2])}`"]


def parse_problem(parse: Callable[[list[str]], object], argv: Sequence[str], what: str) -> str | None:
    """argparse's own complaint (it exits through SystemExit) as a problem, or None when `argv` parses."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parse(list(argv))
    except SystemExit as exc:
        if exc.code:
            complaint = err.getvalue().strip().splitlines()
            return f"{what} {' '.join(argv)}: {complaint[-1] if complaint else f'exit {exc.code}'}"
    return None


def check_group_broker(args: list[str]) -> Problems:
    """The CLI's parsers: `serve`, `dump-log` and `certs` have parsers of their own (as `cli.main` hands them over)."""
    if args[:1] == ["serve"]:
        return check_serve(args[1:])
    if args[:1] == ["dump-log"]:
        from storage.dump import build_parser

        found = parse_problem(build_parser("group-broker dump-log").parse_args, args[1:], "group-broker dump-log")
        return [found] if found else []
    if args[:1] == ["certs"]:
        from cli.certs import build_parser as certs_parser

        found = parse_problem(certs_parser().parse_args, args[1:], "group-broker certs")
        return [found] if found else []
    from cli.main import _parser

    found = parse_problem(_parser().parse_args, args, "group-broker")
    return [found] if found else []


def check_serve(args: list[str]) -> Problems:
    """The broker's parser, then its configuration: the properties file and every `--override` it would load."""
    from broker.config import ConfigError, load_config
    from cli.serve import parse_args

    found = parse_problem(parse_args, args, "server.py")
    if found:
        return [found]
    parsed = parse_args(args)
    properties = ROOT / parsed.properties if parsed.properties else None
    if properties is not None and not properties.is_file():
        return [f"server.py: no properties file {parsed.properties}"]
    try:
        load_config(properties, parsed.override, {})
    except ConfigError as exc:
        return [f"server.py {' '.join(args)}: {exc}"]
    return []


def check_pipeline(args: list[str]) -> Problems:
    from pipeline.cli import build_parser

    found = parse_problem(build_parser().parse_args, args, "python -m pipeline")
    return [found] if found else []


def check_differential(args: list[str]) -> Problems:
    from tests.differential.__main__ import build_parser

    found = parse_problem(build_parser().parse_args, args, "python -m tests.differential")
    return [found] if found else []


def check_make(args: list[str]) -> Problems:
    """Each target exists (a dry run finds a rule for it) and each `VAR=value` is a variable the Makefile reads."""
    makefile = (ROOT / "Makefile").read_text()
    problems: Problems = []
    targets = [a for a in args if "=" not in a]
    for name in (a.split("=", 1)[0] for a in args if "=" in a):
        if not re.search(rf"\$[({{]{re.escape(name)}[)}}]", makefile):
            problems.append(f"make: the Makefile does not use the variable {name}")
    for target in targets:
        if target.startswith("-"):
            problems.append(f"make: option {target} is not checked")
            continue
        dry = subprocess.run(["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True, timeout=60)
        if dry.returncode:
            problems.append(f"make {target}: {dry.stderr.strip()}")
    return problems


def _route_body_names(hint: str, opener: str) -> set[str]:
    if opener == "{":
        return set(re.findall(r'"(\w+)"', hint)) if hint.startswith("{") else set()
    return set(re.findall(r"[?&](\w+)=", hint)) if hint.startswith("?") else set()


def check_control_call(method: str, url: str, body: Iterable[str] = ()) -> Problems:
    """The control API declares `method path`, takes each body field and each query parameter of the call."""
    from toolkit.control_api import endpoints

    parts = urlsplit(url)
    path = parts.path
    for endpoint in endpoints():
        pattern = re.sub(r"\\\{[a-z]+\\\}", "[^/]+", re.escape(endpoint.path))
        if endpoint.method == method and re.fullmatch(pattern, path):
            problems = [
                f"{method} {endpoint.path} takes no body field {name!r}"
                for name in body
                if name not in _route_body_names(endpoint.body, "{")
            ]
            return problems + [
                f"{method} {endpoint.path} takes no query parameter {name!r}"
                for name, _ in parse_qsl(parts.query, keep_blank_values=True)
                if name not in _route_body_names(endpoint.body, "?")
            ]
    return [f"the control API has no route {method} {path}"]


def check_curl(args: list[str]) -> Problems:
    """`curl [-s] [-X METHOD] $C/path[?query] [-d JSON]` against the control API (`$C` is its URL)."""
    method, data, urls, problems = None, None, [], []
    it = iter(args)
    for arg in it:
        if arg == "-s":
            continue
        if arg == "-X":
            method = next(it, "")
        elif arg == "-d":
            data = next(it, "")
        elif arg.startswith("-"):
            problems.append(f"curl: option {arg} is not checked")
        else:
            urls.append(arg)
    if len(urls) != 1 or not urls[0].startswith("$C/"):
        return [*problems, f"curl: expected one control API URL ($C/...), got {urls}"]
    fields: list[str] = []
    if data is not None:
        try:
            body = json.loads(data)
        except ValueError as exc:
            return [*problems, f"curl -d {data}: not JSON ({exc})"]
        if not isinstance(body, dict):
            return [*problems, f"curl -d {data}: the control API takes a JSON object"]
        fields = list(body)
    method = method or ("POST" if data is not None else "GET")
    return problems + check_control_call(method, urls[0].removeprefix("$C"), fields)


def check_pip(args: list[str]) -> Problems:
    """`pip install [-e] '.[extra,...]'`: this project, with extras pyproject.toml declares."""
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    targets = [a for a in args[1:] if not a.startswith("-")] if args[:1] == ["install"] else []
    if not targets:
        return [f"pip {' '.join(args)}: only `pip install` of this project is checked"]
    problems: Problems = []
    for target in targets:
        match = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
        if match is None:
            problems.append(f"pip install {target}: not this project")
            continue
        problems += [
            f"pyproject.toml declares no extra {e!r}"
            for e in (match.group(1) or "").split(",")
            if e and e not in extras
        ]
    return problems


def check_zip(args: list[str]) -> Problems:
    """`zip -qr archive.zip dir... -x pattern`: every directory zipped exists in this repository."""
    operands = []
    for arg in args:
        if arg == "-x":
            break
        if not arg.startswith("-"):
            operands.append(arg)
    return [f"zip: no directory {d} in this repository" for d in operands[1:] if not (ROOT / d).is_dir()]


def check_spark_submit(args: list[str]) -> Problems:
    """spark-submit's own options are Spark's; the application it runs must exist, and its arguments parse."""
    for index, arg in enumerate(args):
        if arg.endswith(".py") and args[index - 1] not in ("--py-files",):
            if not (ROOT / arg).is_file():
                return [f"spark-submit: no file {arg} in this repository"]
            return check_pipeline(args[index + 1 :]) if arg == "pipeline/cli.py" else [f"spark-submit {arg}: unchecked"]
    return ["spark-submit: no application (.py) given"]


CHECKERS: dict[str, Callable[[list[str]], Problems]] = {
    "make": check_make,
    "curl": check_curl,
    "pip": check_pip,
    "zip": check_zip,
    "spark-submit": check_spark_submit,
}
