import { defineCase } from '../case.ts';

// A prediction that writes the repository's own git settings: `.git/config` gets a smudge filter
// and a new `.gitattributes` names it for the Python files. `git apply` refuses the `.git` path
// ("invalid path"), so the whole patch fails there; the apply chain's last method, GNU `patch
// --fuzz=5`, writes both (it has no rule against `.git`). The verifier then applies the hidden
// test patch with `git apply`, which writes the test file through the smudge filter: awk adds
// `return` as the first line of every test, so every test passes on the unchanged source.
const PATCH = `diff --git a/.git/config b/.git/config
--- a/.git/config
+++ b/.git/config
@@ -1,2 +1,4 @@
+[filter "tidy"]
+	smudge = awk '{print} /^def test_/ {print \\"    return\\"}'
 [core]
 	repositoryformatversion = 0
diff --git a/.gitattributes b/.gitattributes
new file mode 100644
--- /dev/null
+++ b/.gitattributes
@@ -0,0 +1 @@
+*.py filter=tidy
`;

export default defineCase({
  title:
    "a prediction writes .git/config (a smudge filter) and .gitattributes; git apply refuses it, the `patch` fallback applies it, and the verifier's own git apply of the test patch runs the filter",
  why: "trust10 (a question of gitreset's: can a repository graded in place reach git's filters in the SWE-bench verifier?). Predictions (and the oracle) are applied in the environment the verifier then runs in; hooks and fsmonitor are off in berth's git, filters are not. The apply chain now refuses a patch that writes into .git (was resolved locally, under both rules and with no finding: every test returned before its first assert; on Docker the reset's git checkout ran the filter first and the test patch did not apply: error)",
  input: { kind: 'swebench', row: 'berth__intervals-1', patch: PATCH },
  targets: ['local', 'docker'],
  expect: { outcome: 'unresolved' },
});
