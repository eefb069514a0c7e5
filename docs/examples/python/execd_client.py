#!/usr/bin/env python3
"""A minimal execd / Codex exec-server client in Python, standard library only.

It speaks the protocol's JSON codec (docs/protocol.md; every message is described by the JSON
Schema `@execd/protocol/schema.json`) over a WebSocket (a small RFC 6455 client below) or over the
stdin/stdout of a command (`execd-server --listen stdio`, possibly behind ssh). It initializes a
session, starts one process, long-polls `process/read` until the process is closed, prints the
output and the exit code, and exits with that code.

    python3 execd_client.py --url ws://127.0.0.1:7000 -- sh -c 'echo hello'
    python3 execd_client.py --command 'ssh host execd-server --listen stdio' -- uname -a

Options: --cwd DIR (default: the server's cwd), --token TOKEN (bearer token),
--frames FILE (append every frame sent and received to FILE as JSON lines).
"""

import argparse
import base64
import json
import os
import shlex
import socket
import struct
import subprocess
import sys
import urllib.parse
import uuid

READ_WAIT_MS = 1000  # long-poll budget of one process/read; the server answers early on news


class WebSocketTransport:
    """Text frames over one WebSocket (client side: frames are masked, RFC 6455 section 5.3)."""

    def __init__(self, url, token=None):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "ws":
            raise ValueError(f"only ws:// URLs are supported, got {url}")
        self.sock = socket.create_connection((parts.hostname, parts.port or 80))
        key = base64.b64encode(os.urandom(16)).decode()
        headers = [
            f"GET {parts.path or '/'} HTTP/1.1",
            f"Host: {parts.netloc}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if token:
            headers.append(f"Authorization: Bearer {token}")
        self.sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n").decode("latin-1")
        if not head.startswith("HTTP/1.1 101"):
            raise ConnectionError(f"upgrade refused: {head.splitlines()[0]}")

    def _read_until(self, marker):
        while marker not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("connection closed by the server")
        self.buffer += data

    def _take(self, n):
        while len(self.buffer) < n:
            self._fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _send_frame(self, opcode, payload):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def receive(self):
        """The next text (or binary JSON) message; answers pings, reassembles fragments."""
        message = b""
        while True:
            first, second = self._take(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                length = struct.unpack("!H", self._take(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", self._take(8))[0]
            mask = self._take(4) if second & 0x80 else None
            payload = self._take(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
            elif opcode == 0x8:  # close
                raise ConnectionError("the server closed the WebSocket")
            elif opcode in (0x0, 0x1, 0x2):
                message += payload
                if first & 0x80:  # FIN
                    return message.decode()

    def close(self):
        try:
            self._send_frame(0x8, struct.pack("!H", 1000))
        finally:
            self.sock.close()


class StdioTransport:
    """One JSON message per line over a spawned command's stdin and stdout."""

    def __init__(self, command):
        self.child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, text):
        self.child.stdin.write(text.encode() + b"\n")
        self.child.stdin.flush()

    def receive(self):
        while True:
            line = self.child.stdout.readline()
            if not line:
                raise ConnectionError("the exec-server command closed its output")
            if line.strip():
                return line.decode()

    def close(self):
        self.child.stdin.close()  # EOF: the server ends the session and exits
        self.child.wait()


class Client:
    """JSON-RPC without the "jsonrpc" member: integer ids, answers matched by id."""

    def __init__(self, transport, frames_file=None):
        self.transport = transport
        self.next_id = 1
        self.frames = frames_file

    def _log(self, direction, frame):
        if self.frames:
            self.frames.write(json.dumps({"dir": direction, "frame": json.loads(frame)}) + "\n")

    def _send(self, message):
        frame = json.dumps(message)
        self._log("c>s", frame)
        self.transport.send(frame)

    def request(self, method, params):
        request_id = self.next_id
        self.next_id += 1
        self._send({"id": request_id, "method": method, "params": params})
        while True:
            frame = self.transport.receive()
            self._log("s>c", frame)
            message = json.loads(frame)
            if "method" in message:
                if "id" in message:  # a server request (network/policyRequest): not handled here
                    error = {"code": -32601, "message": f"unsupported method {message['method']}"}
                    self._send({"id": message["id"], "error": error})
                continue  # notifications (process/output ...): this client reads instead
            if message.get("id") != request_id:
                continue
            if "error" in message:
                raise RuntimeError(f"{method} failed: {message['error']['code']} {message['error']['message']}")
            return message["result"]

    def notify(self, method, params):
        self._send({"method": method, "params": params})


def run(client, argv, cwd):
    """Starts argv, prints its output as it arrives, returns its exit code."""
    init = client.request("initialize", {"clientName": "execd-python-example"})
    client.notify("initialized", {})
    if cwd:
        cwd_uri = "file://" + urllib.parse.quote(os.path.abspath(cwd))
    else:
        cwd_uri = (init.get("environmentInfo") or {}).get("cwd") or "file://" + urllib.parse.quote(os.getcwd())
    process_id = f"py-{uuid.uuid4()}"
    client.request("process/start", {
        "processId": process_id,
        "argv": argv,
        "cwd": cwd_uri,
        # The executor's core variables (PATH, HOME, ...), as a login would give.
        "envPolicy": {"inherit": "core", "ignoreDefaultExcludes": False, "exclude": [], "set": {}, "includeOnly": []},
        "env": {},
        "tty": False,
    })
    after_seq = 0
    while True:
        result = client.request("process/read", {"processId": process_id, "afterSeq": after_seq, "waitMs": READ_WAIT_MS})
        for chunk in result["chunks"]:
            out = sys.stderr if chunk["stream"] == "stderr" else sys.stdout
            out.buffer.write(base64.b64decode(chunk["chunk"]))
            out.flush()
        after_seq = result["nextSeq"] - 1
        if result["closed"]:
            return result["exitCode"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="ws://host:port of the exec-server")
    target.add_argument("--command", help="a command that speaks the protocol on stdio")
    parser.add_argument("--token", help="bearer token")
    parser.add_argument("--cwd", help="working directory on the server")
    parser.add_argument("--frames", help="append every frame to this file (JSON lines)")
    parser.add_argument("argv", nargs="+", help="the program and its arguments")
    args = parser.parse_args()
    transport = WebSocketTransport(args.url, args.token) if args.url else StdioTransport(shlex.split(args.command))
    frames = open(args.frames, "a") if args.frames else None
    try:
        exit_code = run(Client(transport, frames), args.argv, args.cwd)
    finally:
        transport.close()
        if frames:
            frames.close()
    print(f"exit code: {exit_code}")
    sys.exit(exit_code if 0 <= exit_code < 256 else 1)


if __name__ == "__main__":
    main()
