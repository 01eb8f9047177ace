#!/usr/bin/env python3
"""Bytes on the wire, permessage-deflate against plain, in one run against a running `lockstep serve`:
a 100 000-item snapshot (json app) and a todos patch stream, each read by a plain client and a deflate client side
by side. Prints one JSON object.

    python3 Benchmarks/wire-bytes.py snapshot PORT     # a server with --app json --max-frame 67108864
    python3 Benchmarks/wire-bytes.py todos PORT        # a server with --app todos
"""
import base64, json, os, socket, sys, zlib

OFFER = "permessage-deflate; client_max_window_bits"


class Client:
    """A raw WebSocket client that counts every byte the server sends after its 101 answer."""

    def __init__(self, port, room, deflate):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = f"Sec-WebSocket-Extensions: {OFFER}\r\n" if deflate else ""
        self.sock.sendall((f"GET /rooms/{room} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"{extra}\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head
        self.deflate = b"permessage-deflate" in head.lower()
        self.wire_bytes = len(self.buffer)

    def frame(self):
        """The next message's text (inflated when compressed) and its size on the wire."""
        while True:
            if len(self.buffer) >= 2:
                length, offset = self.buffer[1] & 0x7F, 2
                if length == 126 and len(self.buffer) >= 4:
                    length, offset = int.from_bytes(self.buffer[2:4], "big"), 4
                elif length == 127 and len(self.buffer) >= 10:
                    length, offset = int.from_bytes(self.buffer[2:10], "big"), 10
                if (length < 126 or offset > 2) and len(self.buffer) >= offset + length:
                    first, payload = self.buffer[0], self.buffer[offset:offset + length]
                    self.buffer = self.buffer[offset + length:]
                    if first & 0x40:
                        payload = zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff")
                    return payload.decode(), offset + length
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("closed")
            self.buffer += chunk
            self.wire_bytes += len(chunk)

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
                                  if n < 65536 else bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.sock.sendall(header + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload)))


def until(client, kind):
    while True:
        text, size = client.frame()
        if f'"type":"{kind}"' in text:
            return text, size


def snapshot(port):
    writer = Client(port, "snapshot", False)
    until(writer, "snapshot")
    items = [{"id": i, "title": f"item {i}", "done": i % 3 == 0} for i in range(100_000)]
    writer.send(json.dumps({"type": "action", "id": "fill", "action": {"type": "patch", "ops": [
        {"op": "add", "path": "/items", "value": items}]}}, separators=(",", ":")))
    until(writer, "ack")
    sizes = {}
    for deflate in (False, True):
        reader = Client(port, "snapshot", deflate)
        text, size = until(reader, "snapshot")
        assert reader.deflate == deflate and '"item 99999"' in text
        sizes["deflate" if deflate else "plain"] = size
    return {"snapshotBytes": sizes, "ratio": round(sizes["deflate"] / sizes["plain"], 3)}


def todos(port, count=1000):
    readers = {"plain": Client(port, "stream", False), "deflate": Client(port, "stream", True)}
    for reader in readers.values():
        until(reader, "snapshot")
    writer = Client(port, "stream", False)
    until(writer, "snapshot")
    start = {name: reader.wire_bytes - len(reader.buffer) for name, reader in readers.items()}
    for index in range(count):
        writer.send(json.dumps({"type": "action", "id": f"a{index}",
                                "action": {"type": "add", "title": f"buy milk, bread and eggs ({index})"}}))
    patch_bytes = {}
    for name, reader in readers.items():
        seen = 0
        total = 0
        while seen < count:
            text, size = reader.frame()
            if '"type":"patch"' in text:
                seen += 1
                total += size
        patch_bytes[name] = total
    return {"patches": count, "patchBytes": patch_bytes, "ratio": round(patch_bytes["deflate"] / patch_bytes["plain"], 3)}


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    print(json.dumps(snapshot(port) if mode == "snapshot" else todos(port)))
