/**
 * One HTML page of berth's report or viewer: the stylesheet, Vega, Vega-Lite and vega-embed
 * (inlined from their npm packages, pinned in package.json), the page script
 * (`assets/app.js`) and the page's data as JSON blocks. A report page needs no network: its
 * Content-Security-Policy allows no connection at all; a viewer page may call its own server.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The view the page script draws. */
export type PageKind = 'job' | 'compare' | 'leaderboard' | 'jobs';

const require = createRequire(import.meta.url);
const ASSETS = join(dirname(fileURLToPath(import.meta.url)), 'assets');

let cached: { css: string; scripts: string } | undefined;

/** The inlined assets, read once per process. */
function assets(): { css: string; scripts: string } {
  if (cached) return cached;
  const vegaEmbedDir = dirname(require.resolve('vega-embed'));
  const files = [
    require.resolve('vega/build/vega.min.js'),
    require.resolve('vega-lite/build/vega-lite.min.js'),
    join(vegaEmbedDir, 'vega-embed.min.js'),
  ];
  const libraries = files.map((file) =>
    // The source map is not shipped with the page: drop the comment that would ask for it.
    readFileSync(file, 'utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, ''),
  );
  const app = readFileSync(join(ASSETS, 'app.js'), 'utf8');
  for (const [index, text] of [...libraries, app].entries())
    if (/<\/script|<!--/i.test(text))
      throw new Error(
        `berth bug: asset ${files[index] ?? 'app.js'} holds a sequence that would end its <script>`,
      );
  cached = {
    css: readFileSync(join(ASSETS, 'app.css'), 'utf8'),
    scripts: [...libraries, app].map((text) => `<script>${text}</script>`).join('\n'),
  };
  return cached;
}

/**
 * JSON for a `<script type="application/json">` block: `<` is written `\u003c`, so no text in the
 * data (an agent's output holding `</script>` or `<!--`) can end the block or start markup.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Text for an HTML text node or attribute. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** What a page holds. */
export interface PageOptions {
  title: string;
  kind: PageKind;
  /** `inline`: the data is in the page (a report file); `server`: the page asks the viewer's /api. */
  source: 'inline' | 'server';
  /** The job a `job` page shows (viewer pages). */
  job?: string;
  /** The page's data (`#berth-data`), for inline pages. */
  data?: unknown;
  /** Further JSON blocks by id (a report's trial details: `berth-trial-<n>`). */
  blocks?: Iterable<[string, string]>;
}

/** The HTML of a page. `blocks` values must come from `scriptJson`. */
export function renderPage(options: PageOptions): string {
  const { css, scripts } = assets();
  const connect = options.source === 'server' ? "'self'" : "'none'";
  const csp = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; connect-src ${connect}; base-uri 'none'; form-action 'none'`;
  const boot = { page: options.kind, source: options.source, ...(options.job ? { job: options.job } : {}) };
  const parts: string[] = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>${escapeHtml(options.title)}</title>`,
    `<style>${css}</style>`,
    '</head>',
    '<body>',
    '<div id="app"><main><p>Loading…</p></main></div>',
    `<script type="application/json" id="berth-boot">${scriptJson(boot)}</script>`,
  ];
  if (options.data !== undefined)
    parts.push(`<script type="application/json" id="berth-data">${scriptJson(options.data)}</script>`);
  for (const [id, json] of options.blocks ?? [])
    parts.push(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
  parts.push(scripts, '</body>', '</html>', '');
  return parts.join('\n');
}
