/**
 * Plugs the multilingual demo's format into `berth run`: a task loader that
 * recognises a folder holding `sample_task.json`, and the `multilingual`
 * verifier. Imported for its side effects by the run command.
 */
import { join } from 'node:path';
import { registerVerifier } from '../../verifiers/registry.ts';
import { registerTaskLoader } from '../registry.ts';
import { isMultilingualDataset, loadMultilingualDataset } from './loader.ts';
import { MultilingualVerifier } from './verify.ts';

registerTaskLoader({
  format: 'multilingual',
  recognises: async (path) => isMultilingualDataset(path),
  load: loadMultilingualDataset,
  // Locally, the repository is the task's environment/repo/ folder in berth's sandbox.
  place: (task, kind) =>
    kind === 'local' && task.environment.kind === 'docker'
      ? {
          ...task,
          environment: { kind: 'local', folder: join(String(task.metadata.task_dir), 'environment', 'repo') },
        }
      : task,
});
registerVerifier('multilingual', () => new MultilingualVerifier());
