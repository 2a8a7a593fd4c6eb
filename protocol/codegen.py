"""Generate `protocol/messages/` from Kafka's JSON schemas in `protocol/schemas/` (run by `make codegen`).

Each API gets one module holding its request and response: version-independent dataclasses with Kafka's field
names in snake_case and Kafka's defaults, plus the field tables `protocol.schema` compiles per version. The output
is committed; `tests/protocol/test_codegen.py` fails when it is stale. Hand-written field tables drift, generated
ones do not. `main` then runs protocol/fastgen.py, which writes the hot APIs' fast codecs to `messages/fast/`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.declarations import PRIMITIVE_TYPES, Versions
from protocol.kafka_names import module_name, snake_case

SCHEMA_DIR = Path(__file__).parent / "schemas"
#: Kafka's schemas as they were before Kafka 4 removed old versions (KIP-896), for the APIs whose removed versions
#: group-broker still serves because real tools send them (see `merge_legacy`).
LEGACY_DIR = SCHEMA_DIR / "legacy"
OUTPUT_DIR = Path(__file__).parent / "messages"
#: The generated module listing every API (`ApiKey` and each key's declarations).
API_TABLE = "api_table"
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
_PY_TYPES = {
    "bool": "bool",
    "int8": "int",
    "int16": "int",
    "uint16": "int",
    "int32": "int",
    "uint32": "int",
    "int64": "int",
    "float64": "float",
    "uuid": "uuid.UUID",
    "string": "str",
    "bytes": "bytes",
    "records": "bytes",
}


def load_schema(path: Path) -> dict[str, Any]:
    """Kafka's schema files carry `//` comment lines that strict JSON rejects."""
    data: dict[str, Any] = json.loads(_COMMENT.sub("", path.read_text()))
    return data


@dataclass
class _Struct:
    name: str
    fields: list[dict[str, Any]]
    about: str = ""


@dataclass
class _Module:
    name: str
    sources: list[str] = field(default_factory=list)
    structs: dict[str, _Struct] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)


def _type_name(kafka_type: str) -> str:
    return kafka_type[2:] if kafka_type.startswith("[]") else kafka_type


def _collect(module: _Module, name: str, fields: list[dict[str, Any]], common: dict[str, Any], owner: str) -> str:
    """Register a struct and, depth first, every struct it uses, so classes are defined before their users.

    Request and response share a module, and a few schemas give different structs one name on both sides
    (DescribeQuorum's `PartitionData`); the second one is then named after its message (`<owner><name>`), as
    Kafka's generator scopes it inside its message class. Returns the name the struct got.
    """
    resolved = []
    for f in fields:
        element = _type_name(f["type"])
        if element in PRIMITIVE_TYPES:
            resolved.append(f)
            continue
        sub_fields = f.get("fields") or common[element]["fields"]
        got = _collect(module, element, sub_fields, common, owner)
        resolved.append(f if got == element else {**f, "type": f["type"].replace(element, got)})
    existing = module.structs.get(name)
    if existing is not None:
        if existing.fields == resolved:
            return name
        if name == owner:
            raise ValueError(f"{module.name}: message {name} declared twice with different fields")
        return _collect(module, owner + name, resolved, common, owner)
    module.structs[name] = _Struct(name, resolved)
    module.order.append(name)
    return name


