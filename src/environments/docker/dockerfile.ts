/**
 * Static reading of Dockerfiles and base-image manifests: which images a
 * build needs (`FROM`, `COPY --from=<image>`), how to rewrite them
 * (`--image-map`), and the Kotlin Benchmark's `bases/manifest`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../errors.ts';

/** One image reference in a Dockerfile. */
export interface ImageReference {
  image: string;
  /** 1-based line of the instruction. */
  line: number;
  instruction: 'FROM' | 'COPY --from';
}

/** Joins continuation lines; returns [logical line text, 1-based first physical line]. */
export function logicalLines(text: string): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const lines = text.split(/\r?\n/);
  let current = '';
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    if (current === '' && /^\s*#/.test(raw)) continue;
    if (current === '') start = i + 1;
    if (/\\\s*$/.test(raw)) {
      current += `${raw.replace(/\\\s*$/, '')} `;
      continue;
    }
    current += raw;
    if (current.trim()) out.push([current.trim(), start]);
    current = '';
  }
  if (current.trim()) out.push([current.trim(), start]);
  return out;
}

function substitute(value: string, args: Map<string, string>): string {
  return value.replace(
    /\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?/g,
    (_m, name: string, fallback?: string) => args.get(name) ?? fallback ?? '',
  );
}

/**
 * The external images a Dockerfile needs: `FROM` images that are not earlier
 * stage names, and `COPY --from=` images. `ARG` defaults declared before the
 * first FROM are substituted. `scratch` is not an image.
 */
