//go:build race

package portforward

// raceEnabled: the race detector slows the forwarding paths several times.
const raceEnabled = true
