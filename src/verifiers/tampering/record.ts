/**
 * Carries a SWE-bench verifier's tamper record and per-rules verdicts into the trial's
 * result.json (`berth.tampering`, `berth.rules`, `berth.verdict_by_rules`) and says in the
 * trial's note what was seen.
 */

import type { SwebenchRules } from '../../grading/swebench.ts';
import type { BerthTrialFacts } from '../../trials/result.ts';
import type { TamperRecord } from './types.ts';

/** Copies the record from the verifier's details into `berth`; returns the note's parts. */
export function recordTampering(berth: BerthTrialFacts, details: Record<string, unknown>): string[] {
  if (details.rules === 'default' || details.rules === 'swebench')
    berth.rules = details.rules as SwebenchRules;
  if (details.verdict_by_rules && typeof details.verdict_by_rules === 'object')
    berth.verdict_by_rules = details.verdict_by_rules as BerthTrialFacts['verdict_by_rules'];
  const record = details.tampering as TamperRecord | undefined;
  if (!record || !Array.isArray(record.findings)) return [];
  berth.tampering = record;
  if (record.findings.length === 0) return [];
  const vetoing = record.findings.filter((f) => f.veto);
  if (berth.rules !== 'swebench' && vetoing.length > 0)
    return [`tampering: ${vetoing.map((f) => f.message).join('; ')}`];
  return [
    `tamper findings (${vetoing.length > 0 ? 'graded as SWE-bench does' : 'no veto'}): ${record.findings.map((f) => f.message).join('; ')}`,
  ];
}
