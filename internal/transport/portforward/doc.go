// Package portforward forwards local connections to ports of a pod over a CRI
// streaming URL: SPDY portforward.k8s.io, the same SPDY tunnelled in a
// WebSocket, and the direct WebSocket protocol CRI streaming servers speak
// (one WebSocket per connection). Its Forwarder owns every forwarded
// connection's streams, so one failure closes one connection.
package portforward
