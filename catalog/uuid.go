package catalog

import "encoding/hex"

// UUID is an item UUID as 16 bytes, so lookups ignore letter case and never
// allocate.
type UUID [16]byte

// ParseUUID accepts exactly 8-4-4-4-12 hexadecimal digits, in any letter case.
func ParseUUID(s string) (UUID, bool) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	var digits [32]byte
	n := 0
	for _, part := range [...]string{s[:8], s[9:13], s[14:18], s[19:23], s[24:]} {
		n += copy(digits[n:], part)
	}
	_, err := hex.Decode(u[:], digits[:])
	return u, err == nil
}

// String formats the UUID in lowercase 8-4-4-4-12 form.
func (u UUID) String() string {
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
