// Package testkit holds the helpers crisp's tests share: polling for a
// condition instead of sleeping (Eventually, Poll), goroutine leak checks
// with a grace period for goroutines that end a moment after the test
// (FindLeaks, LeakChecked), a TCP echo server (Echo, ServeEcho), a TCP proxy
// that can drop or freeze a connection (Proxy), a short folder for unix
// sockets (SocketDir), the rule for tests that need root (RequireRoot), a
// buffer several goroutines may write (LockedBuffer) and the words of a
// runtime's known TTY race (IsRuntimeTTYRace).
//
// It imports nothing of crisp's (no internal/ package), so the tests of
// every package, the mock runtime's included, may use it without sharing
// code between the client and the mock.
package testkit
