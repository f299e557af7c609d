package pages_test

import (
	"testing"

	"github.com/refdata/refdata/api/apitest"
)

// TestMain: -short tests compress at representation.Fast (apitest.Main).
func TestMain(m *testing.M) { apitest.Main(m) }
