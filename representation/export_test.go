package representation

// StopSharingCompressions undoes ShareCompressions.
func StopSharingCompressions() { shared.Store(nil) }

// SharedCompressionBytes is how many bytes of compressions are kept.
func SharedCompressionBytes() int64 {
	if c := shared.Load(); c != nil {
		return c.Bytes()
	}
	return 0
}
