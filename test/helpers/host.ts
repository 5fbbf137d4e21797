/**
 * What the host has left, for tests that run bounded bombs: free pids, memory and disk before
 * and after, and what a berth process may have left behind (processes in its cgroups, cgroup
 * folders, tmpfs mounts, probe folders).
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { cgroupSupport } from '../../src/sandbox/cgroup.ts';

/** Free pids (pid_max minus live processes), MemAvailable in bytes, free bytes where `dir` is. */
export function hostFree(dir = tmpdir()) {
  const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  const processes = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
  const mem = Number(/MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
  const s = statfsSync(dir);
  return { pidMax, pids: pidMax - processes, memoryBytes: mem, diskBytes: s.bavail * s.bsize };
}

/** Live (not zombie) processes whose file under /proc/<pid>/ (`cmdline`, `cgroup`) holds `token`. */
export function processesWith(token: string, file: 'cmdline' | 'cgroup' = 'cmdline'): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/^\d+ \(.*\) [ZX] /.test(stat)) continue;
      if (readFileSync(`/proc/${name}/${file}`, 'utf8').includes(token)) found.push(Number(name));
    } catch {}
  }
  return found;
}

/**
 * What the berth process `pid` left: its cgroup folders (`berth-<pid>-*`), processes still in
 * them, its tmpfs mounts, its probe folders under the temp folder.
 */
export function leftoversOf(pid: number): string[] {
  const out: string[] = [];
  const tag = `berth-${pid}-`;
  for (const dir of new Set(Object.values(cgroupSupport().dirs)))
    for (const name of readdirSync(dir)) if (name.startsWith(tag)) out.push(`cgroup ${dir}/${name}`);
  for (const p of processesWith(`/${tag}`, 'cgroup')) out.push(`process ${p} in a cgroup of berth ${pid}`);
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n'))
    if (line.includes(` - tmpfs ${tag}`)) out.push(`mount ${line}`);
  for (const name of readdirSync(tmpdir()))
    if (name.startsWith(`berth-probe-p${pid}-`)) out.push(`folder ${tmpdir()}/${name}`);
  return out;
}
