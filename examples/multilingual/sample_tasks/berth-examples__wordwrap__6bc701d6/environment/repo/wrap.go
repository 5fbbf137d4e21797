// Package wordwrap wraps text at word boundaries.
package wordwrap

import "strings"

// Wrap returns the lines of text, each at most width columns wide.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if len(word) > width {
			continue
		}
		if line == "" {
			line = word
		} else if len(line)+1+len(word) < width {
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
