// Package pages owns the HTML pages for people: the landing page (/), the API
// reference (/docs, Redoc rendering /openapi.json, its bundle embedded from
// vendor/redoc) and the changelog (/changes, /changes/{from}/{to}). Pages are
// rendered with html/template once — per active version, or per version pair for
// all 18 locales at once; the landing page per address it is asked at — kept as
// representation.Body values (ETag, gzip, brotli) and served by impl like every
// other body. Errors on the pages are pages too (ErrorPage), rendered per request.
// Site implements impl.Pages.
package pages
