package pages

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"net/http"
	"strings"
)

// errorData is what the error page shows; Changes and Browse add links to
// the latest changelog and to the list of catalogs.
type errorData struct {
	Status          int
	Title, Message  string
	Changes, Browse bool
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
// status: a heading, message (free of internal detail) and links back to /
// and, from a changelog, to /changes, from a catalog or item page, to
// /browse. Every part is escaped. Errors are rare: rendered per request.
func ErrorPage(status int, message, path string) []byte {
	data := errorData{
		Status:  status,
		Title:   cmp.Or(errorTitles[status], http.StatusText(status)),
		Message: sentence(message),
		// /changes itself links to itself only when the request's query was at
		// fault: otherwise the same request fails again.
		Changes: strings.HasPrefix(path, "/changes/") || path == "/changes" && status == http.StatusBadRequest,
		Browse:  strings.HasPrefix(path, "/browse/"),
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "error", data); err != nil {
		// It does not happen (a fixed template, plain strings), but an error
		// answer must not fail to be written.
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
