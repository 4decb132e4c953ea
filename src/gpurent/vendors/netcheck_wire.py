"""The netcheck wire protocol: peer addresses, the framed handshake both ends speak.

Every connection opens with one frame from the client and one answer from the server:

    magic  b"GRNC"   4 bytes
    version          2 bytes, big-endian (this is version 1)
    length           4 bytes, big-endian: bytes of the JSON body that follows (<= 64 KiB)
    body             UTF-8 JSON object

The client's body names the operation (`{"op": "echo", "size_bytes": 32}`,
`{"op": "source", "seconds": 3.0}`, `{"op": "rdma", "tool": "lat"}`); the server answers
`{"ok": true}` or `{"ok": false, "error": "..."}`. After that the connection carries the
operation's raw bytes (echoed messages, a stream of filler). A peer whose first bytes are not the
magic is not a netcheck server, and the client says so in one line rather than measuring it.
"""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass
from typing import Any

from gpurent.errors import DeviceError, InputError

MAGIC = b"GRNC"
VERSION = 1
DEFAULT_PORT = 5201
_HEADER = struct.Struct(">4sHI")
MAX_BODY_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Peer:
    """Where a netcheck server listens."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_peer(text: str, *, where: str = "--peer", default_port: int = DEFAULT_PORT) -> Peer:
    """`HOST`, `HOST:PORT`, `[IPv6]` or `[IPv6]:PORT`; a bare IPv6 address takes the default
    port."""
    raw = text.strip()
    if not raw:
        raise InputError(f"{where} is empty; give HOST or HOST:PORT, e.g. 10.0.0.2:5201")
    if raw.startswith("["):
        host, sep, rest = raw[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise InputError(f"{where} {text!r} is not [IPv6]:PORT; e.g. [fe80::1]:5201")
        port_text = rest[1:] if rest else ""
    elif raw.count(":") > 1:  # a bare IPv6 address
        host, port_text = raw, ""
    else:
        host, _, port_text = raw.partition(":")
        if ":" in raw and not port_text:
            raise InputError(f"{where} {text!r} ends with ':'; give HOST:PORT, e.g. 10.0.0.2:5201")
    if not host or any(c.isspace() for c in host) or "/" in host:
        raise InputError(f"{where} {text!r} has no usable host; give HOST or HOST:PORT")
    return Peer(
        host, parse_port(port_text, where=f"{where} {text!r}") if port_text else default_port
    )


def parse_port(text: str, *, where: str) -> int:
    """The port number in text; InputError naming where unless it is 1 to 65535."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise InputError(f"{where}: the port must be a whole number from 1 to 65535, got {text!r}")
    return int(text)


def encode(body: dict[str, Any], *, version: int = VERSION) -> bytes:
    """One wire message: magic, version and length header, then body as compact JSON."""
    data = json.dumps(body, separators=(",", ":")).encode()
    return _HEADER.pack(MAGIC, version, len(data)) + data


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly `n` bytes, or fewer when the peer closed the connection first."""
    parts = bytearray()
    while len(parts) < n:
        chunk = sock.recv(n - len(parts))
        if not chunk:
            break
        parts += chunk
    return bytes(parts)


class NotNetcheckError(Exception):
    """What arrived is not a netcheck frame; `seen` holds the first bytes, for the message."""

    def __init__(self, seen: bytes) -> None:
        super().__init__(seen)
        self.seen = seen


def read_frame(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    """(version, body) of the next frame; NotNetcheckError when the bytes are not one."""
    head = recv_exact(sock, _HEADER.size)
    if len(head) < _HEADER.size or head[:4] != MAGIC:
        raise NotNetcheckError(head)
    _, version, length = _HEADER.unpack(head)
    if length > MAX_BODY_BYTES:
        raise NotNetcheckError(head)
    data = recv_exact(sock, length)
    try:
        body = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        raise NotNetcheckError(head + data[:16]) from None
    if len(data) < length or not isinstance(body, dict):
        raise NotNetcheckError(head + data[:16])
    return version, body


def _shown(seen: bytes) -> str:
    text = seen[:24].decode("ascii", "replace")
    printable = "".join(c if c.isprintable() else "." for c in text)
    return f"it answered {printable!r}" if seen else "it closed the connection without answering"


def connect(peer: Peer, timeout_s: float) -> socket.socket:
    """A TCP connection to `peer` with Nagle off; the failures a user can act on as one line."""
    try:
        sock = socket.create_connection((peer.host, peer.port), timeout=timeout_s)
    except socket.gaierror:
        raise InputError(
            f"cannot resolve the peer host {peer.host!r}; check the name or give an IP address"
        ) from None
    except ConnectionRefusedError:
        raise InputError(
            f"{peer} refused the connection: start `gpurent vendors netcheck --serve` there "
            "(or give the port it listens on)"
        ) from None
    except TimeoutError:
        raise InputError(
            f"{peer} is unreachable: no answer within {timeout_s:g} s; check the address, the "
            "route and the firewall"
        ) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(
            f"{peer} is unreachable ({reason}); check the address, the route and the firewall"
        ) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def handshake(sock: socket.socket, peer: Peer, body: dict[str, Any]) -> dict[str, Any]:
    """Send the opening frame and read the answer; a peer that is not a netcheck server, speaks
    another protocol version or refuses the operation is one line."""
    try:
        sock.sendall(encode(body))
        version, answer = read_frame(sock)
    except NotNetcheckError as exc:
        raise InputError(
            f"{peer} is not a gpurent netcheck server ({_shown(exc.seen)}); start "
            "`gpurent vendors netcheck --serve` there or check the port"
        ) from None
    except TimeoutError:
        raise InputError(
            f"{peer} accepted the connection but did not answer the netcheck handshake; it is "
            "probably another service: check the port"
        ) from None
    except OSError as exc:
        raise InputError(
            f"{peer} dropped the connection during the netcheck handshake "
            f"({exc.strerror or type(exc).__name__}); is it a netcheck server?"
        ) from None
    if version != VERSION:
        raise InputError(
            f"{peer} speaks netcheck protocol version {version}, this gpurent speaks {VERSION}; "
            "install the same gpurent version on both ends"
        )
    if answer.get("ok") is not True:
        raise DeviceError(f"{peer} refused the {body.get('op')} test: {answer.get('error')}")
    return answer
