/**
 * The identity of a task's content: what a resume compares, what a trial spec carries, and
 * (issue 16) what a worker fetches by.
 */
import { createHash } from 'node:crypto';
import type { Task } from './task.ts';

/**
 * sha256 (hex) of what defines a task's trial: its name and its environment, verifier and
 * solution specs, as loaded. A task whose definition changed gets another checksum, so a
 * resumed job runs it again.
 */
export function taskChecksum(task: Task): string {
  return createHash('sha256')
    .update(JSON.stringify([task.name, task.environment, task.verifier, task.solution]), 'utf8')
    .digest('hex');
}
