import { appendPython, PY_PYTEST_HANDLE } from '../attacks.ts';
import { defineCase } from '../case.ts';

const attack = `${PY_PYTEST_HANDLE}
import signal as _signal


class _BerthKill:
    def pytest_collection_finish(self, session):
        _berth_attack_real_stdout(session.config)
        _sys.stdout.write("".join("PASSED %s\\n" % item.nodeid for item in session.items))
        _sys.stdout.flush()
        _os.kill(_os.getpid(), _signal.SIGKILL)


_berth_attack_plugin(_BerthKill())
`;

export default defineCase({
  title: 'package code prints PASSED for every test past the capture, then kills its own process (SIGKILL)',
  input: {
    kind: 'swebench',
    row: 'berth__intervals-1',
    files: { 'intervals/__init__.py': appendPython(attack) },
  },
  targets: ['local', 'docker'],
  // A run killed by a signal has no trustworthy log (the harness: a non-zero exit code and no FAILED line).
  expect: { outcome: ['error', 'tampering'] },
  swebench: { outcome: 'error' },
});
