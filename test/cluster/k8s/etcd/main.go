// Command etcd is etcd's own server, built from go.etcd.io/etcd/server/v3 at the version
// go.mod pins, for the test cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
