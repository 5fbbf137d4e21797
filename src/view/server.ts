/**
 * `berth view [JOBS_DIR]`: a local web server on 127.0.0.1 that lists the jobs of a folder and
 * serves the same pages as the HTML report, updated live while a job runs (server-sent events
 * when the job's result.json, events.jsonl or trial folders change). Reads job folders of any
 * berth version and Harbor's. Read-only: it never writes into a job folder.
 *
 * Routes (GET and HEAD only):
 * - `/`, `/jobs/<job>/`, `/compare?jobs=A,B[,...][&seed=N]`, `/leaderboard`: pages;
 * - `/api/jobs`, `/api/jobs/<job>`, `/api/jobs/<job>/trials/<trial>`, `/api/compare`,
 *   `/api/leaderboard`: JSON;
 * - `/api/stream`, `/api/jobs/<job>/stream`: server-sent `change` events;
 * - `/files/<job>/<trial>/<path>`: a file of a trial, as plain text (no symbolic link followed).
 *
 * Requests whose Host is not this server's loopback address are refused (DNS rebinding).
 */
import { constants, createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { BerthError } from '../errors.ts';
import { renderPage } from '../reporters/html/page.ts';
import { jobPageData } from '../reporters/html/report.ts';
import { compareJobs } from '../results/compare.ts';
import { buildLeaderboard } from '../results/leaderboard.ts';
import type { JobRecord } from '../results/model.ts';
import { listJobDirs, readJob } from '../results/read-job.ts';
import { isInsidePath, statInside } from '../results/safe-read.ts';
import { rateOf } from '../results/summary.ts';
import { readTrialDetails, VIEWER_LIMITS } from '../results/trial-details.ts';

export interface ViewerOptions {
  jobsDir: string;
  /** Port to listen on; 0 for any free port. */
  port: number;
  /** Address to listen on: a loopback address (127.0.0.1 by default). */
  host?: string;
  /** Milliseconds between looks at a watched job's files (default 500). */
  pollMs?: number;
}

export interface Viewer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A job's change signature: sizes and times of the files that change as it runs. */
async function signature(dir: string): Promise<string> {
  const parts = await Promise.all(
    ['', 'result.json', 'events.jsonl', '.berth.lock'].map(async (file) => {
      const s = await stat(join(dir, file)).catch(() => undefined);
      return s ? `${s.size}:${s.mtimeMs}` : '-';
    }),
  );
  return parts.join('|');
}

/** Whether `name` is a plain folder name (one path segment). */
const plainName = (name: string) => isInsidePath(name) && !name.includes('/') && !name.startsWith('.');

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
) {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...extra,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

const json = (res: ServerResponse, value: unknown, status = 200) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Starts the viewer; resolves once it listens. */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const jobsDir = resolve(options.jobsDir);
  const host = options.host ?? '127.0.0.1';
  const pollMs = options.pollMs ?? 500;
  let port = 0;
  const allowedHosts = () =>
    new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`]);
  const streams = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  const jobDir = async (name: string): Promise<string> => {
    if (!plainName(name)) throw new HttpError(404, 'no such job');
    const entry = await statInside(jobsDir, name);
    if (!entry?.isDirectory) throw new HttpError(404, `no job ${name} in ${jobsDir}`);
    return join(jobsDir, name);
  };
  const readNamedJob = async (name: string): Promise<JobRecord> => readJob(await jobDir(name));

  /** Server-sent events: `change` whenever `watch()` gives a new value. */
  const stream = (req: IncomingMessage, res: ServerResponse, watch: () => Promise<string>) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    streams.add(res);
    let last: string | undefined;
    let busy = false;
    const look = async () => {
      if (busy) return;
      busy = true;
      try {
        const now = await watch();
        if (last !== undefined && now !== last)
          res.write(`event: change\ndata: ${JSON.stringify({ time: new Date().toISOString() })}\n\n`);
        last = now;
      } finally {
        busy = false;
      }
    };
    void look();
    const timer = setInterval(() => void look().catch(() => undefined), pollMs);
    timers.add(timer);
    req.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
      streams.delete(res);
    });
  };

  const jobsList = async () => {
    const names = await listJobDirs(jobsDir).catch(() => [] as string[]);
    const jobs = await Promise.all(
      names.map(async (name) => {
        try {
          const job = await readJob(join(jobsDir, name));
          return {
            name,
            running: job.running,
            agent: job.agent,
            model: job.model,
            dataset: job.dataset,
            planned: job.n_planned,
            finished: job.trials.filter((t) => ['resolved', 'failed', 'errored'].includes(t.outcome)).length,
            trials: job.trials.length,
            rate: rateOf(job.trials),
            started_at: job.started_at,
          };
        } catch (error) {
          return { name, error: (error as Error).message };
        }
      }),
    );
    return { jobs_dir: jobsDir, jobs };
  };

  const page = (
    res: ServerResponse,
    kind: 'job' | 'jobs' | 'compare' | 'leaderboard',
    title: string,
    job?: string,
  ) =>
    send(
      res,
      200,
      'text/html; charset=utf-8',
      renderPage({ title, kind, source: 'server', ...(job ? { job } : {}) }),
    );

  const serveFile = async (res: ServerResponse, job: string, trial: string, path: string) => {
    const dir = await jobDir(job);
    if (!plainName(trial) || !isInsidePath(path)) throw new HttpError(404, 'no such file');
    const relative = `${trial}/${path}`;
    const entry = await statInside(dir, relative);
    if (!entry?.isFile) throw new HttpError(404, 'no such file (or a link, which is not followed)');
    const handle = await open(
      join(dir, relative),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      throw new HttpError(404, 'not a regular file');
    }
    res.writeHead(200, {
      // Served as text, whatever it is: a job's files are data, never a page that runs.
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(info.size),
      'content-security-policy': "default-src 'none'; sandbox",
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    if (res.req.method === 'HEAD') {
      await handle.close();
      res.end();
      return;
    }
    createReadStream('', { fd: handle, autoClose: true }).pipe(res);
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'only GET and HEAD');
    if (!allowedHosts().has(req.headers.host ?? ''))
      throw new HttpError(421, 'this viewer answers only on its loopback address');
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const [first, second, third, fourth] = parts;
    if (parts.length === 0) return page(res, 'jobs', 'berth view');
    if (first === 'jobs' && second && parts.length === 2) {
      if (!url.pathname.endsWith('/')) {
        res.writeHead(301, { location: `/jobs/${encodeURIComponent(second)}/` });
        res.end();
        return;
      }
      await jobDir(second);
      return page(res, 'job', `berth: job ${second}`, second);
    }
    if (first === 'compare' && parts.length === 1) return page(res, 'compare', 'berth: comparison');
    if (first === 'leaderboard' && parts.length === 1) return page(res, 'leaderboard', 'berth: leaderboard');
    if (first === 'files' && second && third && parts.length >= 4)
      return serveFile(res, second, third, parts.slice(3).join('/'));
    if (first !== 'api') throw new HttpError(404, 'not found');
    if (second === 'jobs' && !third) return json(res, await jobsList());
    if (second === 'jobs' && third && !fourth) return json(res, jobPageData(await readNamedJob(third)));
    if (second === 'jobs' && third && fourth === 'stream') {
      const dir = await jobDir(third);
      return stream(req, res, () => signature(dir));
    }
    if (second === 'jobs' && third && fourth === 'trials' && parts[4] && parts.length === 5) {
      const details = await readTrialDetails(await jobDir(third), parts[4], VIEWER_LIMITS);
      if (!details) throw new HttpError(404, `no trial ${parts[4]} in job ${third}`);
      return json(res, details);
    }
    if (second === 'stream' && parts.length === 2)
      return stream(req, res, async () => {
        const names = await listJobDirs(jobsDir).catch(() => [] as string[]);
        const signatures = await Promise.all(names.map((name) => signature(join(jobsDir, name))));
        return names.map((name, i) => `${name}=${signatures[i]}`).join(';');
      });
    if (second === 'compare' && parts.length === 2) {
      const names = (url.searchParams.get('jobs') ?? '').split(',').filter(Boolean);
      if (names.length < 2) throw new HttpError(400, 'compare needs ?jobs=A,B (two or more job names)');
      const seedText = url.searchParams.get('seed') ?? '1';
      if (!/^\d+$/.test(seedText)) throw new HttpError(400, 'seed must be a whole number');
      const jobs = await Promise.all(names.map(readNamedJob));
      return json(res, compareJobs(jobs, { seed: Number(seedText) }));
    }
    if (second === 'leaderboard' && parts.length === 2) return json(res, await buildLeaderboard(jobsDir));
    throw new HttpError(404, 'not found');
  };

  const server: Server = createServer((req, res) => {
    route(req, res).catch((error: Error) => {
      // A folder that is not a job (InputError) is not found; anything else is a berth bug.
      const status = error instanceof HttpError ? error.status : BerthError.isInstance(error) ? 404 : 500;
      if (!res.headersSent) send(res, status, 'text/plain; charset=utf-8', `${error.message}\n`);
      else res.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, host, () => done());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const res of streams) res.end();
      await new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
    },
  };
}
