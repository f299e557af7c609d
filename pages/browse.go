package pages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/edition"
	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/representation"
)

// browseKey names one kept page: the list of catalogs (c is NumCategories), a
// catalog's (u is zero) or an item's, in one locale of one version.
type browseKey struct {
	manifest string
	c        catalog.Category
	u        catalog.UUID
	loc      int
}

// Catalogs is /browse: every catalog of the active version with its number of items.
func (s *Site) Catalogs() (*representation.Body, error) {
	ed := s.repo.Active()
	return s.browse(browseKey{ed.ManifestID, catalog.NumCategories, catalog.UUID{}, catalog.DefaultLocale}, func(*images) (string, any, error) {
		var rows []catalogRow
		for _, c := range catalog.Categories() {
			rows = append(rows, catalogRow{Title: capitalize(plural(c.Noun())), URL: handler.BrowsePath(c), API: "/v1/" + c.Name(), Count: len(ed.UUIDs(c))})
		}
		return "browse", browseData{Version: ed.Version.Version, ManifestID: ed.ManifestID, Catalogs: rows}, nil
	})
}

// Catalog is /browse/{catalog}: every item of c, by name in locale loc, with its icon.
func (s *Site) Catalog(c catalog.Category, loc int) (*representation.Body, error) {
	ed := s.repo.Active()
	return s.browse(browseKey{ed.ManifestID, c, catalog.UUID{}, loc}, func(img *images) (string, any, error) {
		body := ed.List(c, loc)
		if body == nil {
			return "", nil, fmt.Errorf("version %s has no list of %s", ed.ManifestID, c.Name())
		}
		data := s.pageHead(ed, c, loc, handler.BrowsePath(c))
		err := listItems(&data, body, c, loc, img)
		return "catalog", data, err
	})
}

// searchKey names a kept search page: a catalog's page in one locale of one
// version for a query as typed (the page shows it in its box).
type searchKey struct {
	browseKey
	q string
}

// Search is /browse/{catalog}?q=: the items of answer's list body (those q
// selects in ed), by name in locale loc, with their icons; q in the search box.
func (s *Site) Search(ed *edition.Edition, c catalog.Category, loc int, q string, answer func() (*representation.Body, error)) (*representation.Body, error) {
	key := searchKey{browseKey{ed.ManifestID, c, catalog.UUID{}, loc}, q}
	k, err := s.searched.get(key, func() (*kept, error) {
		body, err := answer()
		if err != nil {
			return nil, err
		}
		k := &kept{img: newImages(s.Media)}
		data := s.searchHead(ed, c, loc, q)
		if err := listItems(&data, body, c, loc, k.img); err != nil {
			return nil, err
		}
		b, err := render("catalog", data, catalog.Locales[loc], representation.Fast)
		k.bodies = []*representation.Body{b}
		return k, err
	})
	if err != nil {
		s.log.Error("render a search page", "version", ed.ManifestID, "catalog", c.Name(), "locale", catalog.Locales[loc], "err", err)
		return nil, err
	}
	return k.bodies[0], nil
}

// SearchError is the page of a query q that cannot be answered: c's page with
// q in its box, message saying why, and no items. Rendered per request, as
// every error page.
func (s *Site) SearchError(ed *edition.Edition, c catalog.Category, loc int, q, message string) []byte {
	data := s.searchHead(ed, c, loc, q)
	// The message names the parameter ("q: term 2 …"); on the page it is the box.
	data.QueryError = sentence(strings.TrimPrefix(message, "q: "))
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "catalog", data); err != nil {
		// It does not happen (a fixed template, plain strings); the error
		// page says the same without the box.
		return ErrorPage(http.StatusBadRequest, message, handler.BrowsePath(c))
	}
	return buf.Bytes()
}

