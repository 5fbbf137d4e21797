/**
 * The relay programs the gateway puts beside its Unix socket (see access.ts): each listens
 * on HOST:PORT inside an environment and passes every connection to the socket. One for
 * Node (the installed agents bring a Node runtime), one for Python 3 (most task images);
 * kept as text so they ship inside the compiled package.
 */

/** relay.cjs: `node relay.cjs HOST:PORT SOCKET [READY_FILE]`. */
export const RELAY_NODE_SOURCE = `// berth's model gateway relay (Node): listens on HOST:PORT inside an environment and passes
// every connection to the gateway's Unix socket, so an agent in an environment without a
// network (a container on no network at all, a sandbox with its own empty network
// namespace) reaches the gateway and nothing else. Usage: node relay.cjs HOST:PORT SOCKET [READY_FILE]
'use strict';
const fs = require('node:fs');
const net = require('node:net');

const [listen, socketPath, readyFile] = process.argv.slice(2);
const colon = listen.lastIndexOf(':');
const host = listen.slice(0, colon);
const port = Number(listen.slice(colon + 1));

const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end);
  upstream.on('error', end);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (error) => {
  process.stderr.write(\`berth relay: \${error.message}\\n\`);
  process.exit(1);
});
server.listen(port, host, () => {
  if (readyFile) fs.writeFileSync(readyFile, String(process.pid));
});
`;

/** relay.py: `python3 relay.py HOST:PORT SOCKET [READY_FILE]`. */
export const RELAY_PYTHON_SOURCE = `# berth's model gateway relay (Python 3, for environments without Node): listens on HOST:PORT
# inside an environment and passes every connection to the gateway's Unix socket.
# Usage: python3 relay.py HOST:PORT SOCKET [READY_FILE]
import os
import socket
import sys
import threading

listen, path = sys.argv[1], sys.argv[2]
ready = sys.argv[3] if len(sys.argv) > 3 else None
host, port = listen.rsplit(":", 1)


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((host, int(port)))
server.listen(128)
if ready:
    with open(ready, "w") as f:
        f.write(str(os.getpid()))
while True:
    client, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        continue
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
`;
