/**
 * The few Docker API helpers the egress module needs (exec with an exit code,
 * demultiplexed logs); the sidecars' logs (compose.ts) are demultiplexed here too. The Docker
 * environment (src/environments/docker/container.ts) has the full-featured exec.
 */
import type Dockerode from 'dockerode';

/**
 * Splits Docker's multiplexed stream format (8-byte frame headers: stream type,
 * 3 zero bytes, big-endian length) into stdout and stderr text, and `output`: both in the
 * order they were written. A buffer that does not look framed (TTY containers) is returned
 * as stdout.
 */
export function demuxDockerStream(buffer: Buffer): { stdout: string; stderr: string; output: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const all: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const type = buffer[offset];
    if (
      (type !== 0 && type !== 1 && type !== 2) ||
      buffer[offset + 1] !== 0 ||
      buffer[offset + 2] !== 0 ||
      buffer[offset + 3] !== 0
    ) {
      const text = buffer.toString('utf8');
      return { stdout: text, stderr: '', output: text };
    }
    const length = buffer.readUInt32BE(offset + 4);
    const frame = buffer.subarray(offset + 8, offset + 8 + length);
    (type === 2 ? err : out).push(frame);
    all.push(frame);
    offset += 8 + length;
  }
  return {
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    output: Buffer.concat(all).toString('utf8'),
  };
}

/** Runs `cmd` (argv) in a running container and waits for it; output is stdout and stderr interleaved. */
export async function execIn(
  container: Dockerode.Container,
  cmd: string[],
  options: { user?: string; env?: string[]; timeoutSec?: number } = {},
): Promise<{ exitCode: number | null; output: string }> {
  const exec = await container.exec({
    Cmd: cmd,
    AttachStdout: true,
    AttachStderr: true,
    ...(options.user ? { User: options.user } : {}),
    ...(options.env ? { Env: options.env } : {}),
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        stream.destroy();
        reject(new Error(`docker exec timed out after ${options.timeoutSec}s: ${cmd.join(' ')}`));
      },
      (options.timeoutSec ?? 60) * 1000,
    );
    stream.on('end', () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    stream.on('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  const info = await exec.inspect();
  const { stdout, stderr } = demuxDockerStream(Buffer.concat(chunks));
  return { exitCode: info.ExitCode ?? null, output: stdout + stderr };
}

/** The container's logs (stdout and stderr) as text. */
export async function containerLogs(container: Dockerode.Container): Promise<string> {
  const raw = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
  const { stdout, stderr } = demuxDockerStream(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
  return stdout + stderr;
}
