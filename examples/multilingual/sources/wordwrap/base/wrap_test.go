package wordwrap

import (
	"reflect"
	"testing"
)

func TestWrapShortText(t *testing.T) {
	got := Wrap("hello world", 40)
	if want := []string{"hello world"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWrapEmpty(t *testing.T) {
	if got := Wrap("   ", 10); len(got) != 0 {
		t.Fatalf("got %q, want no lines", got)
	}
}

func TestWrapBreaks(t *testing.T) {
	got := Wrap("aa bb cc dd", 6)
	if want := []string{"aa bb", "cc dd"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
