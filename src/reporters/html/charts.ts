/**
 * The report's charts as Vega-Lite 5 specifications (plain data; the page draws them with
 * vega-embed): the resolved rate by repository, language and task type with 95% Wilson
 * intervals, durations per phase, and tokens and cost per trial.
 */
import type { CategoryKey, TrialRecord } from '../../results/model.ts';
import type { GroupRate, JobSummary } from '../../results/summary.ts';

/** A chart of the report: where it goes, its title, and its Vega-Lite spec (or why there is none). */
export interface ChartSpec {
  /** Stable id, used as the container's `data-chart`. */
  id: string;
  title: string;
  /** Vega-Lite 5 spec; null when the job has nothing to draw (see `note`). */
  spec: Record<string, unknown> | null;
  /** Said under the title: what the marks are, or why there is no chart. */
  note: string;
  /** How many data marks the chart draws (bars, boxes or points): what the browser test counts. */
  marks: number;
}

const OUTCOME_COLOURS = {
  domain: ['resolved', 'failed', 'errored', 'cancelled', 'running'],
  range: ['#2e7d32', '#d84315', '#6a1b9a', '#757575', '#1565c0'],
};

const LABELS: Record<CategoryKey, string> = {
  repository: 'repository',
  language: 'language',
  task_type: 'task type',
};

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

/** Resolved rate per value of one category: a bar per value, its Wilson interval as a rule. */
export function categoryChart(key: CategoryKey, groups: readonly GroupRate[]): ChartSpec {
  const id = `by-${key.replace('_', '-')}`;
  const title = `Resolved rate by ${LABELS[key]}`;
  const rows = groups
    .filter((group) => group.n > 0)
    .map((group) => ({
      value: group.value,
      rate: round(group.rate ?? 0),
      low: round(group.interval?.low ?? 0),
      high: round(group.interval?.high ?? 0),
      label: `${group.resolved}/${group.n}`,
      n: group.n,
    }));
  if (rows.length === 0 || rows.every((row) => row.value === '(none)'))
    return {
      id,
      title,
      spec: null,
      note: `The tasks of this job do not name their ${LABELS[key]}.`,
      marks: 0,
    };
  const y = { field: 'value', type: 'nominal', title: null, sort: null, axis: { labelLimit: 260 } };
  return {
    id,
    title,
    note: 'Bars: resolved / finished trials. Lines: 95% Wilson score interval.',
    marks: rows.length,
    spec: {
      data: { values: rows },
      width: 'container',
      autosize: { type: 'fit-x', contains: 'padding' },
      // A fixed height (not a step): a discrete height and a container width make Vega-Lite warn.
      height: 24 * rows.length,
      layer: [
        {
          mark: { type: 'bar', color: '#4e79a7', cornerRadiusEnd: 2 },
          encoding: {
            y,
            x: {
              field: 'rate',
              type: 'quantitative',
              title: 'resolved rate',
              axis: { format: '.0%' },
              scale: { domain: [0, 1] },
            },
            tooltip: [
              { field: 'value', title: LABELS[key] },
              { field: 'label', title: 'resolved' },
              { field: 'rate', title: 'rate', format: '.1%' },
              { field: 'low', title: '95% low', format: '.1%' },
              { field: 'high', title: '95% high', format: '.1%' },
            ],
          },
        },
        {
          mark: { type: 'rule', color: '#222', strokeWidth: 1.5 },
          encoding: { y, x: { field: 'low', type: 'quantitative' }, x2: { field: 'high' } },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, fontSize: 11, color: '#333' },
          encoding: { y, x: { field: 'high', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    },
  };
}

/** Seconds per phase over the trials: one box (min, quartiles, max) per phase that ran. */
export function phaseChart(trials: readonly TrialRecord[]): ChartSpec {
  const labels = {
    environment: 'environment',
    agent_setup: 'agent setup',
    agent: 'agent',
    verifier: 'verifier',
  };
  const rows: Array<{ phase: string; seconds: number; trial: string }> = [];
  for (const trial of trials)
    for (const [phase, label] of Object.entries(labels)) {
      const seconds = trial.phases[phase as keyof typeof labels];
      if (seconds !== null) rows.push({ phase: label, seconds: round(seconds, 3), trial: trial.name });
    }
  const phases = Object.values(labels).filter((label) => rows.some((row) => row.phase === label));
  const base = { id: 'phases', title: 'Durations per phase' };
  if (rows.length === 0) return { ...base, spec: null, note: 'No trial recorded phase times.', marks: 0 };
  return {
    ...base,
    note: 'Seconds per trial: box from the first to the third quartile, line at the median, whiskers to min and max.',
    marks: phases.length,
    spec: {
      data: { values: rows },
      width: 'container',
      autosize: { type: 'fit-x', contains: 'padding' },
      height: 30 * phases.length,
      mark: { type: 'boxplot', extent: 'min-max', size: 16, color: '#59a14f' },
      encoding: {
        y: { field: 'phase', type: 'nominal', title: null, sort: phases },
        x: { field: 'seconds', type: 'quantitative', title: 'seconds' },
      },
    },
  };
}

/** Tokens and cost per trial: a point per trial that reported tokens. */
export function costChart(trials: readonly TrialRecord[]): ChartSpec {
  const rows = trials
    .filter((trial) => trial.input_tokens !== null || trial.output_tokens !== null)
    .map((trial) => ({
      trial: trial.name,
      outcome: trial.outcome,
      tokens: (trial.input_tokens ?? 0) + (trial.output_tokens ?? 0),
      input: trial.input_tokens ?? 0,
      cache: trial.cache_tokens ?? 0,
      output: trial.output_tokens ?? 0,
      cost: trial.cost_usd,
    }));
  const base = { id: 'cost', title: 'Tokens and cost per trial' };
  if (rows.length === 0)
    return {
      ...base,
      spec: null,
      note: 'No trial reported token counts (agents that call models through berth record them).',
      marks: 0,
    };
  const withCost = rows.some((row) => row.cost !== null);
  return {
    ...base,
    note: withCost
      ? 'A point per trial: input + output tokens against cost in USD.'
      : 'A point per trial: input + output tokens against output tokens (no cost was reported).',
    marks: rows.length,
    spec: {
      data: { values: rows },
      width: 'container',
      autosize: { type: 'fit-x', contains: 'padding' },
      height: 220,
      mark: { type: 'point', filled: true, size: 60, opacity: 0.8 },
      encoding: {
        x: { field: 'tokens', type: 'quantitative', title: 'input + output tokens' },
        y: withCost
          ? { field: 'cost', type: 'quantitative', title: 'cost (USD)' }
          : { field: 'output', type: 'quantitative', title: 'output tokens' },
        color: { field: 'outcome', type: 'nominal', scale: OUTCOME_COLOURS, title: null },
        tooltip: [
          { field: 'trial' },
          { field: 'outcome' },
          { field: 'input', title: 'input tokens' },
          { field: 'cache', title: 'cached tokens' },
          { field: 'output', title: 'output tokens' },
          { field: 'cost', title: 'cost (USD)', format: '.4f' },
        ],
      },
    },
  };
}

/** Every chart of a job's report, in page order. */
export function jobCharts(trials: readonly TrialRecord[], summary: JobSummary): ChartSpec[] {
  return [
    categoryChart('repository', summary.by.repository),
    categoryChart('language', summary.by.language),
    categoryChart('task_type', summary.by.task_type),
    phaseChart(trials),
    costChart(trials),
  ];
}
