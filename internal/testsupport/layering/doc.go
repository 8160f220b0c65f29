// Package layering holds no code: its tests enforce crisp's dependency rules
// on the real import graph. The rules are one list, .golangci.yml's depguard
// section (base < stream, cri < cli < feature < cmd; the mock shares nothing
// with the client side); depguard checks direct imports when linting, these
// tests check transitive ones in `make test`, and that every package sits in
// a layer's folder.
package layering
