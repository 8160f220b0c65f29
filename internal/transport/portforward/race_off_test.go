//go:build !race

package portforward

const raceEnabled = false
