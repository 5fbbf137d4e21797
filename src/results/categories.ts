/**
 * The categories a trial's results are grouped by (repository, language, task type), taken
 * from its task when the trial starts and kept in `result.json` as `berth.categories`, so the
 * report, the viewer and `berth compare` group any job without the dataset at hand.
 */
import { extname } from 'node:path';
import type { Task } from '../tasks/task.ts';
import { patchFiles } from '../util/patch-files.ts';

/** A trial's categories; a key is absent when the task does not tell. */
export interface TaskCategories {
  /** `owner/name` of the task's repository. */
  repository?: string;
  /** Programming language, lower case (`python`, `javascript`, `go`...). */
  language?: string;
  /** The multilingual demo's task type (BF, FE, FI, RF, TG, CD) or a Harbor task's category. */
  task_type?: string;
}

/** File extension → language, for tasks that do not name theirs. */
const LANGUAGES: Record<string, string> = {
  '.py': 'python',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.ts': 'typescript',
  '.tsx': 'typescript',
  '.mts': 'typescript',
  '.go': 'go',
  '.java': 'java',
  '.kt': 'kotlin',
  '.kts': 'kotlin',
  '.rs': 'rust',
  '.rb': 'ruby',
  '.php': 'php',
  '.c': 'c',
  '.h': 'c',
  '.cc': 'c++',
  '.cpp': 'c++',
  '.cxx': 'c++',
  '.hpp': 'c++',
  '.cs': 'c#',
  '.swift': 'swift',
  '.scala': 'scala',
};

/**
 * The language most files of the patches are written in (by extension), or undefined when no
 * file has a known extension. Ties go to the language met first.
 */
export function languageOfPatches(...patches: Array<string | undefined>): string | undefined {
  const counts = new Map<string, number>();
  for (const patch of patches) {
    if (!patch) continue;
    let files: ReturnType<typeof patchFiles>;
    try {
      files = patchFiles(patch);
    } catch {
      continue; // a path that is not UTF-8 text: no language read from this patch
    }
    for (const file of files) {
      const language = LANGUAGES[extname(file.newPath ?? file.oldPath ?? '').toLowerCase()];
      if (language) counts.set(language, (counts.get(language) ?? 0) + 1);
    }
  }
  let best: string | undefined;
  let most = 0;
  for (const [language, count] of counts) if (count > most) [best, most] = [language, count];
  return best;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/** `https://github.com/owner/name(.git)` or `owner/name` → `owner/name`; other strings as they are. */
export function repositoryName(value: string): string {
  const url = /^(?:https?:\/\/|git@)[^/:]+[/:]([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(value);
  return url ? (url[1] as string) : value;
}

/**
 * The categories of a task: the repository from its provenance or its row (`repo`, `repo_url`),
 * the language and task type from its metadata (the multilingual demo's `language` and
 * `task_type`; a Harbor task's `[metadata]` `language` and `category`), the language otherwise
 * from the extensions of the files its patches change.
 */
export function taskCategories(task: Task): TaskCategories {
  const metadata = task.metadata;
  const toml = (metadata.task_toml as { metadata?: Record<string, unknown> } | undefined)?.metadata ?? {};
  const repository =
    text(task.source?.repository) ?? text(metadata.repo) ?? text(metadata.repo_url) ?? text(toml.repository);
  const language =
    text(metadata.language) ??
    text(toml.language) ??
    languageOfPatches(
      task.solution.kind === 'patch' ? task.solution.patch : undefined,
      task.verifier.kind === 'swebench' || task.verifier.kind === 'multilingual'
        ? task.verifier.testPatch
        : undefined,
    );
  const taskType = text(metadata.task_type) ?? text(toml.task_type) ?? text(toml.category);
  return {
    ...(repository ? { repository: repositoryName(repository) } : {}),
    ...(language ? { language: language.toLowerCase() } : {}),
    ...(taskType ? { task_type: taskType } : {}),
  };
}
