package catalog

import "github.com/refdata/refdata/envelope"

// IsManifestID reports whether id is a manifest ID in its canonical form, as the
// version record's schema has it (^[0-9A-F]{16}$) and the store names versions.
// Having one shape, a manifest ID can never form a path.
func IsManifestID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ManifestIDOf reads data.manifestId of a version record ("" when it has none).
func ManifestIDOf(record []byte) string {
	v, _ := envelope.Decode(record)
	m, _ := v.(map[string]any)
	id, _ := m["manifestId"].(string)
	return id
}
