// Package query runs crisp's data commands (ps, pods, images, inspect,
// inspectp, inspecti, info, version, stats, statsp, imagefsinfo, events,
// runtime-config, pull, rmi): it asks the runtime through internal/client
// and prints through internal/cli/output, so each cobra command in cmd/crisp is
// flag binding and one call. It knows neither cobra nor os.Stdout.
package query
