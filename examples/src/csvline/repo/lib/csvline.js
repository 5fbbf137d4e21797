/**
 * One CSV record at a time, RFC 4180 quoting.
 *
 * `parseLine(line, { delimiter })` returns the fields of one record;
 * `stringify(fields, { delimiter })` writes one. An empty line is a record
 * with no fields.
 */

/** Splits one record into its fields. */
export function parseLine(line, { delimiter = ',' } = {}) {
  if (line === '') return [];
  return line.split(delimiter).map((field) =>
    field.length >= 2 && field.startsWith('"') && field.endsWith('"') ? field.slice(1, -1) : field,
  );
}

/** Writes one record, quoting the fields that need it. */
export function stringify(fields, { delimiter = ',' } = {}) {
  return fields
    .map((value) => {
      const field = String(value);
      const needsQuotes = field.includes(delimiter) || field.includes('"') || field.includes('\n');
      return needsQuotes ? `"${field.replaceAll('"', '""')}"` : field;
    })
    .join(delimiter);
}
