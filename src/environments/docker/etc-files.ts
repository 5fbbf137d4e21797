/**
 * berth's own `/etc/hosts`, `/etc/resolv.conf` and `/etc/hostname` for a container.
 *
 * The Docker engine binds these three files into every container from its own folder
 * (`/var/lib/docker/containers/<id>/`), writable by the container's root and outside the
 * container's disk limit: an agent wrote 60 MB into each, on the host's disk (breaker9). When a
 * container's config binds one of these paths itself, the engine drops its own bind (and still
 * keeps its own files, which no process of the container can reach). So berth binds, read-only,
 * its own copies, kept in a folder of its own on the host (`<tmp>/berth-etc-<hex>`, root's, 0700,
 * recorded for `berth clean`): a write in the container fails with EROFS.
 *
 * berth writes what the engine would have written (Docker 20.10, libnetwork), and writes it
 * again after every change of the container's networks (a network switch, a restart), as the
 * engine rewrites its own:
 * - `hostname`: the container's hostname and a newline;
 * - `hosts`: the localhost and ip6 lines, then `<address>\t<hostname>` for each address the
 *   container has on a network;
 * - `resolv.conf`: on a user-defined network (the trial's sidecar network, the egress gateway's
 *   internal network) the engine's own DNS server, `nameserver 127.0.0.11`, with the host's
 *   `search` and `options` and `ndots:0`; on the default bridge only, or on no network, the
 *   host's resolv.conf without its localhost name servers (Google's two when none is left).
 */
import { constants } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { ownedTempDir } from '../../util/leftovers.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW } = constants;

/** The three files, by their name in `/etc`. */
const ETC_FILE_NAMES = ['hosts', 'resolv.conf', 'hostname'] as const;

/** The engine's own DNS server on user-defined networks. */
const ENGINE_DNS = '127.0.0.11';

/** The engine's lines every `/etc/hosts` starts with (libnetwork etchosts `defaultContent`). */
const DEFAULT_HOSTS: ReadonlyArray<[string, string]> = [
  ['127.0.0.1', 'localhost'],
  ['::1', 'localhost ip6-localhost ip6-loopback'],
  ['fe00::0', 'ip6-localnet'],
  ['ff00::0', 'ip6-mcastprefix'],
  ['ff02::1', 'ip6-allnodes'],
  ['ff02::2', 'ip6-allrouters'],
];

/** Networks whose containers do not get the engine's DNS server. */
const NO_RESOLVER = new Set(['bridge', 'host', 'none']);

/** What the three files are made of: the container's names and its addresses on its networks. */
interface EtcState {
  hostname: string;
  domainname?: string;
  /** The networks the container is on, in the engine's order, with its IPv4 address on each. */
  networks: Array<{ name: string; address: string }>;
}

/** `/etc/hostname` as the engine writes it. */
function hostnameFile(state: EtcState): string {
  return `${state.hostname}\n`;
}

/** `/etc/hosts` as the engine writes it (libnetwork `buildHostsFile` and `updateHostsFile`). */
function hostsFile(state: EtcState): string {
  const fqdn = state.domainname ? `${state.hostname}.${state.domainname}` : state.hostname;
  const dot = fqdn.indexOf('.');
  const names = dot > 0 ? `${fqdn} ${fqdn.slice(0, dot)}` : fqdn;
  const lines = DEFAULT_HOSTS.map(([ip, hosts]) => `${ip}\t${hosts}`);
  for (const n of state.networks) if (n.address) lines.push(`${n.address}\t${names}`);
  return `${lines.join('\n')}\n`;
}

/** The host's resolv.conf as the engine reads it: systemd-resolved's real one behind its stub. */
async function hostResolvConf(): Promise<string> {
  const text = await readFile('/etc/resolv.conf', 'utf8').catch(() => '');
  const servers = nameservers(text);
  if (servers.length === 1 && servers[0] === '127.0.0.53')
    return readFile('/run/systemd/resolve/resolv.conf', 'utf8').catch(() => text);
  return text;
}

function nameservers(text: string): string[] {
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1] as string);
}

/** The last `search` (or `domain`) line's domains, as libnetwork `GetSearchDomains`. */
function searchDomains(text: string): string[] {
  let out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:search|domain)\s+(.*)$/gm)) out = (m[1] ?? '').trim().split(/\s+/);
  return out.filter(Boolean);
}

