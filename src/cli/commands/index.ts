/**
 * The list of subcommands. Each entry registers one command on the program;
 * keep one command per file and its heavy imports inside the action.
 */
import type { Command } from 'commander';
import { registerBases } from './bases.ts';
import { registerCheck } from './check.ts';
import { registerClean } from './clean.ts';
import { registerCompare } from './compare.ts';
import { registerDataset } from './dataset.ts';
import { registerDemo } from './demo.ts';
import { registerEval } from './eval.ts';
import { registerGenerate } from './generate.ts';
import { registerGrade } from './grade.ts';
import { registerLeaderboard } from './leaderboard.ts';
import { registerMultilingual } from './multilingual.ts';
import { registerParse } from './parse.ts';
import { registerReport } from './report.ts';
import { registerRun } from './run.ts';
import { registerTrial } from './trial.ts';
import { registerView } from './view.ts';
import { registerWorker } from './worker.ts';

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  registerRun,
  registerEval,
  registerGenerate,
  registerCheck,
  registerBases,
  registerClean,
  registerParse,
  registerGrade,
  registerDataset,
  registerDemo,
  registerMultilingual,
  registerReport,
  registerView,
  registerWorker,
  registerCompare,
  registerLeaderboard,
  registerTrial,
];
