import { describe, expect, it } from 'vitest';
import { testInfrastructurePaths } from './test-infrastructure.ts';

const diff = (path: string, body = '+x\n', header = '') =>
  `diff --git a/${path} b/${path}\n${header}--- a/${path}\n+++ b/${path}\n@@ -0,0 +1 @@\n${body}`;
const created = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`;
const deleted = (path: string) =>
  `diff --git a/${path} b/${path}\ndeleted file mode 100644\n--- a/${path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n`;

describe('testInfrastructurePaths', () => {
  it('names the runner files a patch creates or changes, sorted', () => {
    const patch = [
      diff('src/durations.py'),
      created('conftest.py'),
      diff('tests/conftest.py'),
      created('pytest.py'),
      created('lib/site-packages/evil.pth'),
      created('_pytest/runner.py'),
      diff('jest.config.js'),
    ].join('');
    expect(testInfrastructurePaths(patch)).toEqual([
      '_pytest/runner.py',
      'conftest.py',
      'jest.config.js',
      'lib/site-packages/evil.pth',
      'pytest.py',
      'tests/conftest.py',
    ]);
  });

  it('is empty for an ordinary fix, and ignores deleted runner files and look-alike names', () => {
    expect(testInfrastructurePaths(diff('src/durations.py') + diff('tests/test_conftest_parser.py'))).toEqual(
      [],
    );
    expect(testInfrastructurePaths(deleted('conftest.py'))).toEqual([]);
    expect(testInfrastructurePaths('')).toEqual([]);
  });
});
