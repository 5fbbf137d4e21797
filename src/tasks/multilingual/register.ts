/**
 * Plugs the multilingual demo's format into `berth run`: a task loader that
 * recognises a folder holding `sample_task.json`, and the `multilingual`
 * verifier. Imported for its side effects by the run command.
 */
import { registerVerifier } from '../../verifiers/registry.ts';
import { registerTaskLoader } from '../registry.ts';
import { isMultilingualDataset, loadMultilingualDataset } from './loader.ts';
import { MultilingualVerifier } from './verify.ts';

registerTaskLoader({
  format: 'multilingual',
  recognises: async (path) => isMultilingualDataset(path),
  load: loadMultilingualDataset,
});
registerVerifier('multilingual', () => new MultilingualVerifier());
