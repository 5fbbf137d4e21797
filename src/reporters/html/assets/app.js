/*
 * berth's report and viewer page (plain browser JavaScript, inlined into every page; no network).
 * The page's data comes from <script type="application/json"> blocks (the report file) or from the
 * viewer's /api (berth view). Every text from a job folder is put into the page as text
 * (textContent), never as HTML.
 */
(() => {
  const boot = JSON.parse(document.getElementById('berth-boot').textContent);
  const app = document.getElementById('app');
  const enc = encodeURIComponent;

  // ---- DOM helpers -------------------------------------------------------------------------

  /** Creates an element; strings and numbers become text nodes, arrays are flattened, null is skipped. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
      else if (key === 'value') el.value = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    append(el, children);
    return el;
  }
  function append(el, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(el, child);
      else if (child instanceof Node) el.appendChild(child);
      else el.appendChild(document.createTextNode(String(child)));
    }
  }
  /** A link that only says where it goes: hrefs are built here from encoded parts, never taken from data. */
  function link(href, ...children) {
    return h('a', { href }, ...children);
  }

  // ---- formatting --------------------------------------------------------------------------

  const pct = (value) => (value === null || value === undefined ? '–' : `${(100 * value).toFixed(1)}%`);
  const interval = (iv) => (iv ? `${pct(iv.low)} – ${pct(iv.high)}` : '–');
  function seconds(value) {
    if (value === null || value === undefined) return '–';
    if (value < 60) return `${value.toFixed(value < 10 ? 2 : 1)} s`;
    const m = Math.floor(value / 60);
    if (m < 60) return `${m} min ${Math.round(value - 60 * m)} s`;
    return `${Math.floor(m / 60)} h ${m % 60} min`;
  }
  const int = (value) =>
    value === null || value === undefined ? '–' : Number(value).toLocaleString('en-US');
  const usd = (value) =>
    value === null || value === undefined ? '–' : `$${Number(value).toFixed(value < 1 ? 4 : 2)}`;
  const bytes = (value) =>
    value < 1024
      ? `${value} B`
      : value < 1048576
        ? `${(value / 1024).toFixed(1)} KiB`
        : `${(value / 1048576).toFixed(1)} MiB`;
  const badge = (outcome) => h('span', { class: `badge ${outcome}` }, outcome);
  const num = (value) => (Number.isInteger(value) ? String(value) : String(Number(value.toFixed(4))));
  const rewardText = (rewards) =>
    rewards
      ? Object.entries(rewards)
          .map(([k, v]) => `${k} ${num(v)}`)
          .join(', ')
      : '–';
  function scoreCell(trial) {
    if (trial.FAIL_TO_PASS && trial.PASS_TO_PASS)
      return `F2P ${trial.FAIL_TO_PASS.passed}/${trial.FAIL_TO_PASS.total} · P2P ${trial.PASS_TO_PASS.passed}/${trial.PASS_TO_PASS.total}`;
    return rewardText(trial.rewards);
  }

  // ---- data sources ------------------------------------------------------------------------

  function inline(id) {
    const el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }
  async function api(path) {
    const response = await fetch(path, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  }
  const server = boot.source === 'server';
  const jobPath = (job) => `/api/jobs/${enc(job)}`;
  /** The URL of a file of a trial: relative to the report (which sits in the job folder), or the viewer's /files. */
  function fileUrl(job, trial, path) {
    const parts = [trial, ...path.split('/')].map(enc).join('/');
    return server ? `/files/${enc(job)}/${parts}` : parts;
  }

  // ---- routing (the hash holds the view and the filters) -------------------------------------

  function route() {
    const hash = location.hash.replace(/^#/, '');
    const [path, query] = hash.split('?');
    const params = new URLSearchParams(query || '');
    const parts = (path || '/').split('/').filter(Boolean).map(decodeURIComponent);
    return { parts, params };
  }
  function setParams(params) {
    const query = params.toString();
    history.replaceState(null, '', `#/${query ? `?${query}` : ''}`);
  }

  // ---- charts ------------------------------------------------------------------------------

  const embedOptions = {
    renderer: 'svg',
    actions: { export: true, source: false, compiled: false, editor: false },
    // The expression interpreter: no eval, so the page's Content-Security-Policy needs no 'unsafe-eval'.
    ast: true,
    expr: window.vegaEmbed ? window.vegaEmbed.expressionInterpreter : undefined,
  };
  function chartBox(chart) {
    const plot = h('div', { class: 'plot' });
    const box = h(
      'div',
      { class: 'chart', 'data-chart': chart.id, 'data-marks': chart.marks },
      h('h3', {}, chart.title),
      h('div', { class: 'note' }, chart.note),
      chart.spec ? plot : null,
    );
    if (chart.spec)
      queueMicrotask(() =>
        window.vegaEmbed(plot, chart.spec, embedOptions).then(
          () => box.setAttribute('data-rendered', 'true'),
          (error) => {
            plot.textContent = `chart failed: ${error.message}`;
            box.setAttribute('data-rendered', 'error');
          },
        ),
      );
    return box;
  }

  // ---- job page ----------------------------------------------------------------------------

  let jobData = null;
  const OUTCOMES = ['resolved', 'failed', 'errored', 'cancelled', 'running', 'pending'];

  function header(title, meta, live) {
    return h(
      'header',
      { class: 'top' },
      server ? link('/', 'berth view') : null,
      h('h1', {}, title),
      h('span', { class: 'meta' }, meta),
      live ? h('span', { class: 'live', 'data-live': 'true' }, '● running, updating live') : null,
    );
  }

  function summaryCards(job, summary) {
    const counts = summary.counts;
    const cards = [];
    cards.push(
      h(
        'div',
        { class: 'card', 'data-card': 'rate' },
        h('div', { class: 'label' }, 'Resolved'),
        h('div', { class: 'big', 'data-rate': summary.rate.rate }, pct(summary.rate.rate)),
        h(
          'div',
          { class: 'small' },
          `${summary.rate.resolved} of ${summary.rate.n} finished trials · 95% Wilson interval ${interval(summary.rate.interval)}`,
        ),
      ),
    );
    cards.push(
      h(
        'div',
        { class: 'card', 'data-card': 'outcomes' },
        h('div', { class: 'label' }, 'Trials'),
        h('div', { class: 'big' }, String(job.trials.length)),
        h(
          'ul',
          {},
          OUTCOMES.filter((o) => counts[o] > 0).map((o) =>
            h(
              'li',
              {},
              h('button', { class: 'link', onclick: () => filterTo({ outcome: o }) }, `${counts[o]} ${o}`),
            ),
          ),
        ),
      ),
    );
    const passKs = Object.keys(summary.pass_at_k);
    if (passKs.length > 0)
      cards.push(
        h(
          'div',
          { class: 'card', 'data-card': 'pass-at-k' },
          h('div', { class: 'label' }, `pass@k (${summary.attempts} attempts per task)`),
          h(
            'ul',
            {},
            passKs.map((k) => h('li', {}, `pass@${k}: ${pct(summary.pass_at_k[k])}`)),
          ),
        ),
      );
    const rewardKeys = Object.keys(summary.mean_rewards);
    if (rewardKeys.length > 0)
      cards.push(
        h(
          'div',
          { class: 'card', 'data-card': 'rewards' },
          h('div', { class: 'label' }, 'Mean reward (missing = 0)'),
          h(
            'ul',
            {},
            rewardKeys.map((k) => h('li', {}, `${k}: ${num(summary.mean_rewards[k])}`)),
          ),
        ),
      );
    cards.push(
      h(
        'div',
        { class: 'card', 'data-card': 'errors' },
        h('div', { class: 'label' }, 'Errors by exception type'),
        summary.errors.length === 0
          ? h('div', { class: 'small' }, 'none')
          : h(
              'ul',
              {},
              summary.errors.map((e) =>
                h(
                  'li',
                  {},
                  h('button', { class: 'link', onclick: () => filterTo({ error: e.type }) }, `${e.type}`),
                  ` × ${e.count}`,
                ),
              ),
            ),
      ),
    );
    cards.push(
      h(
        'div',
        { class: 'card', 'data-card': 'tokens' },
        h('div', { class: 'label' }, 'Tokens and cost'),
        summary.tokens
          ? h(
              'div',
              { class: 'small' },
              `input ${int(summary.tokens.input)} · cached ${int(summary.tokens.cache)} · output ${int(summary.tokens.output)}`,
            )
          : h('div', { class: 'small' }, 'no token counts reported'),
        h('div', { class: 'big' }, summary.cost_usd === null ? '–' : usd(summary.cost_usd)),
        h('div', { class: 'small' }, `cost known for ${summary.cost_known} of ${job.trials.length} trials`),
      ),
    );
    const wall =
      job.started_at && (job.finished_at || job.running)
        ? (Date.parse(job.finished_at || new Date().toISOString()) - Date.parse(job.started_at)) / 1000
        : null;
    cards.push(
      h(
        'div',
        { class: 'card', 'data-card': 'time' },
        h('div', { class: 'label' }, 'Time'),
        h('div', { class: 'big' }, seconds(wall)),
        h('div', { class: 'small' }, `wall time; ${seconds(summary.trial_time_sec)} summed over trials`),
        h(
          'ul',
          {},
          Object.entries(summary.phase_means).map(([phase, value]) =>
            h('li', { class: 'small' }, `${phase.replace('_', ' ')}: ${seconds(value)} mean`),
          ),
        ),
      ),
    );
    return h('div', { class: 'cards' }, cards);
  }

  /** Filter state: outcome set, category values, exception type, text. */
  function readFilters(params) {
    return {
      outcome: params.get('outcome') ? new Set(params.get('outcome').split(',')) : null,
      repository: params.get('repository'),
      language: params.get('language'),
      task_type: params.get('task_type'),
      error: params.get('error'),
      q: params.get('q') || '',
    };
  }
  function filterTo(filters) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(filters)) params.set(key, value);
    history.replaceState(null, '', `#/?${params}`);
    renderJobPage();
    document.getElementById('trials')?.scrollIntoView();
  }
  function matches(trial, f) {
    if (f.outcome && !f.outcome.has(trial.outcome)) return false;
    for (const key of ['repository', 'language', 'task_type'])
      if (f[key] && (trial[key] ?? '(none)') !== f[key]) return false;
    if (f.error && trial.exception?.type !== f.error) return false;
    if (f.q) {
      const q = f.q.toLowerCase();
      const text = `${trial.name} ${trial.task} ${trial.why} ${trial.status}`.toLowerCase();
      if (!text.includes(q)) return false;
    }
    return true;
  }

  function trialTable(job) {
    const { params } = route();
    const f = readFilters(params);
    const values = (key) => [...new Set(job.trials.map((t) => t[key] ?? '(none)'))].sort();
    const update = () => {
      const next = new URLSearchParams();
      const checked = OUTCOMES.filter((o) => boxes[o]?.checked);
      if (checked.length > 0 && checked.length < present.length) next.set('outcome', checked.join(','));
      for (const key of ['repository', 'language', 'task_type'])
        if (selects[key]?.value) next.set(key, selects[key].value);
      if (f.error) next.set('error', f.error);
      if (search.value) next.set('q', search.value);
      setParams(next);
      fill();
    };
    const present = OUTCOMES.filter((o) => job.trials.some((t) => t.outcome === o));
    const boxes = {};
    const outcomeBoxes = present.map((o) => {
      boxes[o] = h('input', { type: 'checkbox', 'data-filter-outcome': o, onchange: update });
      boxes[o].checked = !f.outcome || f.outcome.has(o);
      return h('label', {}, boxes[o], badge(o));
    });
    const selects = {};
    const categorySelects = ['repository', 'language', 'task_type']
      .filter((key) => values(key).some((v) => v !== '(none)'))
      .map((key) => {
        selects[key] = h(
          'select',
          { 'data-filter': key, onchange: update },
          h('option', { value: '' }, `every ${key.replace('_', ' ')}`),
          values(key).map((v) => h('option', { value: v }, v)),
        );
        selects[key].value = f[key] || '';
        return selects[key];
      });
    const search = h('input', {
      type: 'search',
      placeholder: 'search trials, tasks, reasons',
      value: f.q,
      oninput: update,
    });
    const count = h('span', { class: 'count', 'data-count': '' });
    const errorChip = f.error
      ? h('button', { class: 'link', onclick: () => filterTo({}) }, `exception ${f.error} ✕`)
      : null;
    const hasCost = job.trials.some((t) => t.cost_usd !== null);
    const tbody = h('tbody');
    function fill() {
      const current = readFilters(route().params);
      current.error = f.error;
      const rows = job.trials.filter((t) => matches(t, current));
      count.textContent = `${rows.length} of ${job.trials.length} trials`;
      count.setAttribute('data-count', String(rows.length));
      tbody.replaceChildren(
        ...rows.map((t) =>
          h(
            'tr',
            {
              class: 'trial-row',
              'data-trial': t.name,
              'data-outcome': t.outcome,
              onclick: () => (location.hash = `#/trial/${enc(t.name)}`),
            },
            h('td', {}, link(`#/trial/${enc(t.name)}`, t.name)),
            h('td', {}, badge(t.outcome)),
            h('td', {}, t.repository ?? ''),
            h('td', {}, t.language ?? ''),
            h('td', {}, t.task_type ?? ''),
            h('td', {}, scoreCell(t)),
            h('td', { class: 'num' }, seconds(t.duration_sec)),
            hasCost ? h('td', { class: 'num' }, usd(t.cost_usd)) : null,
            h('td', { class: 'why' }, t.why),
          ),
        ),
      );
    }
    fill();
    return h(
      'section',
      { id: 'trials' },
      h('h2', {}, 'Trials'),
      h('div', { class: 'filters' }, outcomeBoxes, categorySelects, search, errorChip, count),
      h(
        'table',
        { 'data-table': 'trials' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['trial', 'outcome', 'repository', 'language', 'type', 'score', 'time'].map((c) =>
              h('th', { class: c === 'time' ? 'num' : null }, c),
            ),
            hasCost ? h('th', { class: 'num' }, 'cost') : null,
            h('th', {}, 'why'),
          ),
        ),
        tbody,
      ),
    );
  }

  function renderJobPage() {
    const { job, summary, charts } = jobData;
    const meta = [
      job.agent && `agent ${job.agent}`,
      job.model && `model ${job.model}`,
      job.dataset && `dataset ${job.dataset}`,
      job.started_at && `started ${job.started_at.replace('T', ' ').replace(/\..*/, '')} UTC`,
    ]
      .filter(Boolean)
      .join(' · ');
    const scrollY = window.scrollY;
    app.replaceChildren(
      header(`Job ${job.name}`, meta, job.running),
      h(
        'main',
        {},
        job.warnings.map((w) => h('div', { class: 'warn' }, w)),
        summaryCards(job, summary),
        h('h2', {}, 'Charts'),
        h('div', { class: 'charts' }, charts.map(chartBox)),
        trialTable(job),
      ),
    );
    window.scrollTo(0, scrollY);
  }

  // ---- trial page --------------------------------------------------------------------------

  function diffView(text) {
    return h(
      'pre',
      { class: 'diff', 'data-diff': '' },
      text.split('\n').map((line) => {
        let cls = null;
        if (
          /^(diff --git|index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode|Binary files)/.test(
            line,
          )
        )
          cls = 'meta';
        else if (line.startsWith('@@')) cls = 'hunk';
        else if (line.startsWith('+')) cls = 'add';
        else if (line.startsWith('-')) cls = 'del';
        return h('span', { class: cls }, line || ' ');
      }),
    );
  }

  /** A file's head (and tail, when cut) with a link to the whole file. */
  function fileView(job, trial, file, asDiff) {
    const whole = link(
      fileUrl(job, trial, file.path),
      file.omitted > 0 ? 'open the whole file' : 'open the file',
    );
    const body = asDiff ? diffView : (text) => h('pre', {}, text);
    return [
      body(file.head),
      file.omitted > 0
        ? [
            h(
              'div',
              { class: 'omitted' },
              `… ${bytes(file.omitted)} omitted (${bytes(file.size)} in all): `,
              whole,
              ' …',
            ),
            body(file.tail),
          ]
        : h('div', { class: 'small' }, whole),
    ];
  }

  function textOf(content) {
    if (content === null || content === undefined) return '';
    if (typeof content === 'string') return content;
    if (Array.isArray(content))
      return content
        .map((part) =>
          part && part.type === 'text'
            ? part.text || ''
            : part && part.type === 'image'
              ? `[image ${part.source?.path ?? ''}]`
              : '',
        )
        .join('\n');
    return JSON.stringify(content, null, 2);
  }

  /** A step's message: the agent's in full; a long system or user message folded under its first line. */
  function messageView(step) {
    const text = textOf(step.message);
    if (!text) return null;
    const lines = text.split('\n');
    if (step.source === 'agent' || lines.length <= 6) return h('pre', { class: 'message' }, text);
    return h(
      'details',
      {},
      h('summary', {}, `${lines[0].slice(0, 160)} … (${lines.length} lines)`),
      h('pre', { class: 'message' }, text),
    );
  }

  function trajectoryView(trajectory, note) {
    if (!trajectory || !Array.isArray(trajectory.steps))
      return h('p', { class: 'empty' }, note || 'No trajectory.');
    const agent = trajectory.agent || {};
    const fm = trajectory.final_metrics || {};
    return [
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'agent'),
        h(
          'dd',
          {},
          `${agent.name ?? '?'} ${agent.version ?? ''}${agent.model_name ? ` · ${agent.model_name}` : ''}`,
        ),
        h('dt', {}, 'format'),
        h('dd', {}, trajectory.schema_version ?? 'ATIF'),
        h('dt', {}, 'steps'),
        h('dd', {}, String(trajectory.steps.length)),
        fm.total_prompt_tokens !== undefined && fm.total_prompt_tokens !== null
          ? [
              h('dt', {}, 'tokens'),
              h(
                'dd',
                {},
                `prompt ${int(fm.total_prompt_tokens)} · completion ${int(fm.total_completion_tokens)} · cached ${int(fm.total_cached_tokens)}`,
              ),
            ]
          : null,
        fm.total_cost_usd !== undefined && fm.total_cost_usd !== null
          ? [h('dt', {}, 'cost'), h('dd', {}, usd(fm.total_cost_usd))]
          : null,
      ),
      note ? h('div', { class: 'omitted' }, note) : null,
      trajectory.notes ? h('pre', {}, trajectory.notes) : null,
      h(
        'div',
        { 'data-trajectory': '' },
        trajectory.steps.map((step) => {
          const m = step.metrics || {};
          const results = step.observation?.results || [];
          return h(
            'div',
            { class: `step ${step.source}`, 'data-step': step.step_id },
            h(
              'div',
              { class: 'head' },
              h('span', { class: 'source' }, `#${step.step_id} ${step.source}`),
              step.timestamp ? h('span', {}, step.timestamp) : null,
              step.model_name ? h('span', {}, step.model_name) : null,
              m.prompt_tokens !== undefined && m.prompt_tokens !== null
                ? h(
                    'span',
                    {},
                    `tokens: prompt ${int(m.prompt_tokens)}, completion ${int(m.completion_tokens)}, cached ${int(m.cached_tokens)}`,
                  )
                : null,
              m.cost_usd !== undefined && m.cost_usd !== null ? h('span', {}, usd(m.cost_usd)) : null,
            ),
            messageView(step),
            step.reasoning_content
              ? h('details', {}, h('summary', {}, 'reasoning'), h('pre', {}, step.reasoning_content))
              : null,
            (step.tool_calls || []).map((call) =>
              h(
                'div',
                { class: 'tool-call', 'data-tool-call': call.function_name },
                h('span', { class: 'name' }, `→ ${call.function_name}`),
                h('pre', {}, JSON.stringify(call.arguments, null, 2)),
              ),
            ),
            results.map((r) =>
              h(
                'details',
                { open: results.length <= 2 },
                h('summary', {}, `output${r.source_call_id ? ` of ${r.source_call_id}` : ''}`),
                h('pre', {}, textOf(r.content)),
              ),
            ),
          );
        }),
      ),
    ];
  }

  function testsView(tests) {
    if (tests.length === 0) return h('p', { class: 'empty' }, 'This verifier recorded no per-test verdicts.');
    const table = (rows) =>
      h(
        'table',
        { 'data-tests': '' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['test', 'category', 'status', 'reason'].map((c) => h('th', {}, c)),
          ),
        ),
        h(
          'tbody',
          {},
          rows.map((t) =>
            h(
              'tr',
              { class: `test-row ${t.passed ? 'passing' : 'failing'}` },
              h('td', {}, t.id),
              h('td', {}, t.category),
              h('td', {}, t.status),
              h('td', {}, t.reason ?? ''),
            ),
          ),
        ),
      );
    const failing = tests.filter((t) => !t.passed);
    const passing = tests.filter((t) => t.passed);
    // The tests that did not pass first, in full; the passing ones one click away.
    return [
      failing.length > 0 ? table(failing) : h('p', {}, `All ${tests.length} tests passed.`),
      passing.length > 0
        ? h(
            'details',
            { open: failing.length === 0 },
            h('summary', {}, `${passing.length} passing test(s)`),
            table(passing),
          )
        : null,
    ];
  }

  function logsView(job, trial, logs, other) {
    if (logs.length === 0 && other.length === 0) return h('p', { class: 'empty' }, 'No logs.');
    const search = h('input', { type: 'search', placeholder: 'search the logs', 'data-log-search': '' });
    const boxes = logs.map((file) => {
      const pre = h('pre', {}, file.head);
      const tail = file.omitted > 0 ? h('pre', {}, file.tail) : null;
      const counter = h('span', { class: 'small' });
      const box = h(
        'details',
        { 'data-log': file.path, open: logs.length <= 3 || file === logs[0] },
        h('summary', {}, `${file.path} (${bytes(file.size)}) `, counter),
        pre,
        file.omitted > 0
          ? h(
              'div',
              { class: 'omitted' },
              `… ${bytes(file.omitted)} omitted: `,
              link(fileUrl(job, trial, file.path), 'open the whole file'),
              ' …',
            )
          : h('div', { class: 'small' }, link(fileUrl(job, trial, file.path), 'open the file')),
        tail,
      );
      return { file, pre, tail, counter, box };
    });
    search.addEventListener('input', () => {
      const q = search.value.toLowerCase();
      for (const { file, pre, tail, counter, box } of boxes) {
        let hits = 0;
        const show = (el, text) => {
          if (!el) return;
          if (!q) {
            el.textContent = text;
            return;
          }
          const lines = text.split('\n').filter((line) => line.toLowerCase().includes(q));
          hits += lines.length;
          el.replaceChildren(
            ...lines.map((line) => {
              const parts = [];
              let rest = line;
              let at = rest.toLowerCase().indexOf(q);
              while (at >= 0) {
                parts.push(rest.slice(0, at), h('mark', {}, rest.slice(at, at + q.length)));
                rest = rest.slice(at + q.length);
                at = rest.toLowerCase().indexOf(q);
              }
              parts.push(rest, '\n');
              return h('span', {}, parts);
            }),
          );
        };
        show(pre, file.head);
        show(tail, file.tail);
        counter.textContent = q ? `${hits} matching line(s)` : '';
        if (q && hits > 0) box.open = true;
      }
    });
    return [
      logs.length > 0 ? h('div', { class: 'filters' }, search) : null,
      boxes.map((b) => b.box),
      other.length > 0
        ? h(
            'details',
            {},
            h('summary', {}, `${other.length} other file(s)`),
            h(
              'ul',
              {},
              other.map((f) => h('li', {}, link(fileUrl(job, trial, f.path), f.path), ` (${bytes(f.size)})`)),
            ),
          )
        : null,
    ];
  }

  async function renderTrialPage(name) {
    const job = jobData.job;
    const trial = job.trials.find((t) => t.name === name);
    if (!trial) {
      app.replaceChildren(
        header(`Job ${job.name}`, ''),
        h('main', {}, h('p', {}, `No trial named ${name}. `, link('#/', 'Back to the job'))),
      );
      return;
    }
    const index = job.trials.indexOf(trial);
    const prev = job.trials[index - 1];
    const next = job.trials[index + 1];
    let details = null;
    try {
      details = server
        ? await api(`${jobPath(job.name)}/trials/${enc(name)}`)
        : inline(`berth-trial-${jobData.details[name]}`);
    } catch (error) {
      details = null;
      console.warn(error);
    }
    const d = details || { tests: [], reward_files: [], logs: [], other_files: [], steps: [] };
    const phases = Object.entries(trial.phases).filter(([, v]) => v !== null);
    app.replaceChildren(
      header(`Job ${job.name}`, '', job.running),
      h(
        'main',
        { 'data-trial-page': name },
        h(
          'nav',
          { class: 'trial-nav' },
          link('#/', '← all trials'),
          prev ? link(`#/trial/${enc(prev.name)}`, `‹ ${prev.name}`) : null,
          next ? link(`#/trial/${enc(next.name)}`, `${next.name} ›`) : null,
        ),
        h('h2', {}, trial.name, ' ', badge(trial.outcome)),
        h('div', { class: `why-box ${trial.outcome}`, 'data-why': '' }, trial.why),
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'task'),
          h('dd', {}, `${trial.task} (attempt ${trial.attempt})`),
          h('dt', {}, 'agent'),
          h('dd', {}, `${trial.agent}${trial.model ? ` · ${trial.model}` : ''}`),
          h('dt', {}, 'status'),
          h('dd', {}, trial.status),
          trial.rewards
            ? [h('dt', {}, 'rewards'), h('dd', { 'data-rewards': '' }, rewardText(trial.rewards))]
            : null,
          trial.FAIL_TO_PASS
            ? [
                h('dt', {}, 'FAIL_TO_PASS'),
                h('dd', {}, `${trial.FAIL_TO_PASS.passed}/${trial.FAIL_TO_PASS.total} passed`),
              ]
            : null,
          trial.PASS_TO_PASS
            ? [
                h('dt', {}, 'PASS_TO_PASS'),
                h('dd', {}, `${trial.PASS_TO_PASS.passed}/${trial.PASS_TO_PASS.total} passed`),
              ]
            : null,
          [
            h('dt', {}, 'time'),
            h('dd', {}, [
              seconds(trial.duration_sec),
              phases.length
                ? ` (${phases.map(([p, v]) => `${p.replace('_', ' ')} ${seconds(v)}`).join(', ')})`
                : '',
            ]),
          ],
          trial.input_tokens !== null || trial.output_tokens !== null
            ? [
                h('dt', {}, 'tokens'),
                h(
                  'dd',
                  {},
                  `input ${int(trial.input_tokens)} · cached ${int(trial.cache_tokens)} · output ${int(trial.output_tokens)}`,
                ),
              ]
            : null,
          trial.cost_usd !== null ? [h('dt', {}, 'cost'), h('dd', {}, usd(trial.cost_usd))] : null,
          [trial.repository, trial.language, trial.task_type].some(Boolean)
            ? [
                h('dt', {}, 'category'),
                h('dd', {}, [trial.repository, trial.language, trial.task_type].filter(Boolean).join(' · ')),
              ]
            : null,
        ),
        d.exception
          ? h(
              'section',
              { 'data-section': 'exception' },
              h('h2', {}, 'Exception'),
              h(
                'p',
                {},
                h('b', {}, d.exception.type),
                trial.exception?.phase ? ` in the ${trial.exception.phase.replace('_', ' ')} phase` : '',
                d.exception.occurred_at ? ` at ${d.exception.occurred_at}` : '',
              ),
              h('pre', {}, d.exception.message),
              d.exception.traceback
                ? h('details', {}, h('summary', {}, 'traceback'), h('pre', {}, d.exception.traceback))
                : null,
            )
          : null,
        d.steps.length > 0
          ? h(
              'section',
              { 'data-section': 'steps' },
              h('h2', {}, 'Steps'),
              h(
                'ul',
                {},
                d.steps.map((s) =>
                  h('li', {}, `${s.name}: ${rewardText(s.rewards)}${s.exception ? ` · ${s.exception}` : ''}`),
                ),
              ),
            )
          : null,
        h('section', { 'data-section': 'tests' }, h('h2', {}, 'Tests'), testsView(d.tests)),
        h(
          'section',
          { 'data-section': 'patch' },
          h('h2', {}, 'Patch'),
          d.patch
            ? fileView(job.name, name, d.patch, true)
            : h(
                'p',
                { class: 'empty' },
                'No patch recorded (the agent changed nothing, or acted in the environment).',
              ),
        ),
        h(
          'section',
          { 'data-section': 'trajectory' },
          h('h2', {}, 'Trajectory'),
          trajectoryView(d.trajectory, d.trajectory_note),
        ),
        h(
          'section',
          { 'data-section': 'instruction' },
          h('h2', {}, 'Instruction'),
          d.instruction !== null && d.instruction !== undefined
            ? [h('div', { class: 'small' }, `from ${d.instruction_source}`), h('pre', {}, d.instruction)]
            : h(
                'p',
                { class: 'empty' },
                'The instruction was not found (not in the trial folder, nor at the task it names).',
              ),
        ),
        h(
          'section',
          { 'data-section': 'rewards' },
          h('h2', {}, 'Reward files'),
          d.reward_files.length > 0
            ? d.reward_files.map((f) => [h('h3', {}, f.path), fileView(job.name, name, f, false)])
            : h('p', { class: 'empty' }, 'No reward file.'),
        ),
        h(
          'section',
          { 'data-section': 'logs' },
          h('h2', {}, 'Logs'),
          logsView(job.name, name, d.logs, d.other_files),
        ),
        d.result
          ? h('details', {}, h('summary', {}, 'result.json'), h('pre', {}, JSON.stringify(d.result, null, 2)))
          : h(
              'p',
              { class: 'small' },
              link(fileUrl(job.name, name, 'result.json'), 'result.json'),
              ' · ',
              link(fileUrl(job.name, name, 'config.json'), 'config.json'),
            ),
      ),
    );
    window.scrollTo(0, 0);
  }

  // ---- compare page ------------------------------------------------------------------------

  const signedText = (value) =>
    value === null || value === undefined ? '–' : `${value > 0 ? '+' : ''}${(100 * value).toFixed(1)} pts`;
  function signed(value) {
    return h('span', { class: value > 0 ? 'pos' : value < 0 ? 'neg' : null }, signedText(value));
  }

  function comparisonBlock(c) {
    const flipItem = (t) => {
      const text = c.single_attempt ? t.task : `${t.task} (${t.a} → ${t.b})`;
      // In the viewer, a flipped task leads to its trials in the second job.
      return h(
        'li',
        { 'data-task': t.task },
        server ? link(`/jobs/${enc(c.b)}/#/?q=${enc(t.task)}`, text) : text,
      );
    };
    return h(
      'section',
      { class: 'comparison', 'data-comparison': `${c.a}|${c.b}` },
      h('h2', {}, `${c.a} → ${c.b}`),
      h(
        'div',
        { class: 'cards' },
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'label' }, 'Resolved rate over the shared tasks'),
          h('div', { class: 'big' }, `${pct(c.rate_a)} → ${pct(c.rate_b)}`),
          h('div', { class: 'small' }, `${c.shared_tasks} tasks both ran`),
        ),
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'label' }, 'Difference'),
          h('div', { class: 'big' }, signed(c.delta)),
          h(
            'div',
            { class: 'small' },
            `95% bootstrap interval ${signedText(c.interval?.low)} to ${signedText(c.interval?.high)}`,
          ),
        ),
        h(
          'div',
          { class: 'card' },
          h('div', { class: 'label' }, c.test),
          h(
            'div',
            { class: 'big' },
            c.p === null ? '–' : `p = ${c.p < 0.0001 ? c.p.toExponential(2) : c.p.toFixed(4)}`,
          ),
          h('div', { class: 'small' }, c.verdict),
        ),
      ),
      h('h3', {}, `Now resolved (${c.gained.length})`),
      c.gained.length
        ? h('ul', { 'data-flips': 'gained' }, c.gained.map(flipItem))
        : h('p', { class: 'empty' }, 'none'),
      h('h3', {}, `No longer resolved (${c.lost.length})`),
      c.lost.length
        ? h('ul', { 'data-flips': 'lost' }, c.lost.map(flipItem))
        : h('p', { class: 'empty' }, 'none'),
      ['repository', 'language'].map((key) =>
        c.by[key] && c.by[key].length > 0
          ? [
              h('h3', {}, `By ${key}`),
              h(
                'table',
                { 'data-by': key },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    [key, 'tasks', c.a, c.b, 'difference', '95% interval', 'p'].map((x) => h('th', {}, x)),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  c.by[key].map((g) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, g.value),
                      h('td', { class: 'num' }, String(g.shared_tasks)),
                      h('td', { class: 'num' }, pct(g.rate_a)),
                      h('td', { class: 'num' }, pct(g.rate_b)),
                      h('td', { class: 'num' }, signed(g.delta)),
                      h(
                        'td',
                        { class: 'num' },
                        g.interval
                          ? `${(100 * g.interval.low).toFixed(1)} to ${(100 * g.interval.high).toFixed(1)} pts`
                          : '–',
                      ),
                      h('td', { class: 'num' }, g.p === null ? '–' : g.p.toFixed(4)),
                    ),
                  ),
                ),
              ),
            ]
          : null,
      ),
    );
  }

  function renderCompare(data) {
    app.replaceChildren(
      header('Comparison', `${data.jobs.map((j) => j.name).join(' vs ')} · seed ${data.seed}`),
      h(
        'main',
        { 'data-compare': '' },
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['job', 'agent', 'model', 'dataset', 'resolved', 'rate', '95% Wilson interval'].map((x) =>
                h('th', {}, x),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            data.jobs.map((j) =>
              h(
                'tr',
                {},
                h('td', {}, server ? link(`/jobs/${enc(j.name)}/`, j.name) : j.name),
                h('td', {}, j.agent ?? ''),
                h('td', {}, j.model ?? ''),
                h('td', {}, j.dataset ?? ''),
                h('td', { class: 'num' }, `${j.rate.resolved}/${j.rate.n}`),
                h('td', { class: 'num' }, pct(j.rate.rate)),
                h('td', { class: 'num' }, interval(j.rate.interval)),
              ),
            ),
          ),
        ),
        data.comparisons.map(comparisonBlock),
      ),
    );
  }

  // ---- leaderboard and the viewer's job list -------------------------------------------------

  function renderLeaderboard(data) {
    app.replaceChildren(
      header('Leaderboard', data.jobs_dir),
      h(
        'main',
        { 'data-leaderboard': '' },
        data.datasets.length === 0 ? h('p', { class: 'empty' }, 'No finished job.') : null,
        data.datasets.map((ds) => [
          h('h2', {}, `Dataset ${ds.dataset}`),
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                [
                  '#',
                  'agent',
                  'model',
                  'jobs',
                  'tasks',
                  'resolved',
                  'score',
                  '95% interval (tasks)',
                  'errors',
                  'cost',
                  'time per trial',
                ].map((x) => h('th', {}, x)),
              ),
            ),
            h(
              'tbody',
              {},
              ds.rows.map((r, i) =>
                h(
                  'tr',
                  { 'data-row': `${r.agent}|${r.model ?? ''}` },
                  h('td', { class: 'num' }, String(i + 1)),
                  h('td', {}, r.agent),
                  h('td', {}, r.model ?? ''),
                  h(
                    'td',
                    {},
                    r.jobs.map((j, k) => [k ? ', ' : '', server ? link(`/jobs/${enc(j)}/`, j) : j]),
                  ),
                  h('td', { class: 'num' }, String(r.score.tasks)),
                  h('td', { class: 'num' }, `${r.resolved}/${r.trials}`),
                  h('td', { class: 'num' }, pct(r.score.mean)),
                  h('td', { class: 'num' }, interval(r.score.interval)),
                  h('td', { class: 'num' }, String(r.errors)),
                  h('td', { class: 'num' }, usd(r.cost_usd)),
                  h('td', { class: 'num' }, seconds(r.mean_trial_sec)),
                ),
              ),
            ),
          ),
        ]),
      ),
    );
  }

  function renderJobs(list) {
    const selected = new Set();
    const compare = h(
      'button',
      {
        disabled: true,
        onclick: () => (location.href = `/compare?jobs=${[...selected].map(enc).join(',')}`),
      },
      'compare selected',
    );
    app.replaceChildren(
      header('berth view', list.jobs_dir),
      h(
        'main',
        { 'data-jobs': '' },
        h('p', {}, link('/leaderboard', 'leaderboard'), ' · ', compare),
        list.jobs.length === 0 ? h('p', { class: 'empty' }, 'No job in this folder yet.') : null,
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [
                '',
                'job',
                'state',
                'agent',
                'model',
                'dataset',
                'trials',
                'resolved',
                'rate',
                '95% Wilson interval',
                'started',
              ].map((x) => h('th', {}, x)),
            ),
          ),
          h(
            'tbody',
            {},
            list.jobs.map((j) => {
              const box = h('input', {
                type: 'checkbox',
                onchange: () => {
                  if (box.checked) selected.add(j.name);
                  else selected.delete(j.name);
                  compare.disabled = selected.size < 2;
                },
              });
              return h(
                'tr',
                { 'data-job': j.name },
                h('td', {}, box),
                h('td', {}, link(`/jobs/${enc(j.name)}/`, j.name)),
                h(
                  'td',
                  {},
                  j.error ? h('span', { class: 'neg' }, j.error) : j.running ? badge('running') : 'finished',
                ),
                h('td', {}, j.agent ?? ''),
                h('td', {}, j.model ?? ''),
                h('td', {}, j.dataset ?? ''),
                h('td', { class: 'num', 'data-trials': j.trials }, `${j.finished}/${j.planned}`),
                h('td', { class: 'num' }, String(j.rate ? j.rate.resolved : '–')),
                h('td', { class: 'num' }, pct(j.rate?.rate)),
                h('td', { class: 'num' }, interval(j.rate?.interval)),
                h('td', {}, j.started_at ? j.started_at.replace('T', ' ').replace(/\..*/, '') : ''),
              );
            }),
          ),
        ),
      ),
    );
  }

  // ---- start -------------------------------------------------------------------------------

  function showError(error) {
    app.replaceChildren(h('main', {}, h('div', { class: 'warn' }, `berth: ${error.message}`)));
  }

  function onRoute() {
    const { parts } = route();
    if (parts[0] === 'trial' && parts[1]) renderTrialPage(parts[1]).catch(showError);
    else renderJobPage();
  }

  /** Keys, as in `harbor view`: j / k the next / previous trial, Escape back to the list. */
  function onKey(event) {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const { parts } = route();
    const trials = jobData?.job.trials ?? [];
    const at = parts[0] === 'trial' ? trials.findIndex((t) => t.name === parts[1]) : -1;
    if (event.key === 'Escape' && at >= 0) location.hash = '#/';
    else if ((event.key === 'j' || event.key === 'k') && at >= 0) {
      const next = trials[at + (event.key === 'j' ? 1 : -1)];
      if (next) location.hash = `#/trial/${enc(next.name)}`;
    }
  }

  /** The viewer pushes `change` events; the page reloads its data and redraws the current view. */
  function live(url, reload) {
    if (!server || typeof EventSource === 'undefined') return;
    const events = new EventSource(url);
    events.addEventListener('change', () => reload().catch(showError));
  }

  async function start() {
    if (boot.page === 'job') {
      const load = async () => {
        jobData = server ? await api(jobPath(boot.job)) : inline('berth-data');
        document.title = `berth: ${jobData.job.name}`;
      };
      await load();
      window.addEventListener('hashchange', onRoute);
      window.addEventListener('keydown', onKey);
      onRoute();
      live(`${jobPath(boot.job)}/stream`, async () => {
        const { parts } = route();
        await load();
        if (parts[0] !== 'trial') renderJobPage();
        else if (jobData.job.trials.find((t) => t.name === parts[1])?.outcome !== 'running')
          await renderTrialPage(parts[1]);
      });
    } else if (boot.page === 'compare') {
      renderCompare(server ? await api(`/api/compare${location.search}`) : inline('berth-data'));
    } else if (boot.page === 'leaderboard') {
      renderLeaderboard(server ? await api('/api/leaderboard') : inline('berth-data'));
    } else if (boot.page === 'jobs') {
      const load = async () => renderJobs(await api('/api/jobs'));
      await load();
      live('/api/stream', load);
    }
    document.body.setAttribute('data-ready', 'true');
  }

  start().catch(showError);
})();
