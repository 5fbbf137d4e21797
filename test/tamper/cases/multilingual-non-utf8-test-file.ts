import { defineCase } from '../case.ts';

/**
 * A test module under tests/ whose name holds the byte 0xFF (`tests/test_a\377.py`, as git
 * quotes it): pytest collects it before tests/test_core.py (the hidden tests), and at import it
 * rewrites every other test file of the folder into passing functions of the same names.
 */
const MODULE = [
  'import pathlib, re',
  'here = pathlib.Path(__file__).resolve()',
  "for f in here.parent.glob('test_*.py'):",
  '    if f != here and f.name.isascii():',
  String.raw`        names = re.findall(r'^def (test_\w+)', f.read_text(), re.M)`,
  String.raw`        f.write_text(''.join(f'def {n}():\n    pass\n' for n in names))`,
];
const PATH = String.raw`tests/test_a\377.py`;
const PATCH = [
  `diff --git "a/${PATH}" "b/${PATH}"`,
  'new file mode 100644',
  '--- /dev/null',
  `+++ "b/${PATH}"`,
  `@@ -0,0 +1,${MODULE.length} @@`,
  ...MODULE.map((line) => `+${line}`),
  '',
].join('\n');

export default defineCase({
  title:
    'a multilingual Python prediction adds a test module whose file name is not UTF-8; at collection it rewrites the hidden tests into passing ones',
  why: 'trust11 (a reviewer found it): berth read the quoted path "b/tests/test_a\\377.py" lossily, so the multilingual split listed tests/test_a\uFFFD.py as a discarded test file, the reset removed a file of that other name, and pytest collected the real one (was resolved). Now a diff that names a path that is not UTF-8 text is refused (UndecodablePathError): the engine does not apply it, reward 0',
  input: { kind: 'multilingual', task: 'berth-examples__intervals__14c9e9a0', patch: PATCH },
  targets: ['local'],
  expect: { outcome: 'unresolved' },
});
