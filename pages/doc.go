// Package pages owns the HTML pages for people: the landing page (/), the API
// reference (/docs: Redoc, its bundle embedded from vendor/redoc), the
// changelogs (/changes…) and the catalogs (/browse…, images from Site.Media when
// the mirror holds them; a search box on each catalog's page, answered by
// handler's list query). Pages are rendered with html/template once (per version,
// pair, address, page or query, each kind in a bounded cache of its own), kept
// as representation.Body values and served by handler like every other body;
// error pages are rendered per request.
package pages
