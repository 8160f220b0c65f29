// Package layering holds no code: its test enforces crisp's dependency rules
// on the real import graph (cmd -> probe -> transport/client/tty; the
// mock runtime shares nothing with the client side; transport knows neither
// gRPC nor cobra), so a wrong import fails `make test`, not just `make lint`.
package layering
