// Package router assembles the HTTP server: the chi router with the generated
// routes and their pinned twins (/v1/versions/{manifestId}/…), the policy
// both HTTP stacks apply (policy.go: the rules every request meets, CORS,
// recovery, request logging and metrics), the JSON error envelope for every
// error (an HTML page on the pages' paths), and the spec documents.
package router
