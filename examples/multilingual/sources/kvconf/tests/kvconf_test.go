package kvconf

import (
	"errors"
	"testing"
)

func TestParseSettings(t *testing.T) {
	got, err := Parse("# comment\nname = berth\n\nlevel=3\nname=harbor\n")
	if err != nil || len(got) != 2 || got["name"] != "harbor" || got["level"] != "3" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestParseBadLine(t *testing.T) {
	_, err := Parse("a=1\nnot a setting\n")
	var lineErr *LineError
	if !errors.As(err, &lineErr) || lineErr.Line != 2 || lineErr.Text != "not a setting" {
		t.Fatalf("got %v", err)
	}
	if want := "line 2: expected key=value: not a setting"; err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
}

func TestConfigGet(t *testing.T) {
	cfg, err := Parse("a=1")
	if err != nil || cfg.Get("a", "x") != "1" || cfg.Get("b", "x") != "x" {
		t.Fatalf("got %v, %v", cfg, err)
	}
}
