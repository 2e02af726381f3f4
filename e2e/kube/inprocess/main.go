// The in-process kube-scheduler (docs/in-process.md): kube-scheduler of this module's version with
// the PredicateEngine framework plugin, which runs the predicate engine (Rust, linked in through
// cgo) inside the scheduling cycle instead of behind the extender protocol.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand(app.WithPlugin(Name, New))))
}
