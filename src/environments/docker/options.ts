/**
 * Docker options from the command line and a config file.
 *
 * berth's settings file (`berth run --settings FILE`; `--config FILE` for `berth check` and `berth bases`), TOML or JSON:
 *
 * ```toml
 * [docker]
 * pids_limit = 4096
 * [docker.image_map]
 * "ubuntu:24.04" = "berth-base:bookworm"
 * "*" = "berth-base:bookworm"      # any image not otherwise available
 * ```
 *
 * `--image-map FROM=TO` flags are applied after the file, so they win.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../../errors.ts';
import { parseTomlInput } from '../../util/toml.ts';
import { ImageMap } from './dockerfile.ts';

export interface DockerCliOptions {
  imageMap: ImageMap;
  pidsLimit?: number;
}

/**
 * Reads the image map and limits from `configFile` (optional) and `pairs`.
 * @throws InputError naming the file and key on a bad file or pair
 */
export function dockerOptionsFrom(pairs: string[] = [], configFile?: string): DockerCliOptions {
  const map = new ImageMap();
  let pidsLimit: number | undefined;
  if (configFile) {
    let data: Record<string, unknown>;
    const text = readFileSync(configFile, 'utf8');
    if (configFile.endsWith('.json'))
      try {
        data = JSON.parse(text);
      } catch (error) {
        throw new InputError({ file: configFile }, `not JSON: ${(error as Error).message}`);
      }
    else data = parseTomlInput(text, configFile);
    const docker = (data.docker ?? {}) as Record<string, unknown>;
    const im = docker.image_map ?? {};
    if (typeof im !== 'object' || Array.isArray(im))
      throw new InputError(
        { file: configFile, field: 'docker.image_map' },
        'expected a table of FROM = "TO"',
      );
    for (const [from, to] of Object.entries(im as Record<string, unknown>)) {
      if (typeof to !== 'string')
        throw new InputError(
          { file: configFile, field: `docker.image_map.${from}` },
          'expected an image name',
        );
      map.set(from, to);
    }
    if (docker.pids_limit !== undefined) {
      if (typeof docker.pids_limit !== 'number' || docker.pids_limit < 1)
        throw new InputError({ file: configFile, field: 'docker.pids_limit' }, 'expected a positive number');
      pidsLimit = docker.pids_limit;
    }
  }
  for (const pair of pairs) {
    const [from, to] = ImageMap.parsePair(pair);
    map.set(from, to);
  }
  return { imageMap: map, pidsLimit };
}
