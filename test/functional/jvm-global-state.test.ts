/**
 * No sample's changes reach another sample on the fast JVM path: a sample that changes the default
 * Locale, TimeZone, a System property, a security property, a static field of a JDK class, or
 * leaves a file in its temporary folder or a thread running must not change later samples'
 * verdicts (each would pass in a fresh `java`, as on the reference path). Each sample runs in a JVM
 * of its own. Needs a JDK 17+.
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

  it('what no warm runner restored (a security property, a JDK static, a file in the temp folder, a thread) does not reach the next sample', async () => {
    const poison = java(
      'poison',
      '        return true;',
      `    static {
        java.security.Security.setProperty("berth.poison", "1");
        java.net.URLConnection.setDefaultAllowUserInteraction(true);
        try { new java.io.File(System.getProperty("java.io.tmpdir"), "berth-poison").createNewFile(); } catch (Exception e) { throw new RuntimeException(e); }
    }`,
    );
    const samples = [
      poison,
      java('security', '        return java.security.Security.getProperty("berth.poison") == null;'),
      java('jdk-static', '        return !java.net.URLConnection.getDefaultAllowUserInteraction();'),
      java(
        'tmp-file',
        '        return !new java.io.File(System.getProperty("java.io.tmpdir"), "berth-poison").exists();',
      ),
      java(
        'thread-poison',
        '        Thread t = new Thread(() -> { while (true) { System.setProperty("berth.thread", "1"); try { Thread.sleep(1); } catch (Exception e) { } } });\n        t.setDaemon(true);\n        t.start();\n        return true;',
      ),
      java(
        'thread',
        '        try { Thread.sleep(50); } catch (Exception e) { }\n        return System.getProperty("berth.thread") == null;',
      ),
    ];
    // One worker: every sample would go through the same runner slot, one after another.
    const verdicts = await runFast(samples, { timeoutSeconds: 10, workers: 1 });
    expect(verdicts.map((v) => `${v.key}: ${v.status} ${v.message}`.trim())).toEqual(
      samples.map((s) => `${s.key}: passed`),
    );
  }, 300_000);
});
