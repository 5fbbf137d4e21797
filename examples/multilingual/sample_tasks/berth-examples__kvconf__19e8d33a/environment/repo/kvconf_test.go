package kvconf

import "testing"

func TestParseSettings(t *testing.T) {
	got, bad := Parse("# comment\nname = berth\n\nlevel=3\nname=harbor\n")
	if bad != 0 || len(got) != 2 || got["name"] != "harbor" || got["level"] != "3" {
		t.Fatalf("got %v, bad line %d", got, bad)
	}
}

func TestParseBadLine(t *testing.T) {
	if _, bad := Parse("a=1\nnot a setting\n"); bad != 2 {
		t.Fatalf("bad line %d, want 2", bad)
	}
}
