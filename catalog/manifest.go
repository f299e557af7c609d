package catalog

import (
	"strings"

	"github.com/refdata/refdata/envelope"
)

// IsManifestID reports whether id is a manifest ID in canonical form
// (^[0-9A-F]{16}$), which can never form a path.
func IsManifestID(id string) bool {
	return len(id) == 16 && strings.Trim(id, "0123456789ABCDEF") == ""
}

// ManifestIDOf reads data.manifestId of a version record ("" when it has none).
func ManifestIDOf(record []byte) string {
	v, _ := envelope.Decode(record)
	m, _ := v.(map[string]any)
	id, _ := m["manifestId"].(string)
	return id
}
