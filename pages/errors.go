package pages

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strings"
)

// errorData is what the error page shows.
type errorData struct {
	Status  int
	Title   string
	Message string
	// Changes: the request was for a changelog, so the page also links to the
	// latest one.
	Changes bool
	// Browse: the request was for a catalog or item page, so the page also
	// links to the list of catalogs.
	Browse bool
}

// errorTitles are the headings of the statuses the pages answer; any other
// status is headed by its standard text.
var errorTitles = map[int]string{
	http.StatusBadRequest:          "Bad request",
	http.StatusNotFound:            "Page not found",
	http.StatusMethodNotAllowed:    "Method not allowed",
	http.StatusInternalServerError: "Server error",
	http.StatusServiceUnavailable:  "Service unavailable",
}

// ErrorPage is the HTML page that answers an error on a request for path with
// status: the site's layout, a heading, message (what went wrong and what to
// do, already free of internal detail) and links back to / and, from a
// changelog, to /changes, from a catalog or item page, to /browse. Every part is escaped: path and message may carry
// what the client sent. Errors are rare, so the page is rendered per request.
func ErrorPage(status int, message, path string) []byte {
	title := errorTitles[status]
	if title == "" {
		title = http.StatusText(status)
	}
	data := errorData{
		Status:  status,
		Title:   title,
		Message: sentence(message),
		// /changes itself links to itself only when the request's query was at
		// fault: otherwise the same request fails again.
		Changes: strings.HasPrefix(path, "/changes/") || path == "/changes" && status == http.StatusBadRequest,
		Browse:  strings.HasPrefix(path, "/browse/"),
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "error", data); err != nil {
		// The template is fixed and its data plain strings: this does not
		// happen, but an error answer must not fail to be written.
		return fallbackErrorPage(data)
	}
	return buf.Bytes()
}

// sentence makes one of the API's messages, which start in lower case and
// end without a stop, read as a sentence on a page.
func sentence(msg string) string {
	msg = capitalize(msg)
	if msg != "" && !strings.ContainsAny(msg[len(msg)-1:], ".!?") {
		msg += "."
	}
	return msg
}

// fallbackErrorPage is the error page without the layout.
func fallbackErrorPage(d errorData) []byte {
	return fmt.Appendf(nil, `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>%s · refdata</title></head>
<body><main><h1>%s</h1><p>%s</p><p>HTTP status %d.</p><p><a href="/">Back to the home page</a></p></main></body>
</html>
`, html.EscapeString(d.Title), html.EscapeString(d.Title), html.EscapeString(d.Message), d.Status)
}
