/**
 * `berth view [JOBS_DIR] [--port N]`: the live viewer (src/view/server.ts) on 127.0.0.1.
 * Without --port it takes the first free port of 8080-8089, as `harbor view` does.
 */
import type { Command } from 'commander';
import { UsageError } from '../../errors.ts';
import type { RegisterCommand } from './index.ts';

export const registerView: RegisterCommand = (program: Command) => {
  program
    .command('view')
    .description(
      "Serve the jobs of a folder on 127.0.0.1: every job's report, live while it runs; comparisons and the leaderboard.",
    )
    .argument('[jobs-dir]', 'folder of job folders', 'jobs')
    .option('--port <n>', 'port (default: the first free one of 8080-8089; 0 for any)')
    .option('--host <address>', 'loopback address to listen on', '127.0.0.1')
    .action(async (jobsDir: string, options: { port?: string; host: string }) => {
      const { startViewer } = await import('../../view/server.ts');
      const { stat } = await import('node:fs/promises');
      const folder = await stat(jobsDir).catch(() => undefined);
      if (!folder?.isDirectory())
        throw new UsageError(`${jobsDir}: no such folder of jobs (give the --jobs-dir of berth run)`);
      if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(options.host))
        throw new UsageError(
          `--host must be a loopback address (127.x.x.x, ::1, localhost): the viewer serves job files to anyone who reaches it`,
        );
      if (options.port !== undefined && (!/^\d+$/.test(options.port) || Number(options.port) > 65535))
        throw new UsageError(`--port expects a port number, got ${JSON.stringify(options.port)}`);
      const ports =
        options.port !== undefined
          ? [Number(options.port)]
          : [8080, 8081, 8082, 8083, 8084, 8085, 8086, 8087, 8088, 8089];
      let viewer: Awaited<ReturnType<typeof startViewer>> | undefined;
      for (const port of ports) {
        try {
          viewer = await startViewer({ jobsDir, port, host: options.host });
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        }
      }
      if (!viewer)
        throw new UsageError(
          `ports ${ports.join(', ')} are in use; choose one with --port N (0 for any free port)`,
        );
      process.stdout.write(`berth view: ${viewer.url} (jobs in ${jobsDir}; Ctrl-C to stop)\n`);
      const running = viewer;
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void running.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
};