export function imagesOfDockerfile(text: string): ImageReference[] {
  const refs: ImageReference[] = [];
  const stages = new Set<string>();
  const args = new Map<string, string>();
  let seenFrom = false;
  for (const [line, lineNo] of logicalLines(text)) {
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/i.exec(line);
    if (arg && !seenFrom) {
      if (arg[2] !== undefined) args.set(arg[1] as string, (arg[2] as string).replace(/^["']|["']$/g, ''));
      continue;
    }
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      seenFrom = true;
      const image = substitute(from[1] as string, args);
      if (!stages.has(image.toLowerCase()) && image !== 'scratch')
        refs.push({ image, line: lineNo, instruction: 'FROM' });
      if (from[2]) stages.add(from[2].toLowerCase());
      continue;
    }
    const copy = /^(?:COPY|ADD)\s.*--from=(\S+)/i.exec(line);
    if (copy) {
      const image = substitute(copy[1] as string, args);
      if (!stages.has(image.toLowerCase()) && !/^\d+$/.test(image))
        refs.push({ image, line: lineNo, instruction: 'COPY --from' });
    }
  }
  return refs;
}

/** Adds `:latest` to an untagged, undigested reference. */
export function normalizeImage(image: string): string {
  const lastSlash = image.lastIndexOf('/');
  const tail = image.slice(lastSlash + 1);
  return tail.includes(':') || tail.includes('@') ? image : `${image}:latest`;
}

/**
 * Image map from `FROM=TO` pairs. Keys match with or without `:latest`; the key
 * `*` maps every image that is otherwise unavailable.
 */
export class ImageMap {
  private readonly map = new Map<string, string>();

  constructor(entries: Record<string, string> | Array<[string, string]> = {}) {
    for (const [from, to] of Array.isArray(entries) ? entries : Object.entries(entries)) this.set(from, to);
  }

  /** Parses `FROM=TO` (the `--image-map` flag). @throws InputError on a malformed pair */
  static parsePair(pair: string, origin = '--image-map'): [string, string] {
    const i = pair.indexOf('=');
    if (i <= 0 || i === pair.length - 1)
      throw new InputError(
        { file: origin, field: 'image-map' },
        `expected FROM=TO, got ${JSON.stringify(pair)}`,
      );
    return [pair.slice(0, i).trim(), pair.slice(i + 1).trim()];
  }

  set(from: string, to: string): void {
    this.map.set(from === '*' ? '*' : normalizeImage(from), to);
  }

  /** The explicit mapping of `image`, if any (the `*` fallback is separate). */
  explicit(image: string): string | undefined {
    return this.map.get(normalizeImage(image));
  }

  get fallback(): string | undefined {
    return this.map.get('*');
  }

  entries(): Array<[string, string]> {
    return [...this.map.entries()].sort();
  }

  get size(): number {
    return this.map.size;
  }
}

/**
 * Rewrites the image names of FROM / COPY --from lines using `resolve`
 * (identity for names it returns unchanged). Lines keep their numbering.
 */
export function rewriteDockerfile(text: string, resolve: (image: string) => string): string {
  return text
    .split('\n')
    .map((line) => {
      const from = /^(\s*FROM\s+(?:--platform=\S+\s+)?)(\S+)(.*)$/i.exec(line);
      if (from) return `${from[1]}${resolve(from[2] as string)}${from[3]}`;
      return line.replace(/(--from=)(\S+)/i, (_m, p: string, image: string) => `${p}${resolve(image)}`);
    })
    .join('\n');
}

/** One base image of a dataset (`bases/manifest`: repository, base tag, Dockerfile). */
export interface BaseImage {
  /** Image name, `<prefix>/<repo>:<tag>`. */
  image: string;
  repo: string;
  tag: string;
  /** Build context: `bases/<repo>/`. */
  contextDir: string;
  /** Dockerfile name inside the context, e.g. `Dockerfile.base-JDK-17`. */
  dockerfile: string;
  manifestLine: number;
}

/**
 * Reads a dataset's `bases/manifest` (Kotlin Benchmark layout: lines
 * `repo base-tag dockerfile`, `#` comments). The image prefix comes from the
 * manifest's `image: <prefix>/<repo>:<base-tag>` comment, else `prefix`, else
 * the dataset folder's name.
 * @throws InputError naming the manifest line of a malformed entry or a missing Dockerfile
 */
export function readBasesManifest(basesDir: string, prefix?: string): BaseImage[] {
  const file = join(basesDir, 'manifest');
  const text = readFileSync(file, 'utf8');
  const declared = /image:\s*([a-z0-9._-]+)\/<repo>/i.exec(text)?.[1];
  const datasetName = join(basesDir, '..').split(/[\\/]/).filter(Boolean).pop() ?? 'bases';
  const imagePrefix = (prefix ?? declared ?? datasetName).toLowerCase();
  const bases: BaseImage[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    if (parts.length < 3) throw new InputError({ file, line: i + 1 }, 'expected `repo base-tag dockerfile`');
    const [repo, tag, dockerfile] = parts as [string, string, string];
    const contextDir = join(basesDir, repo);
    if (!existsSync(join(contextDir, dockerfile)))
      throw new InputError({ file, line: i + 1 }, `missing ${repo}/${dockerfile}`);
    bases.push({
      image: `${imagePrefix}/${repo}:${tag}`,
      repo,
      tag,
      contextDir,
      dockerfile,
      manifestLine: i + 1,
    });
  });
  return bases;
}

/** Bases in build order: every base after the bases its Dockerfile builds FROM. @throws InputError on a cycle */
export function orderBases(bases: BaseImage[]): BaseImage[] {
  const byImage = new Map(bases.map((b) => [normalizeImage(b.image), b]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: BaseImage[] = [];
  const visit = (b: BaseImage): void => {
    const key = normalizeImage(b.image);
    if (done.has(key)) return;
    if (visiting.has(key))
      throw new InputError(
        { file: join(b.contextDir, b.dockerfile) },
        `base images depend on each other in a cycle (${b.image})`,
      );
    visiting.add(key);
    const text = readFileSync(join(b.contextDir, b.dockerfile), 'utf8');
    for (const ref of imagesOfDockerfile(text)) {
      const dep = byImage.get(normalizeImage(ref.image));
      if (dep) visit(dep);
    }
    visiting.delete(key);
    done.add(key);
    out.push(b);
  };
  for (const b of bases) visit(b);
  return out;
}
