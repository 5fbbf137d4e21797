// Package gowrap joins words into lines.
package gowrap

import "strings"

// Join puts the words on one line, one space between each two.
func Join(words []string) string {
	return strings.Join(words, "  ")
}
