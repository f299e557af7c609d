package push

import (
	"testing"
	"time"
)

func TestParseWait(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "", want: 0},
		{in: "60", want: 60 * time.Second},
		{in: "60s", want: 60 * time.Second},
		{in: "2m", want: 2 * time.Minute},
		{in: "1500ms", want: 1500 * time.Millisecond},
		{in: "0", want: 0},
		{in: "120", want: MaxWait},
		{in: "121", bad: true},
		{in: "2m1s", bad: true},
		{in: "-1s", bad: true},
		{in: "-1", bad: true},
		{in: "soon", bad: true},
		{in: "99999999999", bad: true},
	} {
		got, err := ParseWait(tc.in)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("ParseWait(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestDurationText(t *testing.T) {
	for in, want := range map[time.Duration]string{MaxWait: "120s", 1500 * time.Millisecond: "1.5s"} {
		if got := durationText(in); got != want {
			t.Errorf("durationText(%v) = %q, want %q", in, got, want)
		}
	}
}
