import { describe, expect, it } from 'vitest';
import { closestName, editDistance } from '../../src/util/did-you-mean.ts';
import { berth, sample } from '../helpers/jobs.ts';

describe('did you mean', () => {
  it('closestName: a typo of a known name, nothing for a name far from all', () => {
    expect(editDistance('oracel', 'oracle')).toBe(2);
    expect(closestName('oracel', ['nop', 'oracle', 'predictions'])).toBe('oracle');
    expect(closestName('ORACLE', ['oracle'])).toBe('oracle');
    expect(closestName('swebnech', ['default', 'swebench'])).toBe('swebench');
    expect(closestName('retry', ['retries', 'interval'])).toBe('retries');
    expect(closestName('kubernetes', ['docker', 'local'])).toBeUndefined();
    // Two letters are two edits from any two letters: no hint for them.
    expect(closestName('xy', ['ab', 'nop'])).toBeUndefined();
  });

  it('berth run -a oracel: exit 2, did you mean "oracle", and nothing run', () => {
    const run = berth(['run', '-p', sample, '-a', 'oracel', '--jobs-dir', '/nonexistent/berth-ux']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown agent "oracel" (did you mean "oracle"?); known agents: ');
  });

  it('berth run --rules swebnech and -e dokcer: the list and a did you mean', () => {
    const rules = berth(['run', '-p', sample, '-a', 'oracle', '--rules', 'swebnech']);
    expect(rules.code).toBe(2);
    expect(rules.stderr).toContain('Allowed choices are default, swebench, harbor. Did you mean "swebench"?');
    const env = berth([
      'run',
      '-p',
      sample,
      '-a',
      'oracle',
      '-e',
      'dokcer',
      '--jobs-dir',
      '/nonexistent/berth-ux',
    ]);
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('-e/--env expects docker or local, got "dokcer" (did you mean "docker"?)');
  });

  it('berth eval --sandbox bwarp, berth multilingual run -a orcale, berth grade --rules swebnch', () => {
    const sandbox = berth(['eval', '--samples', 'x.jsonl', '--sandbox', 'bwarp']);
    expect(sandbox.code).toBe(2);
    expect(sandbox.stderr).toContain('Did you mean "bwrap"?');
    const multilingual = berth(['multilingual', 'run', '-p', 'examples/multilingual', '-a', 'orcale']);
    expect(multilingual.code).toBe(2);
    expect(multilingual.stderr).toContain(
      'unknown agent "orcale" (did you mean "oracle"?): use oracle, nop or predictions',
    );
    const by = berth(['report', '.', '--by', 'langauge']);
    expect(by.code).toBe(2);
    expect(by.stderr).toContain('--by does not know "langauge" (did you mean "language"?); the keys are ');
    const grade = berth(['grade', '-e', 'row.json', '-r', 'log.txt', '--rules', 'swebnch']);
    expect(grade.code).toBe(2);
    expect(grade.stderr).toContain('unknown rules "swebnch" (did you mean "swebench"?); use one of ');
  });
});
