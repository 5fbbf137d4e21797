// Package wordwrap wraps text at word boundaries.
package wordwrap

import (
	"strings"
	"unicode/utf8"
)

// Wrap returns the lines of text, each at most width columns (runes) wide;
// a word longer than width stands alone on its line.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line == "" {
			line = word
		} else if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width {
			line += " " + word
		} else {
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
