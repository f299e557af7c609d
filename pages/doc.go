// Package pages owns the HTML pages for people: the landing page (/), the API
// reference (/docs, Redoc rendering /openapi.json, its bundle embedded from
// vendor/redoc), the changelog (/changes, /changes/{from}/{to}) and the catalogs
// (/browse, /browse/{catalog}, /browse/{catalog}/{uuid}: decoded from the
// edition's bodies; images from Site.Media when the mirror holds them). Pages are
// rendered with html/template once — per active version, per version pair for all
// 18 locales, per catalog or item and locale (bounded), the landing page per address
// — kept as representation.Body values and served by impl like every other body.
// Errors on the pages are pages too (ErrorPage), rendered per request.
package pages
