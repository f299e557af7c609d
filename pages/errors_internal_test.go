package pages

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refdata/refdata/handler"
	"github.com/refdata/refdata/representation"
	"github.com/refdata/refdata/router/apitest"
)

// TestFallbackErrorPage: the error page written if the template ever failed is
// still an error page, escaped, with the way home.
func TestFallbackErrorPage(t *testing.T) {
	t.Parallel()
	page := fallbackErrorPage(errorData{Status: 404, Title: "Page not found", Message: "There is no page at /<b>."})
	req := httptest.NewRequest(http.MethodGet, "/nope", nil)
	rec := httptest.NewRecorder()
	handler.SendError(representation.HTTPSink{W: rec, Req: req}, http.StatusNotFound, "", func(int, string) []byte { return page })
	apitest.New(t).CheckErrorPage(t, req, rec.Result(), rec.Body.Bytes())
	if s := string(page); strings.Contains(s, "<b>") || !strings.Contains(s, "/&lt;b&gt;.") {
		t.Errorf("the message is not escaped: %s", s)
	}
}
