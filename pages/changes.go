package pages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"weak"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// localeOptions are the locales as the picker offers them, loc selected.
func localeOptions(loc int) []localeOption {
	var opts []localeOption
	for i, code := range catalog.Locales {
		opts = append(opts, localeOption{Code: code, Name: localeNames[code], Selected: i == loc})
	}
	return opts
}

// localeNames are the 18 locales as the picker shows them: each in its own
// language, so a reader finds theirs without knowing the code.
var localeNames = map[string]string{
	"ar-AE": "العربية", "de-DE": "Deutsch", "en-US": "English (US)", "es-ES": "Español (España)",
	"es-MX": "Español (México)", "fr-FR": "Français", "id-ID": "Bahasa Indonesia", "it-IT": "Italiano",
	"ja-JP": "日本語", "ko-KR": "한국어", "pl-PL": "Polski", "pt-BR": "Português (Brasil)",
	"ru-RU": "Русский", "th-TH": "ไทย", "tr-TR": "Türkçe", "vi-VN": "Tiếng Việt",
	"zh-CN": "简体中文", "zh-TW": "繁體中文",
}

type versionInfo struct {
	ManifestID, Version, BuildDate string
}

type localeOption struct {
	Code, Name string
	Selected   bool
}

type changesData struct {
	From, To   versionInfo
	Locales    []localeOption
	Action     string
	Summary    gen.DiffSummary
	Categories []categoryChanges
	Unchanged  []string
	// NewFields are the fields the contract does not describe that the newer
	// version's items carry and the older one's did not.
	NewFields []newField
}

type newField struct {
	Path, Field string
	Items       int
}

type categoryChanges struct {
	ID, Title, Path         string
	Added, Removed, Changed []item
}

type item struct {
	UUID, Name, NameLang, Icon, URL string
	Fields                          []fieldChange // a changed item's
}

// fieldChange is one changed top-level field: Before and After for a scalar (text,
// number, boolean, null), a Note otherwise.
type fieldChange struct {
	Name, Before, After, Note string
	Scalar                    bool
}

// latestPair names the versions /changes compares: those of /v1/diff/latest,
// or, when the repository has no latest diff (pruned by retention), the
// active version and the one retained before it.
func (s *Site) latestPair() (from, to string, err error) {
	ed := s.repo.Active()
	if p := s.latest.Load(); p != nil && p.ed == weak.Make(ed) {
		return p.from, p.to, nil
	}
	b, err := s.repo.LatestDiff()
	switch {
	case err == nil:
		var d diffJSON
		if err := unmarshalBody(b, &d); err != nil {
			return "", "", fmt.Errorf("read the latest diff: %w", err)
		}
		from, to = d.Data.FromVersion, d.Data.ToVersion
	case catalog.ErrorCode(err) == catalog.ENOTFOUND:
		from, to = olderThan(s.repo.Versions(), ed.ManifestID), ed.ManifestID
		if from == "" {
			return "", "", catalog.Errorf(catalog.ENOTFOUND, "the server retains no version before %s, so there are no changes to show; /v1/versions lists the retained versions", ed.ManifestID)
		}
	default:
		return "", "", err
	}
	s.latest.Store(&latestPair{ed: weak.Make(ed), from: from, to: to})
	return from, to, nil
}

// olderThan is the version retained right before id in a newest-first list.
func olderThan(l *edition.VersionList, id string) string {
	if l == nil {
		return ""
	}
	for i, v := range l.Versions {
		if v.ManifestId == id && i+1 < len(l.Versions) {
			return l.Versions[i+1].ManifestId
		}
	}
	return ""
}

// renderChanges renders the changelog from → to in every locale.
func (s *Site) renderChanges(from, to string) (*kept, error) {
	a, err := s.repo.RetainedEdition(from)
	if err != nil {
		return nil, err
	}
	b, err := s.repo.RetainedEdition(to)
	if err != nil {
		return nil, err
	}
	raw, err := s.repo.Diff(a.ManifestID, b.ManifestID)
	if err != nil {
		return nil, err
	}
	var d diffJSON
	if err := unmarshalBody(raw, &d); err != nil {
		return nil, fmt.Errorf("read the diff %s → %s: %w", a.ManifestID, b.ManifestID, err)
	}
	k := &kept{img: newImages(s.Media)}
	for loc, lang := range catalog.Locales {
		data, err := changesModel(a, b, &d, loc, k.img)
		if err != nil {
			return nil, err
		}
		body, err := render("changes", data, lang, representation.Best)
		if err != nil {
			return nil, err
		}
		k.bodies = append(k.bodies, body)
	}
	return k, nil
}

