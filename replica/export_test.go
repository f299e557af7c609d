package replica

import "time"

// SetHeartbeat sets how often r reports to a Coordinator store; call it before
// Poll. Tests pair a short one with a short ReplicaTTL, the ratio serve uses.
func SetHeartbeat(r *Repository, every time.Duration) { r.heartbeatEvery = every }

// DefaultBadRetry is how long a pointer whose version failed waits to be
// tried again.
const DefaultBadRetry = defaultBadRetry
