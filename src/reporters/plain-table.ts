/**
 * A borderless table for the terminal (cli-table3): columns separated by two spaces, numbers
 * aligned right. Used by `berth compare` and `berth leaderboard`.
 */
import Table from 'cli-table3';

const NO_BORDER = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

/**
 * Renders rows under a header, without borders or colour.
 * @param right indexes of the columns aligned right (numbers).
 */
export function plainTable(head: string[], rows: string[][], right: readonly number[] = []): string {
  const table = new Table({
    head,
    chars: NO_BORDER,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    colAligns: head.map((_, i) => (right.includes(i) ? 'right' : 'left')),
  });
  table.push(...rows);
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}