// changesModel is what the changes template shows for one locale, its icons
// resolved by img.
func changesModel(a, b *edition.Edition, d *diffJSON, loc int, img *images) (changesData, error) {
	data := changesData{
		From:    versionInfo{a.ManifestID, a.Version.Version, a.Version.BuildDate},
		To:      versionInfo{b.ManifestID, b.Version.Version, b.Version.BuildDate},
		Locales: localeOptions(loc),
		Action:  "/changes/" + a.ManifestID + "/" + b.ManifestID,
		Summary: d.Data.Summary,
	}
	for _, u := range b.Unknown {
		if !slices.ContainsFunc(a.Unknown, func(o catalog.Unknown) bool { return o.Category == u.Category && o.Field == u.Field }) {
			data.NewFields = append(data.NewFields, newField{Path: "/v1/" + u.Category.Name(), Field: u.Field, Items: u.Items})
		}
	}
	for _, c := range catalog.Categories() {
		cd := d.Data.Categories[c.Name()]
		if len(cd.Added)+len(cd.Removed)+len(cd.Changed) == 0 {
			data.Unchanged = append(data.Unchanged, plural(c.Noun()))
			continue
		}
		cc := categoryChanges{
			ID:    "c-" + strings.ReplaceAll(c.Name(), "/", "-"),
			Title: capitalize(plural(c.Noun())),
			Path:  "/v1/" + c.Name(),
		}
		for _, id := range cd.Added {
			it, _, err := describe(b, c, id, loc, true, img)
			if err != nil {
				return data, err
			}
			cc.Added = append(cc.Added, it)
		}
		for _, id := range cd.Removed {
			it, _, err := describe(a, c, id, loc, false, img)
			if err != nil {
				return data, err
			}
			cc.Removed = append(cc.Removed, it)
		}
		for _, ch := range cd.Changed {
			it, after, err := describe(b, c, ch.Uuid, loc, true, img)
			if err != nil {
				return data, err
			}
			_, before, err := describe(a, c, ch.Uuid, loc, false, nil)
			if err != nil {
				return data, err
			}
			for _, f := range ch.Fields {
				it.Fields = append(it.Fields, compare(f, before[f], after[f]))
			}
			cc.Changed = append(cc.Changed, it)
		}
		data.Categories = append(data.Categories, cc)
	}
	return data, nil
}

// diffJSON is what the pages read of a diff's body: its categories by name, so
// every category the spec has is found without naming any here.
type diffJSON struct {
	Data struct {
		FromVersion string                      `json:"fromVersion"`
		ToVersion   string                      `json:"toVersion"`
		Summary     gen.DiffSummary             `json:"summary"`
		Categories  map[string]gen.CategoryDiff `json:"categories"`
	} `json:"data"`
}

// nameFields and iconFields are tried in order for an item's name and icon; the
// first string found wins. They cover every catalog's schema; an item with none
// is named by the last part of its assetPath, then its uuid.
var (
	nameFields = []string{"displayName", "titleText", "assetObjectName"}
	iconFields = []string{"displayIcon", "smallIcon", "icon", "smallPlayerCardAppearance", "listViewIcon", "largeIcon", "fullRender", "swatch"}
)

// describe names one item of ed in locale loc, its icon resolved by img, and
// returns its top-level fields. link adds the item's page (an item removed from
// the served version has none).
func describe(ed *edition.Edition, c catalog.Category, id string, loc int, link bool, img *images) (item, map[string]json.RawMessage, error) {
	u, ok := catalog.ParseUUID(id)
	if !ok {
		return item{}, nil, fmt.Errorf("diff of %s names %q, not a uuid", c.Name(), id)
	}
	body := ed.Item(c, u, loc)
	if body == nil {
		return item{}, nil, fmt.Errorf("diff of %s names %s, which version %s does not have", c.Name(), id, ed.ManifestID)
	}
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := unmarshalBody(body, &env); err != nil {
		return item{}, nil, fmt.Errorf("read %s %s: %w", c.Noun(), id, err)
	}
	it := summary(env.Data, u.String(), body.Lang)
	it.Icon = img.src(it.Icon)
	if link {
		it.URL = itemPage(c, it.UUID, loc)
	}
	return it, env.Data, nil
}

// summary names an item (data: its fields, in locale lang) and finds its icon.
func summary(data map[string]json.RawMessage, id, lang string) item {
	it := item{UUID: id, NameLang: lang}
	for _, f := range nameFields {
		if s, ok := text(data[f]); ok && s != "" {
			it.Name = s
			break
		}
	}
	if it.Name == "" {
		if s, ok := text(data["assetPath"]); ok && s != "" {
			it.Name = s[strings.LastIndexAny(s, "/.")+1:]
		} else {
			it.Name = it.UUID
		}
		it.NameLang = "en-US"
	}
	for _, f := range iconFields {
		if s, ok := text(data[f]); ok && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) {
			it.Icon = s
			break
		}
	}
	return it
}

// compare shows one changed field: before → after for scalars, a summary for
// arrays and objects, and a note when this locale's value did not change (the
// field changed in another locale).
func compare(name string, before, after json.RawMessage) fieldChange {
	fc := fieldChange{Name: name}
	if bytes.Equal(before, after) {
		fc.Note = "changed in another language"
		return fc
	}
	bs, bScalar := scalar(before)
	as, aScalar := scalar(after)
	if bScalar && aScalar {
		fc.Scalar, fc.Before, fc.After = true, bs, as
		return fc
	}
	if b, a := shape(before), shape(after); b == a {
		fc.Note = a + ", contents changed"
	} else {
		fc.Note = b + " → " + a
	}
	return fc
}

// text is a JSON string's value.
func text(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// scalar shows a JSON string, number, boolean or null; absent reads as "absent".
func scalar(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "(absent)", true
	}
	if s, ok := text(raw); ok {
		return s, true
	}
	switch raw[0] {
	case '[', '{':
		return "", false
	}
	return string(raw), true
}

// shape summarises an array or object for a field whose value is not scalar.
func shape(raw json.RawMessage) string {
	switch {
	case len(raw) == 0:
		return "absent"
	case raw[0] == '[':
		var xs []json.RawMessage
		if json.Unmarshal(raw, &xs) == nil {
			if len(xs) == 1 {
				return "1 entry"
			}
			return strconv.Itoa(len(xs)) + " entries"
		}
	case raw[0] == '{':
		return "an object"
	}
	if s, ok := scalar(raw); ok {
		return s
	}
	return "a value"
}

// plural makes a category's noun plural: "buddy" → "buddies", "skin" → "skins".
func plural(noun string) string {
	if n := len(noun); n > 1 && noun[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[n-2])) {
		return noun[:n-1] + "ies"
	}
	return noun + "s"
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s // empty, or not UTF-8 there: left as it is
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
