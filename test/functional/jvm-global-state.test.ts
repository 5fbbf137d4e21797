/**
 * The fast JVM path's warm runner restores JVM-global state before each sample: a sample that
 * changes the default Locale, TimeZone or a System property must not change later samples'
 * verdicts (each would pass in a fresh `java`, as on the reference path). Needs a JDK 17+.
 */
import { describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import type { JvmSample } from '../../src/functional/jvm/jvm-types.ts';
import { findJdk } from '../../src/functional/jvm/toolchain.ts';

const jdk = await findJdk().then(
  () => true,
  (err: Error) => {
    console.warn(`skipping JVM tests: ${err.message}`);
    return false;
  },
);

const java = (key: string, body: string, statics = ''): JvmSample => ({
  key,
  language: 'java',
  prompt: `import java.util.*;\nclass Sol {\n${statics}\n    public static boolean ok() {\n`,
  completion: `${body}\n    }\n}`,
  test: '\nclass Main {\n    public static void main(String[] args) throws Exception {\n        if (!Sol.ok()) throw new Exception("wrong");\n    }\n}\n',
});

describe.skipIf(!jdk)('JVM-global state does not leak between samples of one runner', () => {
  it('Locale, TimeZone, System properties and the uncaught-exception handler set by one sample are reset', async () => {
    const poison = java(
      'poison',
      '        return true;',
      '    static { Locale.setDefault(new Locale("tr", "TR")); TimeZone.setDefault(TimeZone.getTimeZone("Asia/Tokyo")); System.setProperty("berth.poison", "1"); Thread.setDefaultUncaughtExceptionHandler((t, e) -> {}); System.setIn(new java.io.ByteArrayInputStream("x".getBytes())); }',
    );
    const samples = [
      poison,
      java('upper', '        return "title".toUpperCase().equals("TITLE");'),
      java('format', '        return String.format("%.1f", 1.5).equals("1.5");'),
      java('timezone', '        return !TimeZone.getDefault().getID().equals("Asia/Tokyo");'),
      java('property', '        return System.getProperty("berth.poison") == null;'),
      java('handler', '        return Thread.getDefaultUncaughtExceptionHandler() == null;'),
      java('stdin', '        try { return System.in.read() == -1; } catch (Exception e) { return false; }'),
    ];
    const verdicts = await runFast(samples, { timeoutSeconds: 10, workers: 1 });
    expect(verdicts.map((v) => `${v.key}: ${v.status}`)).toEqual(samples.map((s) => `${s.key}: passed`));
  }, 300_000);
});
