// Command etcd is etcd's own main (go.etcd.io/etcd/v3's main.go) over the server module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