/** The last `options` line's options, as libnetwork `GetOptions`. */
function resolverOptions(text: string): string[] {
  let out: string[] = [];
  for (const m of text.matchAll(/^\s*options\s+(.*)$/gm)) out = (m[1] ?? '').trim().split(/\s+/);
  return out.filter(Boolean);
}

/**
 * The host's resolv.conf without localhost and IPv6 name servers (the engine's
 * `FilterResolvDNS`, IPv6 off), Google's two added when none is left.
 */
function filteredResolvConf(host: string): string {
  let text = host.replace(/^nameserver\s+((127\.([0-9]{1,3}\.){2}[0-9]{1,3})|(::1)$)\s*\n*/gm, '');
  text = text.replace(/^nameserver\s+([0-9A-Fa-f]{0,4}:){2,7}([0-9A-Fa-f]{0,4})(%\w+)?\s*\n*/gm, '');
  if (nameservers(text).length === 0) text += '\nnameserver 8.8.8.8\nnameserver 8.8.4.4';
  return text;
}

/** `/etc/resolv.conf` as the engine writes it for a container on `state`'s networks. */
function resolvConfFile(state: EtcState, host: string): string {
  const filtered = filteredResolvConf(host);
  if (!state.networks.some((n) => !NO_RESOLVER.has(n.name))) return filtered;
  // libnetwork `rebuildDNS`: the embedded server, the host's search and options, ndots:0 unless set.
  const search = searchDomains(filtered);
  const options = resolverOptions(filtered);
  if (!options.some((o) => /^ndots:\d+$/.test(o))) options.push('ndots:0');
  let out = '';
  if (search.length > 0 && search.join(' ').trim() !== '.') out += `search ${search.join(' ')}\n`;
  out += `nameserver ${ENGINE_DNS}\n`;
  out += `options ${options.join(' ')}\n`;
  return out;
}

/** The state of a container as the engine reports it (`inspect`). */
function etcStateOf(info: Docker.ContainerInspectInfo): EtcState {
  const networks = Object.entries(info.NetworkSettings?.Networks ?? {}).map(([name, n]) => ({
    name,
    address: n?.IPAddress ?? '',
  }));
  return {
    hostname: info.Config?.Hostname || info.Id.slice(0, 12),
    ...(info.Config?.Domainname ? { domainname: info.Config.Domainname } : {}),
    networks,
  };
}

/** Writes `text` over the file `path` in place (a bind mount holds its inode), never through a link. */
async function rewrite(path: string, text: string, create = false): Promise<void> {
  const handle = await open(path, O_WRONLY | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : O_TRUNC), 0o644);
  try {
    await handle.writeFile(text);
    if (create) await handle.chmod(0o644);
  } finally {
    await handle.close();
  }
}

/** One container's three files on the host, bound read-only at their `/etc` paths. */
export class ContainerEtcFiles {
  private removed = false;
  private hostResolv: Promise<string> | undefined;

  private constructor(
    /** berth's folder of the three files (root's, 0700). */
    readonly dir: string,
  ) {}

  /** Makes the folder and the three (empty) files. */
  static async create(): Promise<ContainerEtcFiles> {
    const dir = await ownedTempDir('berth-etc-');
    try {
      for (const name of ETC_FILE_NAMES) await rewrite(join(dir, name), '', true);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return new ContainerEtcFiles(dir);
  }

  /** The engine's `Binds` entries: each file read-only at its `/etc` path. */
  binds(): string[] {
    return ETC_FILE_NAMES.map((name) => `${join(this.dir, name)}:/etc/${name}:ro`);
  }

  /** Writes the three files for `state` (the host's resolv.conf read once). */
  async write(state: EtcState): Promise<void> {
    if (this.removed) return;
    this.hostResolv ??= hostResolvConf();
    const host = await this.hostResolv;
    await rewrite(join(this.dir, 'hostname'), hostnameFile(state));
    await rewrite(join(this.dir, 'hosts'), hostsFile(state));
    await rewrite(join(this.dir, 'resolv.conf'), resolvConfFile(state, host));
  }

  /** Writes the three files for the container as it is now (after a start or a network change). */
  async refresh(container: Docker.Container): Promise<void> {
    if (this.removed) return;
    await this.write(etcStateOf(await container.inspect()));
  }

  /** Removes the folder (after the container is gone). Safe twice. */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await rm(this.dir, { recursive: true, force: true });
  }
}
