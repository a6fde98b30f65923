// Package e2e holds fairway's end-to-end tests: the fairway binary is
// built once, then `fairway server` and `fairway worker` run as real child
// processes on loopback ports chosen by the OS, with a real SQLite file,
// and the tests drive them through the Go client — including SIGKILLs of
// workers and of the server.
package e2e
