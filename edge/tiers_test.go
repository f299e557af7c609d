package edge

import (
	"testing"

	"github.com/refdata/refdata/api/apitest"
	"github.com/refdata/refdata/representation"
)

// TestMain: -short tests compress at representation.Fast (apitest.Main), and
// compressed representations of 1 KiB and more go to the body file (the
// server's is 64 KiB), so that the sample data's bodies are sent with
// sendfile as the large lists are.
func TestMain(m *testing.M) {
	representation.UseBodyFile(1 << 10)
	apitest.Main(m)
}
