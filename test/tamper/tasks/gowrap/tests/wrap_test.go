package gowrap

import "testing"

func TestJoin(t *testing.T) {
	if got := Join([]string{"a", "b", "c"}); got != "a b c" {
		t.Fatalf("got %q, want %q", got, "a b c")
	}
}
