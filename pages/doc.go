// Package pages owns the HTML pages for people: the landing page (/), the API
// reference (/docs: Redoc, its bundle embedded from vendor/redoc), the
// changelogs (/changes…) and the catalogs (/browse…, images from Site.Media when
// the mirror holds them). Pages are rendered with html/template once (per
// version, pair, address or page, bounded), kept as representation.Body values
// and served by impl like every other body; error pages are rendered per request.
package pages
