package api_test

import (
	"crypto/sha256"
	"encoding/hex"
)

// testMediaBytes is the file the generic test handler's mirror holds at
// https://media.example/icon.png (besides a logo base for every .png URL).
var testMediaBytes = []byte("\x89PNG\r\n\x1a\n" + "not a real image, but bytes")

// testMediaHash is that file's name.
func testMediaHash() string {
	sum := sha256.Sum256(testMediaBytes)
	return hex.EncodeToString(sum[:])
}
