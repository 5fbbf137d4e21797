/**
 * One CSV record at a time, RFC 4180 quoting.
 *
 * `parseLine(line, { delimiter })` returns the fields of one record;
 * `stringify(fields, { delimiter })` writes one. An empty line is a record
 * with no fields.
 */

/**
 * Splits one record into its fields.
 *
 * A field that starts with `"` is quoted: it runs to the next lone `"`, may
 * hold the delimiter and line breaks, and `""` inside it stands for one `"`.
 * A quote inside an unquoted field is an ordinary character.
 * @throws {SyntaxError} `unterminated quoted field at column N` when a quoted
 *   field never closes, and `unexpected character after closing quote at column N`
 *   when something other than the delimiter follows one (columns are 1-based).
 */
export function parseLine(line, { delimiter = ',' } = {}) {
  if (line === '') return [];
  const fields = [];
  let position = 0;
  for (;;) {
    if (line[position] === '"') {
      const opening = position;
      let value = '';
      position += 1;
      for (;;) {
        const quote = line.indexOf('"', position);
        if (quote === -1) throw new SyntaxError(`unterminated quoted field at column ${opening + 1}`);
        value += line.slice(position, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          position = quote + 2;
          continue;
        }
        position = quote + 1;
        break;
      }
      fields.push(value);
      if (position === line.length) return fields;
      if (!line.startsWith(delimiter, position)) {
        throw new SyntaxError(`unexpected character after closing quote at column ${position + 1}`);
      }
      position += delimiter.length;
    } else {
      const next = line.indexOf(delimiter, position);
      if (next === -1) {
        fields.push(line.slice(position));
        return fields;
      }
      fields.push(line.slice(position, next));
      position = next + delimiter.length;
    }
  }
}

/** Writes one record, quoting the fields that need it. */
export function stringify(fields, { delimiter = ',' } = {}) {
  return fields
    .map((value) => {
      const field = String(value);
      const needsQuotes =
        field.includes(delimiter) || field.includes('"') || field.includes('\n') || field.includes('\r');
      return needsQuotes ? `"${field.replaceAll('"', '""')}"` : field;
    })
    .join(delimiter);
}
