/** Splits one CSV record (RFC 4180) into its fields; the inverse of `formatLine`. */
export function parseLine(line, delimiter = ',') {
  const fields = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= line.length) throw new SyntaxError('unterminated quoted field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += line[i];
        i += 1;
      }
      if (i < line.length && !line.startsWith(delimiter, i)) throw new SyntaxError(`text after a quoted field at ${i}`);
    } else {
      const end = line.indexOf(delimiter, i);
      field = line.slice(i, end === -1 ? line.length : end);
      i = end === -1 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i += delimiter.length;
    if (i === line.length) {
      fields.push('');
      return fields;
    }
  }
}
