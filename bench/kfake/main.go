// Command kfake runs franz-go's in-process fake Kafka cluster (pkg/kfake) as a standalone broker for the
// benchmarks: one broker on 127.0.0.1, port from -port (0 = an ephemeral port), auto topic creation on, group
// session bounds opened to Kafka's (6 s to 30 min) so the benchmarks' timeouts are accepted, a 100 ms consumer-protocol
// heartbeat interval. It prints
// BOOTSTRAP=host:port once it listens (the line bench/wire_load.py's ServerProcess waits for) and runs until
// SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "port to listen on, 127.0.0.1 only (0 = ephemeral)")
	partitions := flag.Int("partitions", 6, "partitions of an auto-created topic")
	flag.Parse()

	cluster, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(*port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(*partitions),
		kfake.GroupMinSessionTimeout(6*time.Second),
		kfake.GroupMaxSessionTimeout(30*time.Minute),
		// KIP-848 members are handed a 100 ms heartbeat interval, as the benchmark's other peers (default 5 s).
		kfake.BrokerConfigs(map[string]string{"group.consumer.heartbeat.interval.ms": "100"}),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Printf("BOOTSTRAP=%s\n", strings.Join(cluster.ListenAddrs(), ","))
	os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
