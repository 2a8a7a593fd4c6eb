"""`group-broker certs DIR`: a fresh CA, a broker certificate and a client certificate as PEM files, for trying TLS
and mutual TLS locally, and the broker properties that serve them (`toolkit.certs` makes them; the tests use the
same helper)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolkit.certs import BROKER_HOSTS, write_certs


def build_parser(prog: str = "group-broker certs") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("directory", type=Path, help="where to write ca.pem, broker.pem/.key, <client>.pem/.key")
    parser.add_argument("--client", default="client", help="the client certificate's CN (its principal: User:CN=...)")
    parser.add_argument(
        "--host", action="append", default=None, help="a name or address the broker certificate covers (repeatable)"
    )
    return parser


def main(argv: list[str], prog: str = "group-broker certs") -> int:
    args = build_parser(prog).parse_args(argv)
    hosts = tuple(args.host) if args.host else BROKER_HOSTS
    try:
        files = write_certs(args.directory, client=args.client, hosts=hosts)
    except OSError as exc:
        print(f"group-broker certs: cannot write to {args.directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"# broker certificate for {', '.join(hosts)}; client certificate CN={args.client}")
    print("# server.properties for an SSL listener with mutual TLS:")
    print("listeners=SSL://127.0.0.1:9093")
    print("ssl.keystore.type=PEM")
    print(f"ssl.keystore.certificate.chain={_one_line(files.broker_cert)}")
    print(f"ssl.keystore.key={_one_line(files.broker_key)}")
    print("ssl.truststore.type=PEM")
    print(f"ssl.truststore.location={files.ca.resolve()}")
    print("ssl.client.auth=required")
    print("# clients: CA file", files.ca.resolve(), "certificate", files.client_cert.resolve(), end=" ")
    print("key", files.client_key.resolve())
    return 0


def _one_line(path: Path) -> str:
    """A PEM file as one properties value (the broker re-wraps it, as Kafka reads inline PEM)."""
    return " ".join(path.read_text().split("\n")).strip()
