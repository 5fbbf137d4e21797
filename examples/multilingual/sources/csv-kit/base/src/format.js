/** Formats one CSV record (RFC 4180): fields holding the delimiter, a quote or a newline are quoted. */
export function formatLine(fields, delimiter = ',') {
  return fields
    .map((field) => {
      const text = String(field);
      return /["\r\n]/.test(text) || text.includes(delimiter) ? `"${text.replaceAll('"', '""')}"` : text;
    })
    .join(delimiter);
}
