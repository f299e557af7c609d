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
	var b [36]byte
	hex.Encode(b[:], u[:4])
	b[8] = '-'
	hex.Encode(b[9:], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
