package handler

import "github.com/refdata/refdata/representation"

// The tests here import or build the sample versions over and over: each
// body is compressed once per effort (representation.ShareCompressions).
func init() { representation.ShareCompressions(256 << 20) }
