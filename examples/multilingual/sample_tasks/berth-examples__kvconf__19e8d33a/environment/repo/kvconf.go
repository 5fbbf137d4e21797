// Package kvconf reads key=value configuration text.
package kvconf

import "strings"

// Parse returns the settings of text and the 1-based number of the first bad line, or 0.
func Parse(text string) (map[string]string, int) {
	settings := map[string]string{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) == "" {
			return nil, i + 1
		}
		settings[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return settings, 0
}
