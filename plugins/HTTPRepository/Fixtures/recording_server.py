#!/usr/bin/env python3
"""A recording HTTP repository for the http-repository sink's tests.

Listens on 127.0.0.1 (port 0 unless --port), prints the port on the first line of stdout, and
appends one JSON line per request to --record: method, path, headers, status answered, the
decompressed body (parsed when JSON) and the sample uuids found in it (in the path, for a
DELETE). POST carries batches; DELETE <path>/<uuid> deletes an Open mHealth data point: 404
when no POST it answered 2xx carried that uuid (or it was deleted since), as a repository
answers for a data point it does not hold.

Tell it how to fail with POST /_control and a JSON object (all keys optional):
  {"fail": [503, 503]}                    answer these statuses to the next requests, in order
  {"retry_after": ["3", 429]}             next request: 429 (or the status given) with this Retry-After
  {"reject_uuid": "…"}                    400 for any body containing this uuid (poison)
  {"token": "…"}                          401 unless "Authorization: Bearer <token>"
  {"hold": [30]}                          record the next request (as answered 200), then wait
                                          this many seconds before answering (a crash window)
  {"every": {"n": 4, "status": 503, "retry_after": "3"}}
                                          answer every n-th request (counting from this command)
                                          with this status and, when given, Retry-After: a number
                                          of seconds as it is ("3"), or {"date_in": 4}, an HTTP
                                          date that many seconds after the answer
  {"delay": [0.5, 0]}                     answer the next requests after these many seconds each
                                          (answers then arrive out of order)
  {"idempotency": true}                   keep each Idempotency-Key's fingerprint (Content-Type,
                                          Content-Encoding and the decoded body) from the first
                                          request under it, whatever it was answered, and answer
                                          422 to a request that reuses the key with another one
                                          (the IETF Idempotency-Key draft, "Error Scenarios")
  {"reset": true}                         clear every rule (the fingerprints kept stay: they are
                                          what the repository stored, not a rule)
Going down and up is done by the test: kill the process, start it again with --port.
"""
import argparse
import gzip
import hashlib
import json
import re
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class State:
    def __init__(self, record):
        self.lock = threading.Lock()
        self.record = record
        self.fingerprints = {}
        # uuids of the bodies answered 2xx, less those deleted since: what the repository holds.
        self.held = set()
        self.reset()

    def reset(self):
        self.fail = []
        self.retry_after = None
        self.reject_uuid = None
        self.token = None
        self.hold = []
        self.every = None
        self.counted = 0
        self.delay = []
        self.idempotency = False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, format, *args):
        pass

    def reply(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self):
        self.handle_request("DELETE")

    def do_POST(self):
        self.handle_request("POST")

    def parse_request(self):
        # The moment the request line came: reading the body and waiting for the lock (threads
        # share the GIL) can take long on a loaded machine, and `received` tells when the client
        # sent, not when this thread got to it.
        self.arrived = time.time()
        return super().parse_request()

    def handle_request(self, method):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        state = self.state
        if method == "POST" and self.path == "/_control":
            command = json.loads(raw or b"{}")
            with state.lock:
                if command.get("reset"):
                    state.reset()
                state.fail.extend(command.get("fail", []))
                if "retry_after" in command:
                    state.retry_after = command["retry_after"]
                if "reject_uuid" in command:
                    state.reject_uuid = command["reject_uuid"]
                if "token" in command:
                    state.token = command["token"]
                state.hold.extend(command.get("hold", []))
                if "every" in command:
                    state.every = command["every"]
                    state.counted = 0
                state.delay.extend(command.get("delay", []))
                if "idempotency" in command:
                    state.idempotency = bool(command["idempotency"])
            self.reply(200, b"{}")
            return
        body = raw
        error = None
        if self.headers.get("Content-Encoding") == "gzip":
            try:
                body = gzip.decompress(raw)
            except OSError as exc:
                error = str(exc)
        received = self.arrived
        key = self.headers.get("Idempotency-Key")
        fingerprint = hashlib.sha256(
            json.dumps([self.headers.get("Content-Type"), self.headers.get("Content-Encoding"), body.hex()]).encode()
        ).hexdigest()
        with state.lock:
            status, extra, answer = 200, {}, b'{"ok":true}'
            reused = False
            if state.idempotency and key is not None:
                kept = state.fingerprints.setdefault(key, fingerprint)
                reused = kept != fingerprint
            every = None
            if state.every is not None:
                state.counted += 1
                if state.counted % state.every["n"] == 0:
                    every = state.every
            if error:
                status, answer = 400, json.dumps({"error": "bad gzip: " + error}).encode()
            elif reused:
                status, answer = 422, b'{"error":"Idempotency-Key reused with another payload"}'
            elif state.token is not None and self.headers.get("Authorization") != "Bearer " + state.token:
                status, answer = 401, b'{"error":"unauthorized"}'
            elif state.fail:
                status = state.fail.pop(0)
                answer = b'{"error":"injected"}'
            elif every is not None:
                status, answer = every["status"], b'{"error":"every n-th request"}'
                retry_after = every.get("retry_after")
                if isinstance(retry_after, dict):
                    extra = {"Retry-After": formatdate(received + retry_after["date_in"], usegmt=True)}
                elif retry_after is not None:
                    extra = {"Retry-After": retry_after}
            elif state.retry_after is not None:
                value, code = state.retry_after
                state.retry_after = None
                status, extra, answer = code, {"Retry-After": value}, b'{"error":"slow down"}'
            elif state.reject_uuid and state.reject_uuid.encode() in body + self.path.encode():
                status, answer = 400, json.dumps({"error": "invalid sample " + state.reject_uuid}).encode()
            uuids = sorted(set(u.decode() for u in UUID.findall(body + self.path.encode())))
            if method == "DELETE" and status == 200:
                target = self.path.rsplit("/", 1)[-1]
                if target in state.held:
                    state.held.discard(target)
                else:
                    status, answer = 404, b'{"error":"no such data point"}'
            elif method == "POST" and 200 <= status < 300:
                state.held.update(uuids)
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            line = {
                "method": method,
                "path": self.path,
                "headers": {k: v for k, v in self.headers.items()},
                "status": status,
                "compressedBytes": len(raw),
                "body": parsed if parsed is not None else body.decode("utf-8", "replace"),
                "uuids": uuids,
                "received": received,
                "retryAfter": extra.get("Retry-After"),
                "fingerprint": fingerprint,
            }
            with open(state.record, "a") as out:
                out.write(json.dumps(line) + "\n")
            hold = state.hold.pop(0) if state.hold and status == 200 else 0
            if state.delay:
                hold = max(hold, state.delay.pop(0))
        # Stored (recorded) but not yet answered: the window in which a client may crash.
        if hold:
            time.sleep(hold)
        self.reply(status, answer, extra)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", required=True)
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    arguments = parser.parse_args()
    Handler.state = State(arguments.record)
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    if arguments.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
