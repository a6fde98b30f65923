// Package api holds fairway's wire types: the JSON bodies of the HTTP API
// under /api/v1, shared by the server, the Go client and the worker. The
// reference is docs/api.md. Times are RFC 3339 in UTC; durations are
// milliseconds in fields ending in _ms; cpu is in cores.
package api
