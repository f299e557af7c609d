package bounded_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/refdata/refdata/bounded"
)

func size(_ string, v []byte) int64 { return int64(len(v)) }

// TestCache: each limit holds after every Add, the values used least recently
// leave first, a value over Largest is never kept, a replaced value's bytes
// are taken back, and the value added last stays even when it alone passes
// Bytes.
func TestCache(t *testing.T) {
	t.Parallel()
	type add struct {
		key string
		n   int
	}
	tests := []struct {
		name   string
		limits bounded.Limits
		adds   []add
		get    []string // used, in this order, after the adds up to the last
		want   []string // kept after the last add
		bytes  int64
	}{
		{"bytes: least recently used leave first", bounded.Limits{Bytes: 30},
			[]add{{"a", 10}, {"b", 10}, {"c", 10}, {"d", 10}}, []string{"a"}, []string{"a", "c", "d"}, 30},
		{"bytes: one big value drops several", bounded.Limits{Bytes: 30},
			[]add{{"a", 10}, {"b", 10}, {"c", 10}, {"d", 25}}, nil, []string{"d"}, 25},
		{"count", bounded.Limits{Count: 2},
			[]add{{"a", 1}, {"b", 1}, {"c", 1}}, []string{"a"}, []string{"a", "c"}, 2},
		{"both, count reached first", bounded.Limits{Bytes: 100, Count: 2},
			[]add{{"a", 10}, {"b", 10}, {"c", 10}}, nil, []string{"b", "c"}, 20},
		{"largest: refused, the rest stays", bounded.Limits{Bytes: 80, Largest: 10},
			[]add{{"a", 10}, {"b", 11}}, nil, []string{"a"}, 10},
		{"largest: a refused value leaves the kept one for its key", bounded.Limits{Bytes: 80, Largest: 10},
			[]add{{"a", 10}, {"a", 11}}, nil, []string{"a"}, 10},
		{"replaced: its bytes taken back", bounded.Limits{Bytes: 30},
			[]add{{"a", 10}, {"b", 10}, {"a", 5}, {"c", 15}}, nil, []string{"a", "b", "c"}, 30},
		{"the last added stays alone over Bytes", bounded.Limits{Bytes: 30},
			[]add{{"a", 10}, {"b", 40}}, nil, []string{"b"}, 40},
		{"no limits", bounded.Limits{},
			[]add{{"a", 1 << 20}, {"b", 1 << 20}}, nil, []string{"a", "b"}, 2 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := bounded.New(tt.limits, size)
			last := len(tt.adds) - 1
			for _, a := range tt.adds[:last] {
				c.Add(a.key, make([]byte, a.n))
			}
			for _, k := range tt.get {
				if _, ok := c.Get(k); !ok {
					t.Fatalf("%s not kept before the last add", k)
				}
			}
			a := tt.adds[last]
			c.Add(a.key, make([]byte, a.n))
			var kept []string
			for _, k := range []string{"a", "b", "c", "d"} {
				if _, ok := c.Get(k); ok {
					kept = append(kept, k)
				}
			}
			if !slices.Equal(kept, tt.want) || c.Bytes() != tt.bytes || c.Len() != len(tt.want) {
				t.Errorf("kept %v (%d bytes, Len %d); want %v (%d bytes)", kept, c.Bytes(), c.Len(), tt.want, tt.bytes)
			}
			if v, ok := c.Get(a.key); ok && c.Keeps(int64(a.n)) && len(v) != a.n {
				t.Errorf("%s holds %d bytes, want the %d added last", a.key, len(v), a.n)
			}
		})
	}
}

// TestCacheConcurrent: many goroutines adding and getting keep the byte
// count equal to the kept values' sizes and within the bound (run with -race).
func TestCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := bounded.New(bounded.Limits{Bytes: 1000, Largest: 100}, size)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				k := fmt.Sprint((g*7 + i) % 50)
				if _, ok := c.Get(k); !ok {
					c.Add(k, make([]byte, 1+(g+i)%100))
				}
			}
		})
	}
	wg.Wait()
	var sum int64
	for i := range 50 {
		if v, ok := c.Get(fmt.Sprint(i)); ok {
			sum += int64(len(v))
		}
	}
	if sum != c.Bytes() || sum > 1000 || c.Len() == 0 {
		t.Errorf("kept values sum to %d bytes, Bytes says %d (bound 1000), %d kept", sum, c.Bytes(), c.Len())
	}
}
