/** Quotes a string for POSIX sh (single quotes, with embedded quotes escaped). */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
