// Package ui is fairway's web UI: static files embedded in the binary and
// served at / and /ui/ by the server. The page is a small single-page
// application in plain JavaScript (no build step, nothing to install) that
// uses only the public HTTP API, with the API key the operator signs in
// with kept in the tab's sessionStorage and sent as a bearer token. No
// cookie is ever set, so a request from another site carries no
// credentials: the UI is CSRF-safe by construction.
package ui
