package handler

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/refdata/refdata/catalog"
	"github.com/refdata/refdata/gen"
	"github.com/refdata/refdata/representation"
)

// The contract's client-side rules as queries, answered from bodies the
// edition made at assembly.

// events serves /v1/events?active=true (the events active now, cached until
// the list next changes) and ?at= (active at that instant, cached as the list).
func (s *Server) events(r *http.Request, active, at *string, lang *gen.Language) Answer {
	const accepted = "use active=true for the events active now, or at=<RFC 3339 date-time> (e.g. 2021-12-01T00:00:00Z) for those active then, not both; or neither for every event"
	if active != nil && at != nil {
		return failed(catalog.Errorf(catalog.EINVALID, "active and at were both given; %s", accepted))
	}
	if active != nil && !strings.EqualFold(*active, "true") {
		return failed(catalog.Errorf(catalog.EINVALID, "active %q is not supported; %s", *active, accepted))
	}
	var t time.Time
	if at != nil {
		var err error
		if t, err = time.Parse(time.RFC3339, *at); err != nil || !offsetOK(*at) {
			return failed(catalog.Errorf(catalog.EINVALID, "at %q is not an RFC 3339 date-time; %s", *at, accepted))
		}
	} else if s.Now != nil {
		t = s.Now()
	} else {
		t = time.Now()
	}
	loc, err := parseLanguage(deref(lang), true)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	b, next := ed.ActiveEvents(t, loc)
	route := rs.list[catalog.Events]
	if active == nil {
		return catalogAnswer(r, ed, b, route)
	}
	// Active now: cached until the next start or end at most; the pinned URL
	// names the instant.
	age := rs.maxAge
	if !next.IsZero() {
		age = min(age, next.Sub(t))
	}
	route = representation.NewRoute(route.Label, contentJSON, fmt.Sprintf("public, max-age=%d", int64(age/time.Second)))
	q := r.URL.Query()
	q.Del("active")
	q.Set("at", t.UTC().Format(time.RFC3339Nano))
	in := r.WithContext(r.Context())
	in.URL = &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
	return catalogAnswer(in, ed, b, route)
}

// offsetOK reports whether an RFC 3339 date-time's offset, which time.Parse
// takes up to ±24:60, is within RFC 3339's ±23:59.
func offsetOK(s string) bool {
	if strings.HasSuffix(s, "Z") || len(s) < 6 {
		return true
	}
	off := s[len(s)-6:]
	return (off[0] == '+' || off[0] == '-') && off[1:3] <= "23" && off[4:6] <= "59"
}

// levelBorder serves /v1/levelborders?level=N: the border for account level N.
func (s *Server) levelBorder(r *http.Request, level string, lang *gen.Language) Answer {
	n, err := strconv.ParseUint(level, 10, 64)
	if err != nil && !(errors.Is(err, strconv.ErrRange) && strings.Trim(level, "0123456789") == "") {
		return failed(catalog.Errorf(catalog.EINVALID, "level %q is not an account level; use a non-negative integer in decimal digits, e.g. level=57", level))
	}
	loc, err := parseLanguage(deref(lang), true)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	b, lowest, has := ed.LevelBorder(float64(n), loc) // a level past uint64 is past every border
	if b == nil {
		why := fmt.Sprintf("the lowest starts at level %v", lowest)
		if !has {
			why = "the version has none"
		}
		return notFound(ed, "no level border for account level %d in version %s: %s", n, ed.ManifestID, why)
	}
	return catalogAnswer(r, ed, b, rs.list[catalog.LevelBorders])
}

// GetCompetitiveSeasonTiers serves the tier set a competitive season names.
func (s *Server) GetCompetitiveSeasonTiers(w http.ResponseWriter, r *http.Request, uuid gen.Uuid, p gen.GetCompetitiveSeasonTiersParams) {
	s.write(w, r, s.seasonTiers(r, uuid, deref(p.Language)))
}

func (s *Server) seasonTiers(r *http.Request, uuid, lang string) Answer {
	u, loc, err := parseItem(catalog.CompetitiveSeasons, uuid, lang)
	if err != nil {
		return failed(err)
	}
	ed, rs := s.read(r)
	tiers, season := ed.SeasonTiers(u)
	b := ed.Item(catalog.CompetitiveTiers, tiers, loc)
	switch {
	case b == nil && season:
		return notFound(ed, "competitive season %s names no tier set of version %s; list them at %s", u, ed.ManifestID, rs.listURL(catalog.CompetitiveTiers, ed))
	case b == nil:
		return notFound(ed, "no competitive season with uuid %s in version %s; list them at %s", u, ed.ManifestID, rs.listURL(catalog.CompetitiveSeasons, ed))
	default:
		return catalogAnswer(r, ed, b, rs.seasonTiers)
	}
}
