/**
 * The list of subcommands. Each entry registers one command on the program;
 * keep one command per file and its heavy imports inside the action.
 */
import type { Command } from 'commander';
import { registerDataset } from './dataset.ts';
import { registerDemo } from './demo.ts';
import { registerEval } from './eval.ts';
import { registerRun } from './run.ts';

export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [
  registerRun,
  registerEval,
  registerDataset,
  registerDemo,
];