def _merge_fields(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both field lists in one, each one's order kept: a field only the old schema has exists only in the removed
    versions, a field only the new one has only in later versions, so their wire orders never conflict."""
    old_names = {f["name"] for f in old}
    by_name = {f["name"]: f for f in new}
    pending = list(new)
    merged: list[dict[str, Any]] = []
    for legacy in old:
        if legacy["name"] not in by_name:
            merged.append(legacy)
            continue
        while pending:
            f = pending.pop(0)
            if f["name"] == legacy["name"]:
                if "fields" in f and "fields" in legacy:
                    f = {**f, "fields": _merge_fields(f["fields"], legacy["fields"])}
                merged.append(f)
                break
            merged.append(f)
    merged.extend(pending)
    assert {f["name"] for f in merged} == old_names | set(by_name)
    return merged


def merge_legacy(schema: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
    """`schema` (Kafka 4.4's) widened down to the versions `legacy` (Kafka's schema before KIP-896) still had, with
    the fields only those versions carry. Fields keep their own version ranges, which Kafka never renumbers."""
    assert schema["name"] == legacy["name"] and not schema.get("commonStructs") and not legacy.get("commonStructs")
    lo = Versions.parse(legacy["validVersions"]).lo
    hi = Versions.parse(schema["validVersions"]).hi
    return {**schema, "validVersions": f"{lo}-{hi}", "fields": _merge_fields(schema["fields"], legacy["fields"])}


def _default(f: dict[str, Any]) -> tuple[str, str]:
    """(dataclass default clause, FieldDecl default expression) for a field, following Kafka's generator."""
    kafka_type = f["type"]
    raw = f.get("default")
    if raw is not None and not isinstance(raw, str):
        raw = json.dumps(raw)
    if kafka_type.startswith("[]"):
        if raw == "null":
            return "None", "None"
        return "field(default_factory=list)", "[]"
    if kafka_type not in PRIMITIVE_TYPES:
        if raw == "null":
            return "None", "None"
        return f"field(default_factory={kafka_type})", f"{kafka_type}()"
    if raw == "null":
        return "None", "None"
    if kafka_type == "bool":
        value = "True" if raw == "true" else "False"
        return value, value
    if kafka_type in ("string",):
        value = repr(raw or "")
        return value, value
    if kafka_type in ("bytes", "records"):
        return 'b""', 'b""'
    if kafka_type == "uuid":
        return "ZERO_UUID", "ZERO_UUID"
    if kafka_type == "float64":
        value = repr(float(raw or 0))
        return value, value
    value = str(int(raw, 0)) if raw else "0"
    return value, value


def _hint(f: dict[str, Any]) -> str:
    kafka_type = f["type"]
    element = _type_name(kafka_type)
    base = _PY_TYPES.get(element, element)
    hint = f"list[{base}]" if kafka_type.startswith("[]") else base
    nullable = not Versions.parse(f.get("nullableVersions", "none")).empty
    return f"{hint} | None" if nullable else hint


def _about(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''").strip()


#: The dataclass options of every generated class. `__init__`, `__repr__` and `__eq__` are written out in the
#: generated source (`_render_methods`) instead of being made by `dataclasses` at import: it builds each of them
#: from text with `exec`, which made importing the ~250 message classes most of the broker's start. The written
#: methods are what `dataclasses` would make (tests/protocol/test_generated_classes.py checks each class against a
#: twin made by `dataclasses`); `@dataclass` still records the fields, so `fields()`, `replace()` and `asdict()` work.
DATACLASS_OPTIONS = "slots=True, kw_only=True, init=False, repr=False, eq=False"


def _render_class(struct: _Struct) -> list[str]:
    lines = ["", "", f"@dataclass({DATACLASS_OPTIONS})", f"class {struct.name}:"]
    lines.append(f'    """Kafka `{struct.name}`; fields in wire order, absent versions take the default."""')
    lines.append("")
    for f in struct.fields:
        default, _ = _default(f)
        lines.append(f"    {snake_case(f['name'])}: {_hint(f)} = {default}")
        if f.get("about"):
            lines.append(f'    """{_about(f["about"])}"""')
    lines.append("    unknown_tagged_fields: dict[int, bytes] = field(default_factory=dict, repr=False)")
    lines.append('    """Tagged fields this version of the codec does not know, kept so they can be re-sent."""')
    lines.extend(_render_methods(struct))
    return lines


def _render_methods(struct: _Struct) -> list[str]:
    """The `__init__` (keyword-only; a default factory runs per instance), `__repr__` (every field but
    `unknown_tagged_fields`) and `__eq__` (same class, every field) that `dataclasses` makes for the class."""
    names = [snake_case(f["name"]) for f in struct.fields]
    params = ["self", "*"]
    body = []
    for f, name in zip(struct.fields, names, strict=True):
        default, expression = _default(f)
        if default.startswith("field(default_factory="):
            params.append(f"{name}: {_hint(f)} = _FACTORY")
            body.append(f"        self.{name} = {expression} if {name} is _FACTORY else {name}")
        else:
            params.append(f"{name}: {_hint(f)} = {default}")
            body.append(f"        self.{name} = {name}")
    params.append("unknown_tagged_fields: dict[int, bytes] = _FACTORY")
    tagged = "unknown_tagged_fields"
    body.append(f"        self.{tagged} = {{}} if {tagged} is _FACTORY else {tagged}")
    shown = ", ".join(f"{name}={{self.{name}!r}}" for name in names)
    compared = [*names, "unknown_tagged_fields"]
    mine = "".join(f"self.{name}, " for name in compared)
    theirs = "".join(f"other.{name}, " for name in compared)
    return [
        "",
        f"    def __init__({', '.join(params)}) -> None:",
        *body,
        "",
        "    def __repr__(self) -> str:",
        f'        return f"{{self.__class__.__qualname__}}({shown})"',
        "",
        "    def __eq__(self, other: object) -> bool:",
        "        if other.__class__ is not self.__class__:",
        "            return NotImplemented",
        f"        return ({mine.rstrip()}) == ({theirs.rstrip()})",
    ]


def _versions_expr(text: str | None) -> str:
    if text is None:
        return "None"
    v = Versions.parse(text)
    return "NONE" if v.empty else f"V({v.lo}, {v.hi})"


def _render_decl(struct: _Struct) -> list[str]:
    lines = [f"_{struct.name}_DECL = StructDecl(", f"    {struct.name!r},", f"    {struct.name},", "    ("]
    for f in struct.fields:
        element = _type_name(f["type"])
        is_struct = element not in PRIMITIVE_TYPES
        kind = ("[]" if f["type"].startswith("[]") else "") + ("struct" if is_struct else element)
        _, default = _default(f)
        args = [
            repr(snake_case(f["name"])),
            repr(f["name"]),
            repr(kind),
            # Kafka's FieldSpec: a tagged field may omit "versions", which then defaults to its taggedVersions.
            _versions_expr(f.get("versions", f.get("taggedVersions"))),
        ]
        extra = []
        if f.get("nullableVersions"):
            extra.append(f"nullable={_versions_expr(f['nullableVersions'])}")
        if f.get("taggedVersions"):
            extra.append(f"tagged={_versions_expr(f['taggedVersions'])}")
            extra.append(f"tag={int(f['tag'])}")
        extra.append(f"default={default}")
        if f.get("ignorable"):
            extra.append("ignorable=True")
        if f.get("flexibleVersions"):
            extra.append(f"flexible={_versions_expr(f['flexibleVersions'])}")
        if is_struct:
            extra.append(f"struct=_{element}_DECL")
        lines.append(f"        F({', '.join(args + extra)}),")
    lines.append("    ),")
    lines.append(")")
    return lines


def _constant(name: str) -> str:
    return snake_case(name).upper()


def _render_module(module: _Module) -> str:
    lines = [
        f'"""Kafka {", ".join(module.sources)}, generated by `make codegen` (protocol/codegen.py). Do not edit.',
        "",
        "Schemas: Apache Kafka, Apache License 2.0 (see protocol/schemas/LICENSE and NOTICE).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import uuid  # noqa: F401",
        "from dataclasses import dataclass, field",
        "from typing import Any",
        "",
        "from protocol.declarations import NO_VERSIONS as NONE  # noqa: F401",
        "from protocol.declarations import FieldDecl as F",
        "from protocol.declarations import MessageDecl, StructDecl",
        "from protocol.declarations import Versions as V",
        "",
        "ZERO_UUID = uuid.UUID(int=0)",
        "#: The default of a parameter whose field has a default factory (`dataclasses`' `_HAS_DEFAULT_FACTORY`).",
        "_FACTORY: Any = object()",
    ]
    for name in module.order:
        lines.extend(_render_class(module.structs[name]))
    lines.append("")
    lines.append("")
    for name in module.order:
        lines.extend(_render_decl(module.structs[name]))
    for message in module.messages:
        name = message["name"]
        lines.append(f"{_constant(name)} = MessageDecl(")
        lines.append(f"    name={name!r},")
        lines.append(f"    kind={message['type']!r},")
        lines.append(f"    api_key={message.get('apiKey')!r},")
        lines.append(f"    valid={_versions_expr(message['validVersions'])},")
        lines.append(f"    flexible={_versions_expr(message.get('flexibleVersions', 'none'))},")
        lines.append(f"    struct=_{name}_DECL,")
        if message.get("latestVersionUnstable"):
            lines.append("    latest_unstable=True,")
        lines.append(")")
    return "\n".join(lines) + "\n"


def _render_api_table(modules: dict[str, _Module]) -> str:
    """`ApiKey` (Kafka's names and numbers) and each key's request and response declarations, in key order."""
    apis: list[tuple[int, str, str, str, str]] = []
    for mod_name, module in sorted(modules.items()):
        requests = [m for m in module.messages if m["type"] == "request" and m.get("apiKey") is not None]
        for request in requests:
            response = next(m for m in module.messages if m["type"] == "response" and m["apiKey"] == request["apiKey"])
            api = _constant(request["name"][: -len("Request")])
            apis.append((request["apiKey"], api, mod_name, _constant(request["name"]), _constant(response["name"])))
    apis.sort()
    lines = [
        '"""Every API the schemas define: `ApiKey` and its request/response declarations, generated by `make codegen`',
        "(protocol/codegen.py). Do not edit; `protocol.registry` adds the version ranges the codec speaks.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from enum import IntEnum",
        "",
        "from protocol.declarations import MessageDecl",
        "from protocol.messages import (",
        *[f"    {mod_name}," for mod_name in sorted({api[2] for api in apis})],
        ")",
        "",
        "",
        "class ApiKey(IntEnum):",
        '    """Kafka\'s API keys by the names of its `ApiKeys` enum."""',
        "",
        *[f"    {api} = {key}" for key, api, _, _, _ in apis],
        "",
        "",
        "#: (key, request, response) for every API, in key order.",
        "API_MESSAGES: tuple[tuple[ApiKey, MessageDecl, MessageDecl], ...] = (",
        *[f"    (ApiKey.{api}, {mod}.{req}, {mod}.{resp})," for _, api, mod, req, resp in apis],
        ")",
    ]
    return "\n".join(lines) + "\n"


def generate() -> dict[str, str]:
    """Every output file's name and content, from the vendored schemas."""
    modules: dict[str, _Module] = {}
    for path in sorted(SCHEMA_DIR.glob("*/*.json")):
        if path.parent == LEGACY_DIR:
            continue
        schema = load_schema(path)
        if (LEGACY_DIR / path.name).is_file():
            schema = merge_legacy(schema, load_schema(LEGACY_DIR / path.name))
        mod_name = module_name(schema["name"])
        module = modules.setdefault(mod_name, _Module(mod_name))
        module.sources.append(path.name)
        common = {c["name"]: c for c in schema.get("commonStructs", [])}
        _collect(module, schema["name"], schema["fields"], common, schema["name"])
        module.messages.append(schema)
    files = {f"{name}.py": _render_module(module) for name, module in sorted(modules.items())}
    files[f"{API_TABLE}.py"] = _render_api_table(modules)
    index = [
        '"""Generated message modules (`make codegen`); see protocol/codegen.py."""',
        "",
        "MODULES = (",
        *[f"    {name!r}," for name in sorted([*modules, API_TABLE])],
        ")",
    ]
    files["__init__.py"] = "\n".join(index) + "\n"
    return files


def write_package(directory: Path, files: dict[str, str]) -> None:
    """Write the generated `files` into `directory`, removing the modules that are no longer generated."""
    directory.mkdir(exist_ok=True)
    for stale in directory.glob("*.py"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        (directory / name).write_text(text)
    print(f"wrote {len(files)} modules to {directory}")


def main(argv: list[str]) -> int:
    write_package(OUTPUT_DIR, generate())
    # The fast codecs are generated from the message modules just written (protocol/fastgen.py walks their field
    # tables), so in a fresh interpreter that imports these, not the ones this process may have loaded.
    return subprocess.run([sys.executable, "-m", "protocol.fastgen"], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
