// Package kvconf reads key=value configuration text.
package kvconf

import (
	"fmt"
	"strings"
)

// Config holds parsed settings by key.
type Config map[string]string

// Get returns the value of key, or fallback when it is not set.
func (c Config) Get(key, fallback string) string {
	if value, ok := c[key]; ok {
		return value
	}
	return fallback
}

// LineError reports a line that is not a setting.
type LineError struct {
	Line int
	Text string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: expected key=value: %s", e.Line, e.Text)
}

// Parse returns the settings of text, or a *LineError for the first bad line.
func Parse(text string) (Config, error) {
	settings := Config{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) == "" {
			return nil, &LineError{Line: i + 1, Text: line}
		}
		settings[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return settings, nil
}
