// Command pause is the pod sandbox's process (image/build.sh pause): it holds the pod's namespaces
// by doing nothing until SIGINT or SIGTERM, then exits 0, and, as PID 1 of a pod that shares its
// process namespace, reaps the orphans re-parented to it on every SIGCHLD. Our own program, in the
// manner of Kubernetes' pause.c; built static (CGO_ENABLED=0).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is what -v prints.
const version = "predicate-extender-pause 1"

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println(version)
		return
	}
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: pause [-v]")
		os.Exit(2)
	}
	// The handlers first: once the warning below is out, a signal is handled.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", sig)
		os.Exit(0)
	}
}

// reap waits for every child that has exited (signals coalesce: one SIGCHLD may stand for many).
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
