/**
 * The actions of `berth dataset build|validate|controls`: read input, call the
 * library, print a table (or JSON), return the exit code. Exit 2 when a row is
 * refused or fails validation (bad input), 0 otherwise.
 */
import { resolve } from 'node:path';
import { InputError } from '../errors.ts';
import { writeJsonAtomic } from '../util/atomic-write.ts';
import { type BuildReport, buildInstance, findSpecs, loadSpec } from './build.ts';
import { makeControls, writeControls } from './controls.ts';
import { readRows, writeRows } from './rows.ts';
import { type RowValidation, validateRow } from './validate.ts';

const out = (line = '') => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

export async function runBuildCommand(
  specs: string[],
  options: { output: string; repos?: string; report?: string; json?: boolean },
): Promise<number> {
  const paths = await findSpecs(specs);
  const reposDir = options.repos ? resolve(options.repos) : undefined;
  const rows: Record<string, unknown>[] = [];
  const reports: BuildReport[] = [];
  const started = performance.now();
  const specsLoaded = [];
  for (const path of paths) specsLoaded.push(await loadSpec(path, reposDir));
  const idWidth = Math.max(8, ...specsLoaded.map((spec) => spec.instance_id.length));
  if (!options.json) out(pad(['instance', 'F2P', 'P2P', 'tests s', 'result'], [idWidth, 5, 5, 8]));
  for (const spec of specsLoaded) {
    const { row, report } = await buildInstance(spec);
    reports.push(report);
    if (row) rows.push(row);
    if (!options.json) {
      const verdict = report.refused.length ? `REFUSED: ${report.refused.join('; ')}` : 'ok';
      out(
        pad(
          [
            spec.instance_id,
            String(report.failToPass.length),
            String(report.passToPass.length),
            report.testSeconds.toFixed(1),
            verdict,
          ],
          [idWidth, 5, 5, 8],
        ),
      );
    }
  }
  await writeRows(options.output, rows);
  if (options.report) await writeJsonAtomic(options.report, reports);
  const refused = reports.filter((report) => report.refused.length > 0).length;
  if (options.json)
    out(
      JSON.stringify({ output: options.output, written: rows.length, refused, instances: reports }, null, 2),
    );
  else
    out(
      `wrote ${rows.length} row(s) to ${options.output}, refused ${refused}, in ${((performance.now() - started) / 1000).toFixed(1)}s`,
    );
  return refused > 0 ? 2 : 0;
}

export async function runValidateCommand(
  file: string,
  options: { repos?: string; run: boolean; json?: boolean },
): Promise<number> {
  const rows = await readRows(file);
  if (rows.length === 0) throw new InputError({ file }, 'the dataset holds no row; nothing to validate');
  const results: RowValidation[] = [];
  const idWidth = Math.max(8, ...rows.map((at) => String(at.row.instance_id).length));
  if (!options.json)
    out(
      pad(
        ['instance', 'ok', 'F2P', 'P2P', 'prompt tok', 'patch tok', 'gold', 'empty', 'problems'],
        [idWidth, 4, 5, 5, 11, 10, 13, 13],
      ),
    );
  for (const at of rows) {
    const result = await validateRow(at, {
      reposDir: options.repos ? resolve(options.repos) : undefined,
      run: options.run,
    });
    results.push(result);
    if (!options.json) {
      const problems = result.checks
        .filter((check) => !check.ok)
        .map((check) => `${check.name}: ${check.message ?? 'failed'}`);
      const skipped = result.checks.filter((check) => check.skipped).map((check) => check.name);
      const note = [
        ...problems,
        ...(result.notChecked ? [`not checked: ${result.notChecked}`] : []),
        ...(skipped.length ? [`skipped ${skipped.join(', ')}`] : []),
      ].join('; ');
      const cell = (value?: { f2p: number; p2p: number }) =>
        value ? `${value.f2p}/${result.failToPass} ${value.p2p}/${result.passToPass}` : '-';
      out(
        pad(
          [
            result.instance_id,
            result.ok ? 'yes' : result.notChecked && problemsOf(result) === 0 ? '-' : 'NO',
            String(result.failToPass),
            String(result.passToPass),
            `~${result.promptTokens}`,
            `~${result.patchTokens}`,
            cell(result.gold),
            cell(result.empty),
            note,
          ],
          [idWidth, 4, 5, 5, 11, 10, 13, 13],
        ),
      );
    }
  }
  const valid = results.filter((result) => result.ok).length;
  const bad = results.filter((result) => problemsOf(result) > 0).length;
  const notChecked = results.filter((result) => !result.ok && problemsOf(result) === 0).length;
  const tokens = results.reduce((sum, result) => sum + result.promptTokens, 0);
  if (options.json)
    out(
      JSON.stringify(
        {
          file,
          total: results.length,
          valid,
          invalid: bad,
          not_checked: notChecked,
          promptTokens: tokens,
          rows: results,
        },
        null,
        2,
      ),
    );
  else {
    // Reasons without the repository name, each with how many rows it stopped.
    const counts = new Map<string, number>();
    for (const result of results)
      for (const reason of result.notChecked?.split('; ') ?? []) {
        const key = reason.replace(/ of \S+$/, '');
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    const reasons = [...counts].map(([reason, n]) => `${n}x ${reason}`);
    out(
      `${valid}/${results.length} valid` +
        (bad ? `, ${bad} invalid` : '') +
        (notChecked
          ? `, ${notChecked} not checked (${reasons.slice(0, 4).join('; ')}${reasons.length > 4 ? '; ...' : ''})`
          : '') +
        `; prompt tokens ~${tokens} in total (characters / 4)`,
    );
  }
  return bad > 0 || notChecked > 0 ? 2 : 0;
}

export async function runControlsCommand(file: string, options: { output: string }): Promise<number> {
  const rows = await readRows(file);
  const controls = makeControls(rows);
  const paths = await writeControls(controls, options.output);
  for (const [name, path] of Object.entries(paths)) {
    out(`${name}: ${controls.predictions[name as keyof typeof paths].length} prediction(s) -> ${path}`);
  }
  for (const skip of controls.skipped)
    err(`note: no ${skip.control} prediction for ${skip.instance_id}: ${skip.reason}`);
  return 0;
}

/** How many checks ran and failed. */
function problemsOf(result: RowValidation): number {
  return result.checks.filter((check) => !check.ok).length;
}

function pad(cells: string[], widths: number[]): string {
  return cells
    .map((cell, index) => (index < widths.length ? cell.padEnd(widths[index] as number) : cell))
    .join(' ')
    .trimEnd();
}
