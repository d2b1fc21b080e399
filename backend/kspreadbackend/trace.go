package kspreadbackend

// An opt-in trace, off by default: KSPREAD_BACKEND_V=N (0 to 10) sets klog's verbosity, so that
// upstream's own log lines reach stderr (at 5: each cycle's pod, every move between the queue's
// activeQ, backoffQ and unschedulable pods with its event and queueing hint, the event handlers'
// "Delete event for unscheduled pod" ...). Run the backend by hand with it: kspread keeps only
// the last 64 KiB of a backend's stderr.

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"k8s.io/klog/v2"
)

func init() {
	v, set := os.LookupEnv("KSPREAD_BACKEND_V")
	if !set {
		return
	}
	if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 10 {
		fmt.Fprintf(os.Stderr, "kspread-backend: KSPREAD_BACKEND_V=%q: want a klog verbosity from 0 to 10\n", v)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	must(fs.Set("v", v))
}
