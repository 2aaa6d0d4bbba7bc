"""The peers file, CSTP_PEERS_FILE (CONTRACT.md, Federation): each bad field is a start-up
error naming the peer and the field (the loader in process), and `cstp serve` exits with it
on one line (one subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from a2a.errors import StartupError
from a2a.federation.config import load_peers
from tests.servers import cstp, free_port

SECRET = "peer-secret-0123456789"
GOOD = '[[peer]]\nname = "a"\nurl = "http://127.0.0.1:1"\n'


def error_of(path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    path.write_text(text)
    with pytest.raises(StartupError) as caught:
        load_peers(path, environ or {})
    return str(caught.value)


def test_a_good_file_gives_each_peer_in_order_with_its_token_from_the_environment(
    tmp_path: Path,
) -> None:
    path = tmp_path / "peers.toml"
    path.write_text(
        '[[peer]]\nname = "billing"\nurl = "https://billing.example:8443/"\n'
        'token_env = "BILLING_TOKEN"\ntenant = "payments"\n'
        '[[peer]]\nname = "eu-2"\nurl = "http://10.0.0.2:8000/base"\n'
    )
    billing, eu = load_peers(path, {"BILLING_TOKEN": SECRET})
    assert (billing.name, billing.url, billing.endpoint, billing.tenant) == (
        "billing",
        "https://billing.example:8443",
        "https://billing.example:8443/cstp",
        "payments",
    )
    assert billing.token == SecretStr(SECRET)
    assert SECRET not in repr(billing) and "token" not in billing.model_dump()
    assert (eu.name, eu.endpoint, eu.token, eu.tenant) == (
        "eu-2",
        "http://10.0.0.2:8000/base/cstp",
        None,
        None,
    )
    assert load_peers(None) == ()
    assert load_peers(_write(tmp_path / "empty.toml", "")) == ()


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("peer", "expected"),
    [
        ('name = "Billing"\nurl = "http://b:1"', "peer[1] ('Billing') name: String should match"),
        ('name = "b"\nurl = "ftp://b:1"', "peer[1] ('b') url: Value error, must be an http://"),
        ('name = "b"\nurl = "http://u:pw@b:1"', "peer[1] ('b') url: Value error, must not carry"),
        ('name = "b"\nurl = "http://b:1/?t=1"', "peer[1] ('b') url: Value error, must not carry"),
        ('name = "b"\nurl = "http://b:x"', "peer[1] ('b') url: Value error, not a URL"),
        ('name = "b"\nurl = 8000', "peer[1] ('b') url: Input should be a valid string"),
        ('name = "b"', "peer[1] ('b') url: Field required"),
        ('url = "http://b:1"', "peer[1] name: Field required"),
        ('name = "b"\nurl = "http://b:1"\ntenant = "*"', "peer[1] ('b') tenant: String should"),
        ('name = "b"\nurl = "http://b:1"\nurll = "x"', "peer[1] ('b') urll: unknown field"),
        ('name = "b"\nurl = "http://b:1"\ntoken_env = "1X"', "peer[1] ('b') token_env: String"),
        (
            'name = "b"\nurl = "http://b:1"\ntoken_env = "UNSET_TOKEN"',
            "peer[1] ('b') token_env: the variable UNSET_TOKEN is not set",
        ),
        (
            f'name = "b"\nurl = "http://b:1"\ntoken = "{SECRET}"',
            "peer[1] ('b') token: tokens come from the environment (use token_env)",
        ),
        ('name = "a"\nurl = "http://b:1"', "peer[1] ('a') name: 'a' is named twice"),
    ],
)
def test_a_bad_peer_names_the_peer_and_the_field(tmp_path: Path, peer: str, expected: str) -> None:
    path = tmp_path / "peers.toml"
    message = error_of(path, f"{GOOD}[[peer]]\n{peer}\n")
    assert message.startswith(f"CSTP_PEERS_FILE {path}: {expected}"), message
    assert SECRET not in message and "pw" not in message


def test_a_bad_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "peers.toml"
    # tomllib's own words (they vary with Python's version), with where.
    not_toml = error_of(path, "[[peer]\nname = 1")
    assert not_toml.startswith(f"CSTP_PEERS_FILE {path}: not TOML (")
    assert not_toml.endswith("(at line 1, column 7))")
    assert error_of(path, '[[peers]]\nname = "a"') == (
        f"CSTP_PEERS_FILE {path}: unknown table 'peers' (use [[peer]])"
    )
    assert error_of(path, 'peer = "a"') == (
        f"CSTP_PEERS_FILE {path}: `peer` must be an array of tables ([[peer]])"
    )
    many = "".join(f'[[peer]]\nname = "p{n}"\nurl = "http://p:1"\n' for n in range(33))
    assert error_of(path, many) == f"CSTP_PEERS_FILE {path}: 33 peers, at most 32"
    missing = tmp_path / "missing.toml"
    with pytest.raises(StartupError) as caught:
        load_peers(missing, {})
    assert str(caught.value) == (
        f"CSTP_PEERS_FILE {missing}: cannot read it (No such file or directory)"
    )


@pytest.mark.slow
def test_cstp_serve_exits_with_one_line_naming_the_peer_and_the_field(tmp_path: Path) -> None:
    peers = _write(
        tmp_path / "peers.toml", '[[peer]]\nname = "billing"\nurl = "billing.example:8000"\n'
    )
    env = {
        "CSTP_DATA_DIR": str(tmp_path / "data"),
        "CSTP_EMBEDDING_MODEL": "wordllama-l2-supercat-256",
        "CSTP_PEERS_FILE": str(peers),
    }
    done = cstp("serve", "--host", "127.0.0.1", "--port", str(free_port()), env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: CSTP_PEERS_FILE {peers}: peer[0] ('billing') url: Value error, must be an"
        " http:// or https:// URL with a host"
    )
    assert "Traceback" not in done.stderr
