/**
 * Source of the egress proxy, a Python 3 program (standard library only) run with
 * `python3 -c` in a container from the base image, which has python3 and no node.
 * Kept in a TypeScript module so it ships inside `dist/` with no extra build step.
 * Its matching rule must agree with `hostAllowed` in allowlist.ts (tested on the real proxy).
 */
export const EGRESS_PROXY_SOURCE = String.raw`"""berth's egress proxy: an HTTP CONNECT and plain-HTTP forward proxy that
admits only the hosts of an allowlist.

It runs with python3's standard library alone (berth-base:bookworm has python3
and no node), in a container attached to the trial's internal network (its
only neighbour is the task container) and to an ordinary network that reaches
the outside. The policy is JSON: {"mode": "allowlist", "allowed_hosts": [...]}
or {"mode": "public"} (admit everything; used while a phase has public access
so proxy variables set in the task container keep working). It comes from the
environment variable BERTH_EGRESS_POLICY and is replaced at run time by writing
BERTH_EGRESS_POLICY_FILE (polled every 0.1 s; on a change, open connections
to hosts the new policy does not admit are closed, so a tunnel opened in a
public phase does not outlive it).

Matching (the same rule as allowlist.ts): a host is admitted when it equals a
listed host, or when a listed pattern is "*.suffix" and the host ends with
".suffix" (a strict subdomain: "*.example.com" admits "a.example.com" and
"a.b.example.com", not "example.com"). Case and one trailing dot are ignored.
IP literals are admitted only when listed exactly. Every decision is printed
on stdout as one JSON line.
"""
import json
import os
import select
import socket
import sys
import threading
import time

LISTEN_PORT = int(os.environ.get("BERTH_EGRESS_PORT", "3128"))
POLICY_FILE = os.environ.get("BERTH_EGRESS_POLICY_FILE", "/run/berth-egress/policy.json")
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 600.0
MAX_HEAD = 64 * 1024

_lock = threading.Lock()
_policy = {"mode": "allowlist", "allowed_hosts": []}
_policy_mtime = None
_tunnels = {}  # socket pair id -> (host, client, upstream)


def load_policy():
    global _policy, _policy_mtime
    try:
        mtime = os.stat(POLICY_FILE).st_mtime_ns
    except OSError:
        return _policy
    with _lock:
        if mtime != _policy_mtime:
            try:
                with open(POLICY_FILE, encoding="utf-8") as handle:
                    _policy = json.load(handle)
                _policy_mtime = mtime
                closed = close_unadmitted(_policy)
                log({"event": "policy", "policy": _policy, "generation": _policy.get("generation"), "closed": closed})
            except (OSError, ValueError) as error:
                # A half-written or bad file keeps the previous policy (fail closed to it).
                log({"event": "policy-error", "error": str(error)})
        return _policy


def close_unadmitted(policy):
    """Closes open connections to hosts the new policy no longer admits (caller holds _lock)."""
    closed = 0
    for key, (host, client, upstream) in list(_tunnels.items()):
        if not admitted(host, policy):
            for sock in (client, upstream):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            del _tunnels[key]
            closed += 1
    return closed


def watch_policy():
    while True:
        load_policy()
        time.sleep(0.1)


def log(record):
    record["t"] = round(time.time(), 3)
    sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
    sys.stdout.flush()


def normalize(host):
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.endswith("."):
        host = host[:-1]
    return host


def admitted(host, policy):
    if policy.get("mode") == "public":
        return True
    if policy.get("mode") != "allowlist":
        return False
    host = normalize(host)
    if not host:
        return False
    for pattern in policy.get("allowed_hosts", []):
        pattern = normalize(pattern)
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                return True
        elif host == pattern:
            return True
    return False


def split_host_port(authority, default_port):
    authority = authority.strip()
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise ValueError("bad IPv6 authority")
        host, rest = authority[1:end], authority[end + 1:]
        port = int(rest[1:]) if rest.startswith(":") else default_port
    elif authority.count(":") == 1:
        host, port_text = authority.split(":", 1)
        port = int(port_text)
    else:
        host, port = authority, default_port
    if not (0 < port < 65536):
        raise ValueError("bad port")
    return host, port


def reply(client, code, reason, message):
    body = (message + "\n").encode()
    head = (
        "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
        "X-Berth-Egress: %s\r\nConnection: close\r\n\r\n" % (code, reason, len(body), "denied" if code == 403 else "error")
    )
    try:
        client.sendall(head.encode() + body)
    except OSError:
        pass


def pipe(a, b):
    sockets = [a, b]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], IDLE_TIMEOUT)
            if not readable:
                return
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (b if source is a else a).sendall(data)
    except OSError:
        return


def handle(client, peer):
    upstream = None
    try:
        client.settimeout(30)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
            if len(data) > MAX_HEAD:
                reply(client, 431, "Request Header Fields Too Large", "berth egress: request head too large")
                return
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            reply(client, 400, "Bad Request", "berth egress: bad request line")
            return
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = split_host_port(target, 443)
        elif target.lower().startswith("http://"):
            after = target[7:]
            slash = after.find("/")
            authority, path = (after, "/") if slash < 0 else (after[:slash], after[slash:])
            if "@" in authority:
                authority = authority.rsplit("@", 1)[1]
            host, port = split_host_port(authority, 80)
        else:
            reply(client, 400, "Bad Request", "berth egress: only CONNECT and absolute http:// URLs are proxied")
            return
        policy = load_policy()
        record = {"event": "request", "client": peer[0], "method": method.upper(), "host": normalize(host), "port": port}
        if not admitted(host, policy):
            record["decision"] = "deny"
            log(record)
            reply(client, 403, "Forbidden", "berth egress: host %s is not in the allowlist" % normalize(host))
            return
        try:
            upstream = socket.create_connection((normalize(host), port), timeout=CONNECT_TIMEOUT)
        except OSError as error:
            record["decision"] = "error"
            record["error"] = str(error)
            log(record)
            reply(client, 502, "Bad Gateway", "berth egress: cannot reach %s:%d: %s" % (normalize(host), port, error))
            return
        record["decision"] = "allow"
        log(record)
        upstream.settimeout(None)
        client.settimeout(None)
        with _lock:
            if not admitted(host, _policy):
                # The policy changed while connecting.
                reply(client, 403, "Forbidden", "berth egress: host %s is not in the allowlist" % normalize(host))
                return
            _tunnels[id(client)] = (host, client, upstream)
        if method.upper() == "CONNECT":
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
        else:
            headers = []
            for line in lines[1:]:
                name = line.split(":", 1)[0].strip().lower()
                if name in ("proxy-connection", "proxy-authorization", "connection", "keep-alive", "host"):
                    continue
                headers.append(line)
            request = ["%s %s %s" % (method, path, version), "Host: %s" % authority] + headers + ["Connection: close", "", ""]
            out = "\r\n".join(request)
            upstream.sendall(out.encode("latin-1") + rest)
        pipe(client, upstream)
    except (OSError, ValueError) as error:
        try:
            reply(client, 400, "Bad Request", "berth egress: %s" % error)
        except Exception:
            pass
    finally:
        with _lock:
            _tunnels.pop(id(client), None)
        for sock in (client, upstream):
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass


def main():
    global _policy
    try:
        _policy = json.loads(os.environ.get("BERTH_EGRESS_POLICY", '{"mode": "allowlist", "allowed_hosts": []}'))
    except ValueError:
        _policy = {"mode": "allowlist", "allowed_hosts": []}
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", LISTEN_PORT))
    server.listen(128)
    threading.Thread(target=watch_policy, daemon=True).start()
    log({"event": "ready", "port": LISTEN_PORT, "policy": _policy})
    while True:
        client, peer = server.accept()
        threading.Thread(target=handle, args=(client, peer), daemon=True).start()


if __name__ == "__main__":
    main()
`;
