import { describe, expect, it } from 'vitest';
import { describeEnv } from '../agents/command.ts';
import { envForFile } from '../trials/file-format.ts';
import { looksSecret, withoutSecrets } from './secrets.ts';

// Credentials the narrower lists berth had (`KEY|TOKEN|SECRET|PASSWORD` for records) let through:
// by name, and by a value alone.
const env = {
  OPENAI_API_KEY: 'sk-abcdefghijkl',
  DB_PASS: 'hunter2',
  MYSQL_PWD: 'hunter2',
  GITHUB_PAT: 'x',
  CI_JOB_JWT: 'x',
  SENTRY_DSN: 'https://k@sentry.example/1',
  DATABASE_URL: 'postgres://app:pw@db.example/x',
  MIRROR: 'hf_abcdefghijkl',
  LANG: 'C.UTF-8',
  GOLD_KIT: '/srv/kit',
};
const secret = Object.keys(env).filter((name) => name !== 'LANG' && name !== 'GOLD_KIT');

describe('one secret filter (src/sandbox/secrets.ts) behind every use', () => {
  it('the sandbox environment drops them', () => {
    expect(Object.keys(withoutSecrets(env)).sort()).toEqual(['GOLD_KIT', 'LANG']);
    for (const name of secret) expect(looksSecret(name, env[name as keyof typeof env]), name).toBe(true);
  });

  it("an agent's command.txt shows their values as ***", () => {
    const lines = describeEnv(env);
    for (const name of secret) expect(lines, name).toContain(`${name}=***`);
    expect(lines).toContain('LANG=C.UTF-8');
    expect(lines.join('\n')).not.toMatch(/hunter2|sk-abc|pw@|hf_abc/);
  });

  it('a config file records their values as ***', () => {
    const recorded = envForFile(env);
    for (const name of secret) expect(recorded[name], name).toBe('***');
    expect(recorded.GOLD_KIT).toBe('/srv/kit');
  });
});
