import { describe, expect, it } from 'vitest';
import { splitDiagnostics } from './diagnostics.ts';

describe('splitDiagnostics', () => {
  it('attributes kotlinc messages (with their source and caret lines) to files', () => {
    // Format of kotlinc 2.4 (seen on MBKP/91's example sample).
    const text = [
      "b0/src/s25/Main.kt:13:23: error: 'fun String.toLowerCase(): String' is deprecated. Use lowercase() instead.",
      '    val str2 = subStr.toLowerCase()',
      '                      ^^^^^^^^^^^',
      "b0/src/s3/Main.kt:4:9: warning: variable 'x' is never used.",
      '    val x = 1',
      '        ^',
      '',
    ].join('\n');
    const files = ['b0/src/s3/Main.kt', 'b0/src/s25/Main.kt', 'b0/src/s4/Main.kt'];
    const split = splitDiagnostics(text, files);
    expect([...split.filesWithErrors]).toEqual(['b0/src/s25/Main.kt']);
    expect(split.byFile.get('b0/src/s25/Main.kt')).toContain('^^^^^^^^^^^');
    expect(split.byFile.get('b0/src/s3/Main.kt')).toContain('never used');
    expect(split.byFile.has('b0/src/s4/Main.kt')).toBe(false);
    expect(split.unattributedErrors).toBe('');
  });

  it('attributes javac messages and ignores the error count line', () => {
    const text = [
      'b1/src/s9/main.java:5: error: cannot find symbol',
      '        return foo(x);',
      '               ^',
      '  symbol:   method foo(int)',
      '1 error',
      '',
    ].join('\n');
    const split = splitDiagnostics(text, ['b1/src/s9/main.java', 'b1/src/s10/main.java']);
    expect([...split.filesWithErrors]).toEqual(['b1/src/s9/main.java']);
    expect(split.byFile.get('b1/src/s9/main.java')).toContain('symbol:   method foo(int)');
    expect(split.byFile.get('b1/src/s9/main.java')).not.toContain('1 error');
  });

  it('keeps errors that name no file apart, so the caller bisects', () => {
    const split = splitDiagnostics('exception: java.lang.IllegalStateException: boom\n\tat x.y\n', [
      'a/Main.kt',
    ]);
    expect(split.filesWithErrors.size).toBe(0);
    expect(split.unattributedErrors).toContain('IllegalStateException');
  });
});
