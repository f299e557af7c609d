package representation_test

import (
	"bytes"
	"testing"

	"github.com/refdata/refdata/representation"
)

func TestPick(t *testing.T) {
	b := representation.NewBody(bytes.Repeat([]byte(`{"displayName":"Glitchpop Odin"},`), 100), "")
	b.Compress()
	for _, tc := range []struct {
		accept []string
		want   string
	}{
		{nil, ""},
		{[]string{"gzip"}, "gzip"},
		{[]string{"br"}, "br"},
		{[]string{"gzip, deflate, br"}, "br"},
		{[]string{"gzip;q=1.0, br;q=0.5"}, "gzip"},
		{[]string{"br;q=0, gzip"}, "gzip"},
		{[]string{"gzip;q=0"}, ""},
		{[]string{"*"}, "br"},
		{[]string{"*;q=0.1, gzip;q=0.5"}, "gzip"},
		{[]string{"identity"}, ""},
		{[]string{"GZIP"}, "gzip"},
		{[]string{"x-gzip"}, "gzip"},
		{[]string{"deflate", "br;q=0.9"}, "br"},
		{[]string{"gzip;q=garbage"}, ""},
		{[]string{" br ; q=0.001 "}, "br"},
	} {
		rep := b.Pick(tc.accept)
		got := ""
		if rep.Encoding.Value != nil {
			got = rep.Encoding.Value[0]
		}
		if got != tc.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", tc.accept, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { b.Pick([]string{"gzip, deflate, br;q=0.9"}) }); n != 0 {
		t.Errorf("Pick allocates %v times", n)
	}
}
