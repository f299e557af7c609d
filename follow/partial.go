package follow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/envelope"
)

// translator makes the snapshot layout's translation files (fixtures/README.md)
// of one catalog against its en-US answer.
type translator struct {
	en   []byte
	byID map[any]any // decoded on first need
}

// partialFile turns a localized answer into a translation file: a bare array
// of partial items, each with its uuid and only the fields whose value differs
// from en-US. Laid over the en-US items by the translation merge rule it gives
// back the localized items. It returns nil when nothing differs (an upstream
// that sends en-US text for a locale it has not translated), so no file is
// written.
func (tr *translator) partialFile(locBody []byte) ([]byte, error) {
	if bytes.Equal(tr.en, locBody) {
		return nil, nil
	}
	if tr.byID == nil {
		en, err := envelope.DecodeArray(tr.en)
		if err != nil {
			return nil, fmt.Errorf("en-US: %w", err)
		}
		tr.byID = make(map[any]any, len(en))
		for _, it := range en {
			if m, ok := it.(map[string]any); ok {
				tr.byID[m["uuid"]] = m
			}
		}
	}
	loc, err := envelope.DecodeArray(locBody)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, it := range loc {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errors.New("an item is not an object")
		}
		base, ok := tr.byID[m["uuid"]]
		if !ok {
			// Not in en-US: kept whole, so validation names it (the upstream
			// answered from two versions).
			out = append(out, m)
			continue
		}
		if p, differs := partial(base, m); differs {
			pm := p.(map[string]any)
			pm["uuid"] = m["uuid"]
			out = append(out, pm)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// partial is what of loc differs from base, in the shape the merge rule reads:
// objects keep only differing keys (and the uuid or tier an array element is
// matched by), arrays of elements matched by uuid or tier keep only differing
// elements, arrays matched by position keep every position up to the last
// differing one. Keys base has and loc lacks cannot be said in a partial and
// are left as en-US has them.
func partial(base, loc any) (any, bool) {
	switch l := loc.(type) {
	case map[string]any:
		b, ok := base.(map[string]any)
		if !ok {
			return loc, true
		}
		out := map[string]any{}
		for k, lv := range l {
			bv, ok := b[k]
			if !ok {
				out[k] = lv
				continue
			}
			if p, d := partial(bv, lv); d {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		copyKey(out, l)
		return out, true
	case []any:
		b, ok := base.([]any)
		if !ok {
			return loc, true
		}
		keyed := len(l) > 0 && !slices.ContainsFunc(l, func(e any) bool {
			m, ok := e.(map[string]any)
			return !ok || m["uuid"] == nil && m["tier"] == nil
		})
		var out []any
		last := -1
		for i, e := range l {
			j := catalog.MatchElement(b, e, i)
			if j < 0 {
				continue // the merge rule never adds elements
			}
			p, d := partial(b[j], e)
			switch {
			case d && keyed:
				if pm, isMap := p.(map[string]any); isMap {
					copyKey(pm, e.(map[string]any))
				}
				out = append(out, p)
			case d:
				out = append(out, p)
				last = len(out) - 1
			case !keyed:
				if _, isMap := e.(map[string]any); isMap {
					out = append(out, map[string]any{})
				} else {
					out = append(out, e)
				}
			}
		}
		if !keyed {
			out = out[:last+1]
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	default:
		if reflect.DeepEqual(base, loc) {
			return nil, false
		}
		return loc, true
	}
}

// copyKey copies into dst the uuid, else the tier, of src: what the merge
// rule matches an array element by.
func copyKey(dst, src map[string]any) {
	for _, key := range []string{"uuid", "tier"} {
		if v, ok := src[key]; ok {
			dst[key] = v
			return
		}
	}
}