// searchHead is pageHead for a query: the query, the same query's JSON, and
// how many items the catalog has in all.
func (s *Site) searchHead(ed *edition.Edition, c catalog.Category, loc int, q string) catalogData {
	data := s.pageHead(ed, c, loc, handler.BrowsePath(c))
	data.Query, data.Total = q, len(ed.UUIDs(c))
	v := url.Values{"q": {q}}
	if loc != catalog.DefaultLocale {
		v.Set("language", catalog.Locales[loc])
	}
	data.QueryJSON = data.API + "?" + v.Encode()
	return data
}

// listItems adds the items of a list body of c to a catalog's page.
func listItems(data *catalogData, body *representation.Body, c catalog.Category, loc int, img *images) error {
	var env struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := unmarshalBody(body, &env); err != nil {
		return fmt.Errorf("read the list of %s: %w", c.Name(), err)
	}
	data.Items = make([]item, 0, len(env.Data))
	for _, d := range env.Data {
		id, _ := text(d["uuid"])
		it := summary(d, id, body.Lang)
		it.Icon = img.src(it.Icon)
		it.URL = itemPage(c, it.UUID, loc)
		data.Items = append(data.Items, it)
	}
	return nil
}

// Item is /browse/{catalog}/{uuid}: every field of one item in locale loc. An
// item the active version does not have is ENOTFOUND.
func (s *Site) Item(c catalog.Category, u catalog.UUID, loc int) (*representation.Body, error) {
	ed := s.repo.Active()
	body := ed.Item(c, u, loc)
	if body == nil {
		return nil, catalog.Errorf(catalog.ENOTFOUND, "version %s has no %s %s; %s lists them", ed.Version.Version, c.Noun(), u, handler.BrowsePath(c))
	}
	return s.browse(browseKey{ed.ManifestID, c, u, loc}, func(img *images) (string, any, error) {
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := unmarshalBody(body, &env); err != nil {
			return "", nil, fmt.Errorf("read %s %s: %w", c.Noun(), u, err)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(env.Data, &top); err != nil {
			return "", nil, fmt.Errorf("read %s %s: %w", c.Noun(), u, err)
		}
		data := s.pageHead(ed, c, loc, itemPage(c, u.String(), catalog.DefaultLocale))
		data.Item = summary(top, u.String(), body.Lang)
		data.Item.Icon = img.src(data.Item.Icon)
		if c == catalog.PremierLogos && strings.HasPrefix(data.Item.Icon, "/media/") {
			data.Recolored = data.API + "/" + u.String() + "/image?" + exampleColors
		}
		data.CatalogURL = withLanguage(handler.BrowsePath(c), loc)
		data.JSON = withLanguage(data.API+"/"+u.String(), loc)
		dec := json.NewDecoder(bytes.NewReader(env.Data))
		dec.UseNumber()
		v, err := decodeValue(dec, "", fieldLinks(ed, loc, img))
		if err != nil {
			return "", nil, fmt.Errorf("read %s %s: %w", c.Noun(), u, err)
		}
		data.Fields = v.Kids
		return "item", data, nil
	})
}

// browse returns the kept page for key, rendering it when needed (model gives
// its template and data).
func (s *Site) browse(key browseKey, model func(*images) (string, any, error)) (*representation.Body, error) {
	k, err := s.browsed.get(key, func() (*kept, error) {
		k := &kept{img: newImages(s.Media)}
		name, data, err := model(k.img)
		if err != nil {
			return nil, err
		}
		// Fast, not Best: there are many such pages, each rendered on demand.
		b, err := render(name, data, catalog.Locales[key.loc], representation.Fast)
		k.bodies = []*representation.Body{b}
		return k, err
	})
	if err != nil {
		s.log.Error("render a catalog page", "version", key.manifest, "catalog", int(key.c), "uuid", key.u.String(), "locale", catalog.Locales[key.loc], "err", err)
		return nil, err
	}
	return k.bodies[0], nil
}

// pageHead is the part of a catalog's and an item's page that names the
// catalog and offers the locales; action is where the picker sends.
func (s *Site) pageHead(ed *edition.Edition, c catalog.Category, loc int, action string) catalogData {
	d := catalogData{
		Title:   capitalize(plural(c.Noun())),
		Noun:    c.Noun(),
		API:     "/v1/" + c.Name(),
		Version: ed.Version.Version,
		Action:  action,
		Locales: localeOptions(loc),
	}
	if loc != catalog.DefaultLocale {
		d.Language = catalog.Locales[loc]
	}
	return d
}

type browseData struct {
	Version, ManifestID string
	Catalogs            []catalogRow
}

type catalogRow struct {
	Title, URL, API string
	Count           int
}

type catalogData struct {
	Title, Noun, API, Version, Action string
	Language                          string // the page's locale; "" for the default
	Locales                           []localeOption
	Items                             []item // the catalog's page; the rest, the item's
	// A search: the query as typed, the same query as JSON, the catalog's
	// number of items, and why the query cannot be answered (no Items then).
	Query, QueryJSON, QueryError string
	Total                        int
	Item                         item
	CatalogURL, JSON             string
	Fields                       []value
	// Recolored is a premier logo's image in example team colors, when the
	// mirror holds its base image.
	Recolored string
}

// exampleColors are the team colors a premier logo's page shows it in.
var exampleColors = url.Values{
	"primary":   {"(R=0.86,G=0.2,B=0.27,A=1)"},
	"secondary": {"(R=0.96,G=0.8,B=0.3,A=1)"},
	"outline":   {"(R=0.1,G=0.12,B=0.2,A=1)"},
}.Encode()

// value is one JSON value as the item page shows it: Kids of an object (each
// with its Key) or an array (List; Folded when it holds objects), else Text,
// shown as an image when Img is set, linked when Href is.
type value struct {
	Key, Text, Img, Href       string
	Object, List, Folded, Null bool
	Kids                       []value
}

// decodeValue reads the next JSON value of dec, keeping the order of object
// keys; link makes a string a link or an image.
func decodeValue(dec *json.Decoder, key string, link func(*value)) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return value{}, err
	}
	v := value{Key: key}
	switch t := tok.(type) {
	case json.Delim:
		v.Object, v.List = t == '{', t == '['
		for dec.More() {
			k := ""
			if v.Object {
				kt, err := dec.Token()
				if err != nil {
					return v, err
				}
				k, _ = kt.(string)
			}
			kid, err := decodeValue(dec, k, link)
			if err != nil {
				return v, err
			}
			v.Kids = append(v.Kids, kid)
		}
		v.Folded = v.List && len(v.Kids) > 0 && v.Kids[0].Object
		_, err = dec.Token() // the closing delimiter
		return v, err
	case string:
		v.Text = t
		link(&v)
	case nil:
		v.Text, v.Null = "null", true
	case json.Number:
		v.Text = t.String()
	case bool:
		v.Text = fmt.Sprint(t)
	default:
		return v, errors.New("unexpected JSON token")
	}
	return v, nil
}

// imageExts are the endings of the data's image URLs.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".webp": true, ".gif": true}

// fieldLinks makes an item's strings links: an image URL an image, another
// URL a link, the UUID of an item of ed a link to its page.
func fieldLinks(ed *edition.Edition, loc int, img *images) func(*value) {
	return func(v *value) {
		if strings.HasPrefix(v.Text, "https://") || strings.HasPrefix(v.Text, "http://") {
			v.Href = v.Text
			if imageExts[strings.ToLower(path.Ext(v.Text))] {
				v.Img = img.src(v.Text)
			}
			return
		}
		if u, ok := catalog.ParseUUID(v.Text); ok {
			for _, c := range catalog.Categories() {
				if ed.Item(c, u, loc) != nil {
					v.Href = itemPage(c, v.Text, loc)
					return
				}
			}
		}
	}
}

// itemPage is the page of item id of c, with names in locale loc.
func itemPage(c catalog.Category, id string, loc int) string {
	return withLanguage(handler.BrowsePath(c)+"/"+id, loc)
}

// withLanguage adds loc to a page's URL unless it is the default.
func withLanguage(url string, loc int) string {
	if loc == catalog.DefaultLocale {
		return url
	}
	return url + "?language=" + catalog.Locales[loc]
}
