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

func TestWrapExactWidth(t *testing.T) {
	got := Wrap("aaa bbb ccc", 7)
	if want := []string{"aaa bbb", "ccc"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWrapLongWord(t *testing.T) {
	got := Wrap("a incomprehensibilities b", 5)
	if want := []string{"a", "incomprehensibilities", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWrapCountsRunes(t *testing.T) {
	got := Wrap("héé ççç", 7)
	if want := []string{"héé ççç"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
