package main

import "github.com/spf13/pflag"

// addNodeNameFlag adds --node-name, the name smoke and probe put in their
// JSON reports so that crisp report can merge the reports of many nodes.
func addNodeNameFlag(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, "node-name", "", "node name recorded in the JSON report (default: $NODE_NAME, then the hostname)")
}
